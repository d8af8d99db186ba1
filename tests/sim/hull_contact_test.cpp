// Hull contacts and distances against configurations worked out by hand: face-face and
// edge-edge manifolds, hull-box, hull-sphere, hull-capsule, triangle-hull, GJK gaps.
#include <keel/sim/hull.h>

#include <gtest/gtest.h>

#include "collision/hull_geom.h"
#include "collision/narrowphase.h"
#include "query/convex.h"

#include <cmath>

namespace keel::sim {
namespace {

constexpr float kTol = 1e-4f;
constexpr float kMargin = 0.05f;
constexpr float kSqrt2 = 1.41421356f;

std::shared_ptr<const ConvexHull> cube_hull(float h) {
  std::vector<Vec3> p;
  for (int i = 0; i < 8; ++i) p.emplace_back(i & 1 ? h : -h, i & 2 ? h : -h, i & 4 ? h : -h);
  return *build_hull(p);
}

ShapeGeom hull_geom(const ConvexHull& h, Vec3 p, Mat3 rot = Mat3(1.0f)) {
  ShapeGeom s;
  s.type = ShapeType::Hull;
  s.position = p;
  s.rotation = rot;
  s.hull = &h;
  return s;
}

Mat3 rot_x(float a) { return Mat3(Vec3(1, 0, 0), Vec3(0, std::cos(a), std::sin(a)), Vec3(0, -std::sin(a), std::cos(a))); }
Mat3 rot_z(float a) { return Mat3(Vec3(std::cos(a), std::sin(a), 0), Vec3(-std::sin(a), std::cos(a), 0), Vec3(0, 0, 1)); }

void expect_vec(const Vec3& a, const Vec3& b, float tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

TEST(HullContact, StackedCubesFaceFaceFourPoints) {
  // Unit cubes (half 0.5), B 0.99 above A: overlap 0.01 over the whole 1 x 1 face. The
  // points are the corners, midway at y = 0.495.
  auto c = cube_hull(0.5f);
  Manifold m;
  collide(hull_geom(*c, Vec3(0)), hull_geom(*c, Vec3(0, 0.99f, 0)), kMargin, m);
  ASSERT_EQ(m.count, 4);
  expect_vec(m.normal, Vec3(0, 1, 0), 1e-6f);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.points[i].depth, 0.01f, kTol);
    EXPECT_NEAR(m.points[i].point.y, 0.495f, kTol);
    EXPECT_NEAR(std::abs(m.points[i].point.x), 0.5f, kTol);
    EXPECT_NEAR(std::abs(m.points[i].point.z), 0.5f, kTol);
  }
  // Offset by half a cube along x: the shared face is 0.5 x 1, still four points.
  collide(hull_geom(*c, Vec3(0)), hull_geom(*c, Vec3(0.5f, 0.99f, 0)), kMargin, m);
  ASSERT_EQ(m.count, 4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::abs(m.points[i].point.x - 0.0f) < kTol || std::abs(m.points[i].point.x - 0.5f) < kTol);
}

TEST(HullContact, BoxAgainstHullMatchesBoxAgainstBox) {
  auto c = cube_hull(0.5f);
  ShapeGeom box;
  box.type = ShapeType::Box;
  box.half_extents = Vec3(2.0f, 0.5f, 2.0f);
  box.position = Vec3(0, -0.5f, 0);
  Manifold m;
  collide(box, hull_geom(*c, Vec3(0.3f, 0.48f, -0.2f)), kMargin, m);  // sunk 0.02
  ASSERT_EQ(m.count, 4);
  expect_vec(m.normal, Vec3(0, 1, 0), 1e-6f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(m.points[i].depth, 0.02f, kTol);
  // The other order flips the normal only.
  Manifold r;
  collide(hull_geom(*c, Vec3(0.3f, 0.48f, -0.2f)), box, kMargin, r);
  ASSERT_EQ(r.count, 4);
  expect_vec(r.normal, Vec3(0, -1, 0), 1e-6f);
}

TEST(HullContact, CrossedEdgesGiveOnePoint) {
  // A turned 45 deg about x: its top is an edge along x at y = 0.5 sqrt 2. B turned 45 deg
  // about z: its bottom is an edge along z, 0.02 below A's top edge. One point at the
  // crossing, midway: (0, 0.5 sqrt 2 - 0.01, 0), depth 0.02, normal +y.
  auto c = cube_hull(0.5f);
  const float top = 0.5f * kSqrt2;
  Manifold m;
  collide(hull_geom(*c, Vec3(0), rot_x(0.25f * 3.14159265f)),
          hull_geom(*c, Vec3(0, 2 * top - 0.02f, 0), rot_z(0.25f * 3.14159265f)), kMargin, m);
  ASSERT_EQ(m.count, 1);
  expect_vec(m.normal, Vec3(0, 1, 0), 1e-4f);
  EXPECT_NEAR(m.points[0].depth, 0.02f, kTol);
  expect_vec(m.points[0].point, Vec3(0, top - 0.01f, 0), kTol);
}

TEST(HullContact, SeparatedBeyondMarginGivesNothingAndSpeculativeWithin) {
  auto c = cube_hull(0.5f);
  Manifold m;
  collide(hull_geom(*c, Vec3(0)), hull_geom(*c, Vec3(1.2f, 0, 0)), kMargin, m);
  EXPECT_EQ(m.count, 0);
  collide(hull_geom(*c, Vec3(0)), hull_geom(*c, Vec3(1.03f, 0, 0)), kMargin, m);
  ASSERT_EQ(m.count, 4);
  expect_vec(m.normal, Vec3(1, 0, 0), 1e-6f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(m.points[i].depth, -0.03f, kTol);
}

TEST(HullContact, GjkDistances) {
  auto c = cube_hull(0.5f);
  // Two unit cubes 0.3 apart along x (one turned about x: its x-extent is unchanged).
  const query::Distance d = query::core_distance(query::core_of(hull_geom(*c, Vec3(0))),
                                                 query::core_of(hull_geom(*c, Vec3(1.3f, 0.2f, 0), rot_x(0.3f))));
  EXPECT_NEAR(d.distance, 0.3f, 1e-5f);
  // Hull to a sphere centre 2 m away along a diagonal direction of the face: 1.5 to the
  // face, minus the 0.5 radius -> 1.0 gap.
  const query::Core s = query::point_core(Vec3(0.2f, 2.0f, -0.1f), 0.5f);
  const query::Distance e = query::core_distance(s, query::core_of(hull_geom(*c, Vec3(0))));
  EXPECT_NEAR(e.distance - s.radius, 1.0f, 1e-5f);
  // Corner region: centre at (1, 1, 1) is sqrt(3) * 0.5 from the corner (0.5, 0.5, 0.5).
  const query::Distance f =
      query::core_distance(query::point_core(Vec3(1, 1, 1), 0.0f), query::core_of(hull_geom(*c, Vec3(0))));
  EXPECT_NEAR(f.distance, 0.5f * std::sqrt(3.0f), 1e-5f);
}

TEST(HullContact, SphereOnHullAndInsideHull) {
  auto c = cube_hull(0.5f);
  ShapeGeom s;
  s.type = ShapeType::Sphere;
  s.radius = 0.25f;
  s.position = Vec3(0.1f, 0.74f, 0.0f);  // 0.01 into the top face
  Manifold m;
  collide(s, hull_geom(*c, Vec3(0)), kMargin, m);
  ASSERT_EQ(m.count, 1);
  expect_vec(m.normal, Vec3(0, -1, 0), 1e-5f);
  EXPECT_NEAR(m.points[0].depth, 0.01f, kTol);
  expect_vec(m.points[0].point, Vec3(0.1f, 0.495f, 0.0f), kTol);
  // Centre inside, 0.1 below the top face: pushed out through the top, depth 0.35.
  s.position = Vec3(0.0f, 0.4f, 0.05f);
  collide(s, hull_geom(*c, Vec3(0)), kMargin, m);
  ASSERT_EQ(m.count, 1);
  expect_vec(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.35f, kTol);
}

TEST(HullContact, CapsuleLyingOnHullGetsTwoPoints) {
  auto c = cube_hull(0.5f);
  ShapeGeom cap;
  cap.type = ShapeType::Capsule;
  cap.radius = 0.1f;
  cap.half_height = 0.3f;
  cap.rotation = rot_z(0.5f * 3.14159265f);  // segment along world x
  cap.position = Vec3(0, 0.59f, 0);            // 0.01 into the top face
  Manifold m;
  collide(cap, hull_geom(*c, Vec3(0)), kMargin, m);
  ASSERT_EQ(m.count, 2);
  expect_vec(m.normal, Vec3(0, -1, 0), 1e-6f);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(m.points[i].depth, 0.01f, kTol);
    EXPECT_NEAR(std::abs(m.points[i].point.x), 0.3f, kTol);
    EXPECT_NEAR(m.points[i].point.y, 0.495f, kTol);
  }
  // Standing upright: one point under the lower cap.
  cap.rotation = Mat3(1.0f);
  cap.position = Vec3(0.1f, 0.89f, 0);
  collide(cap, hull_geom(*c, Vec3(0)), kMargin, m);
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].depth, 0.01f, kTol);
}

TEST(HullContact, TriangleAgainstHull) {
  // A large triangle in the y = 0 plane, front face up; a unit cube hull sunk 0.02 into
  // it: four points at the cube's bottom corners, normal from the triangle to the hull.
  auto c = cube_hull(0.5f);
  WorldHull tri;
  WorldHull cube;
  place_triangle(Vec3(-5, 0, 5), Vec3(5, 0, 5), Vec3(0, 0, -5), tri);
  place_hull(*c, Vec3(0, 0.48f, 0), Mat3(1.0f), cube);
  Manifold m;
  collide_world_hulls(tri, cube, kMargin, m);
  ASSERT_EQ(m.count, 4);
  expect_vec(m.normal, Vec3(0, 1, 0), 1e-6f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(m.points[i].depth, 0.02f, kTol);
  // From below the triangle (its back face) the normal is -y.
  place_hull(*c, Vec3(0, -0.48f, 0), Mat3(1.0f), cube);
  collide_world_hulls(tri, cube, kMargin, m);
  ASSERT_EQ(m.count, 4);
  expect_vec(m.normal, Vec3(0, -1, 0), 1e-6f);
  // Beside the triangle, not over it: the cube spans z 5.3..6.3, the triangle's rim edge
  // runs along z = 5, so they are 0.3 apart (beyond the margin): nothing.
  place_hull(*c, Vec3(0, 0.0f, 5.8f), Mat3(1.0f), cube);
  collide_world_hulls(tri, cube, kMargin, m);
  EXPECT_EQ(m.count, 0);
}

TEST(HullContact, HullEdgeOverTriangleRimIsClippedAtTheRim) {
  // A unit cube turned 45 deg about z stands on its bottom edge (along z, at x = 0) 0.02
  // below the triangle's plane; the edge runs from z = 4.5 to 5.5 and the triangle's rim is
  // z = 5. Only the part over the triangle touches: two points, at z = 4.5 and at the rim,
  // midway (y = -0.01), depth 0.02, normal from the triangle (A) up to the cube (B).
  auto c = cube_hull(0.5f);
  WorldHull tri;
  WorldHull cube;
  place_triangle(Vec3(-5, 0, 5), Vec3(5, 0, 5), Vec3(0, 0, -5), tri);
  place_hull(*c, Vec3(0, 0.5f * kSqrt2 - 0.02f, 5.0f), rot_z(0.25f * 3.14159265f), cube);
  Manifold m;
  collide_world_hulls(tri, cube, kMargin, m);
  ASSERT_EQ(m.count, 2);
  expect_vec(m.normal, Vec3(0, 1, 0), 1e-5f);
  float zmin = 1e9f, zmax = -1e9f;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(m.points[i].depth, 0.02f, kTol);
    EXPECT_NEAR(m.points[i].point.x, 0.0f, kTol);
    EXPECT_NEAR(m.points[i].point.y, -0.01f, kTol);
    zmin = std::min(zmin, m.points[i].point.z);
    zmax = std::max(zmax, m.points[i].point.z);
  }
  EXPECT_NEAR(zmin, 4.5f, 2e-3f);  // within the clip slop
  EXPECT_NEAR(zmax, 5.0f, 2e-3f);
}

/// Largest projection of a placed hull's vertices on `n`.
float support(const WorldHull& h, const Vec3& n) {
  float best = -3.4e38f;
  for (int i = 0; i < h.topo.vertex_count; ++i) best = std::max(best, glm::dot(h.v[i], n));
  return best;
}

TEST(HullContact, RandomTrianglesAgainstRandomHullsKeepTheContract) {
  // Either order, any pose: unit normal, at most four finite points, depth in
  // [-margin, overlap of the two shapes' projections on the normal].
  uint32_t s = 99u;
  auto next = [&](float lo, float hi) {
    s = s * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float(s >> 8) / float(1u << 24));
  };
  auto vec = [&](float lo, float hi) {
    const float x = next(lo, hi);
    const float y = next(lo, hi);
    const float z = next(lo, hi);
    return Vec3(x, y, z);
  };
  int contacts = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<Vec3> pts;
    for (int i = 0; i < 12; ++i) pts.push_back(vec(-0.5f, 0.5f));
    auto hull = build_hull(pts);
    ASSERT_TRUE(hull);
    const Quat q = glm::normalize(Quat(next(-1, 1), next(-1, 1), next(-1, 1), next(-1, 1)));
    WorldHull tri;
    WorldHull h;
    place_triangle(vec(-1, 1), vec(-1, 1), vec(-1, 1), tri);
    place_hull(**hull, vec(-0.6f, 0.6f), glm::mat3_cast(q), h);
    for (int order = 0; order < 2; ++order) {
      const WorldHull& a = order == 0 ? tri : h;
      const WorldHull& b = order == 0 ? h : tri;
      Manifold m;
      collide_world_hulls(a, b, kMargin, m);
      ASSERT_LE(m.count, kMaxManifoldPoints);
      if (m.count == 0) continue;
      ++contacts;
      ASSERT_NEAR(glm::length(m.normal), 1.0f, 1e-4f) << iter;
      const float overlap = support(a, m.normal) + support(b, -m.normal);
      for (int i = 0; i < m.count; ++i) {
        ASSERT_TRUE(std::isfinite(m.points[i].point.x) && std::isfinite(m.points[i].depth)) << iter;
        ASSERT_GE(m.points[i].depth, -kMargin - 1e-4f) << iter;
        ASSERT_LE(m.points[i].depth, overlap + 1e-4f) << iter;
      }
    }
  }
  EXPECT_GT(contacts, 500);
}

TEST(HullContact, FeatureIdsStableUnderSmallMotion) {
  auto c = cube_hull(0.5f);
  Manifold m0, m1;
  collide(hull_geom(*c, Vec3(0)), hull_geom(*c, Vec3(0.2f, 0.99f, 0.1f)), kMargin, m0);
  collide(hull_geom(*c, Vec3(0)), hull_geom(*c, Vec3(0.2003f, 0.9902f, 0.0998f), rot_x(1e-4f)), kMargin, m1);
  ASSERT_EQ(m0.count, m1.count);
  std::vector<uint32_t> a, b;
  for (int i = 0; i < m0.count; ++i) a.push_back(m0.points[i].id);
  for (int i = 0; i < m1.count; ++i) b.push_back(m1.points[i].id);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace keel::sim
