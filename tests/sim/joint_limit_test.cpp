// Joint limits met without overshoot: a body swinging onto a hinge stop, a ball joint's
// swing cone or its twist limit at 5 rad/s under load, or sliding onto a slider's or a
// wheel's travel limit at 5 m/s, stops within 0.5 degree (5 mm) of it; a limit does not act before it is reached (a pendulum within
// its limits moves as a free one, against the hand-computed motion); and a body resting
// on a limit under gravity stays on it for 10 s. docs/sim.md, "Speculative joint limits".
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

constexpr float kPi = 3.14159265358979f;
constexpr float kDeg = kPi / 180.0f;
constexpr float kG = 9.81f;

// Frame rotations taking local X (the joint axis) onto a world axis.
const Quat kXToZ(std::cos(kPi / 4), 0.0f, -std::sin(kPi / 4), 0.0f);     // hinge about Z
const Quat kXToY(std::cos(kPi / 4), 0.0f, 0.0f, std::sin(kPi / 4));      // slide along / twist about Y
const Quat kXToDown(std::cos(kPi / 4), 0.0f, 0.0f, -std::sin(kPi / 4));  // cone around -Y

/// A joint from `body` (centre at `body_pos`) to the world at `pivot`, both frames turned
/// by `frame`.
JointDef to_world(JointKind kind, uint32_t body, Vec3 body_pos, Vec3 pivot, Quat frame) {
  JointDef j;
  j.kind = kind;
  j.body_a = body;
  j.body_b = kWorldBodyId;
  j.frame_a = Transform{pivot - body_pos, frame};
  j.frame_b = Transform{pivot, frame};
  return j;
}

// The pendulum of these tests: a 10 kg bob, a 5 cm sphere, 1 m below a pivot at the origin.
constexpr float kBobMass = 10.0f;
constexpr float kBobRadius = 0.05f;
constexpr float kArm = 1.0f;
/// Its moment of inertia about the pivot: m (L^2 + 2/5 r^2) = 10.01 kg m^2.
constexpr float kBobInertia = kBobMass * (kArm * kArm + 0.4f * kBobRadius * kBobRadius);

/// Angular speed of the pendulum at angle `theta` from the bottom when it passes the
/// bottom at `w0` (energy: 1/2 I w^2 + m g L (1 - cos theta) is constant).
float pendulum_speed(float w0, float theta) {
  return std::sqrt(w0 * w0 - 2.0f * kBobMass * kG * kArm * (1.0f - std::cos(theta)) / kBobInertia);
}

/// The speed at the bottom that brings the pendulum to `theta` at `w`.
float speed_at_bottom(float w, float theta) {
  return std::sqrt(w * w + 2.0f * kBobMass * kG * kArm * (1.0f - std::cos(theta)) / kBobInertia);
}

/// A bob hanging at the bottom, turning about `axis` (unit, horizontal) at `w0`.
BodyDef swinging_bob(Vec3 axis, float w0) {
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.0f, -kArm, 0.0f), kBobRadius);
  b.mass = kBobMass;
  b.angular_velocity = w0 * axis;
  b.linear_velocity = glm::cross(w0 * axis, Vec3(0.0f, -kArm, 0.0f));
  return b;
}

// A hinge about Z with limits of +-30 degrees carries the bob. It passes the bottom at
// w0 = sqrt(5^2 + 2 m g L (1 - cos 30) / I) = 5.2561 rad/s, so it reaches the upper stop at
// 5 rad/s (its speed on the last tick before the stop is checked against the hand-computed
// one), and must stop within 0.5 degree of it.
TEST(JointLimit, HingeStopsWithinHalfADegreeOfItsLimitAtFiveRadiansPerSecond) {
  const float limit = 30.0f * kDeg;
  const float w0 = speed_at_bottom(5.0f, limit);
  EXPECT_NEAR(w0, 5.2561f, 1e-3f);
  World w;
  ASSERT_TRUE(w.add_body(swinging_bob(Vec3(0.0f, 0.0f, 1.0f), w0)));
  JointDef j = to_world(JointKind::Hinge, 1, Vec3(0.0f, -kArm, 0.0f), Vec3(0.0f), kXToZ);
  j.limit = JointLimit{true, -limit, limit};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float highest = 0.0f, before_stop = 0.0f, speed_before_stop = 0.0f;
  bool reached = false;
  for (int t = 0; t < 60; ++t) {
    w.step();
    float angle = joint_info(w, *id).angle;
    reached = reached || angle > limit - 0.5f * kDeg;
    if (!reached) {
      before_stop = angle;
      speed_before_stop = w.body_state(w.find_body(1)).angular_velocity.z;
    }
    highest = std::max(highest, angle);
  }
  ASSERT_GT(before_stop, limit - 7.0f * kDeg);  // the tick before the stop (5 degrees a tick)
  EXPECT_NEAR(speed_before_stop, pendulum_speed(w0, before_stop), 0.01f * 5.0f);
  EXPECT_GT(highest, limit - 0.5f * kDeg);  // it did reach the stop
  EXPECT_LE(highest, limit + 0.5f * kDeg);
  std::printf("hinge: %.3f rad/s at %.2f deg (hand: %.3f), highest %.3f deg against the 30 deg stop\n",
              speed_before_stop, before_stop / kDeg, pendulum_speed(w0, before_stop), highest / kDeg);
}

// A 10 kg box on a vertical slider with travel [-0.5, 0.5] m; the rail runs 0.5 m beside
// the box's centre (the load hangs off an arm, so the slider also holds its rotation). It
// starts at 0 falling at v0 = sqrt(5^2 - 2 g 0.5) = 3.8974 m/s and reaches the lower stop at
// 5 m/s; it must stop within 5 mm of it.
TEST(JointLimit, SliderStopsWithinFiveMillimetresOfItsLimitAtFiveMetresPerSecond) {
  const float v0 = std::sqrt(25.0f - 2.0f * kG * 0.5f);
  World w;
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.2f));
  b.mass = 10.0f;
  b.linear_velocity = Vec3(0.0f, -v0, 0.0f);
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Slider, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.0f), kXToY);
  j.limit = JointLimit{true, -0.5f, 0.5f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float lowest = 0.0f, before_stop = 0.0f, speed_before_stop = 0.0f;
  bool reached = false;
  for (int t = 0; t < 60; ++t) {
    w.step();
    float y = joint_info(w, *id).translation;
    reached = reached || y < -0.495f;
    if (!reached) {
      before_stop = y;
      speed_before_stop = -w.body_state(w.find_body(1)).linear_velocity.y;
    }
    lowest = std::min(lowest, y);
  }
  ASSERT_LT(before_stop, -0.4f);  // the tick before the stop (8 cm a tick)
  EXPECT_NEAR(speed_before_stop, std::sqrt(v0 * v0 - 2.0f * kG * before_stop), 0.01f * 5.0f);
  EXPECT_LT(lowest, -0.495f);
  EXPECT_GE(lowest, -0.505f);
  std::printf("slider: %.3f m/s at %.3f m, lowest %.5f m against the -0.5 m stop\n", speed_before_stop,
              before_stop, lowest);
}

// A wheel joint's suspension travel: a 10 kg wheel (0.3 m sphere) whose axle point, the
// joint's anchor, lies 0.5 m beside its centre on the axle line, hung from the world with a
// vertical suspension axis and travel [-0.5, 0.5] m, starts falling at v0 = 3.8974 m/s and
// reaches the lower stop at 5 m/s; it must stop within 5 mm of it.
TEST(JointLimit, WheelSuspensionStopsWithinFiveMillimetresOfItsTravelAtFiveMetresPerSecond) {
  const float v0 = std::sqrt(25.0f - 2.0f * kG * 0.5f);
  World w;
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), 0.3f);
  b.mass = 10.0f;
  b.linear_velocity = Vec3(0.0f, -v0, 0.0f);
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Wheel, 1, b.position, Vec3(0.0f), kXToY);  // axle (frame Y) along -X
  j.limit = JointLimit{true, -0.5f, 0.5f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float lowest = 0.0f;
  for (int t = 0; t < 60; ++t) {
    w.step();
    lowest = std::min(lowest, joint_info(w, *id).translation);
  }
  EXPECT_LT(lowest, -0.495f);
  EXPECT_GE(lowest, -0.505f);
  std::printf("wheel: lowest %.5f m against the -0.5 m travel limit\n", lowest);
}

// The bob on a ball joint whose 30 degree swing cone is centred on the downward vertical,
// swung at w0 (5 rad/s at the cone's edge) once about Z and once about the diagonal of X
// and Z: its swing must stay within 0.5 degree of the cone.
TEST(JointLimit, BallSwingStopsWithinHalfADegreeOfItsConeAtFiveRadiansPerSecond) {
  const float cone = 30.0f * kDeg;
  const float w0 = speed_at_bottom(5.0f, cone);
  for (Vec3 axis : {Vec3(0.0f, 0.0f, 1.0f), glm::normalize(Vec3(1.0f, 0.0f, 1.0f))}) {
    World w;
    ASSERT_TRUE(w.add_body(swinging_bob(axis, w0)));
    JointDef j = to_world(JointKind::Ball, 1, Vec3(0.0f, -kArm, 0.0f), Vec3(0.0f), kXToDown);
    j.cone_angle = cone;
    auto id = add_joint(w, j);
    ASSERT_TRUE(id);
    float widest = 0.0f;
    for (int t = 0; t < 60; ++t) {
      w.step();
      widest = std::max(widest, joint_info(w, *id).swing);
    }
    EXPECT_GT(widest, cone - 0.5f * kDeg) << "axis " << axis.x;
    EXPECT_LE(widest, cone + 0.5f * kDeg) << "axis " << axis.x;
    std::printf("cone: swung about (%.2f, 0, %.2f), widest %.3f deg against the 30 deg cone\n", axis.x, axis.z,
                widest / kDeg);
  }
}

// The bob held out level, 1 m from a ball joint whose axis is the vertical: a 0.05 rad
// cone around that axis holds it up against gravity, and it turns about the vertical at
// 5 rad/s (nothing slows a turn about the vertical) onto a twist limit of +-30 degrees.
TEST(JointLimit, BallTwistStopsWithinHalfADegreeOfItsLimitAtFiveRadiansPerSecond) {
  const float limit = 30.0f * kDeg;
  World w;
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.0f, 0.0f, kArm), kBobRadius);
  b.mass = kBobMass;
  b.angular_velocity = Vec3(0.0f, 5.0f, 0.0f);
  b.linear_velocity = glm::cross(b.angular_velocity, b.position);
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Ball, 1, b.position, Vec3(0.0f), kXToY);
  j.cone_angle = 0.05f;
  j.limit = JointLimit{true, -limit, limit};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float highest = 0.0f;
  for (int t = 0; t < 60; ++t) {
    w.step();
    highest = std::max(highest, joint_info(w, *id).angle);
  }
  EXPECT_GT(highest, limit - 0.5f * kDeg);
  EXPECT_LE(highest, limit + 0.5f * kDeg);
  std::printf("twist: highest %.3f deg against the 30 deg limit\n", highest / kDeg);
}

// Stopping the bob takes its momentum, m v = 10 kg x 5 m/s, within a substep: the pivot
// takes it too, far above the m (g + w^2 L) = 348 N of the swing. A 2,000 N break force
// holds the free swing and gives way when the bob hits the 30 degree stop.
TEST(JointLimit, StoppingAtALimitLoadsThePivotForBreaking) {
  const float limit = 30.0f * kDeg;
  for (bool limited : {false, true}) {
    World w;
    ASSERT_TRUE(w.add_body(swinging_bob(Vec3(0.0f, 0.0f, 1.0f), speed_at_bottom(5.0f, limit))));
    JointDef j = to_world(JointKind::Hinge, 1, Vec3(0.0f, -kArm, 0.0f), Vec3(0.0f), kXToZ);
    if (limited) j.limit = JointLimit{true, -limit, limit};
    j.break_force = 2000.0f;
    auto id = add_joint(w, j);
    ASSERT_TRUE(id);
    for (int t = 0; t < 60; ++t) w.step();
    EXPECT_EQ(joint_info(w, *id).broken, limited);
  }
}

/// Arithmetic-geometric mean (the exact period of a pendulum: T0 / agm(1, cos(theta0/2))).
double agm(double a, double b) {
  for (int i = 0; i < 20; ++i) {
    double m = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = m;
  }
  return a;
}

// Released at rest 29 degrees from the bottom, with stops at +-30 degrees, the bob swings
// to 29 degrees on the far side and back: a limit that acted before it is reached would
// take energy or shorten the swing. Hand-computed: the far turning point at -29 degrees
// (energy), the period 2 pi sqrt(I / (m g L)) / agm(1, cos(29/2 degrees)) = 2.0395 s. And the
// motion is that of the same pendulum without limits, to the bit.
TEST(JointLimit, LimitDoesNotActBeforeItIsReached) {
  const float start = 29.0f * kDeg;
  auto run = [&](bool limited, std::vector<float>& angles) {
    World w;
    Vec3 bob(kArm * std::sin(start), -kArm * std::cos(start), 0.0f);
    BodyDef b = sphere_body(1, MotionType::Dynamic, bob, kBobRadius);
    b.mass = kBobMass;
    b.rotation = Quat(std::cos(0.5f * start), 0.0f, 0.0f, std::sin(0.5f * start));
    b.can_sleep = false;
    ASSERT_TRUE(w.add_body(b));
    JointDef j = to_world(JointKind::Hinge, 1, bob, Vec3(0.0f), kXToZ);
    j.frame_a.position = glm::conjugate(b.rotation) * -bob;  // the pivot in the turned bob's frame
    if (limited) j.limit = JointLimit{true, -30.0f * kDeg, 30.0f * kDeg};
    auto id = add_joint(w, j);
    ASSERT_TRUE(id);
    for (int t = 0; t < 300; ++t) {
      w.step();
      angles.push_back(joint_info(w, *id).angle);
    }
  };
  std::vector<float> limited, free;
  run(true, limited);
  run(false, free);
  ASSERT_EQ(limited.size(), 300u);
  ASSERT_EQ(free.size(), 300u);
  // Turning points and downward crossings of the bottom (interpolated within the tick).
  float lowest = 0.0f, highest_later = 0.0f;
  std::vector<double> crossings;
  for (size_t t = 1; t < limited.size(); ++t) {
    if (t < 90) lowest = std::min(lowest, limited[t]);  // the first far turning point, near 1 s
    if (t > 90) highest_later = std::max(highest_later, limited[t]);
    if (limited[t - 1] > 0.0f && limited[t] <= 0.0f) {
      crossings.push_back((double(t - 1) + limited[t - 1] / (limited[t - 1] - limited[t]) + 1.0) / 60.0);
    }
  }
  EXPECT_NEAR(lowest, -start, 0.2f * kDeg);
  EXPECT_NEAR(highest_later, start, 0.2f * kDeg);
  ASSERT_GE(crossings.size(), 2u);
  const double period = (crossings.back() - crossings.front()) / double(crossings.size() - 1);
  const double expected = 2.0 * double(kPi) * std::sqrt(double(kBobInertia) / (kBobMass * kG * kArm)) /
                          agm(1.0, std::cos(0.5 * double(start)));
  EXPECT_NEAR(period, expected, 0.005 * expected);
  for (size_t t = 0; t < limited.size(); ++t) {
    ASSERT_EQ(limited[t], free[t]) << "tick " << t;
  }
  std::printf("within the limits: swings to %.3f / %.3f deg (hand: -+29), period %.4f s (hand: %.4f s)\n",
              lowest / kDeg, highest_later / kDeg, period, expected);
}

// The bob resting against a hinge's lower stop at 30 degrees from the bottom (limits 30 to
// 90 degrees), awake for 10 s: gravity presses it on the stop with m g L sin 30 = 49 N·m.
// It must stay within 0.5 degree of the stop throughout, without creeping (the last 5 s
// span under 0.01 degree) or jittering (under 0.01 rad/s).
TEST(JointLimit, BobRestingOnAHingeStopStaysOnItForTenSeconds) {
  const float stop = 30.0f * kDeg;
  World w;
  Vec3 bob(kArm * std::sin(stop), -kArm * std::cos(stop), 0.0f);
  BodyDef b = sphere_body(1, MotionType::Dynamic, bob, kBobRadius);
  b.mass = kBobMass;
  b.can_sleep = false;
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Hinge, 1, bob, Vec3(0.0f), kXToZ);
  j.frame_b.rotation = Quat(std::cos(0.5f * stop), 0.0f, 0.0f, -std::sin(0.5f * stop)) * kXToZ;  // angle 30 now
  j.limit = JointLimit{true, stop, 90.0f * kDeg};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  ASSERT_NEAR(joint_info(w, *id).angle, stop, 1e-4f);
  float lo = 1.0f, hi = -1.0f, late_lo = 1.0f, late_hi = -1.0f, fastest = 0.0f;
  for (int t = 0; t < 600; ++t) {
    w.step();
    float angle = joint_info(w, *id).angle;
    lo = std::min(lo, angle);
    hi = std::max(hi, angle);
    if (t >= 300) {
      late_lo = std::min(late_lo, angle);
      late_hi = std::max(late_hi, angle);
      fastest = std::max(fastest, std::abs(w.body_state(w.find_body(1)).angular_velocity.z));
    }
  }
  EXPECT_GE(lo, stop - 0.5f * kDeg);
  EXPECT_LE(hi, stop + 0.5f * kDeg);
  EXPECT_LT(late_hi - late_lo, 0.01f * kDeg);
  EXPECT_LT(fastest, 0.01f);
  std::printf("resting on the stop: %.4f .. %.4f deg over 10 s, last 5 s span %.5f deg, at most %.5f rad/s\n",
              lo / kDeg, hi / kDeg, (late_hi - late_lo) / kDeg, fastest);
}

// The off-rail slider box resting on its lower stop, awake, for 10 s: within 5 mm of it
// throughout, still over the last 5 s.
TEST(JointLimit, SliderRestingOnItsStopStaysOnItForTenSeconds) {
  World w;
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.5f, -0.5f, 0.0f), Vec3(0.2f));
  b.mass = 10.0f;
  b.can_sleep = false;
  ASSERT_TRUE(w.add_body(b));
  JointDef j = to_world(JointKind::Slider, 1, b.position, Vec3(0.0f, -0.5f, 0.0f), kXToY);
  j.frame_b.position = Vec3(0.0f);  // the rail's origin 0.5 m above: the box sits at -0.5
  j.limit = JointLimit{true, -0.5f, 0.5f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float lo = 1.0f, hi = -1.0f, late_lo = 1.0f, late_hi = -1.0f;
  for (int t = 0; t < 600; ++t) {
    w.step();
    float y = joint_info(w, *id).translation;
    lo = std::min(lo, y);
    hi = std::max(hi, y);
    if (t >= 300) {
      late_lo = std::min(late_lo, y);
      late_hi = std::max(late_hi, y);
    }
  }
  EXPECT_GE(lo, -0.505f);
  EXPECT_LE(hi, -0.495f);
  EXPECT_LT(late_hi - late_lo, 1e-4f);
  std::printf("slider resting on the stop: %.5f .. %.5f m over 10 s\n", lo, hi);
}

}  // namespace
}  // namespace keel::sim
