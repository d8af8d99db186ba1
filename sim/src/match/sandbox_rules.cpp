// The sandbox rules: a capsule character per player (the character controller walks it,
// climbs steps, slides along walls and jumps), and throwing balls.
#include <keel/sim/character.h>
#include <keel/sim/det_math.h>
#include <keel/sim/match.h>

namespace keel::sim {

namespace {

// Look frame from yaw: yaw 0 looks along -Z, positive yaw turns left (about +Y).
void look_axes(float yaw, Vec3& forward, Vec3& right) {
  auto sc = dmath::sincos(yaw);
  forward = Vec3(-sc.sin, 0.0f, -sc.cos);
  right = Vec3(sc.cos, 0.0f, -sc.sin);
}

Vec3 spawn_position(const Match& match, uint32_t spawn_index) {
  const auto& spawns = match.scene().spawn_points;
  Vec3 feet = spawns.empty() ? Vec3(0.0f) : spawns[spawn_index % spawns.size()].position;
  // A spawn point marks the feet; the capsule's centre sits a half height plus radius up.
  return feet + Vec3(0.0f, SandboxRules::kCharacterHalfHeight + SandboxRules::kCharacterRadius + 0.01f, 0.0f);
}

}  // namespace

void SandboxRules::on_join(Match& match, PlayerSlot& slot) {
  BodyDef def;
  def.id = match.next_body_id();
  def.motion = MotionType::Dynamic;
  def.mass = kCharacterMass;
  def.position = spawn_position(match, slot.spawn_index);
  def.freeze_rotation = true;
  def.can_sleep = false;
  ColliderDef capsule;
  capsule.shape = ShapeType::Capsule;
  capsule.radius = kCharacterRadius;
  capsule.half_height = kCharacterHalfHeight;
  capsule.friction = 0.2f;
  def.colliders.push_back(capsule);
  World& world = match.world_for_rules();
  auto id = world.add_body(def);
  slot.character = id ? def.id : 0;
  if (!id) return;
  CharacterSettings settings;
  settings.jump_speed = kJumpSpeed;
  add_character(world, *id, settings);
}

void SandboxRules::on_leave(Match& match, PlayerSlot& slot) {
  World& world = match.world_for_rules();
  if (slot.character != 0) world.remove_body(world.find_body(slot.character));
  for (uint32_t ball : slot.thrown) world.remove_body(world.find_body(ball));
  slot.character = 0;
  slot.thrown.clear();
}

void SandboxRules::apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame) {
  World& world = match.world_for_rules();
  if (slot.fire_cooldown > 0) --slot.fire_cooldown;
  BodyId character = world.find_body(slot.character);
  if (!world.is_valid(character)) return;
  BodyState state = world.body_state(character);

  // The move vector is in the look frame; the controller takes a world-space velocity and
  // does the rest inside the step (ground, steps, walls, jumping from the ground only).
  Vec3 forward, right;
  look_axes(frame.look_yaw, forward, right);
  const Vec3 desired = (right * frame.move_x + forward * frame.move_z) * kWalkSpeed;
  set_character_input(world, character, CharacterInput{desired, (frame.buttons & kButtonJump) != 0});

  if ((frame.buttons & kButtonFire) == 0 || slot.fire_cooldown > 0) return;
  slot.fire_cooldown = kFireCooldownTicks;
  BodyDef ball;
  ball.id = match.next_body_id();
  ball.motion = MotionType::Dynamic;
  ball.position = state.position + forward * (kCharacterRadius + kBallRadius + 0.15f) + Vec3(0.0f, 0.4f, 0.0f);
  ball.linear_velocity = forward * kBallSpeed;
  ColliderDef sphere;
  sphere.shape = ShapeType::Sphere;
  sphere.radius = kBallRadius;
  sphere.density = 300.0f;
  sphere.restitution = 0.4f;
  ball.colliders.push_back(sphere);
  if (!world.add_body(ball)) return;
  slot.thrown.push_back(ball.id);
  if (slot.thrown.size() > kMaxBallsPerPlayer) {
    world.remove_body(world.find_body(slot.thrown.front()));
    slot.thrown.erase(slot.thrown.begin());
  }
}

}  // namespace keel::sim
