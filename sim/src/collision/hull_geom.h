// Convex polyhedra placed in world space, as the hull contact routines read them
// (internal to sim/src).
//
// A WorldHull is the world-space copy of a hull's vertices and face planes, with the
// (transform-independent) topology borrowed from its source. Boxes and triangles are
// placed through the same struct, so one routine (collide_world_hulls) serves hull-hull,
// box-hull and triangle-hull pairs.
#pragma once

#include <keel/sim/hull.h>
#include <keel/sim/math.h>

#include "narrowphase.h"

namespace keel::sim {

/// One edge's arc on the Gauss map: its two faces' normals and their cross product b x a.
/// `flat` marks a flat hull's rim edge (faces back to back: no arc).
struct HullArc {
  Vec3 a;
  Vec3 b;
  Vec3 bxa;
  bool flat;
};

/// The arcs of the negated hull (what the B side of a Minkowski difference shows) as
/// coordinate arrays, so the Minkowski-face test runs over all edges as one vectorisable
/// loop. cx/cy/cz = b x a, which negation leaves unchanged.
struct ArcColumns {
  float ax[kMaxHullEdges], ay[kMaxHullEdges], az[kMaxHullEdges];
  float bx[kMaxHullEdges], by[kMaxHullEdges], bz[kMaxHullEdges];
  float cx[kMaxHullEdges], cy[kMaxHullEdges], cz[kMaxHullEdges];
};

struct WorldHull {
  HullTopology topo;
  Vec3 centre{0.0f};  ///< a point inside (the vertex mean; on the plane of a triangle)
  float inner = 0.0f;  ///< smallest distance from `centre` to a face plane (0 for a triangle)
  Vec3 v[kMaxHullVertices];
  Vec3 n[kMaxHullFaces];  ///< outward unit face normals
  float d[kMaxHullFaces];  ///< face plane offsets: dot(n, x) <= d inside
  HullArc arcs[kMaxHullEdges];  ///< world-space edge arcs
  ArcColumns negated;           ///< the same arcs negated, by coordinate
};

/// Places a built hull at a pose.
void place_hull(const ConvexHull& hull, const Vec3& position, const Mat3& rotation, WorldHull& out);
/// The hull of `g` placed at its pose: g.placed_hull when set, else placed into `scratch`.
const WorldHull& placed(const ShapeGeom& g, WorldHull& scratch);
/// Places a box (centre, axes, half extents) as an 8-vertex, 6-face hull.
void place_box(const Vec3& position, const Mat3& rotation, const Vec3& half_extents, WorldHull& out);
/// Places a triangle (a, b, c counter-clockwise around its front normal) as a flat hull:
/// 3 vertices, 2 back-to-back faces (front first), 3 edges.
void place_triangle(const Vec3& a, const Vec3& b, const Vec3& c, WorldHull& out);

/// Contact manifold between two placed convex polyhedra (hull, box or triangle), under the
/// narrowphase contract (normal from A to B). Face contacts clip B's or A's incident face
/// against the reference face's side planes (up to 4 points); edge contacts give 1 point.
/// Feature ids: face contacts bits 0-13 clip key, 14-20 incident face, 21-27 reference
/// face, bit 28 set when the reference face is B's; edge contacts bit 29 set, bits 0-7 A's
/// edge, 8-15 B's edge.
void collide_world_hulls(const WorldHull& a, const WorldHull& b, float margin, Manifold& out);

}  // namespace keel::sim
