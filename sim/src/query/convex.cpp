#include "query/convex.h"

#include "collision/geometry.h"

#include <cmath>

namespace keel::sim::query {

namespace {

using np::length_sq;

// GJK gives up after this many support points; the shapes we have converge in a handful.
constexpr int kGjkMaxIterations = 32;
// Stop when a new support point improves |v|^2 by less than this fraction: about 5e-7 of
// the distance, far below anything a query or the controller can resolve.
constexpr float kGjkRelTolerance = 1.0e-6f;
// A core distance below this is an overlap of the cores: no reliable direction remains.
constexpr float kOverlapDistance = 1.0e-6f;
// Conservative advancement stops when the gap is this small (m) and finishes the last
// stretch linearly, so the normal comes from a pose where the shapes are still apart.
constexpr float kCastTolerance = 5.0e-4f;
constexpr int kCastMaxIterations = 64;
constexpr float kGrazing = 1.0e-5f;

struct Vertex {
  Vec3 a{0.0f};  // support point on a
  Vec3 b{0.0f};  // support point on b
  Vec3 w{0.0f};  // a - b
};

struct Simplex {
  Vertex v[4];
  float lambda[4] = {1, 0, 0, 0};  // barycentric weights of the closest point
  int n = 0;
};

void keep(Simplex& s, std::initializer_list<int> idx, std::initializer_list<float> weights) {
  Vertex tmp[4];
  float lw[4];
  int k = 0;
  auto wi = weights.begin();
  for (int i : idx) {
    tmp[k] = s.v[i];
    lw[k] = *wi++;
    ++k;
  }
  for (int i = 0; i < k; ++i) {
    s.v[i] = tmp[i];
    s.lambda[i] = lw[i];
  }
  s.n = k;
}

void closest_segment(Simplex& s) {
  const Vec3 a = s.v[0].w, b = s.v[1].w;
  const Vec3 ab = b - a;
  const float t = -glm::dot(a, ab);
  const float denom = glm::dot(ab, ab);
  if (t <= 0.0f || denom <= 0.0f) return keep(s, {0}, {1.0f});
  if (t >= denom) return keep(s, {1}, {1.0f});
  const float u = t / denom;
  keep(s, {0, 1}, {1.0f - u, u});
}

// Closest point of triangle (0, 1, 2) to the origin by Voronoi regions; the simplex is
// reduced to the feature that holds it.
void closest_triangle(Simplex& s) {
  const Vec3 a = s.v[0].w, b = s.v[1].w, c = s.v[2].w;
  const Vec3 ab = b - a, ac = c - a, ap = -a;
  const float d1 = glm::dot(ab, ap), d2 = glm::dot(ac, ap);
  if (d1 <= 0.0f && d2 <= 0.0f) return keep(s, {0}, {1.0f});
  const Vec3 bp = -b;
  const float d3 = glm::dot(ab, bp), d4 = glm::dot(ac, bp);
  if (d3 >= 0.0f && d4 <= d3) return keep(s, {1}, {1.0f});
  const float vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
    const float u = d1 / (d1 - d3);
    return keep(s, {0, 1}, {1.0f - u, u});
  }
  const Vec3 cp = -c;
  const float d5 = glm::dot(ab, cp), d6 = glm::dot(ac, cp);
  if (d6 >= 0.0f && d5 <= d6) return keep(s, {2}, {1.0f});
  const float vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
    const float u = d2 / (d2 - d6);
    return keep(s, {0, 2}, {1.0f - u, u});
  }
  const float va = d3 * d6 - d5 * d4;
  if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
    const float u = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return keep(s, {1, 2}, {1.0f - u, u});
  }
  const float denom = va + vb + vc;
  if (!(denom > 0.0f)) return keep(s, {0}, {1.0f});  // degenerate: fall back to a vertex
  const float v = vb / denom, w = vc / denom;
  keep(s, {0, 1, 2}, {1.0f - v - w, v, w});
}

Vec3 combine(const Simplex& s) {
  Vec3 p(0.0f);
  for (int i = 0; i < s.n; ++i) p += s.v[i].w * s.lambda[i];
  return p;
}

// Tetrahedron: the origin is inside unless it lies beyond one of the faces; then the
// closest of those faces wins (the first on equal distances). Returns false when inside.
bool closest_tetrahedron(Simplex& s) {
  static constexpr int kFaces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
  bool found = false;
  float best = 0.0f;
  Simplex best_s;
  for (const auto& f : kFaces) {
    const Vec3 a = s.v[f[0]].w, b = s.v[f[1]].w, c = s.v[f[2]].w, d = s.v[f[3]].w;
    const Vec3 n = glm::cross(b - a, c - a);
    const float side_o = glm::dot(n, -a);
    const float side_d = glm::dot(n, d - a);
    // Beyond this face (opposite the fourth vertex), or a flat tetrahedron.
    const bool outside = side_o * side_d < 0.0f || std::abs(side_d) <= 1.0e-12f;
    if (!outside) continue;
    Simplex t;
    t.v[0] = s.v[f[0]];
    t.v[1] = s.v[f[1]];
    t.v[2] = s.v[f[2]];
    t.n = 3;
    closest_triangle(t);
    const float d2 = length_sq(combine(t));
    if (!found || d2 < best) {
      found = true;
      best = d2;
      best_s = t;
    }
  }
  if (found) s = best_s;
  return found;
}

// Reduces the simplex to the feature closest to the origin. False: the origin is inside.
bool solve_simplex(Simplex& s) {
  switch (s.n) {
    case 1: s.lambda[0] = 1.0f; return true;
    case 2: closest_segment(s); return true;
    case 3: closest_triangle(s); return true;
    default: return closest_tetrahedron(s);
  }
}

Vertex support_vertex(const Core& a, const Core& b, const Vec3& d) {
  Vertex v;
  v.a = support(a, d);
  v.b = support(b, -d);
  v.w = v.a - v.b;
  return v;
}

void witness(const Simplex& s, Distance& out) {
  out.on_a = Vec3(0.0f);
  out.on_b = Vec3(0.0f);
  for (int i = 0; i < s.n; ++i) {
    out.on_a += s.v[i].a * s.lambda[i];
    out.on_b += s.v[i].b * s.lambda[i];
  }
}

}  // namespace

Core core_of(const ShapeGeom& g) {
  Core c;
  c.type = g.type;
  c.radius = g.type == ShapeType::Box ? 0.0f : g.radius;
  switch (g.type) {
    case ShapeType::Sphere: c.p0 = c.p1 = g.position; break;
    case ShapeType::Capsule: np::capsule_segment(g, c.p0, c.p1); break;
    case ShapeType::Box:
      c.p0 = c.p1 = g.position;
      c.axes = g.rotation;
      c.half_extents = g.half_extents;
      break;
    case ShapeType::Hull:
      c.radius = 0.0f;
      c.hull = g.hull;
      c.axes = g.rotation;
      c.origin = g.position;
      c.p0 = c.p1 = g.hull ? g.position + np::dir_to_world(g.rotation, g.hull->centroid) : g.position;
      break;
    default:  // concave shapes are tested triangle by triangle (triangle_core)
      c.p0 = c.p1 = c.p2 = g.position;
      break;
  }
  return c;
}

Core triangle_core(const Vec3& a, const Vec3& b, const Vec3& c) {
  Core t;
  t.type = ShapeType::Mesh;
  t.p0 = a;
  t.p1 = b;
  t.p2 = c;
  return t;
}

Core point_core(const Vec3& p, float radius) {
  Core c;
  c.p0 = c.p1 = p;
  c.radius = radius;
  return c;
}

Core translated(const Core& c, const Vec3& d) {
  Core out = c;
  out.p0 += d;
  out.p1 += d;
  out.origin += d;
  out.p2 += d;
  return out;
}

Vec3 support(const Core& c, const Vec3& d) {
  switch (c.type) {
    case ShapeType::Sphere: return c.p0;
    case ShapeType::Capsule: return glm::dot(d, c.p1 - c.p0) > 0.0f ? c.p1 : c.p0;
    case ShapeType::Box: {
      Vec3 p = c.p0;
      for (int i = 0; i < 3; ++i) {
        const float s = glm::dot(d, c.axes[i]) > 0.0f ? 1.0f : -1.0f;
        p += c.axes[i] * (s * c.half_extents[i]);
      }
      return p;
    }
    case ShapeType::Hull: {
      if (!c.hull || c.hull->vertices.empty()) return c.p0;
      const Vec3 l = np::dir_to_local(c.axes, d);
      const std::vector<Vec3>& v = c.hull->vertices;
      size_t best = 0;
      float best_d = glm::dot(l, v[0]);
      for (size_t i = 1; i < v.size(); ++i) {
        const float x = glm::dot(l, v[i]);
        if (x > best_d) {
          best_d = x;
          best = i;
        }
      }
      return c.origin + np::dir_to_world(c.axes, v[best]);
    }
    case ShapeType::Mesh: {
      const float d0 = glm::dot(d, c.p0), d1 = glm::dot(d, c.p1), d2 = glm::dot(d, c.p2);
      if (d0 >= d1 && d0 >= d2) return c.p0;  // ties go to the lower corner
      return d1 >= d2 ? c.p1 : c.p2;
    }
    default: break;
  }
  return c.p0;
}

Vec3 core_center(const Core& c) {
  if (c.type == ShapeType::Mesh) return (c.p0 + c.p1 + c.p2) * (1.0f / 3.0f);
  return (c.p0 + c.p1) * 0.5f;
}

Distance core_distance(const Core& a, const Core& b) {
  Distance out;
  Simplex s;
  Vec3 d = core_center(a) - core_center(b);
  if (length_sq(d) <= 0.0f) d = Vec3(1.0f, 0.0f, 0.0f);
  s.v[0] = support_vertex(a, b, -d);
  s.n = 1;
  float prev = 3.4e38f;
  for (int iter = 0; iter < kGjkMaxIterations; ++iter) {
    if (!solve_simplex(s)) {
      out.overlap = true;
      return out;
    }
    const Vec3 v = combine(s);
    const float vv = length_sq(v);
    if (vv <= kOverlapDistance * kOverlapDistance) {
      out.overlap = true;
      return out;
    }
    if (vv >= prev) break;  // no progress: rounding has the last word
    prev = vv;
    const Vertex w = support_vertex(a, b, -v);
    if (vv - glm::dot(v, w.w) <= kGjkRelTolerance * vv) break;
    bool duplicate = false;
    for (int i = 0; i < s.n; ++i) duplicate = duplicate || s.v[i].w == w.w;
    if (duplicate) break;
    s.v[s.n++] = w;
  }
  witness(s, out);
  out.distance = std::sqrt(length_sq(out.on_a - out.on_b));
  return out;
}

bool shapes_overlap(const Core& a, const Core& b) {
  const Distance d = core_distance(a, b);
  return d.overlap || d.distance <= a.radius + b.radius;
}

bool cast(const Core& a, const Vec3& delta, const Core& b, CastHit& out) {
  float t = 0.0f;
  const float delta_len = std::sqrt(length_sq(delta));
  const Vec3 back = np::normalize_or(-delta, Vec3(0.0f, 1.0f, 0.0f));
  for (int iter = 0; iter < kCastMaxIterations; ++iter) {
    const Distance d = core_distance(translated(a, delta * t), b);
    if (d.overlap) {
      // The cores meet: in practice only from the start, since every advance stops half
      // a tolerance short of contact; a rounding surprise keeps the last normal.
      if (t == 0.0f) out = CastHit{0.0f, core_center(a), back, true};
      else out.fraction = t;
      return true;
    }
    const Vec3 n = (d.on_b - d.on_a) / d.distance;  // from a to b
    const float gap = d.distance - a.radius - b.radius;
    const float approach = glm::dot(delta, n);
    // The distance is convex in t, so a gap that does not shrink here never will: a shape
    // moving out of (or along) what it starts in does not hit it. "Along" allows for
    // rounding: a motion within 1e-5 rad of the surface's plane grazes it.
    if (approach <= kGrazing * delta_len) return false;
    if (t == 0.0f && gap < 0.0f) {
      out = CastHit{0.0f, d.on_b - n * b.radius, -n, true};
      return true;
    }
    if (gap <= kCastTolerance) {
      const float tf = std::min(1.0f, t + std::max(gap, 0.0f) / approach);
      out = CastHit{tf, d.on_b - n * b.radius, -n, false};
      return true;
    }
    out = CastHit{t, d.on_b - n * b.radius, -n, false};  // the best answer so far
    t += (gap - 0.5f * kCastTolerance) / approach;
    if (t > 1.0f) return false;
  }
  // Out of iterations (a long graze): report where the advance got to.
  const Distance d = core_distance(translated(a, delta * t), b);
  const Vec3 n = d.overlap ? -back : (d.on_b - d.on_a) / d.distance;
  out = CastHit{t, d.on_b - n * b.radius, -n, false};
  return true;
}

}  // namespace keel::sim::query
