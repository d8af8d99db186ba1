// The pushball rules. Everything a match must remember lives in its declared state (the
// handles in pushball_rules.h) or its world; PushballRules itself holds nothing, so the
// server, a predicting client and a replay each step the same match from the same bytes.
#include "pushball_rules.h"

#include <keel/game/module.h>
#include <keel/sim/det_math.h>

#include <cmath>
#include <string>

namespace keel::games::pushball {

using game::InputFrame;
using game::Match;
using game::PlayerSlot;
using game::StateType;
using game::Values;
using sim::Vec3;

namespace {

// The floor-plane heading of an aim angle, and the direction to its right.
void heading(float angle, Vec3& forward, Vec3& right) {
  const auto sc = sim::dmath::sincos(angle);
  forward = Vec3(sc.cos, 0.0f, sc.sin);
  right = Vec3(-sc.sin, 0.0f, sc.cos);  // forward x up
}

float horizontal_length(Vec3 v) { return std::sqrt(v.x * v.x + v.z * v.z); }

int32_t payload_id(uint32_t id) { return id > uint32_t(kMaxIdInPayload) ? kMaxIdInPayload : int32_t(id); }

// Which goal a point is in: 0 (at -x), 1 (at +x), or -1 for neither.
int goal_of(Vec3 p) {
  // Every test asks for "inside", so a position that is not a number is in no goal.
  const float ax = std::fabs(p.x);
  const bool inside = ax >= kGoalDepthStart && ax <= kGoalDepthEnd && std::fabs(p.z) <= kGoalHalfWidth &&
                      p.y >= 0.0f && p.y <= kGoalHeight;
  return inside ? (p.x < 0.0f ? 0 : 1) : -1;
}

sim::BodyDef ball_def() {
  sim::BodyDef def;
  def.motion = sim::MotionType::Dynamic;
  def.mass = kBallMass;
  def.position = Vec3(0.0f, kBallRadius, 0.0f);
  def.linear_damping = 0.3f;
  def.angular_damping = 0.3f;
  def.can_sleep = false;  // a ball at rest at the centre must still feel the kick-off
  def.kind = kKindBall;
  sim::ColliderDef sphere;
  sphere.shape = sim::ShapeType::Sphere;
  sphere.radius = kBallRadius;
  sphere.friction = 0.3f;
  sphere.restitution = 0.6f;
  def.colliders.push_back(sphere);
  return def;
}

sim::BodyDef pusher_def(Vec3 position) {
  sim::BodyDef def;
  def.motion = sim::MotionType::Dynamic;
  def.mass = kPusherMass;
  def.position = position;
  def.freeze_rotation = true;  // a puck that slides where the stick says, never rolls away
  def.kind = kKindPusher;
  def.can_sleep = false;
  sim::ColliderDef sphere;
  sphere.shape = sim::ShapeType::Sphere;
  sphere.radius = kPusherRadius;
  sphere.friction = 0.1f;
  sphere.restitution = 0.2f;
  def.colliders.push_back(sphere);
  return def;
}

// Where the k-th player to join (team k % 2) starts: the scene's spawn point for the
// slot, moved onto the team's half (team 0 at -x, team 1 at +x) whatever side the scene
// put it on, so a scene cannot start a player in the other team's half.
Vec3 pusher_start(const Match& match, const PlayerSlot& slot, uint32_t k) {
  const auto& spawns = match.scene().spawn_points;
  const float side = k % 2 == 0 ? -1.0f : 1.0f;
  if (spawns.empty()) {
    const float lane = float((k / 2) % 4) * 3.0f - 4.5f;
    return Vec3(side * kDefaultSpawnX, kPusherRadius, lane);
  }
  const Vec3 feet = spawns[slot.spawn_index % spawns.size()].position;
  return Vec3(side * std::fabs(feet.x), feet.y + kPusherRadius, feet.z);
}

// Puts ball `i` back at the centre, at rest, and starts its kick-off clock.
void reset_ball(Match& match, uint32_t i) {
  auto& s = match.state();
  match.destroy(s.get_u32(global::kBall, i));
  s.set_u32(global::kBall, match.spawn(ball_def()), i);  // 0 when the match is full: retried next step
  s.set_i32(global::kLastTouch, -1, i);
  match.set_timer(kKickoffTimer + i, kKickoffDelay);
}

// After a step: the pusher nearest to the ball's centre within kTouchRange touched it
// (players in id order, a tie keeps the lower id).
void note_touch(Match& match, uint32_t i, Vec3 ball) {
  const sim::World& world = match.world();
  float best = kTouchRange * kTouchRange;
  int32_t toucher = -1;
  for (const PlayerSlot& slot : match.players()) {
    sim::BodyId pusher = world.find_body(slot.state.get_u32(player::kPusher));
    if (!world.is_valid(pusher)) continue;
    const Vec3 d = world.body_state(pusher).position - ball;
    const float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
    if (d2 <= best && (toucher < 0 || d2 < best)) {
      best = d2;
      toucher = payload_id(slot.player);
    }
  }
  if (toucher >= 0) match.state().set_i32(global::kLastTouch, toucher, i);
}

void score_goal(Match& match, uint32_t i, int goal) {
  auto& s = match.state();
  const int team = 1 - goal;  // a ball in a team's own goal scores for the other
  s.set_i32(global::kScore, s.get_i32(global::kScore, team) + 1, team);
  const game::Layout& payload = match.spec().events[kGoalEvent].payload;
  Values v;
  payload.set_integer(v, kGoalTeam, team);
  payload.set_integer(v, kGoalScorer, s.get_i32(global::kLastTouch, i));
  payload.set_integer(v, kGoalBall, payload_id(s.get_u32(global::kBall, i)));
  match.emit(kGoalEvent, v);
  reset_ball(match, i);
}

// The round ends at kGoalsToWin or when the clock runs out; once, with round_over.
void check_end(Match& match) {
  auto& s = match.state();
  const int32_t a = s.get_i32(global::kScore, 0), b = s.get_i32(global::kScore, 1);
  if (a < int32_t(kGoalsToWin) && b < int32_t(kGoalsToWin) && s.get_u32(global::kTicksLeft) > 0) return;
  const int32_t winner = a > b ? 0 : b > a ? 1 : -1;
  s.set_bool(global::kOver, true);
  s.set_i32(global::kWinner, winner);
  const game::Layout& payload = match.spec().events[kRoundOverEvent].payload;
  Values v;
  payload.set_integer(v, kRoundOverWinner, winner);
  match.emit(kRoundOverEvent, v);
}

// Releasing `charge` after `ticks` ticks: every ball within kPushRange of the pusher's
// centre gets an impulse along the aim, in proportion to the charge.
void push(Match& match, const PlayerSlot& slot, Vec3 from, Vec3 forward, uint32_t ticks) {
  sim::World& world = match.world_for_rules();
  auto& s = match.state();
  const float strength = kPushImpulse * float(ticks) / float(kMaxCharge);
  const Vec3 impulse = (forward + Vec3(0.0f, kPushLift, 0.0f)) * strength;
  for (uint32_t i = 0; i < kBalls; ++i) {
    sim::BodyId ball = world.find_body(s.get_u32(global::kBall, i));
    if (!world.is_valid(ball)) continue;
    const Vec3 at = world.body_state(ball).position;
    const Vec3 d = at - from;
    if (d.x * d.x + d.y * d.y + d.z * d.z > kPushRange * kPushRange) continue;
    world.apply_impulse(ball, impulse, at);
    s.set_i32(global::kLastTouch, payload_id(slot.player), i);
  }
}

}  // namespace

game::GameSpec make_spec() {
  game::GameSpec spec;
  spec.name = "pushball";
  spec.version = 1;
  spec.input.add_stick("drive", kDriveSteps);
  spec.input.add_angle("aim", kAimBits);
  spec.input.add_bool("boost");
  spec.input.add_buttons("push", {"charge"});

  spec.state.global.add("score", StateType::I32, 2);
  spec.state.global.add("ticks_left", StateType::U32);
  spec.state.global.add("round", StateType::U32);
  spec.state.global.add("joined", StateType::U32);
  spec.state.global.add("over", StateType::Bool);
  spec.state.global.add("winner", StateType::I32);
  spec.state.global.add("ball", StateType::U32, kBalls);
  spec.state.global.add("last_touch", StateType::I32, kBalls);
  spec.state.player.add("team", StateType::I32);
  spec.state.player.add("charge", StateType::U32);
  spec.state.player.add("pusher", StateType::U32);

  game::EventType goal{"goal", {}};
  goal.payload.add_int("team", 0, 1);
  goal.payload.add_int("scorer", -1, kMaxIdInPayload);
  goal.payload.add_int("ball", 0, kMaxIdInPayload);
  game::EventType kickoff{"kickoff", {}};
  kickoff.payload.add_int("ball", 0, kMaxIdInPayload);
  kickoff.payload.add_int("direction", 0, int32_t(kKickoffDirections) - 1);
  kickoff.payload.add_int("round", 0, 65535);
  game::EventType round_over{"round_over", {}};
  round_over.payload.add_int("winner", -1, 1);
  spec.events = {goal, kickoff, round_over};

  spec.max_bodies_per_player = 1;
  // A goal destroys and spawns a ball at one apply point; room for both is plenty.
  spec.max_extra_bodies = 2 * kBalls;
  return spec;
}

const char* self_check() {
  static std::string problem;
  const game::GameSpec spec = make_spec();
  if (keel::Status st = spec.validate(); !st) {
    problem = st.error().message;
    return problem.c_str();
  }
  const game::Layout& in = spec.input;
  if (in.find("drive") != kDrive || in.find("aim") != kAim || in.find("boost") != kBoost || in.find("push") != kPush) {
    return "the input field constants do not match the layout";
  }
  const auto& g = spec.state.global.fields();
  if (g.size() != 8 || g[0].name != "score" || g[6].name != "ball" || g[7].name != "last_touch" ||
      spec.state.global.elements() != global::kLastTouch.offset + kBalls ||
      spec.state.player.elements() != player::kPusher.offset + 1) {
    return "the state handles do not match the declared state";
  }
  if (spec.find_event("goal") != kGoalEvent || spec.find_event("kickoff") != kKickoffEvent ||
      spec.find_event("round_over") != kRoundOverEvent) {
    return "the event constants do not match the declared events";
  }
  return nullptr;
}

void PushballRules::on_start(Match& match) {
  auto& s = match.state();
  s.set_u32(global::kTicksLeft, kRoundSeconds * match.scene().settings.tick_rate);
  s.set_i32(global::kWinner, -1);
  for (uint32_t i = 0; i < kBalls; ++i) reset_ball(match, i);
}

void PushballRules::on_join(Match& match, PlayerSlot& slot) {
  auto& s = match.state();
  const uint32_t k = s.get_u32(global::kJoined);
  s.set_u32(global::kJoined, k + 1);
  slot.state.set_i32(player::kTeam, int32_t(k % 2));
  // Spawned at the apply point after before_step, so it is there for this tick's input.
  const uint32_t pusher = match.spawn(pusher_def(pusher_start(match, slot, k)));
  slot.state.set_u32(player::kPusher, pusher);
  slot.character = pusher;
}

void PushballRules::on_leave(Match& match, PlayerSlot& slot) {
  match.destroy(slot.state.get_u32(player::kPusher));
  slot.state.set_u32(player::kPusher, 0);
  slot.character = 0;
}

void PushballRules::on_timer(Match& match, uint32_t timer) {
  if (timer < kKickoffTimer || timer >= kKickoffTimer + kBalls) return;
  const uint32_t i = timer - kKickoffTimer;
  auto& s = match.state();
  sim::World& world = match.world_for_rules();
  sim::BodyId ball = world.find_body(s.get_u32(global::kBall, i));
  if (!world.is_valid(ball) || s.get_bool(global::kOver)) return;
  // The direction is drawn from the match's generator, so neither team can count on it.
  const uint32_t direction = match.random_below(kKickoffDirections);
  Vec3 forward, right;
  heading(float(direction) * (sim::dmath::kTwoPi / float(kKickoffDirections)), forward, right);
  world.set_linear_velocity(ball, forward * kKickoffSpeed);
  const uint32_t round = s.get_u32(global::kRound) + 1;
  s.set_u32(global::kRound, round);
  const game::Layout& payload = match.spec().events[kKickoffEvent].payload;
  Values v;
  payload.set_integer(v, kKickoffBall, payload_id(s.get_u32(global::kBall, i)));
  payload.set_integer(v, kKickoffDirection, int32_t(direction));
  payload.set_integer(v, kKickoffRound, int32_t(round > 65535 ? 65535 : round));
  match.emit(kKickoffEvent, v);
}

void PushballRules::apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame) {
  if (match.state().get_bool(global::kOver)) return;
  sim::World& world = match.world_for_rules();
  sim::BodyId pusher = world.find_body(slot.state.get_u32(player::kPusher));
  if (!world.is_valid(pusher)) return;
  const game::Layout& in = match.input_layout();
  const sim::BodyState body = world.body_state(pusher);

  // The stick is in the aim's frame; the pusher's floor-plane velocity moves toward the
  // wished one by at most kDriveAccel a second, and its vertical velocity is left alone.
  Vec3 forward, right;
  heading(in.angle(frame, kAim), forward, right);
  const Vec3 stick = in.stick(frame, kDrive);
  const float speed = in.boolean(frame, kBoost) ? kBoostSpeed : kDriveSpeed;
  const Vec3 wished = (right * stick.x + forward * stick.y) * speed;
  const Vec3 v = body.linear_velocity;
  Vec3 dv(wished.x - v.x, 0.0f, wished.z - v.z);
  const float max_dv = kDriveAccel / float(world.settings().tick_rate);
  const float len = horizontal_length(dv);
  if (len > max_dv) dv = dv * (max_dv / len);
  world.set_linear_velocity(pusher, v + dv);

  // Holding charge counts ticks (up to kMaxCharge); letting go pushes with that charge.
  const uint32_t charge = slot.state.get_u32(player::kChargeTicks);
  if (in.button(frame, kPush, kCharge)) {
    slot.state.set_u32(player::kChargeTicks, charge < kMaxCharge ? charge + 1 : kMaxCharge);
  } else if (charge > 0) {
    push(match, slot, body.position, forward, charge);
    slot.state.set_u32(player::kChargeTicks, 0);
  }
}

void PushballRules::after_step(Match& match) {
  auto& s = match.state();
  if (s.get_bool(global::kOver)) return;
  const sim::World& world = match.world();
  for (uint32_t i = 0; i < kBalls; ++i) {
    sim::BodyId ball = world.find_body(s.get_u32(global::kBall, i));
    if (!world.is_valid(ball)) {  // never spawned (the match was full) or removed
      reset_ball(match, i);
      continue;
    }
    const Vec3 p = world.body_state(ball).position;
    note_touch(match, i, p);
    if (const int goal = goal_of(p); goal >= 0) {
      score_goal(match, i, goal);
    } else if (!(p.y > kFallHeight) || !std::isfinite(p.x) || !std::isfinite(p.z)) {
      reset_ball(match, i);
    }
  }
  const uint32_t left = s.get_u32(global::kTicksLeft);
  s.set_u32(global::kTicksLeft, left > 0 ? left - 1 : 0);
  check_end(match);
}

std::optional<std::string> PushballRules::match_over(const Match& match) const {
  const auto& s = match.state();
  if (!s.get_bool(global::kOver)) return std::nullopt;
  return result_text(s.get_i32(global::kScore, 0), s.get_i32(global::kScore, 1));
}

}  // namespace keel::games::pushball

KEEL_GAME_MODULE("pushball", keel::games::pushball::PushballRules, keel::games::pushball::self_check)
