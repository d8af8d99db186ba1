// Static and kinetic friction against numbers computed by hand. A contact point grips
// while the friction impulse that stops it fits the static cone (static_friction times
// its normal impulse) and slides, dragged by the kinetic cone (`friction`), once it needs
// more; both coefficients combine over a pair as the geometric mean.
#include "test_bodies.h"

#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <cmath>

namespace keel::sim {
namespace {

constexpr float kG = 9.81f;
constexpr float kDt = 1.0f / 60.0f;

// A box body (test_bodies.h) whose collider has these coefficients.
BodyDef friction_box(uint32_t id, MotionType m, Vec3 pos, Vec3 half, float kinetic, float static_friction,
            Quat rot = identity_quat()) {
  BodyDef b = test::box_body(id, m, pos, half, rot);
  b.colliders[0].friction = kinetic;
  b.colliders[0].static_friction = static_friction;
  return b;
}

Quat about_z(float degrees) {
  const float half = 0.5f * degrees * 3.14159265f / 180.0f;
  return make_quat(0.0f, 0.0f, std::sin(half), std::cos(half));
}

// A ramp (a static box turned about Z) at `degrees` with a 1 m box resting on it; both
// colliders carry the same coefficients, so the pair's combined ones are those.
struct Ramp {
  World world;
  BodyId box;
  Vec3 down_slope;  // unit vector along the ramp, pointing down

  Ramp(float degrees, float kinetic, float static_friction) {
    Quat q = about_z(degrees);
    world.add_body(friction_box(1, MotionType::Static, Vec3(0), Vec3(20, 0.5f, 2), kinetic, static_friction, q));
    down_slope = -(q * Vec3(1, 0, 0));
    box = *world.add_body(friction_box(2, MotionType::Dynamic, q * Vec3(0, 1, 0), Vec3(0.5f), kinetic, static_friction, q));
  }
  float speed() const { return glm::dot(world.body_state(box).linear_velocity, down_slope); }
  // Mean acceleration along the slope between ticks `from` and `to` (stepping on).
  float acceleration(int from, int to) {
    float v_from = 0.0f;
    for (int i = 1; i <= to; ++i) {
      world.step();
      if (i == from) v_from = speed();
    }
    return (speed() - v_from) / ((to - from) * kDt);
  }
};

// tan 30° = 0.577: below mu_s = 0.7, so the box holds, although its kinetic 0.4 alone
// would let it slide at g (sin 30° - 0.4 cos 30°) = 1.51 m/s^2 (checked beside it).
TEST(StaticFriction, RampBelowTheStaticAngleHolds) {
  Ramp held(30.0f, 0.4f, 0.7f);
  Vec3 start = held.world.body_state(held.box).position;
  for (int i = 0; i < 180; ++i) held.world.step();
  EXPECT_LT(glm::length(held.world.body_state(held.box).position - start), 0.01f);

  Ramp kinetic_only(30.0f, 0.4f, -1.0f);
  const float expected = kG * (0.5f - 0.4f * std::sqrt(3.0f) / 2.0f);
  EXPECT_NEAR(kinetic_only.acceleration(30, 90), expected, 0.03f * expected);
}

// tan 40° = 0.839 > mu_s = 0.7: the box cannot be held and, once sliding, accelerates
// with the kinetic coefficient: g (sin 40° - 0.3 cos 40°) = 4.051 m/s^2.
TEST(StaticFriction, RampAboveTheStaticAngleSlidesWithKineticFriction) {
  Ramp r(40.0f, 0.3f, 0.7f);
  const float rad = 40.0f * 3.14159265f / 180.0f;
  const float expected = kG * (std::sin(rad) - 0.3f * std::cos(rad));
  EXPECT_NEAR(r.acceleration(30, 90), expected, 0.03f * expected);
}

// A box already sliding down a 30° ramp (1 m/s) feels the kinetic coefficient, not the
// static one: a = g (sin 30° - 0.3 cos 30°) = 2.356 m/s^2, though mu_s = 0.7 would hold it
// at rest.
TEST(StaticFriction, ASlidingBoxIsNotHeldByStaticFriction) {
  Ramp r(30.0f, 0.3f, 0.7f);
  r.world.set_linear_velocity(r.box, r.down_slope * 1.0f);
  const float expected = kG * (0.5f - 0.3f * std::sqrt(3.0f) / 2.0f);
  EXPECT_NEAR(r.acceleration(30, 90), expected, 0.03f * expected);
}

// A 1 m box of 1000 kg on a floor, mu_s = 0.8, mu_k = 0.4, pulled sideways by a constant
// force F. The pull is a horizontal part of gravity (F / m along x), so that it acts on
// every substep as a force does, not as one impulse at the start of each tick. Under
// mu_s m g = 7848 N the box stays put; above it, it starts, and then accelerates at
// (F - mu_k m g) / m.
World pulled_box(float pull_over_weight, float box_kinetic, float box_static, float floor_kinetic,
                 float floor_static, BodyId& box) {
  WorldSettings settings;
  settings.gravity = Vec3(pull_over_weight * kG, -kG, 0.0f);
  World world(settings);
  world.add_body(friction_box(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(50, 0.5f, 50), floor_kinetic,
                              floor_static));
  box = *world.add_body(friction_box(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), Vec3(0.5f), box_kinetic, box_static));
  return world;
}

TEST(StaticFriction, APullUnderStaticFrictionTimesWeightDoesNotStartTheBox) {
  BodyId box;
  World world = pulled_box(0.95f * 0.8f, 0.4f, 0.8f, 0.4f, 0.8f, box);
  for (int i = 0; i < 120; ++i) world.step();
  EXPECT_LT(std::fabs(world.body_state(box).position.x), 0.005f);
}

TEST(StaticFriction, APullOverStaticFrictionTimesWeightStartsTheBoxAndKineticFrictionDrags) {
  BodyId box;
  World world = pulled_box(1.05f * 0.8f, 0.4f, 0.8f, 0.4f, 0.8f, box);
  float v_from = 0.0f;
  for (int i = 1; i <= 90; ++i) {
    world.step();
    if (i == 30) v_from = world.body_state(box).linear_velocity.x;
  }
  const float a = (world.body_state(box).linear_velocity.x - v_from) / (60 * kDt);
  const float expected = (1.05f * 0.8f - 0.4f) * kG;  // 4.316 m/s^2
  EXPECT_NEAR(a, expected, 0.03f * expected);
}

// Combined as the geometric mean, like the kinetic coefficient: a box with mu_s 0.9 on a
// floor with mu_s 0.4 holds at sqrt(0.36) = 0.6, so a pull of 0.55 m g does not start it
// and one of 0.65 m g does.
TEST(StaticFriction, CoefficientsCombineAsTheGeometricMean) {
  for (float pull : {0.55f, 0.65f}) {
    BodyId box;
    World world = pulled_box(pull, 0.3f, 0.9f, 0.3f, 0.4f, box);
    for (int i = 0; i < 120; ++i) world.step();
    const float moved = world.body_state(box).position.x;
    if (pull < 0.6f) EXPECT_LT(std::fabs(moved), 0.005f) << pull;
    else EXPECT_GT(moved, 0.5f) << pull;
  }
}

// A static coefficient below the kinetic one is refused, naming the field; a negative one
// means "the same as friction". The coefficient is part of the saved state.
TEST(StaticFriction, RefusedBelowFrictionAndKeptInTheState) {
  World world;
  auto bad = world.add_body(friction_box(7, MotionType::Dynamic, Vec3(0), Vec3(0.5f), 0.5f, 0.3f));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("static_friction"), std::string::npos) << bad.error().message;

  BodyId same = *world.add_body(friction_box(8, MotionType::Dynamic, Vec3(0), Vec3(0.5f), 0.5f, -1.0f));
  EXPECT_EQ(world.colliders(same)[0].static_friction, 0.5f);
  BodyId set = *world.add_body(friction_box(9, MotionType::Dynamic, Vec3(3, 0, 0), Vec3(0.5f), 0.5f, 0.8f));
  World copy;
  ASSERT_TRUE(copy.restore_state(world.save_state()));
  EXPECT_EQ(copy.colliders(copy.find_body(9))[0].static_friction, 0.8f);
  EXPECT_EQ(copy.hash(), world.hash());
  (void)set;
}

}  // namespace
}  // namespace keel::sim
