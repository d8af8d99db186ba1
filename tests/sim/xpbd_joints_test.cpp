// The XPBD solver's joints against numbers worked out by hand: a slider stopped at its
// travel limit, a distance pendulum's length and period, a spring's frequency, a hinge
// motor's spin-up and its torque bound against a load, a ball joint's swing cone and twist
// limit, a wheel's static suspension deflection; then restore == continuous and thread
// counts for a scene with every kind.
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

constexpr float kPi = 3.14159265358979f;
constexpr float kG = 9.81f;

WorldSettings xpbd_settings(uint32_t substeps = 8) {
  WorldSettings s;
  s.solver_kind = SolverKind::Xpbd;
  s.substeps = substeps;
  return s;
}

// Frames whose X is world +Y (about Z by +90 degrees), world +Z (about Y by -90), world -Y.
const Quat kXToY(std::cos(kPi / 4), 0.0f, 0.0f, std::sin(kPi / 4));
const Quat kXToZ(std::cos(kPi / 4), 0.0f, -std::sin(kPi / 4), 0.0f);
const Quat kXToDown(std::cos(kPi / 4), 0.0f, 0.0f, -std::sin(kPi / 4));

// A joint of body `body` (at body_pos, unrotated) to the world: frame A at the body's
// centre plus `offset`, frame B at that point in the world, both rotated by `frame`.
JointDef to_world(JointKind kind, uint32_t body, Vec3 body_pos, Vec3 offset, Quat frame = identity_quat()) {
  JointDef j;
  j.kind = kind;
  j.body_a = body;
  j.body_b = kWorldBodyId;
  j.frame_a = Transform{offset, frame};
  j.frame_b = Transform{body_pos + offset, frame};
  return j;
}

BodyDef free_sphere(uint32_t id, Vec3 p, float r, float mass) {
  BodyDef b = sphere_body(id, MotionType::Dynamic, p, r);
  b.mass = mass;
  b.can_sleep = false;
  return b;
}

// Time of each upward zero crossing of a signal sampled once per tick (linear in between).
struct Crossings {
  std::vector<double> at;
  float prev = 0.0f;
  bool first = true;
  void add(int tick, float v, double dt) {
    if (!first && prev < 0.0f && v >= 0.0f) at.push_back((tick - 1 + prev / (prev - v)) * dt);
    prev = v;
    first = false;
  }
  double period() const { return (at.back() - at.front()) / double(at.size() - 1); }
};

// A slider along world Y with travel [-0.5, 0.5]: the ball falls from t = 0 (thrown
// sideways too) and stops on the lower limit; the line holds it at x = z = 0.
TEST(XpbdJointsTest, SliderStopsAtItsTravelLimit) {
  World w(xpbd_settings());
  BodyDef b = free_sphere(1, Vec3(0.0f), 0.1f, 1.0f);
  b.linear_velocity = Vec3(2.0f, 0.0f, -1.0f);
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Slider, 1, Vec3(0.0f), Vec3(0.0f), kXToY);
  j.limit = JointLimit{true, -0.5f, 0.5f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float lowest = 0.0f;
  for (int t = 0; t < 120; ++t) {
    w.step();
    lowest = std::min(lowest, joint_info(w, *id).translation);
  }
  EXPECT_GT(lowest, -0.5f - 0.005f);
  const Vec3 p = w.body_state(w.find_body(1)).position;
  EXPECT_NEAR(p.y, -0.5f, 0.005f);
  EXPECT_NEAR(p.x, 0.0f, 1e-4f);
  EXPECT_NEAR(p.z, 0.0f, 1e-4f);
  // The rotation stays locked.
  EXPECT_NEAR(w.body_state(w.find_body(1)).rotation.w, 1.0f, 1e-5f);
}

// A distance joint of 1.5 m as a pendulum released at 10 degrees: the bob turns freely, so
// it swings as a point mass, T = 2 pi sqrt(L / g) = 2.4575 s (the amplitude adds 0.19 %).
TEST(XpbdJointsTest, DistancePendulumKeepsItsLengthAndPeriod) {
  World w(xpbd_settings());
  const float len = 1.5f, theta = 10.0f * kPi / 180.0f;
  const Vec3 bob(len * std::sin(theta), -len * std::cos(theta), 0.0f);
  ASSERT_TRUE(w.add_body(free_sphere(1, bob, 0.05f, 1.0f)));
  JointDef j;
  j.kind = JointKind::Distance;
  j.body_a = 1;
  j.frame_b.position = Vec3(0.0f);  // pivot at the origin; the length is taken when added
  ASSERT_TRUE(add_joint(w, j));
  const BodyId id = w.find_body(1);
  Crossings c;
  float worst = 0.0f;
  for (int t = 1; t <= 60 * 12; ++t) {
    w.step();
    const Vec3 p = w.body_state(id).position;
    worst = std::max(worst, std::abs(glm::length(p) - len));
    c.add(t, p.x, 1.0 / 60.0);
  }
  ASSERT_GE(c.at.size(), 4u);
  const double expected = 2.0 * kPi * std::sqrt(len / kG);
  EXPECT_NEAR(c.period(), expected, 0.02 * expected);
  EXPECT_LT(worst, 1e-3f);
}

// A slider spring without gravity: m = 2 kg, k = 200 N/m, released 0.1 m out, undamped:
// f = sqrt(k / m) / (2 pi) = 1.5915 Hz. The scene gives the spring's hertz; the solver's
// compliance is 1 / k with k = m (2 pi f)^2.
TEST(XpbdJointsTest, SliderSpringOscillatesAtItsFrequency) {
  WorldSettings s = xpbd_settings();
  s.gravity = Vec3(0.0f);
  World w(s);
  const float m = 2.0f, k = 200.0f;
  ASSERT_TRUE(w.add_body(free_sphere(1, Vec3(0.1f, 0.0f, 0.0f), 0.1f, m)));
  JointDef j = to_world(JointKind::Slider, 1, Vec3(0.0f), Vec3(0.0f));
  j.frame_a.position = Vec3(0.0f);  // anchor at the centre: the spring starts 0.1 m long
  const float hertz = std::sqrt(k / m) / (2.0f * kPi);
  j.spring = JointSpring{true, hertz, 0.0f, 0.0f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  Crossings c;
  for (int t = 1; t <= 60 * 6; ++t) {
    w.step();
    c.add(t, joint_info(w, *id).translation, 1.0 / 60.0);
  }
  ASSERT_GE(c.at.size(), 5u);
  EXPECT_NEAR(1.0 / c.period(), hertz, 0.03 * hertz);
}

// The same spring on a distance joint: two 1 kg balls 1 m apart at rest length 0.8 m, no
// gravity. The coordinate's mass is the pair's reduced mass, 0.5 kg, so k = 50 N/m at
// hertz = sqrt(k / 0.5) / (2 pi) = 1.5915 Hz.
TEST(XpbdJointsTest, DistanceSpringOscillatesAtItsFrequency) {
  WorldSettings s = xpbd_settings();
  s.gravity = Vec3(0.0f);
  World w(s);
  ASSERT_TRUE(w.add_body(free_sphere(1, Vec3(-0.5f, 0.0f, 0.0f), 0.1f, 1.0f)));
  ASSERT_TRUE(w.add_body(free_sphere(2, Vec3(0.5f, 0.0f, 0.0f), 0.1f, 1.0f)));
  JointDef j;
  j.kind = JointKind::Distance;
  j.body_a = 1;
  j.body_b = 2;
  j.length = 0.8f;
  const float hertz = std::sqrt(50.0f / 0.5f) / (2.0f * kPi);
  j.spring = JointSpring{true, hertz, 0.0f, 0.0f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  Crossings c;
  for (int t = 1; t <= 60 * 6; ++t) {
    w.step();
    c.add(t, joint_info(w, *id).translation - 0.8f, 1.0 / 60.0);
  }
  ASSERT_GE(c.at.size(), 5u);
  EXPECT_NEAR(1.0 / c.period(), hertz, 0.03 * hertz);
  // Momentum: the pair's centre stays at the origin.
  const Vec3 mid = 0.5f * (w.body_state(w.find_body(1)).position + w.body_state(w.find_body(2)).position);
  EXPECT_NEAR(glm::length(mid), 0.0f, 1e-4f);
}

// A 1 kg cube of side 0.2 m on a hinge through its centre about Z: I = m (a^2 + b^2) / 12
// = 1 / 150 kg m^2. A motor of 0.05 N m toward 3 rad/s spins it up at T / I = 7.5 rad/s^2
// (1.5 rad/s at 0.2 s) and holds 3 rad/s from 0.4 s.
TEST(XpbdJointsTest, HingeMotorSpinsUpAtItsTorqueToItsSpeed) {
  World w(xpbd_settings());
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.0f), Vec3(0.1f));
  b.mass = 1.0f;
  b.can_sleep = false;
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Hinge, 1, Vec3(0.0f), Vec3(0.0f), kXToZ);
  j.motor = JointMotor{true, 3.0f, 0.05f};
  ASSERT_TRUE(add_joint(w, j));
  const BodyId id = w.find_body(1);
  for (int t = 0; t < 12; ++t) w.step();
  EXPECT_NEAR(w.body_state(id).angular_velocity.z, 1.5f, 0.02f * 1.5f);
  for (int t = 12; t < 60; ++t) w.step();
  EXPECT_NEAR(w.body_state(id).angular_velocity.z, 3.0f, 0.01f * 3.0f);
  EXPECT_NEAR(w.body_state(id).angular_velocity.x, 0.0f, 1e-4f);
  EXPECT_NEAR(w.body_state(id).angular_velocity.y, 0.0f, 1e-4f);
}

// A hinge spring on a 2 kg, 1 m arm turning about its end, no gravity: the spring's hertz
// is the arm's frequency about the pivot (the stiffness is taken for the inertia there,
// m L^2 / 3 plus the thickness, not the centre's m L^2 / 12). Target 0.3 rad, released at 0.
TEST(XpbdJointsTest, HingeSpringOscillatesAtItsFrequencyAboutThePivot) {
  WorldSettings s = xpbd_settings();
  s.gravity = Vec3(0.0f);
  World w(s);
  BodyDef arm = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  arm.mass = 2.0f;
  arm.can_sleep = false;
  ASSERT_TRUE(w.add_body(arm));
  JointDef j = to_world(JointKind::Hinge, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(-0.5f, 0.0f, 0.0f), kXToZ);
  j.spring = JointSpring{true, 1.0f, 0.0f, 0.3f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  Crossings c;
  for (int t = 1; t <= 60 * 6; ++t) {
    w.step();
    c.add(t, joint_info(w, *id).angle - 0.3f, 1.0 / 60.0);
  }
  ASSERT_GE(c.at.size(), 4u);
  EXPECT_NEAR(1.0 / c.period(), 1.0, 0.03);
}

// A 2 kg arm, its centre r = 0.5 m from a hinge about Z, held level by a motor driving it
// up at 2 rad/s: the load is m g r = 9.81 N m. A motor of 1.05 m g r lifts it; one of
// 0.95 m g r cannot (over 1 s the net +-0.05 m g r turns it by about +-0.37 rad).
float arm_angle_after_one_second(float torque_share) {
  World w(xpbd_settings());
  BodyDef arm = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  arm.mass = 2.0f;
  arm.can_sleep = false;
  EXPECT_TRUE(w.add_body(arm));
  JointDef j = to_world(JointKind::Hinge, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(-0.5f, 0.0f, 0.0f), kXToZ);
  j.motor = JointMotor{true, 2.0f, torque_share * 2.0f * kG * 0.5f};
  auto id = add_joint(w, j);
  EXPECT_TRUE(id);
  for (int t = 0; t < 60; ++t) w.step();
  return joint_info(w, *id).angle;
}

TEST(XpbdJointsTest, MotorTorqueBoundDecidesWhetherTheLoadRises) {
  EXPECT_GT(arm_angle_after_one_second(1.05f), 0.2f);
  EXPECT_LT(arm_angle_after_one_second(0.95f), -0.2f);
}

// A hinge limit means what it means to the soft step (A's angle in B, joint_info's): an arm
// released level falls to negative angles, so with [-0.2, 0.5] it stops at -0.2.
TEST(XpbdJointsTest, HingeLimitIsTheAngleOfAInB) {
  World w(xpbd_settings());
  BodyDef arm = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  arm.mass = 2.0f;
  arm.can_sleep = false;
  ASSERT_TRUE(w.add_body(arm));
  JointDef j = to_world(JointKind::Hinge, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(-0.5f, 0.0f, 0.0f), kXToZ);
  j.limit = JointLimit{true, -0.2f, 0.5f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  for (int t = 0; t < 90; ++t) w.step();
  EXPECT_NEAR(joint_info(w, *id).angle, -0.2f, 0.01f);
  // The centre hangs 0.5 sin(0.2) = 99.3 mm below the pivot.
  EXPECT_NEAR(w.body_state(w.find_body(1)).position.y, -0.5f * std::sin(0.2f), 2e-3f);
}

// A 1 m limb (a 2 kg box 0.1 x 1 x 0.1 m) hanging from a ball joint at its top end,
// frames' X down, swing cone 20 degrees, its centre thrown at sqrt(3 g L / 4) (enough
// to swing to 60 degrees: 1/2 I w^2 = m g (L/2) (1 - cos 60), I = m L^2 / 3 at the end):
// it reaches the cone and never passes it by more than half a degree.
TEST(XpbdJointsTest, BallConeHoldsWithinHalfADegree) {
  World w(xpbd_settings());
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.0f, -0.5f, 0.0f), Vec3(0.05f, 0.5f, 0.05f));
  b.mass = 2.0f;
  b.can_sleep = false;
  const float omega = std::sqrt(1.5f * kG);  // 1/2 (m/3) w^2 = m g / 4
  b.linear_velocity = Vec3(0.5f * omega, 0.0f, 0.0f);
  b.angular_velocity = Vec3(0.0f, 0.0f, omega);
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Ball, 1, Vec3(0.0f, -0.5f, 0.0f), Vec3(0.0f, 0.5f, 0.0f), kXToDown);
  const float cone = 20.0f * kPi / 180.0f;
  j.cone_angle = cone;
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float widest = 0.0f, worst_gap = 0.0f;
  for (int t = 0; t < 180; ++t) {
    w.step();
    widest = std::max(widest, joint_info(w, *id).swing);
    const BodyState st = w.body_state(w.find_body(1));
    worst_gap = std::max(worst_gap, glm::length(st.position + st.rotation * Vec3(0.0f, 0.5f, 0.0f)));
  }
  EXPECT_GT(widest, cone - 0.5f * kPi / 180.0f);
  EXPECT_LT(widest, cone + 0.5f * kPi / 180.0f);
  // The pivot holds.
  EXPECT_LT(worst_gap, 1e-3f);
}

// A ball joint's twist limit [-0.2, 0.4] rad about its X: a disc spun about that axis at
// 5 rad/s (no gravity) stops at the upper bound; spun the other way, at the lower.
TEST(XpbdJointsTest, BallTwistLimitStopsAtEachBound) {
  for (float spin : {5.0f, -5.0f}) {
    WorldSettings s = xpbd_settings();
    s.gravity = Vec3(0.0f);
    World w(s);
    BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.0f), Vec3(0.1f, 0.2f, 0.2f));
    b.mass = 1.0f;
    b.can_sleep = false;
    b.angular_velocity = Vec3(spin, 0.0f, 0.0f);
    ASSERT_TRUE(w.add_body(b));
    JointDef j = to_world(JointKind::Ball, 1, Vec3(0.0f), Vec3(0.0f));
    j.limit = JointLimit{true, -0.2f, 0.4f};
    auto id = add_joint(w, j);
    ASSERT_TRUE(id);
    for (int t = 0; t < 60; ++t) w.step();
    EXPECT_NEAR(joint_info(w, *id).angle, spin > 0.0f ? 0.4f : -0.2f, 0.5f * kPi / 180.0f) << spin;
  }
}

// A 10 kg wheel on a suspension along world Y of k = 4000 N/m (hertz sqrt(k / m) / (2 pi),
// damping ratio 0.7): it settles m g / k = 24.5 mm below the spring's target, and spins
// about its axle as freely as a ball with no joint (the integrator's own loss at this
// spin, 1.9 % over 3 s, is the same for both).
TEST(XpbdJointsTest, WheelSuspensionSettlesAtTheStaticDeflection) {
  World w(xpbd_settings());
  const float m = 10.0f, k = 4000.0f;
  BodyDef b = free_sphere(1, Vec3(0.0f), 0.3f, m);
  // The axle is frame A's Y, world -X under kXToY.
  b.angular_velocity = Vec3(-5.0f, 0.0f, 0.0f);
  ASSERT_TRUE(w.add_body(b));
  BodyDef loose = free_sphere(2, Vec3(5.0f, 0.0f, 0.0f), 0.3f, m);
  loose.angular_velocity = b.angular_velocity;
  loose.gravity_scale = 0.0f;
  ASSERT_TRUE(w.add_body(loose));
  JointDef j = to_world(JointKind::Wheel, 1, Vec3(0.0f), Vec3(0.0f), kXToY);
  j.spring = JointSpring{true, std::sqrt(k / m) / (2.0f * kPi), 0.7f, 0.0f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  for (int t = 0; t < 180; ++t) w.step();
  const float deflection = -joint_info(w, *id).translation;
  EXPECT_NEAR(deflection, m * kG / k, 0.05f * m * kG / k);
  const BodyState st = w.body_state(w.find_body(1));
  EXPECT_NEAR(st.angular_velocity.x, w.body_state(w.find_body(2)).angular_velocity.x, 1e-3f);
  EXPECT_LT(st.angular_velocity.x, -4.8f);
  EXPECT_NEAR(st.position.x, 0.0f, 1e-4f);
  EXPECT_NEAR(st.position.z, 0.0f, 1e-4f);
}

// Every kind and feature in one scene: a slider with a spring and a limit, a distance
// range, a wheel with a motor and a steering spring on a chassis, a ball with a cone and
// a twist limit, a hinge with a motor, a spring and a limit, a fixed pair, and a floor.
void build_joint_scene(World& w) {
  ASSERT_TRUE(w.add_body(box_body(100, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(20.0f, 0.5f, 20.0f))));
  ASSERT_TRUE(w.add_body(free_sphere(1, Vec3(-3.0f, 2.0f, 0.0f), 0.2f, 1.0f)));
  JointDef slider = to_world(JointKind::Slider, 1, Vec3(-3.0f, 2.0f, 0.0f), Vec3(0.0f), kXToY);
  slider.spring = JointSpring{true, 2.0f, 0.1f, 0.0f};
  slider.limit = JointLimit{true, -0.3f, 0.3f};
  ASSERT_TRUE(add_joint(w, slider));
  ASSERT_TRUE(w.add_body(free_sphere(2, Vec3(-1.5f, 2.0f, 0.0f), 0.2f, 1.0f)));
  JointDef dist;
  dist.kind = JointKind::Distance;
  dist.body_a = 2;
  dist.frame_b.position = Vec3(-1.5f, 3.0f, 0.5f);
  dist.limit = JointLimit{true, 0.5f, 1.0f};
  ASSERT_TRUE(add_joint(w, dist));
  ASSERT_TRUE(w.add_body(box_body(3, MotionType::Dynamic, Vec3(0.0f, 1.0f, 0.0f), Vec3(0.6f, 0.1f, 0.3f))));
  ASSERT_TRUE(w.add_body(free_sphere(4, Vec3(0.7f, 0.6f, 0.0f), 0.3f, 2.0f)));
  JointDef wheel;
  wheel.kind = JointKind::Wheel;
  wheel.body_a = 4;
  wheel.body_b = 3;
  wheel.frame_a = Transform{Vec3(0.0f), Quat(std::cos(kPi / 4), 0.0f, std::sin(kPi / 4), 0.0f) * kXToY};
  wheel.frame_b = Transform{Vec3(0.7f, -0.4f, 0.0f), Quat(std::cos(kPi / 4), 0.0f, std::sin(kPi / 4), 0.0f) * kXToY};
  wheel.spring = JointSpring{true, 4.0f, 0.5f, 0.0f};
  wheel.limit = JointLimit{true, -0.15f, 0.15f};
  wheel.motor = JointMotor{true, 4.0f, 20.0f};
  wheel.steer_spring = JointSpring{true, 3.0f, 0.7f, 0.0f};
  ASSERT_TRUE(add_joint(w, wheel));
  ASSERT_TRUE(w.add_body(free_sphere(5, Vec3(2.0f, 1.5f, 0.0f), 0.1f, 1.0f)));
  JointDef ball = to_world(JointKind::Ball, 5, Vec3(2.0f, 1.5f, 0.0f), Vec3(0.0f, 1.0f, 0.0f), kXToDown);
  ball.cone_angle = 0.4f;
  ball.limit = JointLimit{true, -0.3f, 0.3f};
  ASSERT_TRUE(add_joint(w, ball));
  BodyDef arm = box_body(6, MotionType::Dynamic, Vec3(4.5f, 2.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  arm.can_sleep = false;
  ASSERT_TRUE(w.add_body(arm));
  JointDef hinge = to_world(JointKind::Hinge, 6, Vec3(4.5f, 2.0f, 0.0f), Vec3(-0.5f, 0.0f, 0.0f), kXToZ);
  hinge.motor = JointMotor{true, 1.0f, 3.0f};
  hinge.spring = JointSpring{true, 1.0f, 0.2f, 0.5f};
  hinge.limit = JointLimit{true, -1.0f, 1.2f};
  ASSERT_TRUE(add_joint(w, hinge));
  ASSERT_TRUE(w.add_body(box_body(7, MotionType::Dynamic, Vec3(6.0f, 0.5f, 0.0f), Vec3(0.2f))));
  ASSERT_TRUE(w.add_body(box_body(8, MotionType::Dynamic, Vec3(6.5f, 0.5f, 0.0f), Vec3(0.2f))));
  JointDef fixed;
  fixed.kind = JointKind::Fixed;
  fixed.body_a = 8;
  fixed.body_b = 7;
  fixed.frame_a.position = Vec3(-0.25f, 0.0f, 0.0f);
  fixed.frame_b.position = Vec3(0.25f, 0.0f, 0.0f);
  ASSERT_TRUE(add_joint(w, fixed));
}

TEST(XpbdJointsTest, EveryKindRestoreEqualsContinuous) {
  World a(xpbd_settings(6));
  build_joint_scene(a);
  for (int t = 0; t < 45; ++t) a.step();
  const std::vector<uint8_t> saved = a.save_state();
  for (int t = 0; t < 75; ++t) a.step();
  World b;
  ASSERT_TRUE(b.restore_state(saved));
  for (int t = 0; t < 75; ++t) b.step();
  EXPECT_EQ(a.hash(), b.hash());
}

TEST(XpbdJointsTest, EveryKindThreadCountsGiveIdenticalHashes) {
  std::vector<uint64_t> hashes;
  for (uint32_t threads : {1u, 4u}) {
    WorldSettings s = xpbd_settings(6);
    s.threads = threads;
    World w(s);
    build_joint_scene(w);
    for (int t = 0; t < 120; ++t) w.step();
    hashes.push_back(w.hash());
    // The scene holds together: nothing flew off or went non-finite.
    for (uint32_t id = 1; id <= 8; ++id) {
      const Vec3 p = w.body_state(w.find_body(id)).position;
      EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) << id;
      EXPECT_LT(glm::length(p), 20.0f) << id;
    }
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

}  // namespace
}  // namespace keel::sim
