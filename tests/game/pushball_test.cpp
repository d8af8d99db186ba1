// Pushball (games/pushball/) loaded as a module and played: teams, the charged push,
// kick-offs, the clock, and a scripted four-player match stepped at 1, 2 and 4 threads,
// saved and restored, and checked against its golden hash chain.
//
// Regenerate the golden chain (tests/golden/pushball.script.golden) after a change that
// is meant to change what a pushball step does, and say why in the commit:
//   KEEL_REGEN_GOLDEN=1 build/bin/keel_game_tests --gtest_filter='Pushball.GoldenHashChain'
#include "pushball_rules.h"

#include <keel/game/match.h>
#include <keel/game/registry.h>
#include <keel/scene/scene.h>
#include <keel/sim/det_math.h>

#include <gtest/gtest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace keel::game {
namespace {

namespace pb = games::pushball;
using sim::Vec3;

const std::string kModule = std::string(KEEL_GAME_MODULE_DIR) + "/pushball.so";
const std::string kScene = std::string(KEEL_SOURCE_DIR) + "/games/pushball/pushball.json";
const std::string kGolden = std::string(KEEL_SOURCE_DIR) + "/tests/golden/pushball.script.golden";

const RulesRegistry& registry() {
  static const RulesRegistry r = [] {
    RulesRegistry reg;
    Status st = reg.add_module(kModule);
    EXPECT_TRUE(st) << st.error().message;
    return reg;
  }();
  return r;
}

const sim::SceneDef& scene() {
  static const sim::SceneDef s = [] {
    auto loaded = scene::load_scene_file(kScene);
    EXPECT_TRUE(loaded) << loaded.error().message;
    return loaded ? *loaded : sim::SceneDef{};
  }();
  return s;
}

Match new_match(const sim::SceneDef& from = scene()) {
  auto rules = registry().make("pushball");
  EXPECT_TRUE(rules) << rules.error().message;
  auto m = Match::create(from, std::move(*rules));
  EXPECT_TRUE(m) << m.error().message;
  return std::move(*m);
}

Vec3 position(const Match& m, uint32_t body) { return m.world().body_state(m.world().find_body(body)).position; }
uint32_t ball_id(const Match& m) { return m.state().get_u32(pb::global::kBall, 0); }
int32_t score(const Match& m, int team) { return m.state().get_i32(pb::global::kScore, uint32_t(team)); }

InputFrame frame(const Layout& in, float strafe, float throttle, float aim, bool boost, bool charge) {
  InputFrame f;
  in.set_stick(f, pb::kDrive, strafe, throttle);
  in.set_angle(f, pb::kAim, aim);
  in.set_bool(f, pb::kBoost, boost);
  in.set_button(f, pb::kPush, pb::kCharge, charge);
  return f;
}

TEST(Pushball, SceneIsThePitchTheRulesExpect) {
  const sim::SceneDef& s = scene();
  EXPECT_EQ(s.name, "pushball");
  EXPECT_EQ(s.settings.tick_rate, 60u);
  ASSERT_EQ(s.bodies.size(), 5u);  // the floor and four walls, all static
  for (const sim::BodyDef& b : s.bodies) EXPECT_EQ(b.motion, sim::MotionType::Static);
  // The end walls' inner faces are the back of the goal zones.
  const sim::BodyDef& end = s.bodies[2];
  EXPECT_EQ(end.position.x - end.colliders[0].half_extents.x, pb::kGoalDepthEnd);
  EXPECT_EQ(s.bodies[0].position.y + s.bodies[0].colliders[0].half_extents.y, 0.0f);  // floor top
  ASSERT_EQ(s.spawn_points.size(), 4u);
  EXPECT_LT(s.spawn_points[0].position.x, 0.0f);  // they alternate halves as players alternate teams
  EXPECT_GT(s.spawn_points[1].position.x, 0.0f);
}

TEST(Pushball, TeamsAlternateByJoinOrderAndSpawnOnTheirHalf) {
  Match m = new_match();
  const Layout& in = m.input_layout();
  TickInputs t;
  for (uint32_t p : {10u, 20u, 30u, 40u, 50u}) {
    t.events.push_back({PlayerEvent::Kind::Join, p});
    t.inputs.push_back({p, frame(in, 0, 0, 0, false, false)});
  }
  m.step(t);
  const float expected_x[5] = {-8, 8, -8, 8, -8};  // spawn points 0..3, then 0 again
  const float expected_z[5] = {-3, -3, 3, 3, -3};
  ASSERT_EQ(m.players().size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) {
    const PlayerSlot& slot = m.players()[i];
    EXPECT_EQ(slot.state.get_i32(pb::player::kTeam), int32_t(i % 2)) << slot.player;
    const uint32_t pusher = slot.state.get_u32(pb::player::kPusher);
    EXPECT_EQ(slot.character, pusher);
    ASSERT_TRUE(m.world().find_body(pusher).valid());
    const Vec3 p = position(m, pusher);
    if (i == 0 || i == 4) {  // spawned on top of each other and pushed apart
      EXPECT_LT(p.x, -7.0f);
      continue;
    }
    EXPECT_NEAR(p.x, expected_x[i], 1e-3f);
    EXPECT_NEAR(p.z, expected_z[i], 1e-3f);
    EXPECT_NEAR(p.y, pb::kPusherRadius, 0.02f);  // on the floor
  }
  // The fifth player shares spawn point 0 with the first: both are in the world.
  EXPECT_EQ(m.world().body_count(), 5u + 1u + 5u);
  // Leaving removes the pusher at the next apply point.
  const uint32_t gone = m.players()[0].state.get_u32(pb::player::kPusher);
  m.step(TickInputs{{{PlayerEvent::Kind::Leave, 10}}, {}});
  EXPECT_FALSE(m.world().find_body(gone).valid());
}

TEST(Pushball, ChargeBuildsAndReleasePushesTheBall) {
  Match m = new_match();
  const Layout& in = m.input_layout();
  const InputFrame idle = frame(in, 0, 0, 0, false, false);  // aim 0: along +x
  const InputFrame hold = frame(in, 0, 0, 0, false, true);
  m.step(TickInputs{{{PlayerEvent::Kind::Join, 5}}, {{5, idle}}});
  // Put the pusher 1.2 m behind the resting ball (inside the 1.6 m push range, outside
  // touching distance 0.5 + 0.4 + 0.1): a test sets up the world as a level would.
  const uint32_t pusher = m.players()[0].state.get_u32(pb::player::kPusher);
  m.world_for_rules().set_transform(m.world().find_body(pusher), sim::Transform{Vec3(-1.2f, 0.5f, 0.0f), {}});
  for (int i = 0; i < 30; ++i) m.step(TickInputs{{}, {{5, hold}}});
  EXPECT_EQ(m.players()[0].state.get_u32(pb::player::kChargeTicks), 30u);
  const uint32_t ball = ball_id(m);
  EXPECT_NEAR(m.world().body_state(m.world().find_body(ball)).linear_velocity.x, 0.0f, 1e-4f);
  EXPECT_EQ(m.state().get_i32(pb::global::kLastTouch, 0), -1);

  m.step(TickInputs{{}, {{5, idle}}});  // release: tick 32, before the kick-off at 60
  // 96 N s * 30 / 60 = 48 N s along (1, 0.15, 0) on 8 kg: 6 m/s forward, 0.9 m/s up,
  // less one tick of damping (0.3/s), gravity and floor friction.
  const sim::BodyState b = m.world().body_state(m.world().find_body(ball));
  EXPECT_NEAR(b.linear_velocity.x, 6.0f, 0.1f);
  EXPECT_NEAR(b.linear_velocity.y, 0.9f - 9.81f / 60.0f, 0.1f);
  EXPECT_NEAR(b.linear_velocity.z, 0.0f, 1e-3f);
  EXPECT_EQ(m.players()[0].state.get_u32(pb::player::kChargeTicks), 0u);
  EXPECT_EQ(m.state().get_i32(pb::global::kLastTouch, 0), 5);

  // Holding longer than a full charge adds nothing past kMaxCharge.
  for (int i = 0; i < 100; ++i) m.step(TickInputs{{}, {{5, hold}}});
  EXPECT_EQ(m.players()[0].state.get_u32(pb::player::kChargeTicks), pb::kMaxCharge);
}

TEST(Pushball, KickoffDirectionComesFromTheGeneratorAndTheClockEndsADraw) {
  Match m = new_match();  // no players: the ball alone
  const uint32_t ball = ball_id(m);
  for (uint32_t t = 1; t < pb::kKickoffDelay; ++t) {
    m.step({});
    ASSERT_TRUE(m.events().empty()) << "tick " << t;
  }
  m.step({});  // step 60: the kick-off timer set in on_start for 60 ticks fires
  ASSERT_EQ(m.events().size(), 1u);
  const GameEvent kick = m.events()[0];
  ASSERT_EQ(kick.type, pb::kKickoffEvent);
  const Layout& payload = m.spec().events[pb::kKickoffEvent].payload;
  EXPECT_EQ(payload.integer(kick.payload, pb::kKickoffBall), int32_t(ball));
  EXPECT_EQ(payload.integer(kick.payload, pb::kKickoffRound), 1);
  EXPECT_EQ(m.state().get_u32(pb::global::kRound), 1u);
  const int32_t direction = payload.integer(kick.payload, pb::kKickoffDirection);
  ASSERT_GE(direction, 0);
  ASSERT_LT(direction, int32_t(pb::kKickoffDirections));
  // The ball moves along direction * 2pi / 16 at close to 2 m/s (one step of damping
  // and rolling friction off).
  const Vec3 v = m.world().body_state(m.world().find_body(ball)).linear_velocity;
  const float want = float(direction) * sim::dmath::kTwoPi / float(pb::kKickoffDirections);
  const auto sc = sim::dmath::sincos(want);
  EXPECT_NEAR(sc.cos * v.z - sc.sin * v.x, 0.0f, 0.01f);  // no sideways part
  EXPECT_NEAR(sc.cos * v.x + sc.sin * v.z, pb::kKickoffSpeed, 0.1f);

  // 180 s at 60 Hz = 10800 ticks; no goal happens, so it is a draw at 0-0, once.
  const uint64_t round_ticks = uint64_t(pb::kRoundSeconds) * 60;
  while (m.tick() < round_ticks - 1) {
    m.step({});
    ASSERT_FALSE(m.rules().match_over(m)) << "tick " << m.tick();
  }
  EXPECT_EQ(m.state().get_u32(pb::global::kTicksLeft), 1u);
  m.step({});
  ASSERT_EQ(m.events().size(), 1u);
  EXPECT_EQ(m.events()[0].type, pb::kRoundOverEvent);
  EXPECT_EQ(m.spec().events[pb::kRoundOverEvent].payload.integer(m.events()[0].payload, pb::kRoundOverWinner), -1);
  auto reason = m.rules().match_over(m);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "draw 0-0");
  m.step({});
  EXPECT_TRUE(m.events().empty());  // round_over is sent once
}

TEST(Pushball, HostileFramesAndChurnKeepTheWorldSound) {
  // Raw codes anywhere in 32 bits (the match sanitises them), players joining and
  // leaving every few ticks: the game must keep every body finite and its state bounded.
  Match m = new_match();
  uint64_t seed = 0x1234567u;
  auto next = [&seed] {  // SplitMix64: the test's own generator
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (uint64_t t = 0; t < 1500; ++t) {
    TickInputs in;
    const uint32_t who = uint32_t(next() % 8) + 1;
    if (t % 7 == 0) in.events.push_back({m.find_player(who) ? PlayerEvent::Kind::Leave : PlayerEvent::Kind::Join, who});
    for (uint32_t p = 1; p <= 8; ++p) {
      InputFrame f;
      for (uint32_t& c : f.code) c = uint32_t(next());
      in.inputs.push_back({p, f});
    }
    m.step(in);
    const auto fault = m.world().first_non_finite_body();
    ASSERT_FALSE(fault) << "tick " << t << ": body " << fault->body << " " << fault->field;
    for (const PlayerSlot& slot : m.players()) {
      ASSERT_LE(slot.state.get_u32(pb::player::kChargeTicks), pb::kMaxCharge);
      ASSERT_TRUE(m.input_layout().valid(slot.last_input));
    }
    // The scene's 5 bodies, one ball (a goal's old ball is gone by the end of the step) and a
    // pusher each.
    ASSERT_EQ(m.world().body_count(), 5u + 1u + m.players().size()) << "tick " << t;
  }
  EXPECT_GE(m.state().get_u32(pb::global::kJoined), 8u);
}

// --- the scripted match ---

// The four players' inputs for the coming tick, from the match as it is. Every player
// attacks the other team's goal: it drives to a point behind the ball on the ball's line
// to that goal (around the ball when it is on the wrong side), then charges for 20 ticks
// and lets go. Team 0 (players 1 and 3) boosts when far; team 1 drives at half throttle,
// and its player 4 keeps goal instead, following the ball's z on its goal line. Only
// dmath and sqrt, so the script gives the same frames on every machine.
Vec3 on_pitch(Vec3 p) {
  return Vec3(p.x < -13.0f ? -13.0f : p.x > 13.0f ? 13.0f : p.x, p.y, p.z < -9.0f ? -9.0f : p.z > 9.0f ? 9.0f : p.z);
}

InputFrame attacker(const Layout& in, Vec3 q, Vec3 b, uint32_t charge, float goal_x, float throttle, bool boost) {
  Vec3 to_goal(goal_x - b.x, 0.0f, -b.z);
  to_goal = to_goal / std::sqrt(to_goal.x * to_goal.x + to_goal.z * to_goal.z);
  Vec3 target = b - to_goal * 1.2f;
  const Vec3 from_ball(q.x - b.x, 0.0f, q.z - b.z);
  if (from_ball.x * to_goal.x + from_ball.z * to_goal.z > -0.6f) {
    // On the goal side of the ball: go round it on the side the pusher is on.
    const Vec3 across(-to_goal.z, 0.0f, to_goal.x);
    const float side = from_ball.x * across.x + from_ball.z * across.z >= 0.0f ? 1.0f : -1.0f;
    target = b - to_goal * 1.5f + across * (1.6f * side);
  }
  target = on_pitch(target);
  const Vec3 d(target.x - q.x, 0.0f, target.z - q.z);
  const float dist = std::sqrt(d.x * d.x + d.z * d.z);
  if (dist > 0.6f && charge == 0) {
    return frame(in, 0.0f, throttle, sim::dmath::atan2(d.z, d.x), boost && dist > 4.0f, false);
  }
  return frame(in, 0.0f, 0.2f, sim::dmath::atan2(to_goal.z, to_goal.x), false, charge < 20);
}

InputFrame keeper(const Layout& in, Vec3 q, Vec3 b) {
  const float z = b.z < -2.5f ? -2.5f : b.z > 2.5f ? 2.5f : b.z;
  const Vec3 d(12.0f - q.x, 0.0f, z - q.z);
  const float dist = std::sqrt(d.x * d.x + d.z * d.z);
  return frame(in, 0.0f, dist > 0.5f ? 0.4f : 0.0f, sim::dmath::atan2(d.z, d.x), false, false);
}

TickInputs script(const Match& m) {
  TickInputs t;
  if (m.tick() == 0) {
    for (uint32_t p = 1; p <= 4; ++p) t.events.push_back({PlayerEvent::Kind::Join, p});
  }
  const Layout& in = m.input_layout();
  const sim::World& w = m.world();
  sim::BodyId ball = w.find_body(ball_id(m));
  const Vec3 b = w.is_valid(ball) ? w.body_state(ball).position : Vec3(0.0f);
  for (uint32_t p = 1; p <= 4; ++p) {
    const PlayerSlot* slot = m.find_player(p);
    Vec3 q(p % 2 == 1 ? -8.0f : 8.0f, 0.5f, 0.0f);
    uint32_t charge = 0;
    if (slot != nullptr) {
      sim::BodyId pusher = w.find_body(slot->state.get_u32(pb::player::kPusher));
      if (w.is_valid(pusher)) q = w.body_state(pusher).position;
      charge = slot->state.get_u32(pb::player::kChargeTicks);
    }
    const InputFrame f = p % 2 == 1 ? attacker(in, q, b, charge, 14.25f, 1.0f, true)
                         : p == 2   ? attacker(in, q, b, charge, -14.25f, 0.5f, false)
                                    : keeper(in, q, b);
    t.inputs.push_back({p, f});
  }
  return t;
}

struct ScriptRun {
  std::vector<uint64_t> hashes;  // after each step
  std::vector<std::pair<uint64_t, GameEvent>> events;
  std::string reason;
  uint64_t end_tick = 0;
};

constexpr uint64_t kScriptTicks = 20000;  // past the round clock: every run ends

ScriptRun play(Match& m, uint32_t threads, uint64_t until = kScriptTicks) {
  m.set_threads(threads);
  ScriptRun r;
  while (m.tick() < until) {
    m.step(script(m));
    r.hashes.push_back(m.hash());
    for (const GameEvent& e : m.events()) r.events.push_back({m.tick(), e});
    if (auto over = m.rules().match_over(m)) {
      r.reason = *over;
      r.end_tick = m.tick();
      break;
    }
  }
  return r;
}

const ScriptRun& reference_run() {
  static const ScriptRun r = [] {
    Match m = new_match();
    return play(m, 1);
  }();
  return r;
}

TEST(Pushball, ScriptedMatchScoresResetsTheBallAndEnds) {
  Match m = new_match();
  m.set_threads(1);
  const Layout& goal_payload = m.spec().events[pb::kGoalEvent].payload;
  int32_t goals[2] = {0, 0};
  int round_overs = 0;
  std::optional<std::string> reason;
  bool checked_first_goal = false;
  struct Goal {
    uint64_t tick;
    int32_t team, scorer, toucher_before;
  };
  std::vector<Goal> goal_log;
  while (!reason && m.tick() < kScriptTicks) {
    const uint32_t ball_before = ball_id(m);
    const int32_t toucher_before = m.state().get_i32(pb::global::kLastTouch, 0);
    m.step(script(m));
    for (const GameEvent& e : m.events()) {
      if (e.type == pb::kRoundOverEvent) ++round_overs;
      if (e.type != pb::kGoalEvent) continue;
      const int32_t team = goal_payload.integer(e.payload, pb::kGoalTeam);
      const int32_t scorer = goal_payload.integer(e.payload, pb::kGoalScorer);
      ASSERT_TRUE(team == 0 || team == 1);
      ++goals[team];
      EXPECT_EQ(score(m, team), goals[team]);
      EXPECT_EQ(goal_payload.integer(e.payload, pb::kGoalBall), int32_t(ball_before));
      // The scorer is the last toucher: a player of the match, or -1 for nobody.
      EXPECT_TRUE(scorer == -1 || (scorer >= 1 && scorer <= 4)) << scorer;
      goal_log.push_back({m.tick(), team, scorer, toucher_before});
      // The ball was put back: a new body at the centre, at rest; the old one is gone.
      const uint32_t now = ball_id(m);
      EXPECT_NE(now, ball_before);
      EXPECT_FALSE(m.world().find_body(ball_before).valid());
      ASSERT_TRUE(m.world().find_body(now).valid());
      const sim::BodyState b = m.world().body_state(m.world().find_body(now));
      EXPECT_EQ(b.position, Vec3(0.0f, pb::kBallRadius, 0.0f));
      EXPECT_EQ(b.linear_velocity, Vec3(0.0f));
      EXPECT_EQ(m.state().get_i32(pb::global::kLastTouch, 0), -1);
      EXPECT_EQ(m.timer_remaining(pb::kKickoffTimer), pb::kKickoffDelay);
      checked_first_goal = true;
    }
    reason = m.rules().match_over(m);
  }
  ASSERT_TRUE(checked_first_goal) << "the script scored no goal";
  ASSERT_TRUE(reason);
  EXPECT_EQ(round_overs, 1);
  EXPECT_EQ(*reason, pb::result_text(goals[0], goals[1]));
  EXPECT_EQ(*reason, "team 0 wins 3-0");
  // The script's goals, worked out once from a run and fixed here: the tick, the team
  // scored for, the last toucher credited. (Players 2 and 4 are team 1: their touches
  // that end in their own goal still count for team 0.)
  ASSERT_EQ(goal_log.size(), 3u);
  const Goal want[3] = {{324, 0, 4, 4}, {689, 0, 1, 1}, {1231, 0, 1, 1}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(goal_log[i].tick, want[i].tick) << i;
    EXPECT_EQ(goal_log[i].team, want[i].team) << i;
    EXPECT_EQ(goal_log[i].scorer, want[i].scorer) << i;
    // The credited player is the one the state named as last toucher before that step.
    EXPECT_EQ(goal_log[i].scorer, goal_log[i].toucher_before) << i;
  }
  EXPECT_EQ(m.tick(), reference_run().end_tick);
}

TEST(Pushball, SameHashChainAtOneTwoAndFourThreads) {
  const ScriptRun& one = reference_run();
  ASSERT_FALSE(one.reason.empty());
  for (uint32_t threads : {2u, 4u}) {
    Match m = new_match();
    const ScriptRun r = play(m, threads);
    ASSERT_EQ(r.hashes.size(), one.hashes.size()) << threads << " threads";
    for (size_t i = 0; i < r.hashes.size(); ++i) {
      ASSERT_EQ(r.hashes[i], one.hashes[i]) << threads << " threads, tick " << i + 1;
    }
    EXPECT_EQ(r.events, one.events);
    EXPECT_EQ(r.reason, one.reason);
  }
}

TEST(Pushball, SaveAtTickTRestoreIntoAFreshMatchAndFinish) {
  const ScriptRun& one = reference_run();
  ASSERT_GT(one.end_tick, 700u);
  for (uint64_t T : {uint64_t(1), uint64_t(61), uint64_t(650), one.end_tick - 1}) {
    Match a = new_match();
    play(a, 1, T);
    const std::vector<uint8_t> saved = a.save_state();
    Match b = new_match();  // fresh rules from the module, fresh world from the scene
    Status st = b.restore_state(saved);
    ASSERT_TRUE(st) << st.error().message;
    ASSERT_EQ(b.hash(), one.hashes[T - 1]) << "T " << T;
    const ScriptRun rest = play(b, 2);
    ASSERT_EQ(rest.hashes.size(), one.hashes.size() - T) << "T " << T;
    for (size_t i = 0; i < rest.hashes.size(); ++i) {
      ASSERT_EQ(rest.hashes[i], one.hashes[T + i]) << "T " << T << ", tick " << T + i + 1;
    }
    EXPECT_EQ(rest.reason, one.reason);
    EXPECT_EQ(rest.end_tick, one.end_tick);
  }
}

// The golden file: a header, then "tick hash" every 60 ticks and at the last tick.
std::string golden_text(const ScriptRun& r) {
  std::ostringstream out;
  out << "# pushball: the scripted four-player match of tests/game/pushball_test.cpp on\n"
         "# games/pushball/pushball.json; the match's hash every 60 ticks and at its end.\n"
         "# Regenerate: KEEL_REGEN_GOLDEN=1 build/bin/keel_game_tests --gtest_filter='Pushball.GoldenHashChain'\n";
  out << "end " << r.end_tick << " " << r.reason << "\n";
  for (size_t i = 0; i < r.hashes.size(); ++i) {
    const uint64_t tick = i + 1;
    if (tick % 60 != 0 && tick != r.end_tick) continue;
    char line[48];
    std::snprintf(line, sizeof line, "%" PRIu64 " %016" PRIx64 "\n", tick, r.hashes[i]);
    out << line;
  }
  return out.str();
}

TEST(Pushball, GoldenHashChain) {
  const std::string text = golden_text(reference_run());
  const char* regen = std::getenv("KEEL_REGEN_GOLDEN");
  if (regen != nullptr && std::string(regen) == "1") {
    std::ofstream(kGolden, std::ios::binary) << text;
    GTEST_SKIP() << "wrote " << kGolden;
  }
  std::ifstream in(kGolden, std::ios::binary);
  ASSERT_TRUE(in) << kGolden << " is missing; write it with KEEL_REGEN_GOLDEN=1";
  std::stringstream golden;
  golden << in.rdbuf();
  // Compared line by line, so a failure names the first tick that differs.
  std::istringstream want(golden.str()), got(text);
  std::string w, g;
  int line = 0;
  while (std::getline(want, w)) {
    ++line;
    ASSERT_TRUE(std::getline(got, g)) << "the run is shorter than the golden file at line " << line;
    ASSERT_EQ(g, w) << "line " << line << " of " << kGolden;
  }
  EXPECT_FALSE(std::getline(got, g)) << "the run is longer than the golden file";
}

}  // namespace
}  // namespace keel::game
