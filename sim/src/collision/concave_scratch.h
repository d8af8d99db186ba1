// What the mesh and heightfield routine (collide_mesh.cpp) works in: the triangles a
// convex shape's bounds pick, each triangle's contact points, and the hulls placed for
// it. One per thread that collides (memory/step_scratch.h keeps one per executor slot),
// reused from pair to pair, so a concave pair allocates nothing once they have grown.
#pragma once

#include "collision/hull_geom.h"
#include "collision/narrowphase.h"

#include <cstdint>
#include <vector>

namespace keel::sim {

/// One triangle's contact point with the normal of its triangle's manifold.
struct ConcaveCandidate {
  ManifoldPoint p;
  Vec3 normal;
};

struct ConcaveScratch {
  WorldHull tri_hull;    // the triangle a hull meets, as a flat hull
  WorldHull shape_hull;  // the hull itself, when no placed one was handed in
  WorldHull local_hull;  // a hull placed in the concave shape's frame
  std::vector<uint32_t> tris;
  std::vector<ConcaveCandidate> cands;
  std::vector<ManifoldPoint> pts;
};

/// collide() with the caller's scratch for a concave pair (the stepping path: no pair
/// allocates). Any other pair needs none.
void collide(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out, ConcaveScratch& scratch);

/// collide_concave() with the caller's scratch.
void collide_concave(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out, ConcaveScratch& scratch);

}  // namespace keel::sim
