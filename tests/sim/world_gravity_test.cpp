// World::set_gravity: a sleeping body wakes and falls under the new gravity, bad values
// are refused without a change, and the gravity is saved, hashed and restored with the state.
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <cmath>
#include <limits>

namespace keel::sim {
namespace {

// A box resting on the ground until it sleeps; then gravity is turned upward at 2 m/s^2.
// Free from the ground, in 0.5 s (30 ticks, 6 substeps, semi-implicit Euler) it rises
// 2 * 0.5^2 * (1/2 + 1/360) = 0.2514 m; its speed is exactly 2 * 0.5 = 1 m/s.
TEST(WorldGravity, SleepingBodyWakesAndFollowsTheNewGravity) {
  World w;
  w.add_body(test::box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  BodyId box = *w.add_body(test::box_body(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), Vec3(0.5f)));
  for (int i = 0; i < 240 && !w.body_state(box).sleeping; ++i) w.step();
  ASSERT_TRUE(w.body_state(box).sleeping);
  const float y0 = w.body_state(box).position.y;
  ASSERT_TRUE(w.set_gravity(Vec3(0, 2.0f, 0)));
  EXPECT_FALSE(w.body_state(box).sleeping);
  for (int i = 0; i < 30; ++i) w.step();
  EXPECT_NEAR(w.body_state(box).linear_velocity.y, 1.0f, 1e-3f);
  EXPECT_NEAR(w.body_state(box).position.y - y0, 2.0f * 0.25f * (0.5f + 1.0f / 360.0f), 5e-3f);
}

TEST(WorldGravity, RefusesValuesThatAreNotFiniteOrTooLarge) {
  World w;
  const Vec3 before = w.settings().gravity;
  EXPECT_FALSE(w.set_gravity(Vec3(0, std::numeric_limits<float>::quiet_NaN(), 0)));
  EXPECT_FALSE(w.set_gravity(Vec3(std::numeric_limits<float>::infinity(), 0, 0)));
  EXPECT_FALSE(w.set_gravity(Vec3(0, 0, 1.0e4f)));
  EXPECT_EQ(w.settings().gravity, before);
  EXPECT_TRUE(w.set_gravity(Vec3(0, -1000.0f, 0)));  // the bound itself is allowed
}

// The gravity is state: another gravity, another hash; a restored world has it back.
TEST(WorldGravity, IsSavedHashedAndRestored) {
  World a;
  a.add_body(test::sphere_body(1, MotionType::Dynamic, Vec3(0, 5, 0), 0.5f));
  const uint64_t h = a.hash();
  ASSERT_TRUE(a.set_gravity(Vec3(0, -1.0f, 0)));
  EXPECT_NE(a.hash(), h);
  World b;
  ASSERT_TRUE(b.restore_state(a.save_state()));
  EXPECT_EQ(b.settings().gravity, Vec3(0, -1.0f, 0));
  a.step();
  b.step();
  EXPECT_EQ(a.hash(), b.hash());
}

}  // namespace
}  // namespace keel::sim
