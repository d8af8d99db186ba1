// Convex hulls: built once from a point cloud, then immutable and shared.
//
// A hull collider is described by its input points (ColliderDef::points). build_hull turns
// them into vertices, polygon faces (coplanar triangles merged), unique edges and exact
// mass properties. The result is held by std::shared_ptr<const ConvexHull>, so copying a
// world or a collider never copies geometry.
//
// Determinism: the build uses + - * / and sqrt in double precision, in an order fixed by
// the input alone, so the same points give the same hull bytes on every machine.
#pragma once

#include <keel/base/expected.h>
#include <keel/sim/math.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace keel::sim {

/// Most vertices a hull keeps. A larger hull is simplified to this many of its vertices
/// (farthest-point sampling), which keeps every contact test bounded.
inline constexpr int kMaxHullVertices = 64;
/// Bounds implied by kMaxHullVertices (Euler: F <= 2V - 4, E <= 3V - 6).
inline constexpr int kMaxHullFaces = 2 * kMaxHullVertices - 4;
inline constexpr int kMaxHullEdges = 3 * kMaxHullVertices - 6;
/// Most input points accepted (the build is O(points x faces)).
inline constexpr size_t kMaxHullInputPoints = 4096;
/// Largest accepted |coordinate| of an input point, metres.
inline constexpr float kMaxHullCoordinate = 1.0e5f;

/// A polygon face: outward unit normal, plane offset (dot(normal, x) <= offset inside),
/// and `count` vertex indices from `first` in ConvexHull::loops, counter-clockwise seen
/// from outside.
struct HullFace {
  Vec3 normal{0.0f, 1.0f, 0.0f};
  float offset = 0.0f;
  uint16_t first = 0;
  uint16_t count = 0;
};

/// An edge between vertices v0 < v1; face f0 runs v0 -> v1 in its loop, f1 runs v1 -> v0.
struct HullEdge {
  uint8_t v0 = 0;
  uint8_t v1 = 0;
  uint8_t f0 = 0;
  uint8_t f1 = 0;
};

/// Vertex / face / edge topology of a convex polyhedron (or of a flat polygon with two
/// back-to-back faces). Shared by built hulls and by the fixed box and triangle layouts.
struct HullTopology {
  int vertex_count = 0;
  int face_count = 0;
  int edge_count = 0;
  const HullFace* faces = nullptr;  ///< normals/offsets are in the hull's local frame
  const uint8_t* loops = nullptr;
  const HullEdge* edges = nullptr;
};

struct ConvexHull {
  std::vector<Vec3> points;    ///< the input cloud, as given (what a saved state stores)
  std::vector<Vec3> vertices;  ///< a subset of `points`, at most kMaxHullVertices
  std::vector<HullFace> faces;
  std::vector<uint8_t> loops;
  std::vector<HullEdge> edges;
  float volume = 0.0f;
  Vec3 centroid{0.0f};  ///< collider frame
  Mat3 inertia{0.0f};   ///< unit density, about `centroid`, collider frame
  Vec3 bounds_lower{0.0f};
  Vec3 bounds_upper{0.0f};

  HullTopology topology() const {
    return HullTopology{int(vertices.size()), int(faces.size()), int(edges.size()),
                        faces.data(),         loops.data(),      edges.data()};
  }
};

/// Builds the hull of `points`. Fails (with a message naming the problem, e.g. "points
/// are coplanar") for fewer than 4 points, more than kMaxHullInputPoints, a non-finite
/// or too large coordinate, or a cloud without volume (all points within 1e-4 of its size
/// of one plane).
Expected<std::shared_ptr<const ConvexHull>> build_hull(const std::vector<Vec3>& points);

}  // namespace keel::sim
