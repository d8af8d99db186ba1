// The World API: bodies added and removed, generational handles, mass properties
// computed by hand, validation messages, and canonical save/restore.
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <cmath>

namespace keel::sim {
namespace {

constexpr float kPi = 3.14159265358979f;

BodyDef dynamic_box(uint32_t id, Vec3 pos, Vec3 half = Vec3(0.5f)) {
  return test::box_body(id, MotionType::Dynamic, pos, half);
}

TEST(WorldApi, BoxMassAndInertiaFromDensity) {
  World w;
  BodyId id = *w.add_body(dynamic_box(1, Vec3(0), Vec3(1.0f, 0.5f, 0.25f)));
  // m = 1000 * 2 * 1 * 0.5 = 1000 kg; Ixx = m (1^2 + 0.5^2) / 12 = 104.1667.
  EXPECT_NEAR(w.mass(id), 1000.0f, 1e-2f);
  Mat3 i = w.local_inertia(id);
  EXPECT_NEAR(i[0][0], 1000.0f * (1.0f + 0.25f) / 12.0f, 1e-2f);
  EXPECT_NEAR(i[1][1], 1000.0f * (4.0f + 0.25f) / 12.0f, 1e-2f);
  EXPECT_NEAR(i[2][2], 1000.0f * (4.0f + 1.0f) / 12.0f, 1e-2f);
}

TEST(WorldApi, CapsuleInertiaIsCylinderPlusCaps) {
  World w;
  BodyDef b;
  b.id = 7;
  ColliderDef c;
  c.shape = ShapeType::Capsule;
  c.radius = 0.3f;
  c.half_height = 0.5f;
  c.density = 1.0f;
  b.colliders.push_back(c);
  BodyId id = *w.add_body(b);
  // Cylinder r = 0.3, h = 1: mc = pi 0.09 = 0.282743; caps: ms = 4/3 pi 0.027 = 0.113097.
  const double r = 0.3, h = 1.0, mc = kPi * r * r * h, ms = 4.0 / 3.0 * kPi * r * r * r;
  EXPECT_NEAR(w.mass(id), mc + ms, 1e-5);
  const double axial = mc * r * r / 2 + ms * 2 * r * r / 5;
  const double side = mc * (h * h / 12 + r * r / 4) + ms * (2 * r * r / 5 + h * h / 4 + 3 * h * r / 8);
  Mat3 i = w.local_inertia(id);
  EXPECT_NEAR(i[1][1], axial, 1e-6);
  EXPECT_NEAR(i[0][0], side, 1e-6);
  EXPECT_NEAR(i[2][2], side, 1e-6);
}

// Two unit spheres (m each) at x = ±1: centre at 0, Iyy = 2 (0.4 m r^2 + m d^2).
TEST(WorldApi, ParallelAxisShiftForTwoParts) {
  World w;
  BodyDef b;
  b.id = 3;
  for (float x : {-1.0f, 1.0f}) {
    ColliderDef c;
    c.shape = ShapeType::Sphere;
    c.radius = 0.5f;
    c.center = Vec3(x, 0, 0);
    b.colliders.push_back(c);
  }
  b.mass = 10.0f;  // distributed as the densities say: 5 kg each
  BodyId id = *w.add_body(b);
  EXPECT_NEAR(w.mass(id), 10.0f, 1e-5f);
  EXPECT_NEAR(glm::length(w.local_center_of_mass(id)), 0.0f, 1e-6f);
  Mat3 i = w.local_inertia(id);
  EXPECT_NEAR(i[0][0], 2 * 0.4f * 5 * 0.25f, 1e-4f);
  EXPECT_NEAR(i[1][1], 2 * (0.4f * 5 * 0.25f + 5 * 1.0f), 1e-4f);
}

TEST(WorldApi, ValidationNamesBodyAndField) {
  World w;
  BodyDef bad = dynamic_box(12, Vec3(0));
  bad.colliders[0].shape = ShapeType::Sphere;
  bad.colliders[0].radius = -1.0f;
  auto r = w.add_body(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("body 12"), std::string::npos);
  EXPECT_NE(r.error().message.find("colliders[0].radius"), std::string::npos);

  BodyDef massless = dynamic_box(13, Vec3(0));
  massless.colliders[0].density = 0.0f;
  auto r2 = w.add_body(massless);
  ASSERT_FALSE(r2);
  EXPECT_NE(r2.error().message.find("mass"), std::string::npos);

  BodyDef nan_pos = dynamic_box(14, Vec3(0));
  nan_pos.position.y = std::nanf("");
  EXPECT_FALSE(w.add_body(nan_pos));

  ASSERT_TRUE(w.add_body(dynamic_box(15, Vec3(0))));
  auto dup = w.add_body(dynamic_box(15, Vec3(3, 0, 0)));
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("body 15"), std::string::npos);
}

TEST(WorldApi, CollidersReadBackAsDeclared) {
  World w;
  BodyDef def = dynamic_box(4, Vec3(0), Vec3(0.5f, 0.25f, 1.0f));
  ColliderDef cap;
  cap.shape = ShapeType::Capsule;
  cap.center = Vec3(0.0f, 1.0f, 0.0f);
  cap.radius = 0.2f;
  cap.half_height = 0.3f;
  cap.friction = 0.1f;
  cap.is_trigger = true;
  def.colliders.push_back(cap);
  BodyId id = *w.add_body(def);
  std::vector<ColliderDef> got = w.colliders(id);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].shape, ShapeType::Box);
  EXPECT_EQ(got[0].half_extents, Vec3(0.5f, 0.25f, 1.0f));
  EXPECT_FALSE(got[0].is_trigger);
  EXPECT_EQ(got[1].shape, ShapeType::Capsule);
  EXPECT_EQ(got[1].center, Vec3(0.0f, 1.0f, 0.0f));
  EXPECT_EQ(got[1].radius, 0.2f);
  EXPECT_EQ(got[1].half_height, 0.3f);
  EXPECT_EQ(got[1].friction, 0.1f);
  EXPECT_TRUE(got[1].is_trigger);
  w.remove_body(id);
  EXPECT_TRUE(w.colliders(id).empty());
}

TEST(WorldApi, StaleHandlesAreRejectedAfterRemoval) {
  World w;
  BodyId a = *w.add_body(dynamic_box(1, Vec3(0)));
  EXPECT_TRUE(w.remove_body(a));
  EXPECT_FALSE(w.is_valid(a));
  EXPECT_FALSE(w.remove_body(a));
  BodyId b = *w.add_body(dynamic_box(2, Vec3(0)));
  EXPECT_EQ(a.index, b.index);  // slot reused...
  EXPECT_NE(a.generation, b.generation);  // ...under a new generation
  EXPECT_FALSE(w.is_valid(a));
  EXPECT_EQ(w.find_body(2), b);
  EXPECT_FALSE(w.find_body(1).valid());
}

// A small stack with a body removed mid-run: save at tick 40, restore into a fresh
// world, and both continue to identical bytes.
TEST(WorldApi, SaveRestoreContinuesBitExactly) {
  World w;
  BodyDef ground = dynamic_box(1, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20));
  ground.motion = MotionType::Static;
  w.add_body(ground);
  for (uint32_t i = 0; i < 6; ++i) w.add_body(dynamic_box(10 + i, Vec3(0.1f * i, 0.5f + 1.0f * i, 0)));
  for (int t = 0; t < 20; ++t) w.step();
  w.remove_body(w.find_body(12));
  for (int t = 0; t < 20; ++t) w.step();

  std::vector<uint8_t> saved = w.save_state();
  World copy;
  ASSERT_TRUE(copy.restore_state(saved));
  EXPECT_EQ(copy.save_state(), saved);
  EXPECT_EQ(copy.hash(), w.hash());
  for (int t = 0; t < 60; ++t) {
    w.step();
    copy.step();
    ASSERT_EQ(copy.hash(), w.hash()) << "tick " << w.tick();
  }
  EXPECT_EQ(copy.tick(), 100u);
}

TEST(WorldApi, RestoreRejectsDamagedBytesAndKeepsWorld) {
  World w;
  w.add_body(dynamic_box(1, Vec3(0)));
  std::vector<uint8_t> saved = w.save_state();
  uint64_t before = w.hash();
  for (size_t cut : {size_t(0), size_t(5), saved.size() / 2, saved.size() - 1}) {
    std::vector<uint8_t> truncated(saved.begin(), saved.begin() + cut);
    EXPECT_FALSE(w.restore_state(truncated)) << cut;
  }
  std::vector<uint8_t> garbage = saved;
  garbage[8] = 99;  // version
  EXPECT_FALSE(w.restore_state(garbage));
  EXPECT_EQ(w.hash(), before);
}

}  // namespace
}  // namespace keel::sim
