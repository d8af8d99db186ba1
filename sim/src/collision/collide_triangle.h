// Triangle-against-convex routines and the steps that turn many triangles' manifolds into
// one (internal to sim/src). Everything here works in the triangle's (mesh's) frame.
#pragma once

#include "collision/mesh.h"
#include "collision/narrowphase.h"

namespace keel::sim::tri {

/// A manifold normal this close to the face normal is a face contact (cos of ~0.8 deg).
inline constexpr float kFaceNormalCos = 0.9999f;
/// Local feature id flag: the feature belongs to the convex shape alone (see collide_triangle.cpp).
inline constexpr uint32_t kOwnedByShape = 0x80u;
/// A contact point within this distance (m) of an edge touches that edge.
inline constexpr float kOnEdgeTolerance = 1.0e-3f;

/// Closest point of a triangle to `p` and its region: 0 face, 1 + k edge k (v[k] -> v[k+1]),
/// 4 + k corner k.
struct Closest {
  Vec3 point;
  int region;
};
Closest closest_on_triangle(const Triangle& t, const Vec3& p);

void triangle_sphere(const Triangle& t, const Vec3& c, float r, float margin, Manifold& out);
void triangle_capsule(const Triangle& t, const Vec3& p0, const Vec3& p1, float r, float margin, Manifold& out);
/// Box centre `c`, axes `u` (columns), half extents `e`.
void triangle_box(const Triangle& t, const Vec3& c, const Mat3& u, const Vec3& e, float margin, Manifold& out);

/// Internal-edge correction, a step of its own after any triangle routine (it needs only
/// the manifold and a point inside the other shape, `center`): a manifold whose normal
/// leans off the face normal and whose points touch only internal (flat or concave) edges
/// is dropped when `center` lies beyond the triangle (over the neighbour, whose face
/// reports the contact along its own normal), and otherwise turned onto the face normal,
/// each depth re-measured along it from the other shape's surface point (points then
/// beyond `margin` dropped). Manifolds at active edges and face contacts are kept.
void correct_internal_edges(const Triangle& t, const Vec3& center, float margin, Manifold& m);

/// Picks at most four of `n` points (indices into `pts`, written to `pick`) spanning the
/// widest area about `normal`: deepest first; ties go to the earlier point.
int reduce_points(const ManifoldPoint* pts, int n, const Vec3& normal, int* pick);

}  // namespace keel::sim::tri
