// Lag compensation: the match's pose history and queries "as a player saw the world". A
// target crosses at 10 m/s (1/6 m a tick at 60 Hz, x = -2 + tick / 6); a shooter 100 ms
// (6 ticks) behind fires straight down +z, and the verdicts are checked against positions
// worked out by hand.
#include "lag_rules.h"

#include <keel/sim/state_hash.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace keel::game {
namespace {

using namespace lagtest;

constexpr uint32_t kShooter = 7;

Match make_match(uint32_t history_ticks = 60) {
  auto m = Match::create(crossing_scene(), std::make_unique<LagRules>(history_ticks));
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  return std::move(*m);
}

// Joins the shooter at tick 0 and steps it, aiming but not firing, to `tick`.
void step_to(Match& m, uint64_t tick) {
  while (m.tick() < tick) {
    TickInputs in;
    if (m.tick() == 0) in.events.push_back({PlayerEvent::Kind::Join, kShooter});
    in.inputs.push_back({kShooter, shot(m.input_layout(), 0.0f, false), {}});
    m.step(in);
  }
}

TickInputs fire(const Match& m, float aim_x, uint16_t lag, uint8_t fraction = 0) {
  TickInputs in;
  in.inputs.push_back({kShooter, shot(m.input_layout(), aim_x), ViewStamp{lag, fraction}});
  return in;
}

float target_x_at(const Match& m, uint64_t tick) {
  for (const PoseFrame& f : m.pose_history()) {
    if (f.tick != tick) continue;
    for (const PastPose& p : f.poses) {
      if (p.body_id == 2) return p.position.x;
    }
  }
  ADD_FAILURE() << "no pose of the target at tick " << tick;
  return 1e9f;
}

// One shot fired at tick 30 from a match restored from `state` (the tick-30 state):
// true for a hit.
bool shot_hits(const std::vector<uint8_t>& state, float aim_x, uint16_t lag, uint8_t fraction = 0) {
  Match m = make_match();
  EXPECT_TRUE(m.restore_state(state));
  m.step(fire(m, aim_x, lag, fraction));
  EXPECT_EQ(m.events().size(), 1u);
  const bool hit = m.state().get_u32(kHits) == 1;
  EXPECT_EQ(hit ? 0u : 1u, m.state().get_u32(kMisses));
  return hit;
}

TEST(LagCompensation, HistoryHoldsEachTicksPoses) {
  Match m = make_match();
  step_to(m, 30);
  ASSERT_EQ(m.pose_history().size(), 31u);  // ticks 0..30: the match is younger than the history
  EXPECT_EQ(m.pose_history().front().tick, 0u);
  EXPECT_EQ(m.pose_history().back().tick, 30u);
  EXPECT_NEAR(target_x_at(m, 0), -2.0f, 1e-4f);
  EXPECT_NEAR(target_x_at(m, 24), 2.0f, 1e-3f);  // -2 + 24/6
  EXPECT_NEAR(target_x_at(m, 30), 3.0f, 1e-3f);  // -2 + 30/6
  // Static bodies never move: the wall is not kept.
  EXPECT_EQ(m.pose_history().back().poses.size(), 1u);
}

TEST(LagCompensation, AShotHitsWhereTheShooterSawTheTargetAndMissesWhereItDidNot) {
  Match m = make_match();
  step_to(m, 30);
  const std::vector<uint8_t> state = m.save_state();
  // 6 ticks behind it saw the target at x = 2.0 (radius 0.25); it is at 3.0 now.
  EXPECT_TRUE(shot_hits(state, 2.0f, 6));
  EXPECT_FALSE(shot_hits(state, 3.0f, 6));
  // Without compensation the present decides.
  EXPECT_FALSE(shot_hits(state, 2.0f, 0));
  EXPECT_TRUE(shot_hits(state, 3.0f, 0));
  // Sub-tick: half way from tick 24 to 25 the target is at 2.0 + 1/12 = 2.083, so its
  // edge reaches 2.333: x = 2.3 is a hit there and a miss at tick 24 itself (edge 2.25).
  EXPECT_TRUE(shot_hits(state, 2.3f, 6, 128));
  EXPECT_FALSE(shot_hits(state, 2.3f, 6, 0));
  // A ray past the target's far edge as seen (2.0 + 0.25) misses and hits the wall.
  EXPECT_FALSE(shot_hits(state, 2.27f, 6));
}

TEST(LagCompensation, ARestoredMatchJudgesAsTheOneThatSteppedThere) {
  // The history is part of the state: a client that joins from a checkpoint, or a replay
  // that seeks to one, has the ticks before it and reaches the same verdict and hash.
  Match stepped = make_match();
  step_to(stepped, 30);
  Match restored = make_match();
  ASSERT_TRUE(restored.restore_state(stepped.save_state()));
  EXPECT_EQ(restored.hash(), stepped.hash());
  EXPECT_EQ(restored.pose_history(), stepped.pose_history());
  for (int i = 0; i < 12; ++i) {
    // Even shots aim where the shooter saw the target, odd ones a metre beside it.
    const uint16_t lag = uint16_t(i % 8);
    const uint8_t fraction = lag == 0 ? 0 : uint8_t(i * 20);
    const float seen_tick = float(stepped.tick() - lag) + float(fraction) / 256.0f;
    const float aim = kTargetStartX + seen_tick * kTargetSpeed / 60.0f + (i % 2 == 1 ? 1.0f : 0.0f);
    const TickInputs in = fire(stepped, aim, lag, fraction);
    stepped.step(in);
    restored.step(in);
    ASSERT_EQ(stepped.events(), restored.events()) << "shot " << i;
    ASSERT_EQ(stepped.hash(), restored.hash()) << "shot " << i;
  }
  EXPECT_EQ(stepped.state().get_u32(kHits), 6u);
  EXPECT_EQ(stepped.state().get_u32(kMisses), 6u);
}

TEST(LagCompensation, VerdictsAndHashesDoNotDependOnThreads) {
  std::vector<uint64_t> hashes[2];
  for (int run = 0; run < 2; ++run) {
    Match m = make_match();
    m.set_threads(run == 0 ? 1 : 4);
    step_to(m, 30);
    for (int i = 0; i < 30; ++i) {
      m.step(fire(m, 2.0f + 0.05f * float(i), uint16_t(i % 10), uint8_t(i * 9)));
      hashes[run].push_back(m.hash());
    }
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

TEST(LagCompensation, TheHashCoversTheHistory) {
  Match a = make_match();
  step_to(a, 10);
  std::vector<uint8_t> bytes = a.save_state();
  Match b = make_match();
  ASSERT_TRUE(b.restore_state(bytes));
  // The oldest frame's target x is the first pose of the history; flip its lowest bit.
  const float x = a.pose_history().front().poses[0].position.x;
  uint8_t pattern[4];
  std::memcpy(pattern, &x, 4);
  auto at = std::search(bytes.begin(), bytes.end(), pattern, pattern + 4);
  ASSERT_NE(at, bytes.end());
  *at ^= 1u;
  ASSERT_TRUE(b.restore_state(bytes));
  EXPECT_NE(b.hash(), a.hash());
}

TEST(LagCompensation, ViewsOutsideTheHistoryAreClamped) {
  Match m = make_match();
  step_to(m, 30);
  // Older than the match: the oldest tick held (tick 0).
  m.step(fire(m, 0.0f, 1000));
  EXPECT_EQ(m.find_player(kShooter)->view.lag, 30u);
  step_to(m, 100);  // the repeated frame repeats its (clamped) lag
  m.step(fire(m, 0.0f, 1000, 77));
  EXPECT_EQ(m.find_player(kShooter)->view.lag, 60u);  // one second back, no further
  EXPECT_EQ(m.find_player(kShooter)->view.fraction, 77u);
  EXPECT_EQ(m.view_of(kShooter).first, m.tick() - 60);
  // The present has no "next tick" to interpolate towards.
  m.step(fire(m, 0.0f, 0, 200));
  EXPECT_EQ(m.find_player(kShooter)->view, (ViewStamp{0, 0}));
  // A game that keeps no history sees the present whatever it is asked.
  Match plain = make_match(0);
  step_to(plain, 30);
  plain.step(fire(plain, 2.0f, 6));
  EXPECT_EQ(plain.find_player(kShooter)->view, (ViewStamp{0, 0}));
  EXPECT_EQ(plain.state().get_u32(kMisses), 1u);
  EXPECT_TRUE(plain.pose_history().empty());
}

TEST(LagCompensation, TheHistoryIsBounded) {
  Match m = make_match();
  // Eight more movable bodies, so the bound is about more than one.
  for (int i = 0; i < 8; ++i) {
    sim::BodyDef d = crossing_scene().bodies[1];
    d.position = sim::Vec3(float(i), 2.0f, 5.0f);
    m.spawn(d);
  }
  step_to(m, 300);
  ASSERT_EQ(m.pose_history().size(), 61u);  // pose_history_ticks + the present
  EXPECT_EQ(m.pose_history().front().tick, 240u);
  for (const PoseFrame& f : m.pose_history()) ASSERT_EQ(f.poses.size(), 9u);
  // In the state: a count, then per tick its number and pose count, then 32 bytes a body;
  // and each player's view (3 bytes).
  const size_t history_bytes = 4 + 61 * (8 + 4 + 9 * size_t(kPastPoseBytes)) + 3;
  const std::vector<uint8_t> with = m.save_state();
  Match again = make_match();
  for (int i = 0; i < 8; ++i) {
    sim::BodyDef d = crossing_scene().bodies[1];
    d.position = sim::Vec3(float(i), 2.0f, 5.0f);
    again.spawn(d);
  }
  step_to(again, 300);
  EXPECT_EQ(again.save_state(), with);  // deterministic
  std::vector<uint8_t> canonical_without;
  {
    auto p = Match::create(crossing_scene(), std::make_unique<LagRules>(0));
    ASSERT_TRUE(p);
    for (int i = 0; i < 8; ++i) {
      sim::BodyDef d = crossing_scene().bodies[1];
      d.position = sim::Vec3(float(i), 2.0f, 5.0f);
      p->spawn(d);
    }
    step_to(*p, 300);
    canonical_without = p->save_state();
  }
  EXPECT_EQ(with.size(), canonical_without.size() + history_bytes);
}

TEST(LagCompensation, LessThanOneSecondOfHistoryIsRefused) {
  auto m = Match::create(crossing_scene(), std::make_unique<LagRules>(30));
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("less than one second"), std::string::npos) << m.error().message;
  auto too_long = Match::create(crossing_scene(), std::make_unique<LagRules>(kMaxPoseHistoryTicks + 1));
  EXPECT_FALSE(too_long);
}

TEST(LagCompensation, ADamagedHistoryIsRefused) {
  Match m = make_match();
  step_to(m, 5);
  std::vector<uint8_t> bytes = m.save_state();
  // The history's frame count sits right after the player's slot; claim one frame more
  // than the ring can hold.
  Match b = make_match();
  const uint32_t count = uint32_t(m.pose_history().size());
  uint8_t pattern[12];
  std::memcpy(pattern, &count, 4);
  const uint64_t first_tick = 0;
  std::memcpy(pattern + 4, &first_tick, 8);
  auto at = std::search(bytes.begin(), bytes.end(), pattern, pattern + 12);
  ASSERT_NE(at, bytes.end());
  const uint32_t too_many = 62;
  std::memcpy(&*at, &too_many, 4);
  EXPECT_FALSE(b.restore_state(bytes));
}

}  // namespace
}  // namespace keel::game

namespace keel::game {
namespace {
using namespace lagtest;

// The ring's bytes are written once per frame as it is recorded (and rebuilt from the
// frames on restore): after the ring has wrapped, with bodies spawned part way so frames
// differ in size, a restored match and the one that stepped there write the same state
// bytes tick after tick, and each hashes to the state hash of those bytes.
TEST(LagCompensation, RingBytesMatchTheFramesAfterWrapAndRestore) {
  Match stepped = make_match();
  step_to(stepped, 40);
  sim::BodyDef d = crossing_scene().bodies[1];
  d.position = sim::Vec3(3.0f, 2.0f, 5.0f);
  stepped.spawn(d);
  step_to(stepped, 130);  // past 61 frames: the oldest frames' storage has been reused
  Match restored = make_match();
  ASSERT_TRUE(restored.restore_state(stepped.save_state()));
  for (int i = 0; i < 70; ++i) {
    if (i == 20) {
      d.position = sim::Vec3(-3.0f, 2.0f, 5.0f);
      stepped.spawn(d);
      restored.spawn(d);
    }
    step_to(stepped, stepped.tick() + 1);
    step_to(restored, restored.tick() + 1);
    const std::vector<uint8_t> bytes = stepped.save_state();
    ASSERT_EQ(restored.save_state(), bytes) << "tick " << stepped.tick();
    ASSERT_EQ(stepped.hash(), sim::state_hash(bytes)) << "tick " << stepped.tick();
  }
}

}  // namespace
}  // namespace keel::game
