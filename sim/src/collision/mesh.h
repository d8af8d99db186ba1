// Concave static geometry: triangle meshes and heightfields (internal to sim/src).
//
// Both are immutable once built and shared between the colliders, saved states and
// worlds that use the same data (std::shared_ptr<const ...>): a world restored from a
// state reuses the mesh of the world it replaces when the bytes are the same.
//
// A triangle is one-sided: its front is the side its counter-clockwise winding faces
// (normal = (b - a) x (c - a)). Each triangle edge is marked "active" when a round or
// box shape may be pushed off it sideways: an edge with no neighbour, or whose neighbour
// bends away (a convex crease sharper than kActiveEdgeCos). Flat and concave edges are
// internal: contacts made there take the face normal (see collide_mesh.cpp), which is
// what keeps a box sliding over a tiled floor from catching on the seams.
//
// Determinism: the BVH is built by a total order (centroid, then triangle index), the
// queries return triangle indices sorted ascending, so a contact never depends on the
// tree's shape.
#pragma once

#include <keel/sim/defs.h>
#include <keel/base/expected.h>
#include <keel/sim/limits.h>
#include <keel/sim/math.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace keel::sim {

// Size limits (kMaxMeshVertices, kMaxMeshTriangles, kMaxHeightfieldSamples) are in defs.h.
/// Vertex coordinates, heights and grid extents beyond this (m) are rejected: the world's
/// extent (keel/sim/limits.h), where float spacing is already 8 mm.
inline constexpr float kMaxGeometryCoordinate = kMaxWorldExtent;
/// Triangles whose doubled area is below this (m^2) are degenerate and rejected.
inline constexpr float kMinTriangleArea2 = 1.0e-12f;
/// cos of the crease angle above which an edge is treated as flat (about 2.5 degrees).
inline constexpr float kActiveEdgeCos = 0.999f;

/// One triangle ready for collision: corners, unit front normal, active-edge bits
/// (bit k: edge from v[k] to v[(k + 1) % 3]).
struct Triangle {
  Vec3 v[3];
  Vec3 normal{0.0f, 1.0f, 0.0f};
  uint8_t active_edges = 7;
  uint8_t flat_edges = 0;  ///< bit k: edge k joins a coplanar neighbour (a seam, not a crease)
  uint32_t index = 0;  ///< stable triangle index within its mesh or heightfield
};

struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<uint32_t> indices;  ///< 3 per triangle
  std::vector<Vec3> normals;      ///< per triangle, unit
  std::vector<uint8_t> active;    ///< per triangle, active-edge bits
  std::vector<uint8_t> flat;      ///< per triangle, flat-seam bits
  struct Node {
    AABB box;
    uint32_t first = 0;  ///< leaf: first entry in `order`; inner: left child (right = left + 1)
    uint32_t count = 0;  ///< leaf: triangle count; inner: 0
  };
  std::vector<Node> nodes;     ///< nodes[0] is the root
  std::vector<uint32_t> order;  ///< triangle indices, leaves' ranges
  AABB bounds;
  uint64_t digest = 0;  ///< XXH3 of the canonical vertex and index bytes (for the state hash)

  uint32_t triangle_count() const { return uint32_t(indices.size() / 3); }
  Triangle triangle(uint32_t t) const;
  /// Triangles whose bounds overlap `box`, ascending.
  void query(const AABB& box, std::vector<uint32_t>& out) const;
};

struct HeightField {
  uint32_t rows = 0;
  uint32_t columns = 0;
  float cell_size = 1.0f;
  std::vector<float> heights;
  float min_height = 0.0f;
  float max_height = 0.0f;
  uint64_t digest = 0;

  AABB bounds() const;
  float height(uint32_t r, uint32_t c) const { return heights[size_t(r) * columns + c]; }
  Vec3 vertex(uint32_t r, uint32_t c) const { return Vec3(float(c) * cell_size, height(r, c), float(r) * cell_size); }
  uint32_t triangle_count() const { return 2u * (rows - 1) * (columns - 1); }
  /// Triangle 2 * (r * (columns - 1) + c) + k of cell (r, c); the cell is split along its
  /// (r, c)-(r + 1, c + 1) diagonal.
  Triangle triangle(uint32_t t) const;
  /// Triangles of the cells under `box` (x/z), ascending, skipping cells entirely above or below it.
  void query(const AABB& box, std::vector<uint32_t>& out) const;
};

/// Checks mesh data: a multiple of three indices, all in range, finite bounded vertices,
/// no degenerate triangle, within the size limits. The message names the field
/// ("indices[7]", "points[3].y") and what is wrong.
Status check_mesh_data(const std::vector<Vec3>& points, const std::vector<uint32_t>& indices);
/// Checks heightfield data: rows and columns >= 2, heights.size() == rows * columns, a
/// positive finite cell size, finite bounded heights, within the size limits.
Status check_heightfield_data(uint32_t rows, uint32_t columns, float cell_size, const std::vector<float>& heights);

/// Builds a mesh (normals, adjacency, BVH) from data check_mesh_data accepted.
std::shared_ptr<const TriangleMesh> build_mesh(const std::vector<Vec3>& points, const std::vector<uint32_t>& indices);
/// Builds a heightfield from data check_heightfield_data accepted.
std::shared_ptr<const HeightField> build_heightfield(uint32_t rows, uint32_t columns, float cell_size,
                                                     const std::vector<float>& heights);

/// Whether the edge of `tri` from `a` to `b` is active given the neighbour's far corner
/// (`has_neighbour` false: a boundary edge, always active).
bool edge_is_active(const Vec3& normal, const Vec3& a, const Vec3& b, bool has_neighbour, const Vec3& far_corner,
                    const Vec3& neighbour_normal);

/// First hit of segment origin + t * delta, t in [0, max_t], with a triangle's front face.
/// Returns t (or a negative value when it misses).
float ray_triangle(const Triangle& tri, const Vec3& origin, const Vec3& delta, float max_t);

}  // namespace keel::sim
