// Snapshot interpolation: the pose between two snapshots, the delay, and bounded
// extrapolation — against numbers worked out by hand.
#include <keel/client/interpolation.h>

#include <gtest/gtest.h>

#include <cmath>

namespace keel::client {
namespace {

sim::BodyState body(uint32_t id, float x, float y, float z, sim::Quat q = sim::identity_quat()) {
  sim::BodyState b;
  b.id = id;
  b.position = {x, y, z};
  b.rotation = q;
  return b;
}

TEST(Interpolation, LinearBetweenSnapshots) {
  SnapshotBuffer buf;
  ASSERT_TRUE(buf.add(10, {body(1, 0, 0, 0), body(2, 5, 5, 5)}, 1.0, 60));
  ASSERT_TRUE(buf.add(12, {body(1, 2, 4, -6), body(2, 5, 5, 5)}, 1.033, 60));
  auto p = buf.sample(1, 11.0);
  ASSERT_TRUE(p);
  EXPECT_FLOAT_EQ(p->position.x, 1.0f);
  EXPECT_FLOAT_EQ(p->position.y, 2.0f);
  EXPECT_FLOAT_EQ(p->position.z, -3.0f);
  EXPECT_FALSE(p->extrapolated);
  p = buf.sample(1, 11.5);
  EXPECT_FLOAT_EQ(p->position.x, 1.5f);
  // Exactly on a snapshot: that snapshot's pose, bit for bit.
  p = buf.sample(1, 12.0);
  EXPECT_EQ(p->position, sim::Vec3(2, 4, -6));
  p = buf.sample(1, 10.0);
  EXPECT_EQ(p->position, sim::Vec3(0, 0, 0));
  // Before the oldest: the oldest.
  EXPECT_EQ(buf.sample(1, 3.0)->position, sim::Vec3(0, 0, 0));
  EXPECT_FALSE(buf.sample(99, 11.0).has_value());
}

TEST(Interpolation, RotationTakesTheShortArc) {
  // 0 and 90 degrees about Y; half way is 45 degrees, whichever sign the second has.
  float h = std::sqrt(0.5f);
  sim::Quat q0 = sim::identity_quat();
  sim::Quat q90 = sim::make_quat(0, h, 0, h);
  for (float sign : {1.0f, -1.0f}) {
    SnapshotBuffer buf;
    buf.add(0, {body(1, 0, 0, 0, q0)}, 0.0, 60);
    buf.add(2, {body(1, 0, 0, 0, q90 * sign)}, 0.033, 60);
    auto p = buf.sample(1, 1.0);
    ASSERT_TRUE(p);
    float expect_y = std::sin(0.3926991f), expect_w = std::cos(0.3926991f);
    EXPECT_NEAR(std::fabs(p->rotation.y), expect_y, 1e-6f);
    EXPECT_NEAR(std::fabs(p->rotation.w), expect_w, 1e-6f);
    EXPECT_GT(p->rotation.y * p->rotation.w, 0.0f);  // a +45 degree turn, not -135
  }
}

TEST(Interpolation, ExtrapolatesAtMostTheLimitThenHolds) {
  InterpolationConfig cfg;
  cfg.max_extrapolation = 0.1;  // 6 ticks at 60 Hz
  SnapshotBuffer buf(cfg);
  buf.add(100, {body(1, 0, 0, 0)}, 1.0, 60);
  buf.add(102, {body(1, 1, 0, 0)}, 1.033, 60);  // 0.5 m per tick
  auto p = buf.sample(1, 104.0);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->extrapolated);
  EXPECT_FALSE(p->held);
  EXPECT_FLOAT_EQ(p->position.x, 2.0f);
  p = buf.sample(1, 200.0);
  EXPECT_TRUE(p->extrapolated);
  EXPECT_TRUE(p->held);
  EXPECT_FLOAT_EQ(p->position.x, 1.0f + 0.5f * 6.0f);
}

TEST(Interpolation, DelayIsThreeIntervalsOrCoversJitter) {
  SnapshotBuffer buf;
  // Snapshots every 2 ticks at 60 Hz arriving on time: delay = 3 * 2/60 s.
  double t = 0;
  for (uint64_t tick = 2; tick <= 200; tick += 2, t += 2.0 / 60) buf.add(tick, {body(1, 0, 0, 0)}, t, 60);
  EXPECT_NEAR(buf.interval_ticks(), 2.0, 1e-9);
  EXPECT_NEAR(buf.jitter_seconds(), 0.0, 1e-9);
  EXPECT_NEAR(buf.delay_seconds(), 0.1, 1e-9);
  // Arrivals alternately 40 ms early and late: jitter ~40 ms, delay covers 2x it.
  SnapshotBuffer jittery;
  t = 0;
  for (uint64_t tick = 2; tick <= 400; tick += 2) {
    t += 2.0 / 60;
    jittery.add(tick, {body(1, 0, 0, 0)}, t + ((tick / 2) % 2 ? 0.04 : -0.04), 60);
  }
  EXPECT_GT(jittery.jitter_seconds(), 0.06);
  EXPECT_NEAR(jittery.delay_seconds(), 2.0 / 60 + 2.0 * jittery.jitter_seconds(), 1e-9);
  EXPECT_GT(jittery.delay_seconds(), 0.1);
  // A fixed delay overrides.
  InterpolationConfig fixed;
  fixed.fixed_delay = 0.25;
  EXPECT_EQ(SnapshotBuffer(fixed).delay_seconds(), 0.25);
}

TEST(Interpolation, RefusesOldSnapshotsAndStaysBounded) {
  InterpolationConfig cfg;
  cfg.capacity = 8;
  SnapshotBuffer buf(cfg);
  EXPECT_TRUE(buf.add(5, {body(1, 0, 0, 0)}, 0, 60));
  EXPECT_FALSE(buf.add(5, {body(1, 9, 9, 9)}, 0, 60));
  EXPECT_FALSE(buf.add(4, {body(1, 9, 9, 9)}, 0, 60));
  for (uint64_t t = 6; t < 100; ++t) buf.add(t, {body(1, 0, 0, 0)}, 0, 60);
  EXPECT_EQ(buf.size(), 8u);
  EXPECT_EQ(buf.oldest_tick(), 92u);
}

}  // namespace
}  // namespace keel::client

namespace keel::client {
namespace {

// Partial snapshots: each body between its own samples, whatever the snapshots in
// between carried; a body at rest holds until about one interval before it next moved;
// a body that left the client's interest is gone, and drawn again once it comes back.
TEST(Interpolation, PartialSnapshotsInterpolateEachBodyBetweenItsOwnSamples) {
  SnapshotBuffer buf;
  sim::BodyState a0 = body(1, 0, 0, 0), b0 = body(2, 10, 0, 0);
  b0.sleeping = true;  // at rest
  std::vector<sim::BodyState> first = {a0, b0};
  ASSERT_TRUE(buf.add_partial(10, first, {}, 1.0, 60));
  // Ticks 12 .. 18 carry body 1 only; body 2 stays at rest, unsent.
  for (uint64_t t = 12; t <= 18; t += 2) {
    sim::BodyState a = body(1, float(t - 10), 0, 0);
    ASSERT_TRUE(buf.add_partial(t, std::span(&a, 1), {}, 1.0 + (t - 10) / 60.0, 60));
  }
  sim::BodyState b1 = body(2, 12, 0, 0);
  ASSERT_TRUE(buf.add_partial(20, std::span(&b1, 1), {}, 1.2, 60));
  EXPECT_FLOAT_EQ(buf.sample(1, 13.0)->position.x, 3.0f);
  // Body 2: held at rest through tick 18 (one interval of 2 ticks before its next sample),
  // then blended to tick 20.
  EXPECT_FLOAT_EQ(buf.sample(2, 15.0)->position.x, 10.0f);
  EXPECT_FLOAT_EQ(buf.sample(2, 18.0)->position.x, 10.0f);
  EXPECT_FLOAT_EQ(buf.sample(2, 19.0)->position.x, 11.0f);
  EXPECT_FLOAT_EQ(buf.sample(2, 20.0)->position.x, 12.0f);
  // Past its newest sample a body at rest is shown where it is, not extrapolated.
  sim::BodyState b2 = body(2, 12, 0, 0);
  b2.sleeping = true;
  ASSERT_TRUE(buf.add_partial(22, std::span(&b2, 1), {}, 1.23, 60));
  auto still = buf.sample(2, 40.0);
  ASSERT_TRUE(still);
  EXPECT_FALSE(still->extrapolated);
  EXPECT_FLOAT_EQ(still->position.x, 12.0f);
  // Body 1 leaves the client's interest: gone; when it comes back, drawn from its new sample.
  const uint32_t left[] = {1};
  ASSERT_TRUE(buf.add_partial(24, {}, left, 1.26, 60));
  EXPECT_FALSE(buf.sample(1, 24.0).has_value());
  EXPECT_EQ(buf.bodies(), 1u);
  sim::BodyState back = body(1, -5, 0, 0);
  ASSERT_TRUE(buf.add_partial(30, std::span(&back, 1), {}, 1.36, 60));
  EXPECT_FLOAT_EQ(buf.sample(1, 30.0)->position.x, -5.0f);
  EXPECT_FLOAT_EQ(buf.sample(1, 25.0)->position.x, -5.0f);  // no sample from before it left
  // A whole-world snapshot: what it does not hold is gone.
  ASSERT_TRUE(buf.add(32, {body(2, 12, 0, 0)}, 1.4, 60));
  EXPECT_FALSE(buf.sample(1, 32.0).has_value());
  EXPECT_TRUE(buf.sample(2, 32.0).has_value());
}

}  // namespace
}  // namespace keel::client
