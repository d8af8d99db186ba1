// The sandbox rules: a capsule character per player (the character controller walks it,
// climbs steps, slides along walls and jumps), and throwing balls.
#include <keel/games/sandbox.h>

#include <keel/game/match.h>
#include <keel/sim/character.h>
#include <keel/sim/det_math.h>

#include <cmath>

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
constexpr game::StateRef kSpawnCooldown{2 + SandboxRules::kMaxBallsPerPlayer, 1, game::StateType::U32};
constexpr game::StateRef kSpawnSeqApplied{3 + SandboxRules::kMaxBallsPerPlayer, 1, game::StateType::U32};
// Match state handles.
constexpr game::StateRef kGravityMode{0, 1, game::StateType::U32};
constexpr game::StateRef kSpawnedCount{1, 1, game::StateType::U32};
constexpr game::StateRef kSpawned{2, SandboxRules::kMaxSpawned, game::StateType::U32};

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

// A visitor's body: its lowest point at `at` (a box or sphere rests kSpawnSize above
// it, a capsule, standing, twice that).
sim::BodyDef spawn_def(uint32_t shape, Vec3 at) {
  constexpr float s = SandboxRules::kSpawnSize;
  sim::BodyDef def;
  def.motion = sim::MotionType::Dynamic;
  def.kind = SandboxRules::kKindSpawned;
  sim::ColliderDef c;
  c.density = SandboxRules::kSpawnDensity;
  c.friction = 0.6f;
  float lift = s;
  if (shape == SandboxRules::kSpawnBox) {
    c.shape = sim::ShapeType::Box;
    c.half_extents = Vec3(s);
  } else if (shape == SandboxRules::kSpawnSphere) {
    c.shape = sim::ShapeType::Sphere;
    c.radius = s;
  } else {
    c.shape = sim::ShapeType::Capsule;
    c.radius = s;
    c.half_height = s;
    lift = 2.0f * s;
  }
  def.colliders.push_back(c);
  def.position = at + Vec3(0.0f, lift, 0.0f);
  return def;
}

// Spawns a visitor's body once per new spawn_seq, rate-limited per player; past
// kMaxSpawned the oldest goes. A click is a change of the counter, not a held value: a
// frame the server repeats for a player whose input is late (or a client that keeps
// sending it) carries the same counter and spawns nothing more. A new counter met during
// the cooldown waits for it (it is not marked applied), so a click is late, never lost.
void spawn_for(Match& match, PlayerSlot& slot, uint32_t seq, uint32_t shape, Vec3 at) {
  if (seq == slot.state.get_u32(kSpawnSeqApplied) || slot.state.get_u32(kSpawnCooldown) > 0) return;
  slot.state.set_u32(kSpawnSeqApplied, seq);
  if (shape == SandboxRules::kSpawnNone) return;
  const uint32_t id = match.spawn(spawn_def(shape, at));
  if (id == 0) return;  // the match holds as many bodies as it may: this click is spent
  slot.state.set_u32(kSpawnCooldown, SandboxRules::kSpawnCooldownTicks);
  auto& g = match.state();
  uint32_t n = g.get_u32(kSpawnedCount);
  if (n == SandboxRules::kMaxSpawned) {
    match.destroy(g.get_u32(kSpawned, 0));
    for (uint32_t i = 1; i < n; ++i) g.set_u32(kSpawned, g.get_u32(kSpawned, i), i - 1);
    --n;
  }
  g.set_u32(kSpawned, id, n);
  g.set_u32(kSpawnedCount, n + 1);
}

// Pulls a dragged body toward `to`: a critically damped spring (a = w^2 d - 2 w v) that
// also holds the body against gravity, its acceleration bounded, applied as one impulse
// through the centre of mass (no spin). Characters and non-dynamic bodies are not dragged.
void drag(Match& match, uint32_t body_id, Vec3 to) {
  sim::World& world = match.world_for_rules();
  const sim::BodyId body = world.find_body(body_id);
  if (!world.is_valid(body)) return;
  const sim::BodyState st = world.body_state(body);
  if (st.motion != sim::MotionType::Dynamic || st.kind == SandboxRules::kKindCharacter) return;
  const Vec3 com = st.position + st.rotation * world.local_center_of_mass(body);
  constexpr float w = SandboxRules::kDragOmega;
  Vec3 accel = (to - com) * (w * w) - st.linear_velocity * (2.0f * w) - world.settings().gravity;
  const float len = std::sqrt(glm::dot(accel, accel));
  if (len > SandboxRules::kDragMaxAccel) accel = accel * (SandboxRules::kDragMaxAccel / len);
  const float dt = 1.0f / float(world.settings().tick_rate);
  world.apply_impulse(body, accel * (world.mass(body) * dt), com);
}

// A gravity field value other than "keep" sets the match's gravity mode and the world's.
void set_gravity_mode(Match& match, uint32_t mode) {
  auto& g = match.state();
  if (g.get_u32(kGravityMode) == mode) return;
  g.set_u32(kGravityMode, mode);
  match.world_for_rules().set_gravity(match.scene().settings.gravity * SandboxRules::gravity_scale(mode));
}

}  // namespace

float SandboxRules::gravity_scale(uint32_t mode) {
  switch (mode) {
    case kGravityOff: return 0.0f;
    case kGravityLow: return 0.25f;
    case kGravityHigh: return 2.0f;
    default: return 1.0f;
  }
}

game::GameSpec SandboxRules::make_spec() {
  game::GameSpec spec;
  spec.name = "sandbox";
  // 2: spawning, dragging and the gravity switch; 3: a spawn is a change of spawn_seq.
  spec.version = 3;
  spec.input.add_stick("move", 127);
  spec.input.add_angle("look_yaw", 16);
  spec.input.add_buttons("buttons", {"jump", "fire"});
  const Vec3 lo(-kAreaHalf, kAreaLow, -kAreaHalf), hi(kAreaHalf, kAreaHigh, kAreaHalf);
  spec.input.add_enum("spawn", {"none", "box", "sphere", "capsule"});
  spec.input.add_point3("spawn_at", lo, hi, kAreaStep);
  spec.input.add_int("drag_body", 0, (1 << 24) - 1);
  spec.input.add_point3("drag_to", lo, hi, kAreaStep);
  spec.input.add_enum("gravity", {"keep", "normal", "off", "low", "high"});
  spec.input.add_int("spawn_seq", 0, int32_t(kSpawnSeqMax));
  spec.state.player.add("fire_cooldown", game::StateType::U32);
  spec.state.player.add("thrown_count", game::StateType::U32);
  spec.state.player.add("thrown", game::StateType::U32, kMaxBallsPerPlayer);
  spec.state.player.add("spawn_cooldown", game::StateType::U32);
  spec.state.player.add("spawn_seq_applied", game::StateType::U32);
  spec.state.global.add("gravity_mode", game::StateType::U32);
  spec.state.global.add("spawned_count", game::StateType::U32);
  spec.state.global.add("spawned", game::StateType::U32, kMaxSpawned);
  spec.max_bodies_per_player = 1 + kMaxBallsPerPlayer;
  spec.max_extra_bodies = kMaxSpawned;
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

void SandboxRules::apply_visit(Match& match, PlayerSlot& slot, const InputFrame& frame) {
  const game::Layout& in = match.input_layout();
  if (uint32_t c = slot.state.get_u32(kSpawnCooldown); c > 0) slot.state.set_u32(kSpawnCooldown, c - 1);
  if (int32_t g = in.integer(frame, kGravity); g > 0) set_gravity_mode(match, uint32_t(g - 1));
  spawn_for(match, slot, uint32_t(in.integer(frame, kSpawnSeq)), uint32_t(in.integer(frame, kSpawn)),
            in.point3(frame, kSpawnAt));
  if (int32_t body = in.integer(frame, kDragBody); body > 0) drag(match, uint32_t(body), in.point3(frame, kDragTo));
}

void SandboxRules::apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame) {
  const game::Layout& in = match.input_layout();
  sim::World& world = match.world_for_rules();
  uint32_t cooldown = slot.state.get_u32(kFireCooldown);
  if (cooldown > 0) slot.state.set_u32(kFireCooldown, --cooldown);
  apply_visit(match, slot, frame);
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

void set_sandbox_visit(game::InputFrame& f, const SandboxVisit& v) {
  static const game::Layout layout = SandboxRules::make_spec().input;
  layout.set_integer(f, SandboxRules::kSpawn, int32_t(v.spawn));
  layout.set_point3(f, SandboxRules::kSpawnAt, v.spawn_at);
  layout.set_integer(f, SandboxRules::kDragBody, int32_t(v.drag_body & 0xffffffu));
  layout.set_point3(f, SandboxRules::kDragTo, v.drag_to);
  layout.set_integer(f, SandboxRules::kGravity, int32_t(v.gravity));
  layout.set_integer(f, SandboxRules::kSpawnSeq, int32_t(v.spawn_seq & SandboxRules::kSpawnSeqMax));
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
