// A mesh or heightfield (A) against a convex shape (B).
//
// The convex shape is moved into the concave shape's frame, its bounds (grown by the
// margin) pick the triangles (the mesh's BVH, or the heightfield's cells), and each
// triangle collides through collide_triangle.cpp followed by the internal-edge step.
// The triangles' manifolds then become the pair's one manifold (the contact cache holds
// one normal and four points per collider pair): the normal of the deepest point, every
// point whose own normal agrees with it within kMergeCos (depth re-measured along it),
// reduced to four. Candidates are visited in ascending triangle index and ties go to the
// first, so the result never depends on a tree's shape or a thread. Feature ids are
// (triangle index << 8) | local id, stable while the same triangle features touch, or
// 0x80000000 | local id for a feature of the convex shape alone (a box corner resting on
// the surface), which stays the same as the shape slides from triangle to triangle.
#include "collision/collide_triangle.h"
#include "collision/concave_scratch.h"
#include "collision/hull_geom.h"
#include "collision/geometry.h"
#include "collision/mesh.h"

#include <vector>

namespace keel::sim {

namespace {

/// Points from triangles whose normal is within ~60 degrees of the chosen normal are
/// kept (their depth scaled onto it); steeper ones wait for a later tick's normal.
constexpr float kMergeCos = 0.5f;

ShapeGeom to_frame(const ShapeGeom& frame, const ShapeGeom& g) {
  ShapeGeom l = g;
  l.placed_hull = nullptr;  // placed in world space; collide_concave places it in this frame
  l.position = np::dir_to_local(frame.rotation, g.position - frame.position);
  for (int i = 0; i < 3; ++i) l.rotation[i] = np::dir_to_local(frame.rotation, g.rotation[i]);
  return l;
}

AABB local_bounds(const ShapeGeom& g, float margin) {
  Vec3 ext(0.0f);
  switch (g.type) {
    case ShapeType::Sphere: ext = Vec3(g.radius); break;
    case ShapeType::Capsule: ext = glm::abs(g.rotation[1] * g.half_height) + Vec3(g.radius); break;
    case ShapeType::Box:
      for (int i = 0; i < 3; ++i) ext += glm::abs(g.rotation[i]) * g.half_extents[i];
      break;
    case ShapeType::Hull:
      if (g.hull) {  // the rotated box around the hull's local bounds
        const Vec3 mid = (g.hull->bounds_lower + g.hull->bounds_upper) * 0.5f;
        const Vec3 half = (g.hull->bounds_upper - g.hull->bounds_lower) * 0.5f;
        for (int i = 0; i < 3; ++i) ext += glm::abs(g.rotation[i]) * half[i];
        const Vec3 c = g.position + np::dir_to_world(g.rotation, mid);
        ext += Vec3(margin);
        return AABB{c - ext, c + ext};
      }
      break;
    default: break;
  }
  ext += Vec3(margin);
  return AABB{g.position - ext, g.position + ext};
}

// A hull against one triangle, through the polyhedron routine with the triangle as a flat
// hull (A) and the shape's hull as B; one-sided like the other triangle routines: nothing
// when the hull's centre is behind the face or the contact would push it through the back.
// A point that is a vertex of the hull's incident face, clipped against the triangle face
// (the reference), is a feature of the hull alone: it gets kOwnedByShape and the hull
// vertex's index, so gather() keeps its id as the hull slides onto the next triangle and
// its warm start carries over, as a box corner's does. The routine's other ids (up to 30
// bits, naming triangle features too) are folded into the 7 bits a triangle's local id
// keeps, and gather() tags them with the triangle index.
void triangle_hull(const Triangle& t, const ShapeGeom& g, float margin, Manifold& m, ConcaveScratch& scratch) {
  np::reset(m);
  if (!g.hull) return;
  const Vec3 centre = g.position + np::dir_to_world(g.rotation, g.hull->centroid);
  if (glm::dot(centre - t.v[0], t.normal) < 0.0f) return;
  place_triangle(t.v[0], t.v[1], t.v[2], scratch.tri_hull);
  collide_world_hulls(scratch.tri_hull, placed(g, scratch.shape_hull), margin, m);
  if (m.count > 0 && glm::dot(m.normal, t.normal) < 0.0f) {
    np::reset(m);
    return;
  }
  constexpr uint32_t kEdgeContact = 1u << 29, kRefIsB = 1u << 28, kLoopKeys = 64u;
  const ConvexHull& hull = *g.hull;
  for (int i = 0; i < m.count; ++i) {
    const uint32_t raw = m.points[i].id;
    const uint32_t key = raw & 0x3fffu;
    if (!(raw & (kEdgeContact | kRefIsB)) && key < kLoopKeys) {
      const uint32_t face = (raw >> 14) & 0x7fu;
      m.points[i].id = tri::kOwnedByShape | hull.loops[hull.faces[face].first + key];
      continue;
    }
    uint32_t id = ((raw * 2654435761u) >> 25) & 0x7fu;
    // Distinct features keep distinct ids: a clash with an earlier folded point moves on
    // (the same features give the same ids on every tick, so warm starting still finds
    // them). Owned ids have bit 7 set and never clash with these.
    for (int k = 0; k < i; ++k) {
      if (m.points[k].id == id) {
        id = (id + 1) & 0x7fu;
        k = -1;
      }
    }
    m.points[i].id = id;
  }
}

void collide_one(const Triangle& t, const ShapeGeom& g, float margin, Manifold& m, ConcaveScratch& scratch) {
  switch (g.type) {
    case ShapeType::Sphere: tri::triangle_sphere(t, g.position, g.radius, margin, m); break;
    case ShapeType::Capsule: {
      Vec3 p0, p1;
      np::capsule_segment(g, p0, p1);
      tri::triangle_capsule(t, p0, p1, g.radius, margin, m);
      break;
    }
    case ShapeType::Box: tri::triangle_box(t, g.position, g.rotation, g.half_extents, margin, m); break;
    case ShapeType::Hull: triangle_hull(t, g, margin, m, scratch); break;
    default: np::reset(m); break;
  }
  // The internal-edge step asks where the shape's centre is; a hull's is its centroid.
  const Vec3 centre = g.type == ShapeType::Hull && g.hull ? g.position + np::dir_to_world(g.rotation, g.hull->centroid)
                                                          : g.position;
  tri::correct_internal_edges(t, centre, margin, m);
}

// Gathers every triangle's corrected manifold, in ascending triangle order.
template <class Source>
void gather(const Source& src, const ShapeGeom& local, float margin, ConcaveScratch& scratch) {
  std::vector<ConcaveCandidate>& out = scratch.cands;
  src.query(local_bounds(local, margin), scratch.tris);
  out.clear();
  for (uint32_t index : scratch.tris) {
    Manifold m;
    collide_one(src.triangle(index), local, margin, m, scratch);
    for (int i = 0; i < m.count; ++i) {
      ManifoldPoint p = m.points[i];
      // A feature of the convex shape alone keeps its id from triangle to triangle.
      p.id = (p.id & tri::kOwnedByShape) ? (0x80000000u | p.id) : ((index << 8) | (p.id & 0x7fu));
      out.push_back(ConcaveCandidate{p, m.normal});
    }
  }
}

void merge_candidates(const std::vector<ConcaveCandidate>& cands, std::vector<ManifoldPoint>& pts, Manifold& out) {
  np::reset(out);
  if (cands.empty()) return;
  size_t deepest = 0;
  for (size_t i = 1; i < cands.size(); ++i) {
    if (cands[i].p.depth > cands[deepest].p.depth) deepest = i;
  }
  const Vec3 n = cands[deepest].normal;
  pts.clear();
  for (const ConcaveCandidate& c : cands) {
    const float w = glm::dot(c.normal, n);
    if (w < kMergeCos) continue;
    // A feature of the shape alone (same id) or the same spot reported by two triangles
    // sharing an edge is kept once: the first (lower triangle) wins.
    bool dup = false;
    for (const ManifoldPoint& q : pts) {
      dup |= q.id == c.p.id || np::length_sq(q.point - c.p.point) < np::kMinPairSpan * np::kMinPairSpan;
    }
    if (dup) continue;
    pts.push_back(ManifoldPoint{c.p.point, c.p.depth * w, c.p.id});
  }
  int pick[kMaxManifoldPoints];
  const int k = tri::reduce_points(pts.data(), int(pts.size()), n, pick);
  out.normal = n;
  for (int i = 0; i < k; ++i) np::add_point(out, pts[pick[i]].point, pts[pick[i]].depth, pts[pick[i]].id);
}

}  // namespace

void collide_concave(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out, ConcaveScratch& scratch) {
  np::reset(out);
  ShapeGeom local = to_frame(a, b);
  // A hull is placed in the mesh's frame once for all the triangles it meets.
  if (local.type == ShapeType::Hull && local.hull) {
    place_hull(*local.hull, local.position, local.rotation, scratch.local_hull);
    local.placed_hull = &scratch.local_hull;
  }
  if (a.type == ShapeType::Mesh && a.mesh) {
    gather(*a.mesh, local, margin, scratch);
  } else if (a.type == ShapeType::Heightfield && a.heightfield) {
    gather(*a.heightfield, local, margin, scratch);
  } else {
    return;
  }
  Manifold m;
  merge_candidates(scratch.cands, scratch.pts, m);
  out.normal = np::dir_to_world(a.rotation, m.normal);
  for (int i = 0; i < m.count; ++i) {
    np::add_point(out, np::to_world(a, m.points[i].point), m.points[i].depth, m.points[i].id);
  }
}

}  // namespace keel::sim
