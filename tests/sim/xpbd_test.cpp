// The XPBD solver (WorldSettings::solver_kind = Xpbd) against numbers worked out by hand:
// free fall to the substep formula, resting depth to the compliance, static and dynamic
// friction on a ramp, the restitution bounce, the pendulum period, the hinge limit; then
// what it refuses (the joint kinds: xpbd_joints_test.cpp), sleeping and events, restore == continuous and thread counts.
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <cmath>
#include <string>
#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

constexpr float kPi = 3.14159265358979f;
constexpr float kG = 9.81f;

WorldSettings xpbd_settings(uint32_t substeps = 8, float compliance = 0.0f) {
  WorldSettings s;
  s.solver_kind = SolverKind::Xpbd;
  s.substeps = substeps;
  s.contact_compliance = compliance;
  return s;
}

// Ground: a static slab whose top face is y = 0.
BodyDef ground(uint32_t id = 100) { return box_body(id, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(20.0f, 0.5f, 20.0f)); }

// Semi-implicit Euler per substep h: v_n = n h g, y_n = y_0 - g h^2 n (n + 1) / 2.
TEST(XpbdTest, FreeFallExactToTheSubstepFormula) {
  World w(xpbd_settings(4));
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f, 100.0f, 0.0f), 0.5f)));
  for (int t = 0; t < 60; ++t) w.step();
  const double h = 1.0 / 240.0, n = 240.0;
  const BodyState s = w.body_state(w.find_body(1));
  EXPECT_NEAR(s.linear_velocity.y, -kG * n * h, 1e-4);               // -9.81 m/s
  EXPECT_NEAR(s.position.y, 100.0 - kG * h * h * n * (n + 1) / 2, 2e-4);  // 95.0845 m
  EXPECT_EQ(s.position.x, 0.0f);
}

// A sphere of mass m at rest on the ground sinks until the contact force m g equals
// depth / compliance: depth = m g alpha (10 kg, 1e-4 m/N: 9.81 mm).
TEST(XpbdTest, RestingSphereSinksByMassTimesGravityTimesCompliance) {
  const float alpha = 1e-4f, m = 10.0f, r = 0.5f;
  World w(xpbd_settings(8, alpha));
  ASSERT_TRUE(w.add_body(ground()));
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.0f, r, 0.0f), r);
  b.mass = m;
  b.can_sleep = false;
  ASSERT_TRUE(w.add_body(b));
  for (int t = 0; t < 180; ++t) w.step();
  const float depth = r - w.body_state(w.find_body(1)).position.y;
  EXPECT_NEAR(depth, m * kG * alpha, 0.05f * m * kG * alpha);
}

// A box on four corner points shares m g among them: each sinks m g alpha / 4, and no
// point ever sinks past the whole m g alpha.
TEST(XpbdTest, RestingBoxSinksWithinTheComplianceDepth) {
  const float alpha = 1e-4f, m = 8.0f, half = 0.5f;
  World w(xpbd_settings(8, alpha));
  ASSERT_TRUE(w.add_body(ground()));
  BodyDef b = box_body(1, MotionType::Dynamic, Vec3(0.0f, half, 0.0f), Vec3(half));
  b.mass = m;
  b.can_sleep = false;
  ASSERT_TRUE(w.add_body(b));
  for (int t = 0; t < 180; ++t) w.step();
  const float depth = half - w.body_state(w.find_body(1)).position.y;
  EXPECT_GT(depth, 0.0f);
  EXPECT_LE(depth, m * kG * alpha);
  EXPECT_NEAR(depth, m * kG * alpha / 4.0f, 0.15f * m * kG * alpha / 4.0f);
}

// A rigid contact (compliance 0) leaves at most one substep's fall of overlap.
TEST(XpbdTest, RigidContactLeavesAlmostNoOverlap) {
  World w(xpbd_settings(8));
  ASSERT_TRUE(w.add_body(ground()));
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f, 0.5f, 0.0f), 0.5f)));
  for (int t = 0; t < 120; ++t) w.step();
  EXPECT_NEAR(w.body_state(w.find_body(1)).position.y, 0.5f, 2e-4f);  // g h^2 = 0.04 mm
}

struct Ramp {
  World w{xpbd_settings(8)};
  Vec3 down{0.0f};  // unit vector down the slope
};

// A box of half size 0.25 on a static ramp tilted by `angle` about Z, both with friction
// mu_s = 0.6, mu_k = 0.4 (pairs take the geometric mean: the same values).
void build_ramp(Ramp& r, float angle) {
  const Quat tilt(std::cos(angle / 2), 0.0f, 0.0f, std::sin(angle / 2));
  BodyDef slab = box_body(100, MotionType::Static, Vec3(0.0f), Vec3(10.0f, 0.5f, 2.0f), tilt);
  BodyDef box = box_body(1, MotionType::Dynamic, tilt * Vec3(0.0f, 0.75f, 0.0f), Vec3(0.25f), tilt);
  for (BodyDef* b : {&slab, &box}) {
    b->colliders[0].friction = 0.4f;
    b->colliders[0].static_friction = 0.6f;
  }
  box.can_sleep = false;
  ASSERT_TRUE(r.w.add_body(slab));
  ASSERT_TRUE(r.w.add_body(box));
  r.down = tilt * Vec3(-1.0f, 0.0f, 0.0f);
}

// 25 degrees is below atan(0.6) = 30.96 degrees: the box holds.
TEST(XpbdTest, StaticFrictionHoldsBelowTheFrictionAngle) {
  Ramp r;
  build_ramp(r, 25.0f * kPi / 180.0f);
  const Vec3 start = r.w.body_state(r.w.find_body(1)).position;
  for (int t = 0; t < 120; ++t) r.w.step();
  const Vec3 end = r.w.body_state(r.w.find_body(1)).position;
  EXPECT_LT(std::fabs(glm::dot(end - start, r.down)), 2e-3f);
}

// 40 degrees: the box slides at g (sin 40 - 0.4 cos 40) = 3.300 m/s^2. XPBD lands 9 %
// fast (3.61): its dynamic friction is one velocity impulse per substep bounded by that
// substep's normal multiplier, which on a sliding box's four points sums below m g cos h
// (docs/sim.md, "Solvers"); the bound is 12 %.
TEST(XpbdTest, SlidesAtKineticAccelerationAboveTheFrictionAngle) {
  Ramp r;
  const float angle = 40.0f * kPi / 180.0f;
  build_ramp(r, angle);
  const BodyId id = r.w.find_body(1);
  for (int t = 0; t < 15; ++t) r.w.step();
  const float v0 = glm::dot(r.w.body_state(id).linear_velocity, r.down);
  for (int t = 0; t < 60; ++t) r.w.step();
  const float v1 = glm::dot(r.w.body_state(id).linear_velocity, r.down);
  const float expected = kG * (std::sin(angle) - 0.4f * std::cos(angle));
  EXPECT_GT(v1 - v0, expected * 0.98f);  // never more friction than mu_k allows
  EXPECT_NEAR(v1 - v0, expected, 0.12f * expected);
}

// Dropped from 2 m with restitution 0.5: it rises to e^2 h0 = 0.5 m.
TEST(XpbdTest, BounceRisesToRestitutionSquaredTimesDropHeight) {
  World w(xpbd_settings(8));
  ASSERT_TRUE(w.add_body(ground()));
  const float r = 0.1f, h0 = 2.0f;
  BodyDef b = sphere_body(1, MotionType::Dynamic, Vec3(0.0f, r + h0, 0.0f), r);
  b.colliders[0].restitution = 0.5f;
  ASSERT_TRUE(w.add_body(b));
  const BodyId id = w.find_body(1);
  bool bounced = false;
  float peak = 0.0f;
  for (int t = 0; t < 180; ++t) {
    w.step();
    const BodyState s = w.body_state(id);
    if (s.linear_velocity.y > 0.0f) bounced = true;
    if (bounced) peak = std::max(peak, s.position.y - r);
    if (bounced && s.linear_velocity.y < -0.5f) break;  // falling again: past the top
  }
  ASSERT_TRUE(bounced);
  EXPECT_NEAR(peak, 0.25f * h0, 0.05f * 0.25f * h0);
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

// A 1 m pendulum at 5 degrees: T = 2 pi sqrt(L / g) = 2.0061 s (the 5 cm bob's inertia
// and the amplitude each add 0.05 %).
TEST(XpbdTest, PendulumPeriodWithinOnePercent) {
  World w(xpbd_settings(8));
  const float theta = 5.0f * kPi / 180.0f;
  const Vec3 bob(std::sin(theta), -std::cos(theta), 0.0f);
  BodyDef b = sphere_body(1, MotionType::Dynamic, bob, 0.05f);
  b.mass = 1.0f;
  ASSERT_TRUE(w.add_body(b));
  ASSERT_TRUE(add_joint(w, joint_to_world(JointKind::Ball, 1, bob, Vec3(0.0f))));
  const BodyId id = w.find_body(1);
  std::vector<double> crossings;
  float prev_x = bob.x;
  for (int t = 1; t <= 60 * 12; ++t) {
    w.step();
    const float x = w.body_state(id).position.x;
    if (prev_x < 0.0f && x >= 0.0f) crossings.push_back((t - 1 + prev_x / (prev_x - x)) / 60.0);
    prev_x = x;
  }
  ASSERT_GE(crossings.size(), 4u);
  const double period = (crossings.back() - crossings.front()) / double(crossings.size() - 1);
  EXPECT_NEAR(period, 2.0 * kPi * std::sqrt(1.0 / kG), 0.01 * 2.0061);
  // The rod keeps its length.
  EXPECT_NEAR(glm::length(w.body_state(id).position), 1.0f, 1e-3f);
}

// A 1 m arm on a hinge about Z, released level, with the angle limited to [-0.3, 0.3]:
// it falls onto the lower limit and stays there.
TEST(XpbdTest, HingeLimitHolds) {
  World w(xpbd_settings(8));
  BodyDef arm = box_body(1, MotionType::Dynamic, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f));
  arm.mass = 2.0f;
  arm.can_sleep = false;
  ASSERT_TRUE(w.add_body(arm));
  const Quat x_to_z(std::cos(kPi / 4), 0.0f, -std::sin(kPi / 4), 0.0f);
  JointDef j = joint_to_world(JointKind::Hinge, 1, Vec3(0.5f, 0.0f, 0.0f), Vec3(0.0f), x_to_z);
  j.limit = JointLimit{true, -0.3f, 0.3f};
  auto id = add_joint(w, j);
  ASSERT_TRUE(id);
  float lowest = 0.0f;
  for (int t = 0; t < 120; ++t) {
    w.step();
    lowest = std::min(lowest, joint_info(w, *id).angle);
  }
  EXPECT_GT(lowest, -0.3f - 0.01f);
  EXPECT_NEAR(joint_info(w, *id).angle, -0.3f, 0.01f);
  // The pivot stays put: the arm's centre is 0.5 m from it, at the limit angle.
  const Vec3 c = w.body_state(w.find_body(1)).position;
  EXPECT_NEAR(glm::length(c), 0.5f, 1e-3f);
  EXPECT_NEAR(c.z, 0.0f, 1e-4f);
}

// Features XPBD does not solve are refused, naming them and the solver: holding torque,
// breaking, and a motor, spring or cone on a kind that has none.
TEST(XpbdTest, RefusesJointsItCannotSolve) {
  World w(xpbd_settings());
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.1f)));
  auto refused = [&](JointDef j, const char* what) {
    auto r = add_joint(w, j);
    ASSERT_FALSE(r) << what;
    EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("xpbd"), std::string::npos) << r.error().message;
  };
  JointDef hold = joint_to_world(JointKind::Hinge, 1, Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f));
  hold.holding_torque = 5.0f;
  refused(hold, "holding_torque");
  JointDef brk = joint_to_world(JointKind::Slider, 1, Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f));
  brk.break_force = 100.0f;
  refused(brk, "break_force");
  JointDef motor = joint_to_world(JointKind::Ball, 1, Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f));
  motor.motor = JointMotor{true, 1.0f, 10.0f};
  refused(motor, "motor");
  JointDef spring = joint_to_world(JointKind::Fixed, 1, Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f));
  spring.spring = JointSpring{true, 2.0f, 0.5f, 0.0f};
  refused(spring, "spring");
  JointDef cone = joint_to_world(JointKind::Hinge, 1, Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f));
  cone.cone_angle = 0.5f;
  refused(cone, "cone_angle");
  EXPECT_TRUE(joints(w).empty());
  // Every kind is taken, and the soft step takes the holding torque.
  for (JointKind k : {JointKind::Slider, JointKind::Distance, JointKind::Wheel, JointKind::Ball, JointKind::Fixed,
                      JointKind::Hinge}) {
    EXPECT_TRUE(add_joint(w, joint_to_world(k, 1, Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f)))) << to_string(k);
  }
  World soft;
  ASSERT_TRUE(soft.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.1f)));
  EXPECT_TRUE(add_joint(soft, hold));
}

TEST(XpbdTest, SettingsOutOfRangeAreRefused) {
  WorldSettings s = xpbd_settings();
  s.contact_compliance = -1e-6f;
  EXPECT_FALSE(validate_settings(s));
  s.contact_compliance = std::nanf("");
  EXPECT_FALSE(validate_settings(s));
  s.contact_compliance = 1e-5f;
  EXPECT_TRUE(validate_settings(s));
  s.solver_kind = SolverKind(7);
  auto st = validate_settings(s);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("solver_kind"), std::string::npos);
}

// Islands, sleeping and events are the shared stages: a box dropped on the ground begins
// a contact, comes to rest and falls asleep.
TEST(XpbdTest, SleepsAndReportsContactEvents) {
  World w(xpbd_settings());
  ASSERT_TRUE(w.add_body(ground()));
  ASSERT_TRUE(w.add_body(box_body(1, MotionType::Dynamic, Vec3(0.0f, 1.0f, 0.0f), Vec3(0.25f))));
  bool began = false;
  int slept_at = -1;
  for (int t = 0; t < 600 && slept_at < 0; ++t) {
    w.step();
    for (const ContactEvent& e : w.contact_events()) began |= e.kind == ContactEvent::Kind::Began && e.body_a == 1;
    if (w.body_state(w.find_body(1)).sleeping) slept_at = t;
  }
  EXPECT_TRUE(began);
  EXPECT_GE(slept_at, 0);
  EXPECT_NEAR(w.body_state(w.find_body(1)).position.y, 0.25f, 1e-3f);
}

// A pile of boxes and a hinged arm: the scene the next two tests step.
void build_pile(World& w) {
  ASSERT_TRUE(w.add_body(ground()));
  uint32_t id = 1;
  for (int layer = 0; layer < 4; ++layer) {
    for (int i = 0; i < 5; ++i) {
      const Vec3 p(float(i) * 0.55f - 1.1f + 0.1f * float(layer % 2), 0.3f + 0.55f * float(layer), 0.05f * float(i % 3));
      ASSERT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, p, Vec3(0.25f))));
    }
  }
  ASSERT_TRUE(w.add_body(box_body(50, MotionType::Dynamic, Vec3(3.5f, 2.0f, 0.0f), Vec3(0.5f, 0.05f, 0.05f))));
  JointDef j = joint_to_world(JointKind::Hinge, 50, Vec3(3.5f, 2.0f, 0.0f), Vec3(3.0f, 2.0f, 0.0f),
                              Quat(std::cos(kPi / 4), 0.0f, -std::sin(kPi / 4), 0.0f));
  ASSERT_TRUE(add_joint(w, j));
}

TEST(XpbdTest, RestoreEqualsContinuous) {
  WorldSettings s = xpbd_settings(6, 1e-6f);
  World a(s);
  build_pile(a);
  for (int t = 0; t < 40; ++t) a.step();
  const std::vector<uint8_t> saved = a.save_state();
  for (int t = 0; t < 60; ++t) a.step();
  World b;  // a soft-step world: the state carries the solver choice
  ASSERT_TRUE(b.restore_state(saved));
  EXPECT_EQ(b.settings().solver_kind, SolverKind::Xpbd);
  EXPECT_EQ(b.settings().contact_compliance, 1e-6f);
  for (int t = 0; t < 60; ++t) b.step();
  EXPECT_EQ(a.hash(), b.hash());
}

TEST(XpbdTest, ThreadCountsGiveIdenticalHashes) {
  std::vector<uint64_t> hashes;
  for (uint32_t threads : {1u, 2u, 4u}) {
    WorldSettings s = xpbd_settings();
    s.threads = threads;
    World w(s);
    build_pile(w);
    for (int t = 0; t < 120; ++t) w.step();
    hashes.push_back(w.hash());
  }
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_EQ(hashes[0], hashes[2]);
}

// The solver section is written only off the default, so soft-step states keep their
// bytes; a damaged section is refused.
TEST(XpbdTest, SolverSectionOnlyOffTheDefault) {
  World soft;
  build_pile(soft);
  World xp(xpbd_settings());
  build_pile(xp);
  const std::vector<uint8_t> a = soft.save_state(), b = xp.save_state();
  EXPECT_EQ(b.size(), a.size() + 9);  // tag, kind byte, compliance
  std::vector<uint8_t> bad = b;
  bad[bad.size() - 5] = 9;  // an unknown kind
  World c;
  auto st = c.restore_state(bad);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("solver kind"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace keel::sim
