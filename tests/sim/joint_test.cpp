// Joints against numbers worked out by hand: pendulum period, chain stretch, motor spin-up,
// limits and welds under load, holding torque; plus thread-count and save/restore checks.
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"
#include "world_access.h"

#include <cmath>
#include <cstdio>

namespace keel::sim {
namespace {

using test::box_body;
using test::capsule_body;
using test::sphere_body;

constexpr float kPi = 3.14159265358979f;
constexpr float kG = 9.81f;

/// Rotation taking local X onto `axis` (for axes that are world Y or Z).
Quat x_to(Vec3 axis) {
  if (axis.y > 0.5f) return Quat(std::cos(kPi / 4), 0.0f, 0.0f, std::sin(kPi / 4));   // +90 deg about Z
  if (axis.z > 0.5f) return Quat(std::cos(kPi / 4), 0.0f, -std::sin(kPi / 4), 0.0f);  // -90 deg about Y
  return identity_quat();
}

JointDef joint_to_world(JointKind kind, uint32_t body, Vec3 body_pos, Vec3 pivot, Quat frame = identity_quat()) {
  JointDef j;
  j.kind = kind;
  j.body_a = body;
  j.body_b = kWorldBodyId;
  j.frame_a = Transform{pivot - body_pos, frame};
  j.frame_b = Transform{pivot, frame};
  return j;
}

float hinge_angle(const World& w, JointId j) { return joint_info(w, j).angle; }

// A 1 m pendulum released at 5 degrees: T = 2 pi sqrt(L / g) = 2.0061 s. The bob is a
// 5 cm sphere (physical-pendulum correction 0.05 %) and the 5 degree amplitude adds
// 0.05 %; the solver must land within 1 %.
TEST(JointTest, PendulumPeriodWithinOnePercent) {
  World w;
  const float theta = 5.0f * kPi / 180.0f;
  const Vec3 bob(std::sin(theta), -std::cos(theta), 0.0f);
  BodyDef b = sphere_body(1, MotionType::Dynamic, bob, 0.05f);
  b.mass = 1.0f;
  ASSERT_TRUE(w.add_body(b));
  ASSERT_TRUE(add_joint(w, joint_to_world(JointKind::Ball, 1, bob, Vec3(0.0f))));
  BodyId id = w.find_body(1);
  // Times the bob crosses x = 0 moving in +x (interpolated within the tick).
  std::vector<double> crossings;
  float prev_x = bob.x;
  for (int t = 1; t <= 60 * 12; ++t) {
    w.step();
    float x = w.body_state(id).position.x;
    if (prev_x < 0.0f && x >= 0.0f) crossings.push_back((t - 1 + prev_x / (prev_x - x)) / 60.0);
    prev_x = x;
  }
  ASSERT_GE(crossings.size(), 5u);
  double period = (crossings.back() - crossings.front()) / double(crossings.size() - 1);
  double expected = 2.0 * kPi * std::sqrt(1.0 / kG);
  EXPECT_NEAR(period, expected, 0.01 * expected) << "period " << period << " s";
  std::printf("pendulum: period %.4f s, 2 pi sqrt(L/g) = %.4f s, error %+.3f %%\n", period, expected,
              100.0 * (period - expected) / expected);
}

/// A 3 m chain of ten 0.3 m links hanging from the world with a 50 kg weight; returns how
/// much longer than 3 m it hangs after 3 s.
float chain_stretch(bool warm_start) {
  World w;
  WorldAccess::impl(w).toggles.joint_warm_start = warm_start;
  const int links = 10;
  const float link = 0.3f;
  for (int i = 0; i < links; ++i) {
    Vec3 c(0.0f, -(i + 0.5f) * link, 0.0f);
    BodyDef b = capsule_body(uint32_t(i + 1), MotionType::Dynamic, c, 0.03f, 0.5f * link - 0.03f);
    b.mass = 1.0f;
    EXPECT_TRUE(w.add_body(b));
    JointDef j;
    j.kind = JointKind::Ball;
    j.body_a = uint32_t(i + 1);
    j.frame_a.position = Vec3(0.0f, 0.5f * link, 0.0f);
    if (i == 0) {
      j.body_b = kWorldBodyId;
    } else {
      j.body_b = uint32_t(i);
      j.frame_b.position = Vec3(0.0f, -0.5f * link, 0.0f);
    }
    EXPECT_TRUE(add_joint(w, j));
  }
  BodyDef weight = sphere_body(100, MotionType::Dynamic, Vec3(0.0f, -3.2f, 0.0f), 0.2f);
  weight.mass = 50.0f;
  EXPECT_TRUE(w.add_body(weight));
  JointDef hook;
  hook.kind = JointKind::Ball;
  hook.body_a = 100;
  hook.frame_a.position = Vec3(0.0f, 0.2f, 0.0f);
  hook.body_b = uint32_t(links);
  hook.frame_b.position = Vec3(0.0f, -0.5f * link, 0.0f);
  EXPECT_TRUE(add_joint(w, hook));
  for (int t = 0; t < 180; ++t) w.step();
  BodyState last = w.body_state(w.find_body(uint32_t(links)));
  Vec3 end = last.position + last.rotation * Vec3(0.0f, -0.5f * link, 0.0f);
  return glm::length(end) - 3.0f;
}

// Warm starting carries the chain's impulses from tick to tick. Measured: 3.2 cm of
// stretch with it, 11.2 cm without (docs/sim.md, "Joints").
TEST(JointTest, ChainWithHeavyWeightStretchesLessThanTenCentimetres) {
  float stretch = chain_stretch(true);
  EXPECT_LT(stretch, 0.10f);
  EXPECT_GT(stretch, -0.01f);
  float cold = chain_stretch(false);
  EXPECT_GT(cold, 2.0f * stretch);  // without warm starting the chain sags far more
  RecordProperty("stretch_warm_m", std::to_string(stretch));
  RecordProperty("stretch_cold_m", std::to_string(cold));
  std::printf("chain stretch: warm start %.4f m, without %.4f m\n", stretch, cold);
}

/// A horizontal 1 m beam (0.1 m square) hinged at one end to the world about Z; its
/// weight pulls with m g L / 2 about the hinge.
struct Arm {
  World w;
  BodyId body;
  JointId joint;
};

void build_arm(Arm& a, float mass, JointDef extra) {
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  b.mass = mass;
  ASSERT_TRUE(a.w.add_body(b));
  a.body = a.w.find_body(1);
  JointDef j = joint_to_world(JointKind::Hinge, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.0f), x_to(Vec3(0, 0, 1)));
  j.limit = extra.limit;
  j.motor = extra.motor;
  j.holding_torque = extra.holding_torque;
  auto id = add_joint(a.w, j);
  ASSERT_TRUE(id);
  a.joint = *id;
}

// A motor at speed 0 is a brake: with more torque than the 10 kg beam's m g L/2 = 49 N·m
// it holds the arm level; with less it gives way.
TEST(JointTest, HingeMotorHoldsKnownLoadOnlyWithEnoughTorque) {
  for (float factor : {1.2f, 0.8f}) {
    Arm a;
    JointDef d;
    d.motor = JointMotor{true, 0.0f, factor * 10.0f * kG * 0.5f};
    build_arm(a, 10.0f, d);
    for (int t = 0; t < 120; ++t) a.w.step();
    float angle = hinge_angle(a.w, a.joint);
    if (factor > 1.0f) {
      EXPECT_NEAR(angle, 0.0f, 1.0f * kPi / 180.0f) << "factor " << factor;
    } else {
      EXPECT_LT(angle, -0.5f) << "factor " << factor;
    }
  }
}

// A motor spinning a 2 kg sphere of radius 0.5 m (I = 2/5 m r^2 = 0.2 kg m^2) about the
// vertical with at most 1 N·m: alpha = 5 rad/s^2, so 10 rad/s is reached at t = 2 s; at
// 1 s the speed is 5 rad/s, and after 3 s it holds the target.
TEST(JointTest, HingeMotorReachesTargetSpeedAtTheTorqueLimitedRate) {
  World w({.gravity = Vec3(0.0f)});
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.5f);
  b.mass = 2.0f;
  ASSERT_TRUE(w.add_body(b));
  JointDef j = joint_to_world(JointKind::Hinge, 1, Vec3(0.0f), Vec3(0.0f), x_to(Vec3(0, 1, 0)));
  j.motor = JointMotor{true, 10.0f, 1.0f};
  ASSERT_TRUE(add_joint(w, j));
  BodyId id = w.find_body(1);
  for (int t = 0; t < 60; ++t) w.step();
  EXPECT_NEAR(w.body_state(id).angular_velocity.y, 5.0f, 0.05f);
  for (int t = 0; t < 120; ++t) w.step();
  EXPECT_NEAR(w.body_state(id).angular_velocity.y, 10.0f, 0.01f);
}

// A 10 kg arm falling from level is stopped by the hinge's lower limit at -0.5 rad.
TEST(JointTest, HingeLimitHoldsWithinOneDegreeUnderLoad) {
  Arm a;
  JointDef d;
  d.limit = JointLimit{true, -0.5f, 0.5f};
  build_arm(a, 10.0f, d);
  float lowest = 0.0f;
  for (int t = 0; t < 180; ++t) {
    a.w.step();
    lowest = std::min(lowest, hinge_angle(a.w, a.joint));
  }
  EXPECT_GT(lowest, -0.5f - kPi / 180.0f);
  EXPECT_NEAR(hinge_angle(a.w, a.joint), -0.5f, kPi / 180.0f);
}

// A 10 kg box on a vertical slider with travel [-1, 0] m falls until the lower limit.
TEST(JointTest, SliderLimitHoldsWithinOneCentimetreUnderLoad) {
  World w;
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.0f), Vec3(0.2f));
  b.mass = 10.0f;
  ASSERT_TRUE(w.add_body(b));
  JointDef j = joint_to_world(JointKind::Slider, 1, Vec3(0.0f), Vec3(0.0f), x_to(Vec3(0, 1, 0)));
  j.limit = JointLimit{true, -1.0f, 0.0f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float lowest = 0.0f;
  for (int t = 0; t < 120; ++t) {
    w.step();
    lowest = std::min(lowest, w.body_state(w.find_body(1)).position.y);
  }
  EXPECT_GT(lowest, -1.01f);
  EXPECT_NEAR(joint_info(w, *id).translation, -1.0f, 0.01f);
  Vec3 p = w.body_state(w.find_body(1)).position;
  EXPECT_NEAR(p.x, 0.0f, 1e-3f);
  EXPECT_NEAR(p.z, 0.0f, 1e-3f);
}

// A 10 kg, 1 m beam welded at one end to the world droops less than 1 degree.
TEST(JointTest, WeldHoldsCantileverWithinOneDegree) {
  World w;
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  b.mass = 10.0f;
  ASSERT_TRUE(w.add_body(b));
  ASSERT_TRUE(add_joint(w, joint_to_world(JointKind::Fixed, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.0f))));
  for (int t = 0; t < 120; ++t) w.step();
  BodyState s = w.body_state(w.find_body(1));
  Vec3 dir = s.rotation * Vec3(1.0f, 0.0f, 0.0f);
  float droop = std::atan2(-dir.y, dir.x);
  EXPECT_LT(std::abs(droop), kPi / 180.0f);
  EXPECT_NEAR(s.position.x, 0.5f, 0.01f);
  EXPECT_NEAR(s.position.y, 0.0f, 0.01f);
}

// Holding torque: the 10 kg beam's load is m g L/2 = 49 N·m. A muscle of 1.5 times that
// holds it level; one of half gives way and the arm sags past 30 degrees.
TEST(JointTest, HoldingTorqueHoldsWithinItAndTurnsBeyondIt) {
  for (float factor : {1.5f, 0.5f}) {
    Arm a;
    JointDef d;
    d.holding_torque = factor * 10.0f * kG * 0.5f;
    build_arm(a, 10.0f, d);
    for (int t = 0; t < 120; ++t) a.w.step();
    float angle = hinge_angle(a.w, a.joint);
    if (factor > 1.0f) {
      EXPECT_NEAR(angle, 0.0f, 1.0f * kPi / 180.0f);
    } else {
      EXPECT_LT(angle, -30.0f * kPi / 180.0f);
    }
  }
}

// The same for a ball joint: a muscle holds the beam level in all three axes, and one
// with half the load's torque lets it fall.
TEST(JointTest, BallHoldingTorqueHoldsABeamWithinIt) {
  for (float factor : {1.5f, 0.5f}) {
    World w;
    BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
    b.mass = 5.0f;
    ASSERT_TRUE(w.add_body(b));
    JointDef j = joint_to_world(JointKind::Ball, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.0f));
    j.holding_torque = factor * 5.0f * kG * 0.5f;
    ASSERT_TRUE(add_joint(w, j));
    for (int t = 0; t < 120; ++t) w.step();
    float y = w.body_state(w.find_body(1)).position.y;
    if (factor > 1.0f) {
      EXPECT_NEAR(y, 0.0f, 0.5f * std::sin(kPi / 180.0f));
    } else {
      EXPECT_LT(y, -0.25f);
    }
  }
}

TEST(JointTest, DistanceJointKeepsItsLengthAndRopeOnlyPulls) {
  World w;
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(2.0f, 0.0f, 0.0f), 0.1f);
  b.mass = 1.0f;
  ASSERT_TRUE(w.add_body(b));
  JointDef j = joint_to_world(JointKind::Distance, 1, Vec3(2.0f, 0.0f, 0.0f), Vec3(0.0f));
  j.frame_a.position = Vec3(0.0f);
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float worst = 0.0f;
  for (int t = 0; t < 120; ++t) {
    w.step();
    worst = std::max(worst, std::abs(glm::length(w.body_state(w.find_body(1)).position) - 2.0f));
  }
  EXPECT_LT(worst, 0.01f);
}

TEST(JointTest, JointedBodiesDoNotCollideUnlessAsked) {
  for (bool collide : {false, true}) {
    World w;
    ASSERT_TRUE(w.add_body(box_body(1, MotionType::Static, Vec3(0.0f), Vec3(0.5f))));
    ASSERT_TRUE(w.add_body(box_body(2, MotionType::Dynamic, Vec3(0.0f, 0.9f, 0.0f), Vec3(0.5f))));
    JointDef j;
    j.kind = JointKind::Distance;
    j.body_a = 2;
    j.body_b = 1;
    j.limit = JointLimit{true, 0.0f, 5.0f};
    j.collide_connected = collide;
    ASSERT_TRUE(add_joint(w, j));
    w.step();
    EXPECT_EQ(w.contacts().empty(), !collide);
  }
}

// A jointed pair is one island: it falls asleep together and wakes together when only one
// of its bodies is pushed.
TEST(JointTest, JointedBodiesSleepAndWakeTogether) {
  World w;
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f, -1.0f, 0.0f), 0.1f)));
  ASSERT_TRUE(w.add_body(sphere_body(2, MotionType::Dynamic, Vec3(0.0f, -2.0f, 0.0f), 0.1f)));
  ASSERT_TRUE(add_joint(w, joint_to_world(JointKind::Ball, 1, Vec3(0.0f, -1.0f, 0.0f), Vec3(0.0f))));
  JointDef link;
  link.kind = JointKind::Ball;
  link.body_a = 2;
  link.body_b = 1;
  link.frame_a.position = Vec3(0.0f, 0.5f, 0.0f);
  link.frame_b.position = Vec3(0.0f, -0.5f, 0.0f);
  ASSERT_TRUE(add_joint(w, link));
  for (int t = 0; t < 120; ++t) w.step();
  EXPECT_TRUE(w.body_state(w.find_body(1)).sleeping);
  EXPECT_TRUE(w.body_state(w.find_body(2)).sleeping);
  w.apply_impulse(w.find_body(2), Vec3(1.0f, 0.0f, 0.0f), Vec3(0.0f, -2.0f, 0.0f));
  w.step();
  EXPECT_FALSE(w.body_state(w.find_body(1)).sleeping);
  EXPECT_FALSE(w.body_state(w.find_body(2)).sleeping);
  EXPECT_GT(w.body_state(w.find_body(1)).linear_velocity.x, 0.0f);  // the push reached it
}

// Removing the joint lets two overlapping bodies collide again (they push apart).
TEST(JointTest, RemovingAJointRestoresCollision) {
  World w({.gravity = Vec3(0.0f)});
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.5f)));
  ASSERT_TRUE(w.add_body(sphere_body(2, MotionType::Dynamic, Vec3(0.8f, 0.0f, 0.0f), 0.5f)));
  JointDef j;
  j.kind = JointKind::Fixed;
  j.body_a = 2;
  j.body_b = 1;
  j.frame_a.position = Vec3(-0.4f, 0.0f, 0.0f);
  j.frame_b.position = Vec3(0.4f, 0.0f, 0.0f);
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  for (int t = 0; t < 10; ++t) w.step();
  EXPECT_TRUE(w.contacts().empty());
  EXPECT_NEAR(w.body_state(w.find_body(2)).position.x, 0.8f, 1e-3f);
  ASSERT_TRUE(remove_joint(w, *id));
  for (int t = 0; t < 30; ++t) w.step();
  EXPECT_GT(w.body_state(w.find_body(2)).position.x - w.body_state(w.find_body(1)).position.x, 0.95f);
}

TEST(JointTest, RemovingABodyRemovesItsJoints) {
  World w;
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.1f)));
  ASSERT_TRUE(w.add_body(sphere_body(2, MotionType::Dynamic, Vec3(1.0f, 0.0f, 0.0f), 0.1f)));
  JointDef j;
  j.kind = JointKind::Ball;
  j.body_a = 1;
  j.body_b = 2;
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  EXPECT_TRUE(w.remove_body(w.find_body(2)));
  EXPECT_FALSE(is_valid(w, *id));
  EXPECT_TRUE(joints(w).empty());
  w.step();
}

TEST(JointTest, BadJointsAreRefusedWithTheField) {
  World w;
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.1f)));
  JointDef j;
  j.kind = JointKind::Hinge;
  j.body_a = 1;
  j.body_b = 7;
  auto r = add_joint(w, j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("body_b"), std::string::npos);
  j.body_b = 1;
  r = add_joint(w, j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("itself"), std::string::npos);
  j.body_b = kWorldBodyId;
  j.limit = JointLimit{true, 1.0f, 0.0f};
  r = add_joint(w, j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("limit"), std::string::npos);
  j.limit = {};
  j.frame_a.position.x = std::nanf("");
  r = add_joint(w, j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("frame_a"), std::string::npos);
}

TEST(JointTest, BreakForceBreaksAnOverloadedJoint) {
  World w;
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.0f, -1.0f, 0.0f), 0.1f);
  b.mass = 10.0f;  // hangs with 98.1 N
  ASSERT_TRUE(w.add_body(b));
  JointDef j = joint_to_world(JointKind::Ball, 1, Vec3(0.0f, -1.0f, 0.0f), Vec3(0.0f));
  j.break_force = 150.0f;
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  for (int t = 0; t < 60; ++t) w.step();
  EXPECT_FALSE(joint_info(w, *id).broken);
  w.apply_impulse(w.find_body(1), Vec3(0.0f, -30.0f, 0.0f), Vec3(0.0f, -1.0f, 0.0f));
  for (int t = 0; t < 5; ++t) w.step();
  EXPECT_TRUE(joint_info(w, *id).broken);
  for (int t = 0; t < 30; ++t) w.step();
  EXPECT_LT(w.body_state(w.find_body(1)).position.y, -1.5f);
}

}  // namespace
}  // namespace keel::sim
