// Hull building: topology and mass properties against hand-computed values, rejection of
// degenerate clouds, the vertex cap, byte-identical rebuilds, and random clouds.
#include <keel/sim/hull.h>

#include <gtest/gtest.h>

#include "body/mass.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace keel::sim {
namespace {

std::vector<Vec3> box_corners(Vec3 lo, Vec3 hi) {
  std::vector<Vec3> p;
  for (int i = 0; i < 8; ++i) p.emplace_back(i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z);
  return p;
}

void expect_closed(const ConvexHull& h) {
  // Euler's formula for a convex polyhedron: V - E + F = 2.
  EXPECT_EQ(int(h.vertices.size()) - int(h.edges.size()) + int(h.faces.size()), 2);
  for (const HullFace& f : h.faces) {
    EXPECT_NEAR(glm::length(f.normal), 1.0f, 1e-5f);
    EXPECT_GE(f.count, 3);
  }
}

TEST(HullBuild, CubeWithDuplicateAndCoplanarPointsIsTheBox) {
  // A 2 x 1 x 3 box from x = 0, y = 0, z = 0; extra points on faces, edges, inside, and
  // every corner twice. Only the 8 corners may remain.
  std::vector<Vec3> p = box_corners(Vec3(0), Vec3(2, 1, 3));
  const std::vector<Vec3> corners = p;
  p.insert(p.end(), corners.begin(), corners.end());
  p.emplace_back(1.0f, 0.5f, 0.0f);   // face centres
  p.emplace_back(1.0f, 1.0f, 1.5f);
  p.emplace_back(2.0f, 0.25f, 2.0f);
  p.emplace_back(1.0f, 0.0f, 0.0f);   // edge midpoints
  p.emplace_back(0.0f, 1.0f, 1.5f);
  p.emplace_back(1.0f, 0.5f, 1.5f);   // inside
  auto h = build_hull(p);
  ASSERT_TRUE(h) << h.error().message;
  const ConvexHull& hull = **h;
  EXPECT_EQ(hull.vertices.size(), 8u);
  EXPECT_EQ(hull.faces.size(), 6u);
  EXPECT_EQ(hull.edges.size(), 12u);
  for (const HullFace& f : hull.faces) EXPECT_EQ(f.count, 4);
  expect_closed(hull);
  // Unit density: V = 6; I = V (b^2 + c^2) / 12 etc. with sides 2, 1, 3.
  EXPECT_NEAR(hull.volume, 6.0f, 1e-5f);
  EXPECT_NEAR(hull.centroid.x, 1.0f, 1e-6f);
  EXPECT_NEAR(hull.centroid.y, 0.5f, 1e-6f);
  EXPECT_NEAR(hull.centroid.z, 1.5f, 1e-6f);
  EXPECT_NEAR(hull.inertia[0][0], 6.0f * (1 + 9) / 12.0f, 1e-4f);
  EXPECT_NEAR(hull.inertia[1][1], 6.0f * (4 + 9) / 12.0f, 1e-4f);
  EXPECT_NEAR(hull.inertia[2][2], 6.0f * (4 + 1) / 12.0f, 1e-4f);
  EXPECT_NEAR(hull.inertia[0][1], 0.0f, 1e-5f);
  EXPECT_NEAR(hull.inertia[0][2], 0.0f, 1e-5f);
  EXPECT_NEAR(hull.inertia[1][2], 0.0f, 1e-5f);
}

TEST(HullBuild, HullColliderMassEqualsBoxCollider) {
  ColliderDef box;
  box.shape = ShapeType::Box;
  box.half_extents = Vec3(0.5f, 0.25f, 1.0f);
  box.center = Vec3(1, 2, 3);
  ColliderDef hull = box;
  hull.shape = ShapeType::Hull;
  hull.points = box_corners(-box.half_extents, box.half_extents);
  const MassProperties a = compute_mass_properties({box});
  const MassProperties b = compute_mass_properties({hull});
  EXPECT_NEAR(b.mass, a.mass, 1e-3f * a.mass);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(b.center[k], a.center[k], 1e-5f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(b.inertia[i][j], a.inertia[i][j], 1e-3f * a.inertia[0][0]);
}

TEST(HullBuild, TetrahedronVolumeCentroidInertia) {
  // Corner tetrahedron: V = 1/6, centroid (1/4, 1/4, 1/4). Over the standard simplex the
  // integral of x^a y^b z^c is a! b! c! / (a + b + c + 3)!, so about the origin
  // Ixx = 2 * 2/120 = 1/30 and Ixy = -1/120; shifted to the centroid (parallel axis):
  // Ixx = 1/30 - V (1/16 + 1/16) = 1/80, Ixy = -1/120 + V / 16 = 1/480.
  auto h = build_hull({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)});
  ASSERT_TRUE(h) << h.error().message;
  const ConvexHull& t = **h;
  EXPECT_EQ(t.vertices.size(), 4u);
  EXPECT_EQ(t.faces.size(), 4u);
  EXPECT_EQ(t.edges.size(), 6u);
  EXPECT_NEAR(t.volume, 1.0f / 6.0f, 1e-7f);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(t.centroid[k], 0.25f, 1e-7f);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(t.inertia[i][j], i == j ? 1.0f / 80.0f : 1.0f / 480.0f, 1e-7f);
  }
}

TEST(HullBuild, RejectsDegenerateClouds) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    std::vector<Vec3> points;
    const char* expect;
  };
  std::vector<Vec3> square = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 0, 1), Vec3(0, 0, 1), Vec3(0.5f, 0, 0.5f)};
  std::vector<Vec3> line = {Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(2, 2, 2), Vec3(3, 3, 3)};
  std::vector<Vec3> same(5, Vec3(1, 2, 3));
  std::vector<Vec3> thin = box_corners(Vec3(0), Vec3(1, 1e-6f, 1));  // 1 micron thick
  std::vector<Vec3> many(kMaxHullInputPoints + 1, Vec3(0));
  const Case cases[] = {
      {{Vec3(0), Vec3(1, 0, 0), Vec3(0, 1, 0)}, "at least 4"},
      {square, "coplanar"},
      {line, "collinear"},
      {same, "same"},
      {thin, "coplanar"},
      {many, "at most 4096"},
      {{Vec3(0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, nan)}, "points[3]"},
      {{Vec3(inf, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}, "points[0]"},
      {{Vec3(0), Vec3(1, 0, 0), Vec3(0, 2e5f, 0), Vec3(0, 0, 1)}, "points[2]"},
  };
  for (const Case& c : cases) {
    auto h = build_hull(c.points);
    ASSERT_FALSE(h) << c.expect;
    EXPECT_NE(h.error().message.find(c.expect), std::string::npos) << h.error().message;
  }
}

TEST(HullBuild, CapsVerticesAndKeepsMostOfTheVolume) {
  // 2000 points on a unit sphere: the hull keeps 64 of them. A well spread 64-vertex
  // polytope in the unit sphere has > 85 % of its volume (4.18879).
  std::vector<Vec3> p;
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0.0f, 1.0f);
  while (p.size() < 2000) {
    Vec3 v(g(rng), g(rng), g(rng));
    if (glm::length(v) > 1e-3f) p.push_back(v / glm::length(v));
  }
  auto h = build_hull(p);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_LE((*h)->vertices.size(), size_t(kMaxHullVertices));
  EXPECT_GE((*h)->vertices.size(), 40u);
  EXPECT_GT((*h)->volume, 0.85f * 4.18879f);
  EXPECT_LT((*h)->volume, 4.18879f);
  expect_closed(**h);
}

TEST(HullBuild, SamePointsGiveIdenticalBytes) {
  std::vector<Vec3> p;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < 300; ++i) p.emplace_back(u(rng), u(rng), u(rng));
  auto a = build_hull(p);
  auto b = build_hull(p);
  ASSERT_TRUE(a && b);
  const ConvexHull& x = **a;
  const ConvexHull& y = **b;
  ASSERT_EQ(x.vertices.size(), y.vertices.size());
  ASSERT_EQ(x.faces.size(), y.faces.size());
  EXPECT_EQ(0, std::memcmp(x.vertices.data(), y.vertices.data(), x.vertices.size() * sizeof(Vec3)));
  EXPECT_EQ(0, std::memcmp(x.faces.data(), y.faces.data(), x.faces.size() * sizeof(HullFace)));
  EXPECT_EQ(x.loops, y.loops);
  EXPECT_EQ(0, std::memcmp(&x.inertia, &y.inertia, sizeof(Mat3)));
}

/// Random clouds of every awkward kind: never a crash; a hull that is built is closed,
/// within the cap, has volume, and holds every input point.
TEST(HullBuild, RandomAndDegenerateCloudsNeverBreak) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int built = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = int(rng() % 120);
    const int kind = trial % 6;
    std::vector<Vec3> p;
    for (int i = 0; i < n; ++i) {
      Vec3 v(u(rng), u(rng), u(rng));
      if (kind == 1) v.y *= 1e-3f;                                      // thin slab
      if (kind == 2) v = glm::round(v * 2.0f) * 0.5f;                   // grid: many coplanar
      if (kind == 3 && i > 3) v = p[rng() % p.size()];                  // heavy duplication
      if (kind == 4) v *= 1e-4f;                                        // tiny
      if (kind == 5) v = Vec3(v.x, v.x * 0.5f + 1e-7f * v.y, v.z);      // nearly planar
      p.push_back(v);
    }
    auto h = build_hull(p);
    if (!h) continue;
    ++built;
    const ConvexHull& hull = **h;
    expect_closed(hull);
    EXPECT_LE(hull.vertices.size(), size_t(kMaxHullVertices));
    EXPECT_GT(hull.volume, 0.0f);
    float scale = 0.0f;
    for (const Vec3& x : p) scale = std::max(scale, std::max(std::abs(x.x), std::max(std::abs(x.y), std::abs(x.z))));
    if (hull.vertices.size() < size_t(kMaxHullVertices)) {  // an uncapped hull holds every point
      for (const HullFace& f : hull.faces)
        for (const Vec3& x : p) EXPECT_LE(glm::dot(f.normal, x), f.offset + 1e-4f * scale);
    }
  }
  EXPECT_GT(built, 100);
}

}  // namespace
}  // namespace keel::sim
