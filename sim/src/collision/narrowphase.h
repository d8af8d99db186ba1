// Narrowphase: contact manifolds between two convex shapes placed in world space.
//
// Every routine honours one contract, so the solver, events and sleeping are shape-blind:
//   - the normal points from shape A to shape B (unit length);
//   - `depth` is the penetration along the normal: positive when the shapes overlap,
//     negative (down to -margin) for a speculative point that is close but not touching;
//   - at most kMaxManifoldPoints points; each point lies midway between the two surfaces;
//   - points carry a feature id that is stable while the same features touch, so the
//     contact cache can carry impulses across ticks.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/hull.h>
#include <keel/sim/math.h>

#include <cstdint>
#include <type_traits>

namespace keel::sim {

inline constexpr int kMaxManifoldPoints = 4;

struct TriangleMesh;
struct HeightField;
struct WorldHull;  // hull_geom.h

/// A convex shape in world space. `rotation` columns are the shape's local axes.
struct ShapeGeom {
  ShapeType type = ShapeType::Sphere;
  Vec3 position{0.0f};  ///< centre of the shape
  Mat3 rotation{1.0f};
  float radius = 0.0f;       ///< sphere, capsule
  float half_height = 0.0f;  ///< capsule: segment along local +Y
  Vec3 half_extents{0.0f};   ///< box
  const ConvexHull* hull = nullptr;  ///< hull (owned by the collider; local to position/rotation)
  const TriangleMesh* mesh = nullptr;       ///< mesh (owned by its collider)
  const HeightField* heightfield = nullptr;  ///< heightfield (owned by its collider)
  /// Optional: the hull already placed at this pose (place_hull), shared by every pair
  /// the collider is in this tick. Null: each routine places the hull itself.
  const WorldHull* placed_hull = nullptr;
};

/// Written whole by whoever adds it (add_point); a manifold's points past its count are
/// never read, so they are left uninitialised: the contact pass makes a manifold for every
/// pair whose bounds overlap, and zeroing four points each time cost more than the pass.
struct ManifoldPoint {
  Vec3 point;  ///< world space, midway between the surfaces
  float depth;
  uint32_t id;  ///< feature id
};
static_assert(std::is_trivially_default_constructible_v<ManifoldPoint>);

struct Manifold {
  Vec3 normal{0.0f, 1.0f, 0.0f};  ///< from A to B
  int count = 0;
  ManifoldPoint points[kMaxManifoldPoints];
};

/// Computes the manifold between any two shapes; out.count == 0 when they are farther
/// apart than `margin`. Dispatches on the shape types and flips normals as needed. A
/// concave pair allocates its working buffers here: the step passes its own instead
/// (the overload in concave_scratch.h).
void collide(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);

// Individual routines (A and B as named). Exposed for tests.
void collide_sphere_sphere(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_sphere_capsule(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_sphere_box(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_capsule_capsule(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_capsule_box(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_box_box(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_sphere_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_capsule_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_box_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
void collide_hull_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);
/// A mesh or heightfield (A) against a sphere, capsule or box (B); see collide_mesh.cpp.
/// Allocates its working buffers, as collide() does.
void collide_concave(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out);

/// Whether a shape kind is concave (mesh, heightfield): static-only, never paired with another.
inline bool is_concave(ShapeType t) { return t == ShapeType::Mesh || t == ShapeType::Heightfield; }

}  // namespace keel::sim
