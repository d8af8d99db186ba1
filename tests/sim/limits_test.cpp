// The world's limits (keel/sim/limits.h): what add_body, add_joint and from_scene refuse,
// with messages that name the body, the collider and the field; that a world built at
// the limits stays finite; and the end-of-tick check (World::first_non_finite_body).
#include <keel/sim/joint.h>
#include <keel/sim/limits.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;
using test::capsule_body;
using test::sphere_body;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The error add_body gives for `def` in an empty world ("" when it is accepted).
std::string refusal(const BodyDef& def) {
  World w;
  auto id = w.add_body(def);
  return id ? std::string() : id.error().message;
}

TEST(Limits, AbsurdFiniteSizesAreRefusedNamingBodyColliderAndField) {
  // The measured failure: a box this large turned a world into NaN within 600 ticks.
  EXPECT_EQ(refusal(box_body(7, MotionType::Static, Vec3(0), Vec3(1e30f, 1, 1))),
            "body 7: colliders[0].half_extents.x must be at most 10000 (got 1e+30)");
  EXPECT_EQ(refusal(sphere_body(8, MotionType::Dynamic, Vec3(0), 2e4f)),
            "body 8: colliders[0].radius must be at most 10000 (got 20000)");
  EXPECT_EQ(refusal(sphere_body(9, MotionType::Dynamic, Vec3(0), 1e-6f)),
            "body 9: colliders[0].radius must be at least 0.001 (got 1e-06)");
  EXPECT_EQ(refusal(capsule_body(10, MotionType::Dynamic, Vec3(0), 0.5f, 1e5f)),
            "body 10: colliders[0].half_height must be at most 10000 (got 100000)");
  BodyDef hull;
  hull.id = 11;
  hull.colliders.resize(1);
  hull.colliders[0].shape = ShapeType::Hull;
  hull.colliders[0].points = {Vec3(0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 3e4f)};
  EXPECT_EQ(refusal(hull), "body 11: colliders[0].points[3].z must be within +-10000 (got 30000)");
}

TEST(Limits, PositionsVelocitiesAndMaterialsOutsideTheLimitsAreRefused) {
  BodyDef far = sphere_body(3, MotionType::Dynamic, Vec3(0, 1e30f, 0), 0.5f);
  EXPECT_EQ(refusal(far), "body 3: position.y must be within +-100000 (got 1e+30)");
  BodyDef fast = sphere_body(4, MotionType::Dynamic, Vec3(0), 0.5f);
  fast.linear_velocity = Vec3(0, 0, -2e4f);
  EXPECT_EQ(refusal(fast), "body 4: linear_velocity.z must be within +-10000 (got -20000)");
  BodyDef spin = sphere_body(5, MotionType::Dynamic, Vec3(0), 0.5f);
  spin.angular_velocity = Vec3(1e9f, 0, 0);
  EXPECT_EQ(refusal(spin), "body 5: angular_velocity.x must be within +-10000 (got 1e+09)");
  BodyDef heavy = sphere_body(6, MotionType::Dynamic, Vec3(0), 0.5f);
  heavy.mass = 1e30f;
  EXPECT_EQ(refusal(heavy), "body 6: mass must be at most 1e+12 (got 1e+30)");
  heavy.mass = 1e-9f;
  EXPECT_EQ(refusal(heavy), "body 6: mass must be at least 0.001 (got 1e-09)");
  // Densities that are each in range can still add up to an absurd mass.
  BodyDef dense = box_body(12, MotionType::Dynamic, Vec3(0), Vec3(5000));
  dense.colliders[0].density = 5e4f;
  EXPECT_EQ(refusal(dense),
            "body 12: mass computed from the colliders' densities must be at most 1e+12 (got 5e+16)");
  dense.colliders[0].density = 2e5f;
  EXPECT_EQ(refusal(dense), "body 12: colliders[0].density must be at most 100000 (got 200000)");
  BodyDef bouncy = sphere_body(13, MotionType::Dynamic, Vec3(0), 0.5f);
  bouncy.colliders[0].restitution = 5.0f;
  EXPECT_EQ(refusal(bouncy), "body 13: colliders[0].restitution must be at most 2 (got 5)");
  BodyDef damped = sphere_body(14, MotionType::Dynamic, Vec3(0), 0.5f);
  damped.linear_damping = 1e6f;
  EXPECT_EQ(refusal(damped), "body 14: linear_damping must be at most 10000 (got 1e+06)");
  damped.linear_damping = 0.0f;
  damped.gravity_scale = -1e4f;
  EXPECT_EQ(refusal(damped), "body 14: gravity_scale must be within +-1000 (got -10000)");
  BodyDef offset = sphere_body(15, MotionType::Static, Vec3(0), 0.5f);
  offset.colliders[0].center = Vec3(kNaN, 0, 0);
  EXPECT_EQ(refusal(offset), "body 15: colliders[0].center.x must be a finite number (got nan)");
  // A body that keeps every limit is accepted: the limits sit far above real scenes.
  EXPECT_EQ(refusal(box_body(16, MotionType::Static, Vec3(0, -100, 0), Vec3(100, 0.5f, 100))), "");
}

TEST(Limits, WorldSettingsOutsideTheLimitsAreRefused) {
  SceneDef scene;
  scene.settings.gravity = Vec3(0, -1e30f, 0);
  auto world = World::from_scene(scene);
  ASSERT_FALSE(world);
  EXPECT_EQ(world.error().message, "settings: gravity.y must be within +-1000 (got -1e+30)");
  scene.settings.gravity = Vec3(0, -9.81f, 0);
  scene.settings.contact_hertz = kNaN;
  world = World::from_scene(scene);
  ASSERT_FALSE(world);
  EXPECT_EQ(world.error().message, "settings: contact_hertz must be in (0, 10000] (got nan)");
  scene.settings.contact_hertz = 45.0f;
  EXPECT_TRUE(World::from_scene(scene));
}

TEST(Limits, JointParametersOutsideTheLimitsAreRefused) {
  World w;
  ASSERT_TRUE(w.add_body(sphere_body(1, MotionType::Dynamic, Vec3(0, 1, 0), 0.5f)));
  ASSERT_TRUE(w.add_body(sphere_body(2, MotionType::Dynamic, Vec3(2, 1, 0), 0.5f)));
  JointDef j;
  j.kind = JointKind::Hinge;
  j.body_a = 1;
  j.body_b = 2;
  j.break_force = 1e30f;
  auto joint = add_joint(w, j);
  ASSERT_FALSE(joint);
  EXPECT_EQ(joint.error().message, "break_force must be at most 1e+12 (got 1e+30)");
  j.break_force = 0.0f;
  j.frame_b.position = Vec3(0, 1e30f, 0);
  joint = add_joint(w, j);
  ASSERT_FALSE(joint);
  EXPECT_EQ(joint.error().message, "frame_b.position must be within the world (limit +-100000)");
  j.frame_b.position = Vec3(0);
  j.motor = JointMotor{true, 1e9f, 10.0f};
  joint = add_joint(w, j);
  ASSERT_FALSE(joint);
  EXPECT_EQ(joint.error().message, "motor.speed must be within (limit +-10000)");
  j.motor = JointMotor{true, 1.0f, 10.0f};
  EXPECT_TRUE(add_joint(w, j));
}

// Bodies at the limits: the largest static box, far from the origin, the heaviest and
// the lightest dynamic bodies at the top speed, the smallest shapes (a box of the
// smallest size at the top density weighs less than the lightest mass: twice that size). Every step stays
// finite, and every tick's state restores.
TEST(Limits, AWorldBuiltAtTheLimitsStaysFinite) {
  World w;
  const Vec3 far(kMaxWorldExtent - kMaxShapeSize, 0, 0);
  auto added = [&w](const BodyDef& def) {
    auto id = w.add_body(def);
    return id ? std::string() : id.error().message;
  };
  ASSERT_EQ(added(box_body(1, MotionType::Static, far - Vec3(0, kMaxShapeSize, 0), Vec3(kMaxShapeSize))), "");
  BodyDef heavy = box_body(2, MotionType::Dynamic, far + Vec3(0, 20, 0), Vec3(5));
  heavy.mass = kMaxBodyMass;
  heavy.linear_velocity = Vec3(kMaxLinearVelocity, -kMaxLinearVelocity, kMaxLinearVelocity);
  heavy.angular_velocity = Vec3(kMaxAngularVelocity);
  ASSERT_EQ(added(heavy), "");
  BodyDef light = sphere_body(3, MotionType::Dynamic, far + Vec3(1, 0.01f, 0), kMinShapeSize);
  light.mass = kMinBodyMass;
  light.colliders[0].restitution = kMaxRestitution;
  light.linear_velocity = Vec3(-kMaxLinearVelocity, kMaxLinearVelocity, 0);
  ASSERT_EQ(added(light), "");
  BodyDef tiny = box_body(4, MotionType::Dynamic, far + Vec3(-1, 0.01f, 0), Vec3(2 * kMinShapeSize));
  tiny.colliders[0].density = kMaxDensity;
  ASSERT_EQ(added(tiny), "");
  for (int t = 0; t < 600; ++t) {
    w.step();
    auto fault = w.first_non_finite_body();
    ASSERT_FALSE(fault) << "tick " << w.tick() << ": body " << fault->body << " " << fault->field << " = "
                        << fault->value;
  }
  World restored;
  EXPECT_TRUE(restored.restore_state(w.save_state()));
}

TEST(Limits, TheEndOfTickCheckNamesTheBodyAndField) {
  World w;
  ASSERT_TRUE(w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20))));
  ASSERT_TRUE(w.add_body(sphere_body(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), 0.5f)));
  ASSERT_TRUE(w.add_body(sphere_body(3, MotionType::Dynamic, Vec3(3, 0.5f, 0), 0.5f)));
  for (int t = 0; t < 30; ++t) {
    w.step();
    EXPECT_FALSE(w.first_non_finite_body()) << "tick " << t;
  }
  const uint64_t before = w.hash();
  EXPECT_FALSE(w.first_non_finite_body());
  EXPECT_EQ(w.hash(), before) << "the check only reads";

  // The API does not check what game rules set: a NaN velocity is taken as given and
  // spreads into the pose in the next step, which the check then reports.
  w.set_linear_velocity(w.find_body(3), Vec3(kNaN, 0, 0));
  auto fault = w.first_non_finite_body();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->body, 3u);
  EXPECT_STREQ(fault->field, "linear_velocity.x");
  w.step();
  fault = w.first_non_finite_body();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->body, 3u);
  EXPECT_STREQ(fault->field, "position.x");
  EXPECT_TRUE(std::isnan(fault->value));

  // A finite but overflowing number is reported as well (beyond kMaxStateMagnitude):
  // here a pose set through the API, which the check names before anything steps it.
  World v;
  ASSERT_TRUE(v.add_body(sphere_body(5, MotionType::Dynamic, Vec3(0, 10, 0), 0.5f)));
  v.step();
  EXPECT_FALSE(v.first_non_finite_body());
  v.set_transform(v.find_body(5), Transform{Vec3(0, 0, 1e13f), identity_quat()});
  fault = v.first_non_finite_body();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->body, 5u);
  EXPECT_STREQ(fault->field, "position.z");
  EXPECT_EQ(fault->value, 1e13f);
}

TEST(Limits, RestoreRefusesAStateWhoseBodyIsBeyondTheStateLimit) {
  World w;
  ASSERT_TRUE(w.add_body(sphere_body(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), 0.5f)));
  // A body flung past kMaxStateMagnitude (through the unchecked API) cannot be saved
  // into a state another world would take.
  w.set_linear_velocity(w.find_body(2), Vec3(0, 1e20f, 0));
  World restored;
  Status st = restored.restore_state(w.save_state());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            "world state is damaged: bodies: body 2 (slot 0): linear_velocity is not finite or beyond the state limit");
  // Back within it, the same world restores.
  w.set_linear_velocity(w.find_body(2), Vec3(0, 1e3f, 0));
  EXPECT_TRUE(restored.restore_state(w.save_state()));
}

}  // namespace
}  // namespace keel::sim
