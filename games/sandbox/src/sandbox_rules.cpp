// The sandbox rules: a capsule character per player (the character controller walks it,
// climbs steps, slides along walls and jumps), and throwing balls.
#include <keel/games/sandbox.h>

#include <keel/game/match.h>
#include <keel/sim/character.h>
#include <keel/sim/det_math.h>

namespace keel::games {

using game::InputFrame;
using game::Match;
using game::PlayerSlot;
using sim::Vec3;

namespace {

// Per-player state handles, in declaration order (make_spec declares them).
constexpr game::StateRef kFireCooldown{0, 1, game::StateType::U32};
constexpr game::StateRef kThrownCount{1, 1, game::StateType::U32};
constexpr game::StateRef kThrown{2, SandboxRules::kMaxBallsPerPlayer, game::StateType::U32};

// Look frame from yaw: yaw 0 looks along -Z, positive yaw turns left (about +Y).
void look_axes(float yaw, Vec3& forward, Vec3& right) {
  auto sc = sim::dmath::sincos(yaw);
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

game::GameSpec SandboxRules::make_spec() {
  game::GameSpec spec;
  spec.name = "sandbox";
  spec.version = 1;
  spec.input.add_stick("move", 127);
  spec.input.add_angle("look_yaw", 16);
  spec.input.add_buttons("buttons", {"jump", "fire"});
  spec.state.player.add("fire_cooldown", game::StateType::U32);
  spec.state.player.add("thrown_count", game::StateType::U32);
  spec.state.player.add("thrown", game::StateType::U32, kMaxBallsPerPlayer);
  spec.max_bodies_per_player = 1 + kMaxBallsPerPlayer;
  return spec;
}

void SandboxRules::on_join(Match& match, PlayerSlot& slot) {
  sim::BodyDef def;
  def.id = match.next_body_id();
  def.motion = sim::MotionType::Dynamic;
  def.mass = kCharacterMass;
  def.position = spawn_position(match, slot.spawn_index);
  def.freeze_rotation = true;
  def.can_sleep = false;
  def.kind = kKindCharacter;
  sim::ColliderDef capsule;
  capsule.shape = sim::ShapeType::Capsule;
  capsule.radius = kCharacterRadius;
  capsule.half_height = kCharacterHalfHeight;
  capsule.friction = 0.2f;
  def.colliders.push_back(capsule);
  // Added at once (not with Match::spawn): the controller attaches to the body now, and
  // this tick's input already drives it.
  sim::World& world = match.world_for_rules();
  auto id = world.add_body(def);
  slot.character = id ? def.id : 0;
  if (!id) return;
  match.set_body_kind(def.id, kKindCharacter);
  sim::CharacterSettings settings;
  settings.jump_speed = kJumpSpeed;
  sim::add_character(world, *id, settings);
}

void SandboxRules::on_leave(Match& match, PlayerSlot& slot) {
  sim::World& world = match.world_for_rules();
  if (slot.character != 0) world.remove_body(world.find_body(slot.character));
  uint32_t n = slot.state.get_u32(kThrownCount);
  for (uint32_t i = 0; i < n; ++i) world.remove_body(world.find_body(slot.state.get_u32(kThrown, i)));
  slot.character = 0;
  slot.state.set_u32(kThrownCount, 0);
}

void SandboxRules::apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame) {
  const game::Layout& in = match.input_layout();
  sim::World& world = match.world_for_rules();
  uint32_t cooldown = slot.state.get_u32(kFireCooldown);
  if (cooldown > 0) slot.state.set_u32(kFireCooldown, --cooldown);
  sim::BodyId character = world.find_body(slot.character);
  if (!world.is_valid(character)) return;
  sim::BodyState state = world.body_state(character);

  // The move vector is in the look frame; the controller takes a world-space velocity and
  // does the rest inside the step (ground, steps, walls, jumping from the ground only).
  Vec3 forward, right;
  look_axes(in.angle(frame, kLookYaw), forward, right);
  const Vec3 move = in.stick(frame, kMove);
  const Vec3 desired = (right * move.x + forward * move.y) * kWalkSpeed;
  sim::set_character_input(world, character, sim::CharacterInput{desired, in.button(frame, kButtons, kJump)});

  if (!in.button(frame, kButtons, kFire) || cooldown > 0) return;
  slot.state.set_u32(kFireCooldown, kFireCooldownTicks);
  sim::BodyDef ball;
  ball.motion = sim::MotionType::Dynamic;
  ball.kind = kKindBall;
  ball.position = state.position + forward * (kCharacterRadius + kBallRadius + 0.15f) + Vec3(0.0f, 0.4f, 0.0f);
  ball.linear_velocity = forward * kBallSpeed;
  sim::ColliderDef sphere;
  sphere.shape = sim::ShapeType::Sphere;
  sphere.radius = kBallRadius;
  sphere.density = 300.0f;
  sphere.restitution = 0.4f;
  ball.colliders.push_back(sphere);
  uint32_t id = match.spawn(ball);
  if (id == 0) return;
  // thrown[] holds the live balls oldest first; past the limit the oldest goes.
  uint32_t n = slot.state.get_u32(kThrownCount);
  if (n == kMaxBallsPerPlayer) {
    match.destroy(slot.state.get_u32(kThrown, 0));
    for (uint32_t i = 1; i < n; ++i) slot.state.set_u32(kThrown, slot.state.get_u32(kThrown, i), i - 1);
    --n;
  }
  slot.state.set_u32(kThrown, id, n);
  slot.state.set_u32(kThrownCount, n + 1);
}

game::InputFrame sandbox_input(float move_x, float move_forward, float look_yaw, bool jump, bool fire) {
  static const game::Layout layout = SandboxRules::make_spec().input;
  game::InputFrame f;
  layout.set_stick(f, SandboxRules::kMove, move_x, move_forward);
  layout.set_angle(f, SandboxRules::kLookYaw, look_yaw);
  layout.set_buttons(f, SandboxRules::kButtons, (jump ? 1u : 0u) | (fire ? 2u : 0u));
  return f;
}

void register_builtin_games(game::RulesRegistry& registry) {
  registry.add("sandbox", [] { return std::make_unique<SandboxRules>(); });
}

game::RulesRegistry builtin_games() {
  game::RulesRegistry r;
  register_builtin_games(r);
  return r;
}

}  // namespace keel::games
