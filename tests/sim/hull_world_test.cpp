// Hull bodies in a world: resting without creep, a pile that settles, mass from density,
// validation messages, determinism across thread counts, and save/restore.
#include <keel/sim/query.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <cmath>

namespace keel::sim {
namespace {

BodyDef hull_body(uint32_t id, Vec3 pos, std::vector<Vec3> points, Quat rot = identity_quat()) {
  BodyDef b;
  b.id = id;
  b.position = pos;
  b.rotation = rot;
  ColliderDef c;
  c.shape = ShapeType::Hull;
  c.points = std::move(points);
  b.colliders.push_back(c);
  return b;
}

std::vector<Vec3> box_points(Vec3 h) {
  std::vector<Vec3> p;
  for (int i = 0; i < 8; ++i) p.emplace_back(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
  return p;
}

/// A triangular prism along z: its triangle (base 1, height 0.8) lies on y = -0.4.
std::vector<Vec3> prism_points() {
  return {Vec3(-0.5f, -0.4f, -0.5f), Vec3(0.5f, -0.4f, -0.5f), Vec3(0.0f, 0.4f, -0.5f),
          Vec3(-0.5f, -0.4f, 0.5f),  Vec3(0.5f, -0.4f, 0.5f),  Vec3(0.0f, 0.4f, 0.5f)};
}

void add_ground(World& w) {
  w.add_body(test::box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(30, 0.5f, 30)));
}

/// Deterministic cloud of `n` points in a box of half size `h` (a small LCG).
std::vector<Vec3> cloud(uint32_t seed, int n, float h) {
  std::vector<Vec3> p;
  uint32_t s = seed * 2654435761u + 1u;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return float(s >> 8) / float(1u << 24) * 2.0f - 1.0f;
  };
  for (int i = 0; i < n; ++i) {
    const float x = next();
    const float y = next();
    const float z = next();
    p.emplace_back(x * h, y * h, z * h);
  }
  return p;
}

void build_pile(World& w, int count) {
  add_ground(w);
  for (int i = 0; i < count; ++i) {
    const Vec3 pos(float(i % 4) * 0.9f - 1.35f, 0.6f + float(i / 16) * 0.9f, float((i / 4) % 4) * 0.9f - 1.35f);
    w.add_body(hull_body(100 + uint32_t(i), pos, cloud(uint32_t(i), 8 + i % 20, 0.35f)));
  }
}

TEST(HullWorld, MassFromDensityMatchesBox) {
  World w;
  const BodyId id = *w.add_body(hull_body(5, Vec3(0), box_points(Vec3(1.0f, 0.5f, 0.25f))));
  // m = 1000 * 2 * 1 * 0.5 = 1000 kg; Ixx = m (1^2 + 0.5^2) / 12.
  EXPECT_NEAR(w.mass(id), 1000.0f, 1e-2f);
  EXPECT_NEAR(w.local_inertia(id)[0][0], 1000.0f * 1.25f / 12.0f, 1e-2f);
}

TEST(HullWorld, BadPointsAreRejectedNamingTheField) {
  World w;
  auto r = w.add_body(hull_body(7, Vec3(0), {Vec3(0), Vec3(1, 0, 0), Vec3(0, 0, 1), Vec3(1, 0, 1)}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "body 7: colliders[0].points: hull: points are coplanar (no volume)");
}

void expect_rests(const std::vector<Vec3>& points) {
  World w;
  add_ground(w);
  // Placed exactly on the ground: the lowest vertex at y = 0.
  float low = 0.0f;
  for (const Vec3& p : points) low = std::min(low, p.y);
  const BodyId id = *w.add_body(hull_body(2, Vec3(0.3f, -low, -0.2f), points));
  for (int t = 0; t < 60; ++t) w.step();  // settle into the contact's rest depth
  const BodyState start = w.body_state(id);
  for (int t = 0; t < 600; ++t) w.step();  // 10 s
  const BodyState end = w.body_state(id);
  EXPECT_LT(glm::length(end.position - start.position), 1e-3f);
  const float dot = std::abs(glm::dot(start.rotation, end.rotation));
  const float angle = 2.0f * std::acos(std::min(1.0f, dot));
  EXPECT_LT(angle, 0.1f * 3.14159265f / 180.0f);
  EXPECT_LT(std::abs(end.position.y + low), 0.01f);  // on the ground, not sunk or floating
}

TEST(HullWorld, BoxHullRestsWithoutCreep) { expect_rests(box_points(Vec3(0.5f, 0.25f, 0.4f))); }
TEST(HullWorld, PrismRestsWithoutCreep) { expect_rests(prism_points()); }

TEST(HullWorld, PileSettlesWithoutExplosion) {
  World w;
  build_pile(w, 48);
  for (int t = 0; t < 300; ++t) w.step();
  for (uint32_t i = 0; i < 48; ++i) {
    const BodyState s = w.body_state(w.find_body(100 + i));
    EXPECT_GT(s.position.y, -0.05f) << i;   // nothing fell through the floor
    EXPECT_LT(s.position.y, 5.0f) << i;     // nothing was thrown up
    EXPECT_LT(glm::length(s.linear_velocity), 1.0f) << i;
    EXPECT_LT(std::abs(s.position.x), 6.0f) << i;
  }
}

TEST(HullWorld, SameBitsOnOneAndTwoThreads) {
  World a;
  World b;
  build_pile(a, 32);
  build_pile(b, 32);
  b.set_threads(2);
  for (int t = 0; t < 120; ++t) {
    a.step();
    b.step();
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << t;
  }
}

TEST(HullWorld, SaveRestoreContinuesBitExactly) {
  World w;
  build_pile(w, 24);
  for (int t = 0; t < 40; ++t) w.step();
  const std::vector<uint8_t> saved = w.save_state();
  World copy;
  ASSERT_TRUE(copy.restore_state(saved));
  EXPECT_EQ(copy.save_state(), saved);
  for (int t = 0; t < 60; ++t) {
    w.step();
    copy.step();
    ASSERT_EQ(copy.hash(), w.hash()) << "tick " << w.tick();
  }
}

TEST(HullWorld, QueriesHitHulls) {
  World w;
  w.add_body(hull_body(3, Vec3(0, 0, 0), prism_points()));
  // Straight down onto the prism's ridge at x = 0: top at y = 0.4.
  auto hit = raycast(w, Vec3(0, 5, 0.1f), Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 3u);
  EXPECT_NEAR(hit->distance, 4.6f, 1e-3f);
  // Along -x at y = 0 the slanted face is at x = 0.25 (half width at mid height); the
  // face normal is (0.8, 0.5) / |(0.8, 0.5)|.
  hit = raycast(w, Vec3(5, 0, 0), Vec3(-1, 0, 0), 10.0f);
  ASSERT_TRUE(hit);
  EXPECT_NEAR(hit->distance, 4.75f, 1e-3f);
  EXPECT_NEAR(hit->normal.x, 0.8f / std::sqrt(0.89f), 1e-3f);
  EXPECT_NEAR(hit->normal.y, 0.5f / std::sqrt(0.89f), 1e-3f);
  // A sphere of radius 0.2 cast down lands on the ridge: travels 5 - 0.4 - 0.2.
  auto cast = shape_cast(w, QueryShape::sphere(0.2f), Transform{Vec3(0, 5, 0), identity_quat()}, Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(cast);
  EXPECT_NEAR(cast->distance, 4.4f, 1e-3f);
  // Overlaps: a box touching the prism's side, and a hull query shape.
  EXPECT_EQ(overlap(w, QueryShape::box(Vec3(0.1f)), Transform{Vec3(0.3f, 0, 0), identity_quat()}).size(), 1u);
  EXPECT_EQ(overlap(w, QueryShape::box(Vec3(0.1f)), Transform{Vec3(0.5f, 0.3f, 0), identity_quat()}).size(), 0u);
  auto probe = build_hull(box_points(Vec3(0.1f)));
  ASSERT_TRUE(probe);
  EXPECT_EQ(overlap(w, QueryShape::convex(*probe), Transform{Vec3(0, 0.45f, 0), identity_quat()}).size(), 1u);
}

}  // namespace
}  // namespace keel::sim
