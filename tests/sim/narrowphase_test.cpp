// Narrowphase tests: every routine against configurations worked out by hand.
//
// Conventions under test (collision/narrowphase.h): normal from A to B, unit length; depth
// positive when overlapping, negative down to -margin for speculative points; each point
// midway between the two surfaces; at most four points; feature ids stable under motion.
#include "collision/narrowphase.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <glm/gtc/quaternion.hpp>
#include <vector>

namespace keel::sim {
namespace {

constexpr float kPi = 3.14159265358979f;
constexpr float kTol = 1e-4f;
constexpr float kMargin = 0.05f;

// --------------------------------------------------------------------------- helpers

Mat3 rot_x(float a) {
  return Mat3(Vec3(1, 0, 0), Vec3(0, std::cos(a), std::sin(a)), Vec3(0, -std::sin(a), std::cos(a)));
}
Mat3 rot_y(float a) {
  return Mat3(Vec3(std::cos(a), 0, -std::sin(a)), Vec3(0, 1, 0), Vec3(std::sin(a), 0, std::cos(a)));
}
Mat3 rot_z(float a) {
  return Mat3(Vec3(std::cos(a), std::sin(a), 0), Vec3(-std::sin(a), std::cos(a), 0), Vec3(0, 0, 1));
}
/// Capsule segment along world +X (local +Y -> world +X): a right-handed frame.
Mat3 along_x() { return Mat3(Vec3(0, -1, 0), Vec3(1, 0, 0), Vec3(0, 0, 1)); }
/// Capsule segment along world +Z.
Mat3 along_z() { return Mat3(Vec3(1, 0, 0), Vec3(0, 0, 1), Vec3(0, -1, 0)); }

ShapeGeom sphere(Vec3 p, float r) {
  ShapeGeom s;
  s.type = ShapeType::Sphere;
  s.position = p;
  s.radius = r;
  return s;
}

ShapeGeom capsule(Vec3 p, Mat3 rot, float r, float hh) {
  ShapeGeom s;
  s.type = ShapeType::Capsule;
  s.position = p;
  s.rotation = rot;
  s.radius = r;
  s.half_height = hh;
  return s;
}

ShapeGeom box(Vec3 p, Mat3 rot, Vec3 h) {
  ShapeGeom s;
  s.type = ShapeType::Box;
  s.position = p;
  s.rotation = rot;
  s.half_extents = h;
  return s;
}

#define EXPECT_VEC_NEAR(a, b, tol)        \
  do {                                    \
    const Vec3 va_ = (a);                 \
    const Vec3 vb_ = (b);                 \
    EXPECT_NEAR(va_.x, vb_.x, tol) << #a; \
    EXPECT_NEAR(va_.y, vb_.y, tol) << #a; \
    EXPECT_NEAR(va_.z, vb_.z, tol) << #a; \
  } while (0)

/// Invariants every manifold must satisfy: finite, unit normal, <= 4 points, depth >= -margin.
void expect_valid(const Manifold& m, float margin) {
  ASSERT_GE(m.count, 0);
  ASSERT_LE(m.count, kMaxManifoldPoints);
  ASSERT_TRUE(std::isfinite(m.normal.x) && std::isfinite(m.normal.y) && std::isfinite(m.normal.z));
  EXPECT_NEAR(glm::length(m.normal), 1.0f, 1e-5f);
  for (int i = 0; i < m.count; ++i) {
    const ManifoldPoint& p = m.points[i];
    ASSERT_TRUE(std::isfinite(p.point.x) && std::isfinite(p.point.y) && std::isfinite(p.point.z));
    ASSERT_TRUE(std::isfinite(p.depth));
    EXPECT_GE(p.depth, -margin - 1e-5f);
  }
}

Manifold run(void (*f)(const ShapeGeom&, const ShapeGeom&, float, Manifold&), const ShapeGeom& a,
             const ShapeGeom& b, float margin = kMargin) {
  Manifold m;
  m.count = 3;  // garbage in: every routine must reset the manifold itself
  f(a, b, margin, m);
  expect_valid(m, margin);
  return m;
}

/// Finds the point nearest to `p` (to match expected points regardless of order).
const ManifoldPoint* nearest(const Manifold& m, Vec3 p) {
  const ManifoldPoint* best = nullptr;
  for (int i = 0; i < m.count; ++i) {
    if (best == nullptr || glm::length(m.points[i].point - p) < glm::length(best->point - p))
      best = &m.points[i];
  }
  return best;
}

void expect_points(const Manifold& m, const std::vector<Vec3>& expected, float depth) {
  ASSERT_EQ(m.count, int(expected.size()));
  for (const Vec3& e : expected) {
    const ManifoldPoint* p = nearest(m, e);
    ASSERT_NE(p, nullptr);
    EXPECT_VEC_NEAR(p->point, e, kTol);
    EXPECT_NEAR(p->depth, depth, kTol);
  }
}

/// Deterministic pseudo-random numbers (no library generator: identical on every platform).
struct Lcg {
  uint32_t state = 12345u;
  float next() {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24);
  }
  float range(float lo, float hi) { return lo + (hi - lo) * next(); }
  // Draws in a fixed order (argument evaluation order is unspecified in C++, so
  // Vec3(range(), range(), range()) would differ between gcc and clang).
  Vec3 vec(float lo, float hi) {
    const float x = range(lo, hi);
    const float y = range(lo, hi);
    const float z = range(lo, hi);
    return Vec3(x, y, z);
  }
  /// A random unit quaternion near (w, v): v plus a uniform jitter in [-j, j]^3.
  Quat quat(float w, const Vec3& v, float j) { return glm::normalize(Quat(w, v + vec(-j, j))); }
};

std::vector<uint32_t> sorted_ids(const Manifold& m) {
  std::vector<uint32_t> ids;
  for (int i = 0; i < m.count; ++i) ids.push_back(m.points[i].id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// --------------------------------------------------------------------------- sphere-sphere

TEST(NarrowphaseSphereSphere, Overlap) {
  // Centres 0.7 apart, radii 0.5 + 0.3 = 0.8: overlap 0.1. Surfaces at x = 0.5 and 0.4.
  const Manifold m = run(collide_sphere_sphere, sphere({0, 0, 0}, 0.5f), sphere({0.7f, 0, 0}, 0.3f));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(1, 0, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.1f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.45f, 0, 0), kTol);
}

TEST(NarrowphaseSphereSphere, CoincidentCentresGiveUpNormal) {
  // No direction between the centres: +Y by convention, depth the sum of the radii.
  const Manifold m = run(collide_sphere_sphere, sphere({1, 2, 3}, 0.5f), sphere({1, 2, 3}, 0.25f));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 0.0f);
  EXPECT_NEAR(m.points[0].depth, 0.75f, kTol);
  // A's surface at y = 2.5, B's at 2 - 0.25 = 1.75: midway 2.125.
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(1, 2.125f, 3), kTol);
}

TEST(NarrowphaseSphereSphere, SpeculativeWithinMarginBeyondMarginNothing) {
  // Gap 0.05 < margin 0.1: one point with depth -0.05.
  Manifold m = run(collide_sphere_sphere, sphere({0, 0, 0}, 0.5f), sphere({0, 0, 1.05f}, 0.5f), 0.1f);
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].depth, -0.05f, kTol);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 0, 1), 1e-6f);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0, 0, 0.525f), kTol);
  // Gap 0.2 > margin 0.1: nothing.
  m = run(collide_sphere_sphere, sphere({0, 0, 0}, 0.5f), sphere({0, 0, 1.2f}, 0.5f), 0.1f);
  EXPECT_EQ(m.count, 0);
}

// --------------------------------------------------------------------------- sphere-capsule

TEST(NarrowphaseSphereCapsule, SideOfSegment) {
  // Vertical capsule, segment y in [-1, 1]; sphere centre 0.45 from the segment at y = 0.5.
  // Overlap 0.3 + 0.2 - 0.45 = 0.05; surfaces at x = 0.15 (sphere) and 0.2 (capsule).
  const Manifold m =
      run(collide_sphere_capsule, sphere({0.45f, 0.5f, 0}, 0.3f), capsule({0, 0, 0}, Mat3(1), 0.2f, 1));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(-1, 0, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.05f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.175f, 0.5f, 0), kTol);
}

TEST(NarrowphaseSphereCapsule, EndCap) {
  // Sphere above the top end (y = 1): distance 0.4, overlap 0.1, surfaces at 1.1 and 1.2.
  const Manifold m =
      run(collide_sphere_capsule, sphere({0, 1.4f, 0}, 0.3f), capsule({0, 0, 0}, Mat3(1), 0.2f, 1));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.1f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0, 1.15f, 0), kTol);
}

TEST(NarrowphaseSphereCapsule, CentreOnSegmentLeavesSideways) {
  const Manifold m =
      run(collide_sphere_capsule, sphere({0, 0.3f, 0}, 0.3f), capsule({0, 0, 0}, Mat3(1), 0.2f, 1));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.normal.y, 0.0f, 1e-6f);  // perpendicular to the segment
  EXPECT_NEAR(m.points[0].depth, 0.5f, kTol);
}

// --------------------------------------------------------------------------- sphere-box

const Vec3 kSlab(1.0f, 0.5f, 1.0f);  // box half extents used by several tests: top face y = 0.5

TEST(NarrowphaseSphereBox, Face) {
  // Sphere centre 0.2 above the top face, radius 0.25: overlap 0.05, surfaces at 0.45 / 0.5.
  const Manifold m =
      run(collide_sphere_box, sphere({0.3f, 0.7f, -0.2f}, 0.25f), box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.05f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.3f, 0.475f, -0.2f), kTol);
}

TEST(NarrowphaseSphereBox, Edge) {
  // Nearest box point is the edge (1, 0.5, z): offset (0.1, 0.1), distance 0.1 * sqrt 2.
  const Manifold m = run(collide_sphere_box, sphere({1.1f, 0.6f, 0}, 0.2f), box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  const float s = std::sqrt(0.5f);
  EXPECT_VEC_NEAR(m.normal, Vec3(-s, -s, 0), 1e-5f);
  EXPECT_NEAR(m.points[0].depth, 0.2f - 0.1f * std::sqrt(2.0f), kTol);
}

TEST(NarrowphaseSphereBox, RotatedBox) {
  // Box turned 90 degrees about Z: its local x half extent (1) now spans world y.
  const Manifold m = run(collide_sphere_box, sphere({0.2f, 1.2f, 0.1f}, 0.25f),
                         box({0, 0, 0}, rot_z(kPi / 2), Vec3(1, 0.5f, 0.5f)));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-5f);
  EXPECT_NEAR(m.points[0].depth, 0.05f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.2f, 0.975f, 0.1f), kTol);
}

TEST(NarrowphaseSphereBox, CentreInsideLeavesThroughNearestFace) {
  // Centre 0.1 below the top face (nearest): the sphere must move up 0.1 + 0.2.
  const Manifold m = run(collide_sphere_box, sphere({0.3f, 0.4f, 0}, 0.2f), box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 0.0f);
  EXPECT_NEAR(m.points[0].depth, 0.3f, kTol);
  // Sphere surface along the normal at y = 0.2, box top at 0.5: midway 0.35.
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.3f, 0.35f, 0), kTol);
}

TEST(NarrowphaseSphereBox, CoincidentCentres) {
  // Smallest half extent is y (0.5): leave through +Y, so the box is pushed along -Y.
  const Manifold m =
      run(collide_sphere_box, sphere({2, 3, 4}, 0.2f), box({2, 3, 4}, Mat3(1), Vec3(1, 0.5f, 2)));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 0.0f);
  EXPECT_NEAR(m.points[0].depth, 0.7f, kTol);
}

TEST(NarrowphaseSphereBox, Speculative) {
  Manifold m = run(collide_sphere_box, sphere({0, 0.78f, 0}, 0.25f), box({0, 0, 0}, Mat3(1), kSlab), 0.05f);
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].depth, -0.03f, kTol);
  m = run(collide_sphere_box, sphere({0, 0.81f, 0}, 0.25f), box({0, 0, 0}, Mat3(1), kSlab), 0.05f);
  EXPECT_EQ(m.count, 0);
}

// --------------------------------------------------------------------------- capsule-capsule

TEST(NarrowphaseCapsuleCapsule, Crossed) {
  // A along X at y = 0, B along Z at y = 0.35: closest points (0.3, 0, 0) / (0.3, 0.35, 0).
  const Manifold m = run(collide_capsule_capsule, capsule({0, 0, 0}, along_x(), 0.2f, 1),
                         capsule({0.3f, 0.35f, 0.1f}, along_z(), 0.2f, 1));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.05f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.3f, 0.175f, 0), kTol);
}

TEST(NarrowphaseCapsuleCapsule, ParallelOverlapGivesTwoPoints) {
  // A spans x in [-1, 1], B spans [0.3, 1.3], 0.45 above: overlap x in [0.3, 1].
  const Manifold m = run(collide_capsule_capsule, capsule({0, 0, 0}, along_x(), 0.25f, 1),
                         capsule({0.8f, 0.45f, 0}, along_x(), 0.25f, 0.5f));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-6f);
  expect_points(m, {Vec3(0.3f, 0.225f, 0), Vec3(1.0f, 0.225f, 0)}, 0.05f);
  EXPECT_NE(m.points[0].id, m.points[1].id);
}

TEST(NarrowphaseCapsuleCapsule, TiltedBeyondThreeDegreesGivesOnePoint) {
  // B tilted 10 degrees about Z, centred over A: one point where they are closest.
  const Manifold m = run(collide_capsule_capsule, capsule({0, 0, 0}, along_x(), 0.25f, 1),
                         capsule({0, 0.45f, 0}, rot_z(-kPi / 2 + 10 * kPi / 180), 0.25f, 0.5f));
  ASSERT_EQ(m.count, 1);
  EXPECT_GT(m.normal.y, 0.9f);
}

TEST(NarrowphaseCapsuleCapsule, EndToEnd) {
  // Collinear along X, segment ends 0.3 apart: overlap 0.4 - 0.3 = 0.1, one point.
  const Manifold m = run(collide_capsule_capsule, capsule({0, 0, 0}, along_x(), 0.2f, 1),
                         capsule({2.3f, 0, 0}, along_x(), 0.2f, 1));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(1, 0, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.1f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(1.15f, 0, 0), kTol);
}

TEST(NarrowphaseCapsuleCapsule, CoincidentSegmentsHaveAValidNormal) {
  const ShapeGeom c = capsule({1, 1, 1}, Mat3(1), 0.2f, 0.5f);
  const Manifold m = run(collide_capsule_capsule, c, c);
  ASSERT_GE(m.count, 1);
  EXPECT_NEAR(m.normal.y, 0.0f, 1e-6f);  // perpendicular to both segments
  for (int i = 0; i < m.count; ++i) EXPECT_NEAR(m.points[i].depth, 0.4f, kTol);
}

// --------------------------------------------------------------------------- capsule-box

TEST(NarrowphaseCapsuleBox, StandingOnEndCap) {
  // Vertical capsule, lower segment end at y = 0.58: 0.08 above the face, radius 0.1.
  const Manifold m = run(collide_capsule_box, capsule({0.2f, 1.08f, 0.3f}, Mat3(1), 0.1f, 0.5f),
                         box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.02f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.2f, 0.49f, 0.3f), kTol);
}

TEST(NarrowphaseCapsuleBox, LyingFlatGivesTwoPointsAtTheRightDepth) {
  // Segment x in [-0.5, 0.5] at y = 0.58: capsule bottom 0.48, face 0.5 -> depth 0.02.
  const Manifold m =
      run(collide_capsule_box, capsule({0, 0.58f, 0}, along_x(), 0.1f, 0.5f), box({0, 0, 0}, Mat3(1), kSlab));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  expect_points(m, {Vec3(-0.5f, 0.49f, 0), Vec3(0.5f, 0.49f, 0)}, 0.02f);
  EXPECT_NE(m.points[0].id, m.points[1].id);
}

TEST(NarrowphaseCapsuleBox, LyingFlatOverhangingIsClippedToTheFace) {
  // Segment x in [0.3, 1.3]; the face ends at x = 1.
  const Manifold m = run(collide_capsule_box, capsule({0.8f, 0.58f, 0}, along_x(), 0.1f, 0.5f),
                         box({0, 0, 0}, Mat3(1), kSlab));
  expect_points(m, {Vec3(0.3f, 0.49f, 0), Vec3(1.0f, 0.49f, 0)}, 0.02f);
}

TEST(NarrowphaseCapsuleBox, TiltedTwoDegreesStillTwoPointsEachAtItsDepth) {
  const float a = 2 * kPi / 180;
  const float lift = 0.5f * std::sin(a);  // ends 0.5 * sin(2 deg) below / above the centre
  const Manifold m = run(collide_capsule_box, capsule({0, 0.58f, 0}, rot_z(-kPi / 2 + a), 0.1f, 0.5f),
                         box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 2);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  const float lo = std::min(m.points[0].depth, m.points[1].depth);
  const float hi = std::max(m.points[0].depth, m.points[1].depth);
  // Depth of an end at height y: 0.1 - (y - 0.5).
  EXPECT_NEAR(hi, 0.1f - (0.08f - lift), kTol);
  EXPECT_NEAR(lo, 0.1f - (0.08f + lift), kTol);
}

TEST(NarrowphaseCapsuleBox, TiltedTenDegreesGivesOnePoint) {
  // Lower end at y = 0.68 - 0.5 sin(10 deg), above the face interior.
  const float a = 10 * kPi / 180;
  const Manifold m = run(collide_capsule_box, capsule({0, 0.68f, 0}, rot_z(-kPi / 2 + a), 0.1f, 0.5f),
                         box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.1f - (0.18f - 0.5f * std::sin(a)), kTol);
}

TEST(NarrowphaseCapsuleBox, EndDeepInsideTheBox) {
  // Segment y in [0.2, 1.2]: the lower end is 0.3 below the top face. The shortest way out
  // is up: depth 0.3 + radius 0.1. Capsule surface at y = 0.1, face at 0.5 -> point at 0.3.
  const Manifold m =
      run(collide_capsule_box, capsule({0.3f, 0.7f, 0}, Mat3(1), 0.1f, 0.5f), box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.4f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.3f, 0.3f, 0), kTol);
}

TEST(NarrowphaseCapsuleBox, SegmentWhollyInsideTheBox) {
  // Segment y in [-0.1, 0.3], x = 0.1: exits: up 0.6, down 0.8, +x 0.9, z 1 -> up.
  const Manifold m = run(collide_capsule_box, capsule({0.1f, 0.1f, 0}, Mat3(1), 0.05f, 0.2f),
                         box({0, 0, 0}, Mat3(1), kSlab));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  EXPECT_NEAR(m.points[0].depth, 0.65f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0.1f, 0.175f, 0), kTol);
}

TEST(NarrowphaseCapsuleBox, SegmentInsideAndParallelToAFace) {
  // Lying along X 0.1 below the top face: two points, each depth 0.1 + 0.1.
  const Manifold m =
      run(collide_capsule_box, capsule({0, 0.4f, 0}, along_x(), 0.1f, 0.5f), box({0, 0, 0}, Mat3(1), kSlab));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-6f);
  // Capsule surface at 0.3, face at 0.5: midway 0.4.
  expect_points(m, {Vec3(-0.5f, 0.4f, 0), Vec3(0.5f, 0.4f, 0)}, 0.2f);
}

TEST(NarrowphaseCapsuleBox, DeepAcrossAnEdgeUsesTheEdgeAxis) {
  // Segment through (0.45, 0.45, 0) along (1, -1, 0) / sqrt 2, crossing under the cube's
  // edge x = y = 0.5. Along the diagonal (1, 1, 0) / sqrt 2 the segment sits at 0.9 / sqrt 2
  // and the cube reaches sqrt(2) / 2: it leaves by 0.0707, far less than through a face
  // (x from 0.238: 0.262). Depth 0.0707 + radius 0.1, normal -(1, 1, 0) / sqrt 2. The
  // capsule surface along the normal and the edge are depth apart; their midpoint is
  // (0.45, 0.45, 0) + normal * (0.1 - depth / 2).
  const float s = std::sqrt(0.5f);
  const float pen = s - 0.9f * s;
  const float depth = pen + 0.1f;
  const Manifold m = run(collide_capsule_box, capsule({0.45f, 0.45f, 0}, rot_z(-3 * kPi / 4), 0.1f, 0.3f),
                         box({0, 0, 0}, Mat3(1), Vec3(0.5f)));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(-s, -s, 0), 1e-5f);
  EXPECT_NEAR(m.points[0].depth, depth, kTol);
  const float c = 0.45f - s * (0.1f - 0.5f * depth);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(c, c, 0), kTol);
}

TEST(NarrowphaseCapsuleBox, LyingAcrossARotatedBox) {
  // Cube turned 45 degrees about Y: along z = 0 its top face spans |x| <= sqrt(2) / 2.
  const float e = std::sqrt(0.5f);
  const Manifold m = run(collide_capsule_box, capsule({0, 0.58f, 0}, along_x(), 0.1f, 1.0f),
                         box({0, 0, 0}, rot_y(kPi / 4), Vec3(0.5f)));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, -1, 0), 1e-5f);
  expect_points(m, {Vec3(-e, 0.49f, 0), Vec3(e, 0.49f, 0)}, 0.02f);
}

TEST(NarrowphaseCapsuleBox, SpeculativeAndBeyondMargin) {
  Manifold m = run(collide_capsule_box, capsule({0, 0.63f, 0}, along_x(), 0.1f, 0.5f),
                   box({0, 0, 0}, Mat3(1), kSlab), 0.05f);
  expect_points(m, {Vec3(-0.5f, 0.515f, 0), Vec3(0.5f, 0.515f, 0)}, -0.03f);
  m = run(collide_capsule_box, capsule({0, 0.66f, 0}, along_x(), 0.1f, 0.5f), box({0, 0, 0}, Mat3(1), kSlab),
          0.05f);
  EXPECT_EQ(m.count, 0);
}

// --------------------------------------------------------------------------- box-box

TEST(NarrowphaseBoxBox, RestingFlatGivesFourPoints) {
  // Cube (half 0.5) on a slab (top y = 0.5), bottom at y = 0.49: overlap 0.01.
  const Manifold m =
      run(collide_box_box, box({0, 0, 0}, Mat3(1), kSlab), box({0.1f, 0.99f, -0.2f}, Mat3(1), Vec3(0.5f)));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-6f);
  expect_points(m,
                {Vec3(0.6f, 0.495f, 0.3f), Vec3(-0.4f, 0.495f, 0.3f), Vec3(-0.4f, 0.495f, -0.7f),
                 Vec3(0.6f, 0.495f, -0.7f)},
                0.01f);
}

TEST(NarrowphaseBoxBox, EqualBoxesStackedFlushGiveFourCornerPoints) {
  const Manifold m =
      run(collide_box_box, box({0, 0, 0}, Mat3(1), Vec3(0.5f)), box({0, 0.99f, 0}, Mat3(1), Vec3(0.5f)));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-6f);
  expect_points(m,
                {Vec3(0.5f, 0.495f, 0.5f), Vec3(-0.5f, 0.495f, 0.5f), Vec3(-0.5f, 0.495f, -0.5f),
                 Vec3(0.5f, 0.495f, -0.5f)},
                0.01f);
}

TEST(NarrowphaseBoxBox, Rotated45AboutVerticalStillFourPoints) {
  // The upper cube's footprint is a diamond reaching 0.707: clipped by the lower top face
  // it is an octagon, reduced to four points, all at depth 0.01 inside the lower face.
  const Manifold m = run(collide_box_box, box({0, 0, 0}, Mat3(1), Vec3(0.5f)),
                         box({0, 0.99f, 0}, rot_y(kPi / 4), Vec3(0.5f)));
  ASSERT_EQ(m.count, 4);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-6f);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.points[i].depth, 0.01f, kTol);
    EXPECT_NEAR(m.points[i].point.y, 0.495f, kTol);
    EXPECT_LE(std::abs(m.points[i].point.x), 0.501f);
    EXPECT_LE(std::abs(m.points[i].point.z), 0.501f);
  }
  // The four points span a real area (not collinear): the quad's diagonals cross.
  const Vec3 c = (m.points[0].point + m.points[1].point + m.points[2].point + m.points[3].point) * 0.25f;
  for (int i = 0; i < 4; ++i) EXPECT_GT(glm::length(m.points[i].point - c), 0.3f);
}

TEST(NarrowphaseBoxBox, EdgeEdgeCrossedAt90Degrees) {
  // A turned 45 deg about X: its top is an edge along X at y = sqrt(2)/2. B turned 45 deg
  // about Z at y = 1.4: its bottom is an edge along Z at y = 1.4 - sqrt(2)/2.
  const float e = std::sqrt(0.5f);
  const Manifold m = run(collide_box_box, box({0, 0, 0}, rot_x(kPi / 4), Vec3(0.5f)),
                         box({0, 1.4f, 0}, rot_z(kPi / 4), Vec3(0.5f)));
  ASSERT_EQ(m.count, 1);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-5f);
  EXPECT_NEAR(m.points[0].depth, 2 * e - 1.4f, kTol);
  EXPECT_VEC_NEAR(m.points[0].point, Vec3(0, 0.7f, 0), kTol);
  EXPECT_NE(m.points[0].id & (1u << 14), 0u);  // an edge feature
}

TEST(NarrowphaseBoxBox, TiltedBoxOnItsEdgeUsesTheOtherBoxFace) {
  // A cube rolled 20 deg about Z pokes its top edge (y = 0.5 (cos 20 + sin 20)) 0.01 into
  // the bottom face of a wide slab B: B's face is the clear reference, two points.
  const float a = 20 * kPi / 180;
  const float top = 0.5f * (std::cos(a) + std::sin(a));
  const Manifold m = run(collide_box_box, box({0, 0, 0}, rot_z(a), Vec3(0.5f)),
                         box({0, top + 0.49f, 0}, Mat3(1), Vec3(2, 0.5f, 2)));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-5f);
  const float x = 0.5f * (std::cos(a) - std::sin(a));
  expect_points(m, {Vec3(x, top - 0.005f, 0.5f), Vec3(x, top - 0.005f, -0.5f)}, 0.01f);
  EXPECT_NE(m.points[0].id & (1u << 12), 0u);  // reference face on B
}

TEST(NarrowphaseBoxBox, CoincidentBoxes) {
  // Separation along each local axis is -(2 h): the thinnest axis (y, 0.3) wins, normal +Y.
  const Manifold m = run(collide_box_box, box({1, 2, 3}, Mat3(1), Vec3(0.5f, 0.3f, 0.4f)),
                         box({1, 2, 3}, Mat3(1), Vec3(0.5f, 0.3f, 0.4f)));
  ASSERT_EQ(m.count, 4);
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 0.0f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(m.points[i].depth, 0.6f, kTol);
}

TEST(NarrowphaseBoxBox, SmallBoxDeepInsideBigBox) {
  // Small cube (half 0.2) centred 0.6 above the big cube's centre: shortest exit is up by
  // 1 + 0.2 - 0.6 = 0.6; its bottom face (y = 0.4) clipped to the big top face.
  const Manifold m =
      run(collide_box_box, box({0, 0, 0}, Mat3(1), Vec3(1)), box({0, 0.6f, 0}, Mat3(1), Vec3(0.2f)));
  EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-6f);
  expect_points(
      m, {Vec3(0.2f, 0.7f, 0.2f), Vec3(-0.2f, 0.7f, 0.2f), Vec3(-0.2f, 0.7f, -0.2f), Vec3(0.2f, 0.7f, -0.2f)},
      0.6f);
}

TEST(NarrowphaseBoxBox, SpeculativeAndBeyondMargin) {
  Manifold m = run(collide_box_box, box({0, 0, 0}, Mat3(1), Vec3(0.5f)),
                   box({0, 1.02f, 0}, Mat3(1), Vec3(0.5f)), 0.05f);
  ASSERT_EQ(m.count, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.points[i].depth, -0.02f, kTol);
    EXPECT_NEAR(m.points[i].point.y, 0.51f, kTol);
  }
  m = run(collide_box_box, box({0, 0, 0}, Mat3(1), Vec3(0.5f)), box({0, 1.1f, 0}, Mat3(1), Vec3(0.5f)),
          0.05f);
  EXPECT_EQ(m.count, 0);
}

TEST(NarrowphaseBoxBox, FeatureIdsStableUnderSmallTranslation) {
  const ShapeGeom slab = box({0, 0, 0}, Mat3(1), kSlab);
  const ShapeGeom cube = box({0.1f, 0.99f, -0.2f}, Mat3(1), Vec3(0.5f));
  const Manifold m0 = run(collide_box_box, slab, cube);
  ASSERT_EQ(m0.count, 4);
  const std::vector<uint32_t> ids0 = sorted_ids(m0);
  EXPECT_EQ(std::adjacent_find(ids0.begin(), ids0.end()), ids0.end());  // distinct

  // The cube slides a little on the slab.
  ShapeGeom moved = cube;
  moved.position += Vec3(0.013f, 0.002f, -0.007f);
  EXPECT_EQ(sorted_ids(run(collide_box_box, slab, moved)), ids0);

  // The whole pair moves.
  ShapeGeom slab2 = slab;
  ShapeGeom cube2 = cube;
  slab2.position += Vec3(5.3f, -2.1f, 0.7f);
  cube2.position += Vec3(5.3f, -2.1f, 0.7f);
  EXPECT_EQ(sorted_ids(run(collide_box_box, slab2, cube2)), ids0);

  // Equal boxes stacked flush, jittered by less than the clip slop: same corner features.
  const ShapeGeom lower = box({0, 0, 0}, Mat3(1), Vec3(0.5f));
  const std::vector<uint32_t> flush =
      sorted_ids(run(collide_box_box, lower, box({0, 0.99f, 0}, Mat3(1), Vec3(0.5f))));
  ASSERT_EQ(flush.size(), 4u);
  EXPECT_EQ(sorted_ids(run(collide_box_box, lower, box({1e-4f, 0.991f, -1e-4f}, Mat3(1), Vec3(0.5f)))),
            flush);
  EXPECT_EQ(sorted_ids(run(collide_box_box, lower, box({-1e-4f, 0.989f, 1e-4f}, Mat3(1), Vec3(0.5f)))),
            flush);

  // Edge contact ids too.
  const Manifold e0 = run(collide_box_box, box({0, 0, 0}, rot_x(kPi / 4), Vec3(0.5f)),
                          box({0, 1.4f, 0}, rot_z(kPi / 4), Vec3(0.5f)));
  const Manifold e1 = run(collide_box_box, box({0, 0, 0}, rot_x(kPi / 4), Vec3(0.5f)),
                          box({0.02f, 1.401f, -0.03f}, rot_z(kPi / 4), Vec3(0.5f)));
  EXPECT_EQ(sorted_ids(e0), sorted_ids(e1));
}

TEST(NarrowphaseBoxBox, ReducedFeatureIdsStableWhileRocking) {
  // A cube turned 0.3 rad about Y on an equal cube: the clipped footprint is an octagon,
  // reduced to four points. Rocking both by rounding-sized tilts (< 2e-4 rad) must keep
  // the same four features, or the contact cache would lose its warm start every tick.
  Lcg rng;
  std::vector<uint32_t> first;
  for (int i = 0; i < 200; ++i) {
    const float j = 2e-4f;
    const Quat qa = rng.quat(1, Vec3(0), j);
    const Quat qb = rng.quat(1, Vec3(0, 0.15f, 0), j);
    const Vec3 shift = rng.vec(-1e-4f, 1e-4f);
    const Manifold m = run(collide_box_box, box({0, 0, 0}, glm::mat3_cast(qa), Vec3(0.5f)),
                           box(Vec3(0, 0.995f, 0) + shift, glm::mat3_cast(qb), Vec3(0.5f)));
    ASSERT_EQ(m.count, 4);
    EXPECT_VEC_NEAR(m.normal, Vec3(0, 1, 0), 1e-3f);
    EXPECT_EQ(m.points[0].id & (1u << 12 | 1u << 14), 0u);  // always A's face, never an edge
    if (i == 0) first = sorted_ids(m);
    ASSERT_EQ(sorted_ids(m), first) << "sample " << i;
  }
}

// --------------------------------------------------------------------------- dispatch

void expect_flipped(const ShapeGeom& a, const ShapeGeom& b) {
  Manifold ab;
  Manifold ba;
  collide(a, b, kMargin, ab);
  collide(b, a, kMargin, ba);
  expect_valid(ab, kMargin);
  expect_valid(ba, kMargin);
  ASSERT_GT(ab.count, 0);
  ASSERT_EQ(ab.count, ba.count);
  EXPECT_VEC_NEAR(ba.normal, -ab.normal, 1e-6f);
  for (int i = 0; i < ab.count; ++i) {
    const ManifoldPoint* p = nearest(ba, ab.points[i].point);
    EXPECT_VEC_NEAR(p->point, ab.points[i].point, kTol);
    EXPECT_NEAR(p->depth, ab.points[i].depth, kTol);
  }
}

TEST(NarrowphaseDispatch, SwappedOrderNegatesTheNormal) {
  const ShapeGeom s = sphere({0.3f, 0.7f, -0.2f}, 0.25f);
  const ShapeGeom c = capsule({0, 0.58f, 0}, along_x(), 0.1f, 0.5f);
  const ShapeGeom c2 = capsule({0.3f, 0.35f, 0.1f}, along_z(), 0.2f, 1);
  const ShapeGeom b = box({0, 0, 0}, Mat3(1), kSlab);
  expect_flipped(s, b);
  expect_flipped(b, s);
  expect_flipped(c, b);
  expect_flipped(b, c);
  expect_flipped(sphere({0.1f, 0.8f, 0}, 0.3f), c);
  expect_flipped(c, c2);
  expect_flipped(s, sphere({0.5f, 0.8f, 0}, 0.3f));
  expect_flipped(b, box({0.1f, 0.99f, -0.2f}, Mat3(1), Vec3(0.5f)));

  // The dispatched result equals the named routine in its own order.
  Manifold direct;
  Manifold via;
  collide_capsule_box(c, b, kMargin, direct);
  collide(b, c, kMargin, via);
  EXPECT_VEC_NEAR(via.normal, Vec3(0, 1, 0), 1e-6f);
  ASSERT_EQ(via.count, direct.count);
  for (int i = 0; i < via.count; ++i) EXPECT_EQ(via.points[i].id, direct.points[i].id);
}

// --------------------------------------------------------------------------- degenerate capsule

TEST(NarrowphaseCapsule, ZeroHalfHeightBehavesAsASphere) {
  const Mat3 tilt = rot_x(0.3f) * rot_z(0.7f);
  const ShapeGeom others[] = {
      sphere({0.2f, 0.5f, 0.1f}, 0.3f),
      capsule({0, -0.2f, 0}, along_x(), 0.2f, 1.0f),
      capsule({0.1f, 0.1f, 0}, tilt, 0.2f, 0.7f),
      box({0, 0, 0}, Mat3(1), kSlab),
      box({0.3f, -0.1f, 0.2f}, tilt, Vec3(0.4f, 0.3f, 0.6f)),
  };
  const Vec3 centres[] = {{0.2f, 0.62f, 0.1f}, {1.15f, 0.6f, 0.2f}, {0.3f, 0.4f, 0}, {0, 0.35f, 0.05f}};
  for (const ShapeGeom& other : others) {
    for (const Vec3& c : centres) {
      Manifold ms;
      Manifold mc;
      collide(sphere(c, 0.2f), other, kMargin, ms);
      collide(capsule(c, tilt, 0.2f, 0.0f), other, kMargin, mc);
      expect_valid(mc, kMargin);
      ASSERT_EQ(ms.count, mc.count) << "centre " << c.x << " " << c.y << " " << c.z;
      if (ms.count == 0) continue;
      EXPECT_VEC_NEAR(mc.normal, ms.normal, 1e-5f);
      EXPECT_NEAR(mc.points[0].depth, ms.points[0].depth, kTol);
      EXPECT_VEC_NEAR(mc.points[0].point, ms.points[0].point, kTol);
    }
  }
}

// --------------------------------------------------------------------------- sweep

/// Support of a shape along unit direction n: max over the shape of dot(x, n).
float support(const ShapeGeom& s, const Vec3& n) {
  float r = glm::dot(s.position, n);
  switch (s.type) {
    case ShapeType::Sphere:
      return r + s.radius;
    case ShapeType::Capsule:
      return r + s.radius + s.half_height * std::abs(glm::dot(s.rotation[1], n));
    case ShapeType::Box:
      for (int k = 0; k < 3; ++k) r += s.half_extents[k] * std::abs(glm::dot(s.rotation[k], n));
      return r;
    case ShapeType::Hull: {
      float best = -3.4e38f;
      for (const Vec3& v : s.hull->vertices) best = std::max(best, glm::dot(s.rotation * v, n));
      return r + best;
    }
    default:
      return r;  // concave shapes are not part of the convex sweep
  }
}

/// Random hulls of 5-24 points within a 0.05-0.6 box, built once and shared by the sweep.
const ConvexHull* random_hull(Lcg& rng) {
  static std::vector<std::shared_ptr<const ConvexHull>> pool;
  if (pool.empty()) {
    while (pool.size() < 32) {
      const Vec3 h = rng.vec(0.05f, 0.6f);
      std::vector<Vec3> pts;
      const int n = 5 + int(rng.range(0.0f, 19.99f));
      for (int i = 0; i < n; ++i) pts.push_back(rng.vec(-1.0f, 1.0f) * h);
      if (auto built = build_hull(pts)) pool.push_back(*built);
    }
  }
  return pool[size_t(rng.range(0.0f, 31.99f))].get();
}

ShapeGeom random_shape(Lcg& rng, ShapeType type) {
  const float w = rng.range(-1, 1);
  const Mat3 rot = glm::mat3_cast(rng.quat(w, Vec3(0), 1));
  const Vec3 p = rng.vec(-0.8f, 0.8f);
  switch (type) {
    case ShapeType::Sphere:
      return sphere(p, rng.range(0.05f, 0.6f));
    case ShapeType::Capsule: {
      const float r = rng.range(0.05f, 0.4f);
      return capsule(p, rot, r, rng.range(0.0f, 0.6f));
    }
    case ShapeType::Box:
      return box(p, rot, rng.vec(0.05f, 0.6f));
    case ShapeType::Hull: {
      ShapeGeom s = box(p, rot, Vec3(0.0f));
      s.type = ShapeType::Hull;
      s.hull = random_hull(rng);
      return s;
    }
    default:
      return sphere(p, 0.1f);
  }
}

TEST(NarrowphaseSweep, RandomPairsKeepTheContract) {
  // Every manifold: finite, unit normal, at most four points, depth within [-margin, the
  // overlap of the two shapes' projections on the normal] (no depth can exceed that).
  const ShapeType types[] = {ShapeType::Sphere, ShapeType::Capsule, ShapeType::Box, ShapeType::Hull};
  Lcg rng;
  int contacts = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    for (ShapeType ta : types) {
      for (ShapeType tb : types) {
        const ShapeGeom a = random_shape(rng, ta);
        const ShapeGeom b = random_shape(rng, tb);
        Manifold m;
        collide(a, b, kMargin, m);
        expect_valid(m, kMargin);
        if (m.count == 0) continue;
        ++contacts;
        const float overlap = support(a, m.normal) + support(b, -m.normal);
        for (int i = 0; i < m.count; ++i) ASSERT_LE(m.points[i].depth, overlap + 1e-4f) << iter;
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  EXPECT_GT(contacts, 5000);  // the sweep exercises plenty of contacts
}

TEST(NarrowphaseSweep, ShapesFarApartNeverCollide) {
  Lcg rng;
  const ShapeType types[] = {ShapeType::Sphere, ShapeType::Capsule, ShapeType::Box};
  for (int iter = 0; iter < 500; ++iter) {
    for (ShapeType ta : types) {
      for (ShapeType tb : types) {
        ShapeGeom a = random_shape(rng, ta);
        ShapeGeom b = random_shape(rng, tb);
        b.position = a.position + Vec3(0, 3.0f, 0);  // bounding radii are at most ~1.05 each
        Manifold m;
        collide(a, b, kMargin, m);
        EXPECT_EQ(m.count, 0);
      }
    }
  }
}

}  // namespace
}  // namespace keel::sim
