// Convex hull construction: incremental (beneath-beyond) triangle hull in double
// precision, farthest points first, then coplanar triangles merged into polygon faces,
// vertices in the middle of a merged edge dropped, and mass properties by tetrahedral
// decomposition.
//
// Tolerances are relative to the cloud's size s (largest bounding-box extent):
//   kOnHull  * s: a point this close to the current hull is not added (duplicates and
//                 points on a face or edge vanish here);
//   kMerge   * s: neighbouring triangles whose vertices lie this close to a seed
//                 triangle's plane become one polygon face;
//   kFlat    * s: the cloud must extend this far off the plane of its first three
//                 extreme points, and off their line, or it has no volume.
// Determinism: every loop runs in an order fixed by the input; containers are ordered
// (std::map) or indexed; sorts use total orders (ties broken by index).
#include <keel/sim/hull.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace keel::sim {
namespace {

using DVec3 = glm::dvec3;

constexpr double kOnHull = 1.0e-6;
constexpr double kMerge = 1.0e-5;
constexpr double kFlat = 1.0e-4;
constexpr double kMergeCos = 0.9995;  // neighbour normals within ~1.8 degrees may merge

struct Tri {
  int v[3];
  DVec3 n;  // unit outward normal
  double d;
  bool alive;
};

Error fail(const std::string& what) { return Error{"hull: " + what}; }

uint64_t edge_key(int a, int b) { return uint64_t(uint32_t(a)) << 32 | uint32_t(b); }

/// The incremental triangle hull. `edges` maps each directed edge a->b to its triangle.
class TriHull {
 public:
  TriHull(const std::vector<DVec3>& p, double eps) : p_(p), eps_(eps) {}

  bool add_triangle(int a, int b, int c) {
    const DVec3 n = glm::cross(p_[b] - p_[a], p_[c] - p_[a]);
    const double len = std::sqrt(glm::dot(n, n));
    if (!(len > 0.0)) return false;
    const DVec3 u = n / len;
    const int t = int(tris_.size());
    tris_.push_back(Tri{{a, b, c}, u, glm::dot(u, p_[a]), true});
    for (int i = 0; i < 3; ++i) {
      if (!edges_.emplace(edge_key(tris_[t].v[i], tris_[t].v[(i + 1) % 3]), t).second) return false;
    }
    return true;
  }

  double distance(int t, int point) const { return glm::dot(tris_[t].n, p_[point]) - tris_[t].d; }

  /// Adds a point; false when the topology broke (a degenerate cloud).
  bool add_point(int point) {
    int seed = -1;
    double best = eps_;
    for (int t = 0; t < int(tris_.size()); ++t) {
      if (!tris_[t].alive) continue;
      const double dist = distance(t, point);
      if (dist > best) {
        best = dist;
        seed = t;
      }
    }
    if (seed < 0) return true;  // inside or on the hull
    // Visible region grown from the farthest-seeing triangle, so it stays connected.
    std::vector<int> visible{seed};
    std::vector<char> seen(tris_.size(), 0);
    seen[seed] = 1;
    std::vector<std::pair<int, int>> horizon;
    for (size_t k = 0; k < visible.size(); ++k) {
      const Tri tri = tris_[visible[k]];
      for (int i = 0; i < 3; ++i) {
        const int a = tri.v[i];
        const int b = tri.v[(i + 1) % 3];
        const auto twin = edges_.find(edge_key(b, a));
        if (twin == edges_.end()) return false;
        const int o = twin->second;
        if (seen[o] == 1) continue;
        if (distance(o, point) > eps_) {
          seen[o] = 1;
          visible.push_back(o);
        } else {
          horizon.emplace_back(a, b);
        }
      }
    }
    for (int t : visible) {
      tris_[t].alive = false;
      for (int i = 0; i < 3; ++i) edges_.erase(edge_key(tris_[t].v[i], tris_[t].v[(i + 1) % 3]));
    }
    for (const auto& [a, b] : horizon) {
      if (!add_triangle(a, b, point)) return false;
    }
    return true;
  }

  /// Every directed edge has its twin.
  bool closed() const {
    for (const auto& [key, t] : edges_) {
      if (edges_.find(edge_key(int(key & 0xffffffffu), int(key >> 32))) == edges_.end()) return false;
    }
    return true;
  }

  std::vector<Tri> alive() const {
    std::vector<Tri> out;
    for (const Tri& t : tris_)
      if (t.alive) out.push_back(t);
    return out;
  }

 private:
  const std::vector<DVec3>& p_;
  double eps_;
  std::vector<Tri> tris_;
  std::map<uint64_t, int> edges_;
};

/// Index of the point farthest from `f(point)`, lowest index on ties.
template <class F>
int farthest(const std::vector<DVec3>& p, F&& f) {
  int best = 0;
  double best_d = -1.0;
  for (int i = 0; i < int(p.size()); ++i) {
    const double d = f(p[i]);
    if (d > best_d) {
      best_d = d;
      best = i;
    }
  }
  return best;
}

/// The four extreme points of the starting tetrahedron, or an error for a flat cloud.
Expected<std::vector<int>> initial_simplex(const std::vector<DVec3>& p, double scale) {
  int i0 = 0;
  for (int i = 1; i < int(p.size()); ++i) {
    if (p[i].x < p[i0].x) i0 = i;
  }
  const int i1 = farthest(p, [&](const DVec3& x) { return glm::dot(x - p[i0], x - p[i0]); });
  const DVec3 axis = p[i1] - p[i0];
  auto line_dist = [&](const DVec3& x) {
    const DVec3 c = glm::cross(axis, x - p[i0]);
    return glm::dot(c, c) / glm::dot(axis, axis);
  };
  const int i2 = farthest(p, line_dist);
  if (!(std::sqrt(line_dist(p[i2])) > kFlat * scale)) return fail("points are collinear (no volume)");
  DVec3 n = glm::cross(axis, p[i2] - p[i0]);
  n /= std::sqrt(glm::dot(n, n));
  const int i3 = farthest(p, [&](const DVec3& x) { return std::abs(glm::dot(n, x - p[i0])); });
  if (!(std::abs(glm::dot(n, p[i3] - p[i0])) > kFlat * scale)) return fail("points are coplanar (no volume)");
  if (glm::dot(n, p[i3] - p[i0]) > 0.0) return std::vector<int>{i0, i2, i1, i3};  // i3 below (i0,i2,i1)
  return std::vector<int>{i0, i1, i2, i3};
}

/// A face while merging: a loop of point indices and the triangles it came from.
struct PolyFace {
  std::vector<int> loop;
};

/// Walks the boundary of a group of triangles; false unless it is one simple loop.
bool boundary_loop(const std::vector<Tri>& tris, const std::vector<int>& group, const std::vector<int>& owner,
                   const std::map<uint64_t, int>& edge_tri, int gid, std::vector<int>& loop) {
  std::map<int, int> next;  // start vertex -> end vertex of each boundary edge
  for (int t : group) {
    for (int i = 0; i < 3; ++i) {
      const int a = tris[t].v[i];
      const int b = tris[t].v[(i + 1) % 3];
      if (owner[edge_tri.at(edge_key(b, a))] == gid) continue;
      if (!next.emplace(a, b).second) return false;  // a vertex touched twice: not a disk
    }
  }
  if (next.size() < 3) return false;
  loop.clear();
  int v = next.begin()->first;
  do {
    loop.push_back(v);
    const auto it = next.find(v);
    if (it == next.end() || loop.size() > next.size()) return false;
    v = it->second;
  } while (v != loop.front());
  return loop.size() == next.size();
}

/// Merges neighbouring near-coplanar triangles into polygons, larger triangles seeding.
std::vector<PolyFace> merge_faces(const std::vector<Tri>& tris, const std::vector<DVec3>& p, double scale) {
  std::map<uint64_t, int> edge_tri;
  std::vector<std::pair<double, int>> order;
  for (int t = 0; t < int(tris.size()); ++t) {
    for (int i = 0; i < 3; ++i) edge_tri[edge_key(tris[t].v[i], tris[t].v[(i + 1) % 3])] = t;
    const DVec3 c = glm::cross(p[tris[t].v[1]] - p[tris[t].v[0]], p[tris[t].v[2]] - p[tris[t].v[0]]);
    order.emplace_back(-glm::dot(c, c), t);  // (area desc, index asc): a total order
  }
  std::sort(order.begin(), order.end());
  std::vector<int> owner(tris.size(), -1);
  std::vector<PolyFace> faces;
  for (const auto& [neg_area, seed] : order) {
    if (owner[seed] >= 0) continue;
    const int gid = int(faces.size());
    std::vector<int> group{seed};
    owner[seed] = gid;
    const Tri& s = tris[seed];
    for (size_t k = 0; k < group.size(); ++k) {
      for (int i = 0; i < 3; ++i) {
        const Tri& t = tris[group[k]];
        const int o = edge_tri.at(edge_key(t.v[(i + 1) % 3], t.v[i]));
        if (owner[o] >= 0 || glm::dot(tris[o].n, s.n) < kMergeCos) continue;
        bool flat = true;
        for (int j = 0; j < 3; ++j) flat = flat && std::abs(glm::dot(s.n, p[tris[o].v[j]]) - s.d) <= kMerge * scale;
        if (!flat) continue;
        owner[o] = gid;
        group.push_back(o);
      }
    }
    PolyFace f;
    if (group.size() == 1 || !boundary_loop(tris, group, owner, edge_tri, gid, f.loop)) {
      // Not a simple polygon: keep the seed alone and release the rest for later seeds.
      for (size_t k = 1; k < group.size(); ++k) owner[group[k]] = -1;
      f.loop.assign(s.v, s.v + 3);
    }
    faces.push_back(std::move(f));
  }
  return faces;
}

/// Drops vertices that lie on only two faces (the middle of a merged edge) or on none.
void drop_edge_vertices(std::vector<PolyFace>& faces, size_t point_count) {
  std::vector<int> uses(point_count, 0);
  for (const PolyFace& f : faces)
    for (int v : f.loop) ++uses[v];
  for (PolyFace& f : faces) {
    std::vector<int> kept;
    for (int v : f.loop)
      if (uses[v] >= 3) kept.push_back(v);
    f.loop = std::move(kept);
  }
}

/// Picks `count` of the vertices by farthest-point sampling (deterministic: first on ties).
std::vector<Vec3> sample_vertices(const std::vector<Vec3>& v, size_t count) {
  DVec3 c(0.0);
  for (const Vec3& x : v) c += DVec3(x);
  c /= double(v.size());
  std::vector<double> dist(v.size());
  for (size_t i = 0; i < v.size(); ++i) dist[i] = glm::dot(DVec3(v[i]) - c, DVec3(v[i]) - c);
  std::vector<Vec3> out;
  while (out.size() < count) {
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i)
      if (dist[i] > dist[best]) best = i;
    out.push_back(v[best]);
    for (size_t i = 0; i < v.size(); ++i) {
      const DVec3 d = DVec3(v[i]) - DVec3(v[best]);
      dist[i] = std::min(dist[i], glm::dot(d, d));
    }
  }
  return out;
}

/// Volume, centroid and unit-density inertia (about the centroid) by tetrahedra from the
/// vertex mean to each fan triangle of each face. Uses the canonical second moment of a
/// tetrahedron: integral of x x^T over it = det(A) / 120 * (A (E + 1 1^T) A^T).
void mass_properties(ConvexHull& h) {
  DVec3 ref(0.0);
  for (const Vec3& v : h.vertices) ref += DVec3(v);
  ref /= double(h.vertices.size());
  double vol = 0.0;
  DVec3 moment(0.0);
  glm::dmat3 cov(0.0);
  for (const HullFace& f : h.faces) {
    const DVec3 a = DVec3(h.vertices[h.loops[f.first]]) - ref;
    for (int k = 1; k + 1 < f.count; ++k) {
      const DVec3 b = DVec3(h.vertices[h.loops[f.first + k]]) - ref;
      const DVec3 c = DVec3(h.vertices[h.loops[f.first + k + 1]]) - ref;
      const double det = glm::dot(a, glm::cross(b, c));
      vol += det / 6.0;
      moment += (a + b + c) * (det / 24.0);
      const DVec3 s = a + b + c;
      cov += (glm::outerProduct(a, a) + glm::outerProduct(b, b) + glm::outerProduct(c, c) + glm::outerProduct(s, s)) *
             (det / 120.0);
    }
  }
  const DVec3 cm = moment / vol;
  cov -= glm::outerProduct(cm, cm) * vol;  // shift the second moment to the centroid
  const double tr = cov[0][0] + cov[1][1] + cov[2][2];
  glm::dmat3 inertia = glm::dmat3(tr) - cov;
  h.volume = float(vol);
  h.centroid = Vec3(cm + ref);
  h.inertia = Mat3(inertia);
}

/// Fills faces, loops, edges and bounds of `h` from merged polygons over `pts`.
Status assemble(ConvexHull& h, const std::vector<PolyFace>& polys, const std::vector<Vec3>& pts) {
  std::vector<int> index(pts.size(), -1);
  for (const PolyFace& f : polys) {
    for (int v : f.loop) {
      if (index[v] >= 0) continue;
      index[v] = int(h.vertices.size());
      h.vertices.push_back(pts[v]);
    }
  }
  if (h.vertices.size() > size_t(kMaxHullVertices) || polys.size() > size_t(kMaxHullFaces))
    return fail("too many vertices after simplification");
  std::map<uint64_t, int> directed;  // a->b -> face
  for (const PolyFace& f : polys) {
    if (f.loop.size() < 3) return fail("degenerate face");
    HullFace hf;
    hf.first = uint16_t(h.loops.size());
    hf.count = uint16_t(f.loop.size());
    DVec3 n(0.0);  // Newell's normal: robust for slightly non-planar polygons
    for (size_t i = 0; i < f.loop.size(); ++i) {
      const DVec3 a(pts[f.loop[i]]);
      const DVec3 b(pts[f.loop[(i + 1) % f.loop.size()]]);
      n += DVec3((a.y - b.y) * (a.z + b.z), (a.z - b.z) * (a.x + b.x), (a.x - b.x) * (a.y + b.y));
      h.loops.push_back(uint8_t(index[f.loop[i]]));
      const int fi = int(h.faces.size());
      if (!directed.emplace(edge_key(index[f.loop[i]], index[f.loop[(i + 1) % f.loop.size()]]), fi).second)
        return fail("non-manifold surface");
    }
    hf.normal = Vec3(n / std::sqrt(glm::dot(n, n)));
    h.faces.push_back(hf);
  }
  for (HullFace& f : h.faces) {
    // Offset through the outermost vertex: every vertex is inside every plane.
    float off = glm::dot(f.normal, h.vertices[0]);
    for (const Vec3& v : h.vertices) off = std::max(off, glm::dot(f.normal, v));
    f.offset = off;
  }
  for (const auto& [key, face] : directed) {
    const int a = int(key >> 32);
    const int b = int(key & 0xffffffffu);
    const auto twin = directed.find(edge_key(b, a));
    if (twin == directed.end()) return fail("open surface");
    if (a < b) h.edges.push_back(HullEdge{uint8_t(a), uint8_t(b), uint8_t(face), uint8_t(twin->second)});
  }
  h.bounds_lower = h.bounds_upper = h.vertices[0];
  for (const Vec3& v : h.vertices) {
    h.bounds_lower = glm::min(h.bounds_lower, v);
    h.bounds_upper = glm::max(h.bounds_upper, v);
  }
  return Status::ok();
}

Status check_input(const std::vector<Vec3>& points) {
  if (points.size() < 4) return fail("needs at least 4 points (got " + std::to_string(points.size()) + ")");
  if (points.size() > kMaxHullInputPoints)
    return fail("at most " + std::to_string(kMaxHullInputPoints) + " points (got " + std::to_string(points.size()) +
                ")");
  for (size_t i = 0; i < points.size(); ++i) {
    const Vec3& p = points[i];
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(p[k]) || std::abs(p[k]) > kMaxHullCoordinate)
        return fail("points[" + std::to_string(i) + "] is not finite or beyond 1e5 m");
    }
  }
  return Status::ok();
}

/// Builds polygons of the hull of `pts` (no vertex cap applied).
Expected<std::vector<PolyFace>> hull_polygons(const std::vector<Vec3>& pts) {
  std::vector<DVec3> p(pts.begin(), pts.end());
  DVec3 lo = p[0], hi = p[0];
  for (const DVec3& x : p) {
    lo = glm::min(lo, x);
    hi = glm::max(hi, x);
  }
  const double scale = std::max(hi.x - lo.x, std::max(hi.y - lo.y, hi.z - lo.z));
  if (!(scale > 0.0)) return fail("all points are the same");
  auto simplex = initial_simplex(p, scale);
  if (!simplex) return simplex.error();
  const std::vector<int>& s = *simplex;
  TriHull hull(p, kOnHull * scale);
  if (!hull.add_triangle(s[0], s[1], s[2]) || !hull.add_triangle(s[0], s[3], s[1]) ||
      !hull.add_triangle(s[1], s[3], s[2]) || !hull.add_triangle(s[2], s[3], s[0]))
    return fail("points are coplanar (no volume)");
  // Farthest from the simplex's centre first: likely hull vertices come early and most
  // interior points then fall inside at once.
  const DVec3 centre = (p[s[0]] + p[s[1]] + p[s[2]] + p[s[3]]) * 0.25;
  std::vector<std::pair<double, int>> order;
  for (int i = 0; i < int(p.size()); ++i) order.emplace_back(-glm::dot(p[i] - centre, p[i] - centre), i);
  std::sort(order.begin(), order.end());
  for (const auto& [neg_d, i] : order) {
    if (!hull.add_point(i)) return fail("points too degenerate to build a hull");
  }
  if (!hull.closed()) return fail("points too degenerate to build a hull");
  std::vector<PolyFace> polys = merge_faces(hull.alive(), p, scale);
  drop_edge_vertices(polys, p.size());
  return polys;
}

}  // namespace

Expected<std::shared_ptr<const ConvexHull>> build_hull(const std::vector<Vec3>& points) {
  if (Status ok = check_input(points); !ok) return ok.error();
  auto polys = hull_polygons(points);
  if (!polys) return polys.error();
  std::vector<Vec3> pts = points;
  auto h = std::make_shared<ConvexHull>();
  h->points = points;
  if (Status ok = assemble(*h, *polys, pts); !ok) {
    if (h->vertices.size() <= size_t(kMaxHullVertices)) return ok.error();
    // Too many vertices: rebuild from a well-spread subset of them (still the input's).
    pts = sample_vertices(h->vertices, size_t(kMaxHullVertices));
    polys = hull_polygons(pts);
    if (!polys) return polys.error();
    *h = ConvexHull{};
    h->points = points;
    if (Status again = assemble(*h, *polys, pts); !again) return again.error();
  }
  mass_properties(*h);
  if (!(h->volume > 0.0f)) return fail("points have no volume");
  return std::shared_ptr<const ConvexHull>(std::move(h));
}

}  // namespace keel::sim
