// Distance, overlap and linear casts between convex shapes, for queries and the character
// controller (internal to sim/src).
//
// Every shape is a convex "core" swept by a radius: a sphere is a point, a capsule a
// segment, a box itself with radius 0. The cores meet only through their support
// functions, so GJK (distance between cores) and conservative advancement (casts) work
// for any pair; a hull is its vertex set (support = the farthest vertex). Concave kinds
// (meshes, heightfields) are tested triangle by triangle, each triangle a flat core.
//
// Determinism: + - * / and sqrt only, in a fixed order; ties go to the first candidate.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/math.h>

#include "collision/narrowphase.h"

namespace keel::sim::query {

struct Core {
  ShapeType type = ShapeType::Sphere;
  Vec3 p0{0.0f};  ///< point; segment start; box centre
  Vec3 p1{0.0f};  ///< segment end (= p0 for a point); triangle: second corner
  Vec3 p2{0.0f};  ///< triangle (type Mesh): third corner
  Mat3 axes{1.0f};           ///< box / hull axes (columns)
  Vec3 half_extents{0.0f};   ///< box
  float radius = 0.0f;
  const ConvexHull* hull = nullptr;  ///< hull vertices, local to `origin` and `axes`
  Vec3 origin{0.0f};                 ///< hull frame origin (p0 is the hull's centroid)
};

/// The core of a shape placed in world space.
Core core_of(const ShapeGeom& g);
/// One triangle of a mesh or heightfield, in world space, as a flat convex core.
Core triangle_core(const Vec3& a, const Vec3& b, const Vec3& c);
/// A point with a radius (a ray is a point of radius 0).
Core point_core(const Vec3& p, float radius);
/// The core moved by `d`.
Core translated(const Core& c, const Vec3& d);
/// The farthest point of the core (radius excluded) along `d`; ties go to the lower corner.
Vec3 support(const Core& c, const Vec3& d);
/// A point inside the core.
Vec3 core_center(const Core& c);

struct Distance {
  float distance = 0.0f;  ///< between the cores (radii excluded); 0 when they overlap
  Vec3 on_a{0.0f};        ///< closest point on core a
  Vec3 on_b{0.0f};        ///< closest point on core b
  bool overlap = false;   ///< the cores themselves intersect (no direction available)
};

/// GJK distance between two cores.
Distance core_distance(const Core& a, const Core& b);

/// Whether two rounded shapes overlap or touch.
bool shapes_overlap(const Core& a, const Core& b);

struct CastHit {
  float fraction = 0.0f;  ///< of `delta`, in [0, 1]
  Vec3 point{0.0f};       ///< on b's surface
  Vec3 normal{0, 1, 0};   ///< b's outward normal at the point (towards a)
  bool initial_overlap = false;
};

/// Moves `a` by `delta` (no rotation) and finds where it first touches `b`. A shape that
/// starts overlapping hits at fraction 0, unless it moves out of (or along) the overlap:
/// a capsule resting a millimetre into a wall, cast down, finds the floor, not the wall.
bool cast(const Core& a, const Vec3& delta, const Core& b, CastHit& out);

}  // namespace keel::sim::query
