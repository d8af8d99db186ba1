// Convex polyhedron against convex polyhedron (hull-hull, box-hull, triangle-hull):
// separating-axis test over face normals and Minkowski-face edge pairs, then either a
// clipped face manifold (up to 4 points) or a single edge-edge point.
//
// Edge pairs: only pairs whose Gauss-map arcs cross can give the separating axis (they
// form a face of the Minkowski difference), which removes almost all of the E_A x E_B
// pairs with a few dot products each. A flat hull's edge (a triangle's: its two faces are
// back to back) has no arc to test, so its pairs are measured by projecting both hulls.
// Feature ids are documented in hull_geom.h. Face and axis choices prefer A's face, then
// B's, then an edge, each by the same relative/absolute margins as box-box
// (np::kSat*), so a resting hull keeps one feature set and its warm start.
#include <keel/sim/hull.h>

#include "clip.h"
#include "geometry.h"
#include "hull_geom.h"

namespace keel::sim {
namespace {

using np::add_point;

/// The face normals of an edge this anti-parallel mark a flat hull's rim edge.
constexpr float kFlatEdgeCos = -0.9999f;

const ConvexHull& unit_cube() {
  static const std::shared_ptr<const ConvexHull> cube = [] {
    std::vector<Vec3> p;
    for (int i = 0; i < 8; ++i) p.emplace_back(i & 1 ? 1.0f : -1.0f, i & 2 ? 1.0f : -1.0f, i & 4 ? 1.0f : -1.0f);
    return *build_hull(p);
  }();
  return *cube;
}

/// Edge arcs from the face normals, and their negated coordinate columns.
void finish_arcs(WorldHull& out) {
  for (int i = 0; i < out.topo.edge_count; ++i) {
    const HullEdge& e = out.topo.edges[i];
    const Vec3 a = out.n[e.f0];
    const Vec3 b = out.n[e.f1];
    const Vec3 bxa = glm::cross(b, a);
    out.arcs[i] = HullArc{a, b, bxa, glm::dot(a, b) < kFlatEdgeCos};
    out.negated.ax[i] = -a.x;
    out.negated.ay[i] = -a.y;
    out.negated.az[i] = -a.z;
    out.negated.bx[i] = -b.x;
    out.negated.by[i] = -b.y;
    out.negated.bz[i] = -b.z;
    out.negated.cx[i] = bxa.x;
    out.negated.cy[i] = bxa.y;
    out.negated.cz[i] = bxa.z;
  }
}

/// Face planes through each face's first loop vertex; centre and inner radius; arcs.
void finish_planes(WorldHull& out) {
  Vec3 c(0.0f);
  for (int i = 0; i < out.topo.vertex_count; ++i) c += out.v[i];
  out.centre = c * (1.0f / float(out.topo.vertex_count));
  out.inner = 3.4e38f;
  for (int f = 0; f < out.topo.face_count; ++f) {
    out.d[f] = glm::dot(out.n[f], out.v[out.topo.loops[out.topo.faces[f].first]]);
    out.inner = std::min(out.inner, out.d[f] - glm::dot(out.n[f], out.centre));
  }
  out.inner = std::max(out.inner, 0.0f);
  finish_arcs(out);
}

// ----------------------------------------------------------------------------- SAT

struct FaceQuery {
  float sep = -3.4e38f;
  int face = -1;
};

/// Best face of `a`: largest separation of `b` from the face plane (lowest index on ties).
FaceQuery query_faces(const WorldHull& a, const WorldHull& b) {
  FaceQuery best;
  for (int f = 0; f < a.topo.face_count; ++f) {
    float lo = glm::dot(a.n[f], b.v[0]);
    for (int j = 1; j < b.topo.vertex_count; ++j) lo = std::min(lo, glm::dot(a.n[f], b.v[j]));
    const float sep = lo - a.d[f];
    if (best.face < 0 || sep > best.sep) best = FaceQuery{sep, f};
  }
  return best;
}

struct EdgeQuery {
  float sep = -3.4e38f;
  int ea = -1;
  int eb = -1;
  Vec3 normal{0.0f};  ///< from A to B
};

/// Separation along unit axis `l` by projecting every vertex; flips `l` to point A to B.
float projected_separation(const WorldHull& a, const WorldHull& b, Vec3& l) {
  float amin = glm::dot(l, a.v[0]), amax = amin;
  for (int i = 1; i < a.topo.vertex_count; ++i) {
    const float p = glm::dot(l, a.v[i]);
    amin = std::min(amin, p);
    amax = std::max(amax, p);
  }
  float bmin = glm::dot(l, b.v[0]), bmax = bmin;
  for (int i = 1; i < b.topo.vertex_count; ++i) {
    const float p = glm::dot(l, b.v[i]);
    bmin = std::min(bmin, p);
    bmax = std::max(bmax, p);
  }
  if (bmin - amax >= amin - bmax) return bmin - amax;
  l = -l;
  return amin - bmax;
}

/// Separation along the edge-pair axis; false when the edges are (nearly) parallel.
bool edge_separation(const WorldHull& a, const HullEdge& ea, const WorldHull& b, const HullEdge& eb, bool flat,
                     float& sep, Vec3& normal) {
  const Vec3 pa = a.v[ea.v0];
  const Vec3 pb = b.v[eb.v0];
  const Vec3 da = a.v[ea.v1] - pa;
  const Vec3 db = b.v[eb.v1] - pb;
  const Vec3 l = glm::cross(da, db);
  const float l2 = np::length_sq(l);
  if (l2 <= np::kEdgeSkipSinSq * np::length_sq(da) * np::length_sq(db)) return false;
  normal = l / std::sqrt(l2);
  if (flat) {
    sep = projected_separation(a, b, normal);
    return true;
  }
  if (glm::dot(normal, pa - a.centre) < 0.0f) normal = -normal;
  sep = glm::dot(normal, pb - pa);
  return true;
}

/// Marks the B edges whose arcs cross A's arc x = (a, b): with B's arc (c, d), c and d lie
/// on opposite sides of the plane of (a, b), a and b on opposite sides of the plane of
/// (c, d), and the arcs are in the same hemisphere.
void crossing_arcs(const ArcColumns& c, int n, const HullArc& x, uint8_t* out) {
  const Vec3 p = x.bxa;
  for (int j = 0; j < n; ++j) {
    const float cba = c.ax[j] * p.x + c.ay[j] * p.y + c.az[j] * p.z;
    const float dba = c.bx[j] * p.x + c.by[j] * p.y + c.bz[j] * p.z;
    const float adc = x.a.x * c.cx[j] + x.a.y * c.cy[j] + x.a.z * c.cz[j];
    const float bdc = x.b.x * c.cx[j] + x.b.y * c.cy[j] + x.b.z * c.cz[j];
    out[j] = (cba * dba < 0.0f) & (adc * bdc < 0.0f) & (cba * bdc > 0.0f);
  }
}

EdgeQuery query_edges(const WorldHull& a, const WorldHull& b) {
  EdgeQuery best;
  const HullArc* arcs_a = a.arcs;
  const HullArc* arcs_b = b.arcs;
  const ArcColumns& cols = b.negated;
  uint8_t pass[kMaxHullEdges];
  const int na = a.topo.edge_count;
  const int nb = b.topo.edge_count;
  for (int i = 0; i < na; ++i) {
    const HullEdge& ea = a.topo.edges[i];
    if (arcs_a[i].flat) {
      for (int j = 0; j < nb; ++j) pass[j] = 1;
    } else {
      crossing_arcs(cols, nb, arcs_a[i], pass);
    }
    for (int j = 0; j < nb; ++j) {
      const bool flat = arcs_a[i].flat || arcs_b[j].flat;
      if (!flat && pass[j] == 0) continue;
      float sep = 0.0f;
      Vec3 n(0.0f);
      if (!edge_separation(a, ea, b, b.topo.edges[j], flat, sep, n)) continue;
      if (best.ea < 0 || sep > best.sep) best = EdgeQuery{sep, i, j, n};
    }
  }
  return best;
}

// ----------------------------------------------------------------------------- clipping

/// Clipping state for a hull face: a face's loop (at most kMaxHullVertices) plus one
/// vertex per side plane, doubled for rounding. Keys (clip.h) use 64 lanes from base 128:
/// 0-63 the incident loop position, 128 + 64 * edge + plane a crossing.
using Polygon = np::ClipPolygon<2 * kMaxHullVertices + 8>;
using np::ClipVertex;
using Candidate = np::ClipCandidate;

/// The face of `inc` most anti-parallel to `n_ref` (lowest index on ties).
int incident_face(const WorldHull& inc, const Vec3& n_ref) {
  int best = 0;
  float best_d = glm::dot(inc.n[0], n_ref);
  for (int f = 1; f < inc.topo.face_count; ++f) {
    const float d = glm::dot(inc.n[f], n_ref);
    if (d < best_d) {
      best_d = d;
      best = f;
    }
  }
  return best;
}

/// Face contact: `ref` face `rf` is the reference; `inc`'s incident face is clipped to it.
void face_contact(const WorldHull& ref, int rf, const WorldHull& inc, bool ref_is_b, float margin, Manifold& out) {
  const Vec3 n_ref = ref.n[rf];
  const int inf = incident_face(inc, n_ref);
  const HullFace& fi = inc.topo.faces[inf];
  Polygon buf[2];
  for (int e = 0; e < fi.count; ++e)
    buf[0].push(inc.v[inc.topo.loops[fi.first + e]], uint16_t(e), uint16_t(e));
  const HullFace& fr = ref.topo.faces[rf];
  const float slop = std::min(1.0e-3f, 0.01f * std::max(ref.inner, 1.0e-3f));
  int cur = 0;
  for (int s = 0; s < fr.count; ++s) {
    const Vec3 p0 = ref.v[ref.topo.loops[fr.first + s]];
    const Vec3 p1 = ref.v[ref.topo.loops[fr.first + (s + 1) % fr.count]];
    const Vec3 side = np::normalize_or(glm::cross(p1 - p0, n_ref), Vec3(0.0f));
    if (side == Vec3(0.0f)) continue;  // a degenerate rim edge bounds nothing
    np::clip_polygon<64, 128>(buf[cur], side, glm::dot(side, p0), slop, s, buf[1 - cur]);
    cur = 1 - cur;
  }
  const uint32_t base = uint32_t(inf) << 14 | uint32_t(rf) << 21 | (ref_is_b ? 1u << 28 : 0u);
  Candidate cand[Polygon::kCapacity];
  int n = 0;
  for (int i = 0; i < buf[cur].n; ++i) {
    const ClipVertex& cv = buf[cur].v[i];
    const float sep = glm::dot(n_ref, cv.p) - ref.d[rf];
    if (sep <= margin) cand[n++] = Candidate{cv.p, -sep, base | cv.key};
  }
  out.normal = ref_is_b ? -n_ref : n_ref;
  int pick[4] = {0, 1, 2, 3};
  const int count = n > kMaxManifoldPoints ? np::reduce_to_four<Polygon::kCapacity>(cand, n, n_ref, pick) : n;
  for (int i = 0; i < count; ++i) {
    const Candidate& k = cand[pick[i]];
    add_point(out, k.p + n_ref * (0.5f * k.depth), k.depth, k.id);
  }
}

/// Edge contact: one point midway between the closest points of the two edges.
void edge_contact(const WorldHull& a, const WorldHull& b, const EdgeQuery& q, Manifold& out) {
  const HullEdge& ea = a.topo.edges[q.ea];
  const HullEdge& eb = b.topo.edges[q.eb];
  const np::SegmentPair cp = np::closest_segments(a.v[ea.v0], a.v[ea.v1], b.v[eb.v0], b.v[eb.v1]);
  out.normal = q.normal;
  add_point(out, (cp.on_a + cp.on_b) * 0.5f, -q.sep, 1u << 29 | uint32_t(q.ea) | uint32_t(q.eb) << 8);
}

}  // namespace

void place_hull(const ConvexHull& hull, const Vec3& position, const Mat3& rotation, WorldHull& out) {
  out.topo = hull.topology();
  for (int i = 0; i < out.topo.vertex_count; ++i) out.v[i] = position + np::dir_to_world(rotation, hull.vertices[i]);
  for (int f = 0; f < out.topo.face_count; ++f) out.n[f] = np::dir_to_world(rotation, hull.faces[f].normal);
  finish_planes(out);
}

void place_box(const Vec3& position, const Mat3& rotation, const Vec3& half_extents, WorldHull& out) {
  const ConvexHull& cube = unit_cube();
  out.topo = cube.topology();
  for (int i = 0; i < out.topo.vertex_count; ++i)
    out.v[i] = position + np::dir_to_world(rotation, cube.vertices[i] * half_extents);
  // The cube's face normals are its axes, so scaling leaves them unchanged.
  for (int f = 0; f < out.topo.face_count; ++f) out.n[f] = np::dir_to_world(rotation, cube.faces[f].normal);
  finish_planes(out);
}

void place_triangle(const Vec3& a, const Vec3& b, const Vec3& c, WorldHull& out) {
  static const HullFace kFaces[2] = {HullFace{Vec3(0.0f), 0.0f, 0, 3}, HullFace{Vec3(0.0f), 0.0f, 3, 3}};
  static const uint8_t kLoops[6] = {0, 1, 2, 0, 2, 1};
  static const HullEdge kEdges[3] = {HullEdge{0, 1, 0, 1}, HullEdge{1, 2, 0, 1}, HullEdge{0, 2, 1, 0}};
  out.topo = HullTopology{3, 2, 3, kFaces, kLoops, kEdges};
  out.v[0] = a;
  out.v[1] = b;
  out.v[2] = c;
  out.n[0] = np::normalize_or(glm::cross(b - a, c - a), Vec3(0.0f, 1.0f, 0.0f));
  out.n[1] = -out.n[0];
  finish_planes(out);
}

void collide_world_hulls(const WorldHull& a, const WorldHull& b, float margin, Manifold& out) {
  np::reset(out);
  const FaceQuery fa = query_faces(a, b);
  if (fa.sep > margin) return;
  const FaceQuery fb = query_faces(b, a);
  if (fb.sep > margin) return;
  const EdgeQuery eq = query_edges(a, b);
  if (eq.ea >= 0 && eq.sep > margin) return;

  const float size = std::min(a.inner, b.inner);
  const float tol = std::min(np::kSatAbsTol, np::kSatAbsTolScale * size);
  const bool use_b = fb.sep > np::kSatFaceRelTol * fa.sep + tol;
  const float face_sep = use_b ? fb.sep : fa.sep;
  if (eq.ea >= 0 && eq.sep > np::kSatEdgeRelTol * face_sep + tol) {
    edge_contact(a, b, eq, out);
    return;
  }
  if (use_b) {
    face_contact(b, fb.face, a, true, margin, out);
  } else {
    face_contact(a, fa.face, b, false, margin, out);
  }
}

const WorldHull& placed(const ShapeGeom& g, WorldHull& scratch) {
  if (g.placed_hull) return *g.placed_hull;
  place_hull(*g.hull, g.position, g.rotation, scratch);
  return scratch;
}

void collide_hull_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  WorldHull ta;
  WorldHull tb;
  collide_world_hulls(placed(a, ta), placed(b, tb), margin, out);
}

void collide_box_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  WorldHull ha;
  WorldHull tb;
  place_box(a.position, a.rotation, a.half_extents, ha);
  collide_world_hulls(ha, placed(b, tb), margin, out);
}

}  // namespace keel::sim
