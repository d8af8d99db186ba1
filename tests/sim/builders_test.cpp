// The ragdoll and vehicle builders, stepped: a ragdoll dropped on the floor comes to rest
// inside its joint limits; a car drives straight and stops under its brake.
#include <keel/sim/builders.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <cmath>
#include <cstdio>

namespace keel::sim {
namespace {

constexpr float kPi = 3.14159265358979f;
constexpr float kTolerance = 3.0f * kPi / 180.0f;

void add_floor(World& w) {
  ASSERT_TRUE(w.add_body(test::box_body(1000000, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(200.0f, 0.5f, 200.0f))));
}

TEST(BuildersTest, RagdollHasTwelveBonesOfTheGivenMassAndHeight) {
  RagdollDef d;
  d.height = 1.8f;
  d.mass = 80.0f;
  ASSERT_TRUE(validate_ragdoll(d));
  Assembly a = build_ragdoll(d);
  ASSERT_EQ(a.bodies.size(), 12u);
  EXPECT_EQ(a.joints.size(), 11u);
  float mass = 0.0f, top = 0.0f, bottom = 10.0f;
  for (const BodyDef& b : a.bodies) {
    mass += b.mass;
    const ColliderDef& c = b.colliders[0];
    top = std::max(top, b.position.y + c.half_height + c.radius);
    bottom = std::min(bottom, b.position.y - c.half_height - c.radius);
  }
  EXPECT_NEAR(mass, 80.0f, 1e-3f);
  EXPECT_NEAR(top - bottom, 1.8f, 0.05f);
  EXPECT_NEAR(bottom, 0.0f, 0.03f);
}

// Dropped from 2 m (feet at 2 m, tipped forward), the ragdoll lands, folds and comes to
// rest lying on the floor with every joint within its limits (3 degree tolerance).
void drop_ragdoll(float holding_torque) {
  World w;
  add_floor(w);
  RagdollDef d;
  d.position = Vec3(0.0f, 2.0f, 0.0f);
  d.rotation = Quat(std::cos(0.2f), std::sin(0.2f), 0.0f, 0.0f);
  d.holding_torque = holding_torque;
  Assembly a = build_ragdoll(d);
  auto ids = add_assembly(w, a);
  ASSERT_TRUE(ids) << ids.error().message;
  float worst = 0.0f;  // largest excursion past a limit during the whole fall
  for (int t = 0; t < 360; ++t) {
    w.step();
    for (size_t i = 0; i < ids->size(); ++i) {
      const JointDef& jd = a.joints[i];
      JointInfo info = joint_info(w, (*ids)[i]);
      float past = std::max(jd.limit.lower - info.angle, info.angle - jd.limit.upper);
      if (jd.kind == JointKind::Ball) past = std::max(past, info.swing - jd.cone_angle);
      worst = std::max(worst, past);
    }
  }
  EXPECT_LT(worst, kTolerance) << "holding torque " << holding_torque;
  for (const BodyDef& b : a.bodies) {
    BodyState s = w.body_state(w.find_body(b.id));
    EXPECT_LT(s.position.y, 0.5f) << "bone " << b.id;
    EXPECT_GT(s.position.y, 0.0f) << "bone " << b.id;
    EXPECT_LT(glm::length(s.linear_velocity), 0.1f) << "bone " << b.id;
  }
}

TEST(BuildersTest, LimpRagdollDroppedFromTwoMetresRestsWithinItsLimits) { drop_ragdoll(0.0f); }
TEST(BuildersTest, RagdollWithHoldingTorqueRestsWithinItsLimits) { drop_ragdoll(150.0f); }

// Full throttle for 20 m: the car stays on its line (drift under 0.5 m); then full brake
// stops it. With the wheels locked the tyres slide at mu = sqrt(1.0 * 0.6) = 0.77, about
// 7.6 m/s^2: from the speed reached it stops within v^2 / (2 a) plus a margin.
TEST(BuildersTest, CarDrivesTwentyMetresStraightAndStopsUnderItsBrake) {
  World w;
  add_floor(w);
  VehicleDef d;
  d.position = Vec3(0.0f, 0.85f, 0.0f);
  ASSERT_TRUE(validate_vehicle(d));
  ASSERT_TRUE(add_assembly(w, build_vehicle(d)));
  auto car = find_vehicle(w, d);
  ASSERT_TRUE(car) << car.error().message;
  BodyId chassis = w.find_body(d.first_id);
  for (int t = 0; t < 60; ++t) w.step();
  Vec3 start = w.body_state(chassis).position;
  int ticks = 0;
  float drift = 0.0f;
  while (w.body_state(chassis).position.z - start.z < 20.0f && ticks < 60 * 20) {
    drive(w, *car, 1.0f, 0.0f, 0.0f);
    w.step();
    ++ticks;
    drift = std::max(drift, std::abs(w.body_state(chassis).position.x - start.x));
  }
  ASSERT_LT(ticks, 60 * 20) << "the car did not cover 20 m";
  EXPECT_LT(drift, 0.5f);
  BodyState s = w.body_state(chassis);
  const float speed = s.linear_velocity.z;
  EXPECT_GT(speed, 5.0f);
  std::printf("car: 20 m in %.2f s, %.2f m/s, drift %.3f m\n", ticks / 60.0, speed, drift);
  const float braking_from = s.position.z;
  for (int t = 0; t < 300; ++t) {
    drive(w, *car, 0.0f, 0.0f, 1.0f);
    w.step();
  }
  s = w.body_state(chassis);
  EXPECT_LT(std::abs(s.linear_velocity.z), 0.05f);
  const float stop = s.position.z - braking_from;
  const float expected = speed * speed / (2.0f * 0.77f * 9.81f);
  std::printf("car: stopped in %.2f m (sliding estimate %.2f m)\n", stop, expected);
  EXPECT_LT(stop, 1.5f * expected + 1.0f);
  EXPECT_LT(std::abs(s.position.x - start.x), 0.5f);
}

TEST(BuildersTest, CarTurnsLeftWhenSteeredLeft) {
  World w;
  add_floor(w);
  VehicleDef d;
  d.position = Vec3(0.0f, 0.85f, 0.0f);
  ASSERT_TRUE(add_assembly(w, build_vehicle(d)));
  auto car = find_vehicle(w, d);
  ASSERT_TRUE(car);
  BodyId chassis = w.find_body(d.first_id);
  for (int t = 0; t < 180; ++t) {
    drive(w, *car, 0.5f, t > 60 ? 1.0f : 0.0f, 0.0f);
    w.step();
  }
  EXPECT_GT(w.body_state(chassis).position.x, 1.0f);  // left of +Z is +X
}

}  // namespace
}  // namespace keel::sim
