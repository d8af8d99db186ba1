// One triangle (A) against a sphere, capsule or box (B), in the triangle's frame.
//
// Same contract as every narrowphase routine (normal A -> B, positive depth = overlap,
// points midway), plus one-sidedness: a shape whose core lies behind the triangle's
// front face makes no contact, and no manifold's normal points into the back side.
// Local feature ids stay below 256 (collide_mesh.cpp puts the triangle index above them).
#include "collision/collide_triangle.h"

#include "collision/geometry.h"

#include <cmath>

namespace keel::sim::tri {

using namespace np;

namespace {

// Local ids: face clips 8..99, box/triangle edge pairs 100..108, triangle corners
// 110..112, clips against a box face 113..127; round shapes 0..12. Ids with kOwnedByShape
// set name a feature of the convex shape alone (a box corner, a capsule end, a sphere's
// lowest point): collide_mesh.cpp keeps them across triangles, so a body sliding from
// one triangle onto the next keeps its warm-start impulses.
constexpr uint32_t kEdgeEdgeId = 100;
constexpr uint32_t kTriCornerId = 110;

uint32_t clip_id(uint32_t a, uint32_t b, uint32_t plane, uint32_t base, uint32_t range) {
  const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
  return base + (lo * 13u + hi * 5u + plane * 3u) % range;
}

Vec3 outward(const Triangle& t, int k) { return glm::cross(t.v[(k + 1) % 3] - t.v[k], t.normal); }

}  // namespace

Closest closest_on_triangle(const Triangle& t, const Vec3& p) {
  const Vec3 &a = t.v[0], &b = t.v[1], &c = t.v[2];
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const float d1 = glm::dot(ab, ap), d2 = glm::dot(ac, ap);
  if (d1 <= 0.0f && d2 <= 0.0f) return {a, 4};
  const Vec3 bp = p - b;
  const float d3 = glm::dot(ab, bp), d4 = glm::dot(ac, bp);
  if (d3 >= 0.0f && d4 <= d3) return {b, 5};
  const float vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) return {a + ab * (d1 / (d1 - d3)), 1};
  const Vec3 cp = p - c;
  const float d5 = glm::dot(ab, cp), d6 = glm::dot(ac, cp);
  if (d6 >= 0.0f && d5 <= d6) return {c, 6};
  const float vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) return {a + ac * (d2 / (d2 - d6)), 3};
  const float va = d3 * d6 - d5 * d4;
  if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
    return {b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), 2};
  }
  const float denom = 1.0f / (va + vb + vc);
  return {a + ab * (vb * denom) + ac * (vc * denom), 0};
}

// ---------------------------------------------------------------------------------------
// Sphere

void triangle_sphere(const Triangle& t, const Vec3& c, float r, float margin, Manifold& out) {
  reset(out);
  if (glm::dot(c - t.v[0], t.normal) < 0.0f) return;  // centre behind the face
  const Closest q = closest_on_triangle(t, c);
  const Vec3 d = c - q.point;
  const float dist2 = glm::dot(d, d);
  if (dist2 > (r + margin) * (r + margin)) return;
  const float dist = std::sqrt(dist2);
  const Vec3 n = dist > kTinyDistance ? d / dist : t.normal;
  if (glm::dot(n, t.normal) < 0.0f) return;
  out.normal = n;
  const float depth = r - dist;
  add_point(out, round_contact_point(c, -n, r, depth), depth, q.region == 0 ? kOwnedByShape : uint32_t(q.region));
}

// ---------------------------------------------------------------------------------------
// Capsule

namespace {

// A capsule lying (nearly) flat over the face: the part of its segment above the
// triangle, clipped by the three side planes, gives two points along the face normal.
bool capsule_face_pair(const Triangle& t, const Vec3& p0, const Vec3& p1, float r, float margin, Manifold& out) {
  const Vec3 d = p1 - p0;
  const float len2 = glm::dot(d, d);
  if (len2 <= kTinyDistanceSq) return false;
  const float len = std::sqrt(len2);
  if (std::fabs(glm::dot(d, t.normal)) > kFlatSin * len) return false;
  float t0 = 0.0f, t1 = 1.0f;
  bool seam[2] = {false, false};  // that end was cut by a flat seam
  for (int k = 0; k < 3; ++k) {
    const Vec3 m = outward(t, k);
    const float a = glm::dot(p0 - t.v[k], m), b = glm::dot(p1 - t.v[k], m);
    if (a > 0.0f && b > 0.0f) return false;
    const bool flat = ((t.flat_edges >> k) & 1u) != 0;
    if (a > 0.0f && a / (a - b) > t0) {
      t0 = a / (a - b);
      seam[0] = flat;
    }
    if (b > 0.0f && a / (a - b) < t1) {
      t1 = a / (a - b);
      seam[1] = flat;
    }
  }
  if ((t1 - t0) * len < kMinPairSpan) return false;
  out.normal = t.normal;
  const float ts[2] = {t0, t1};
  for (int i = 0; i < 2; ++i) {
    const Vec3 q = p0 + d * ts[i];
    const float depth = r - glm::dot(q - t.v[0], t.normal);
    const bool whole = ts[i] == float(i);  // the capsule's own end, not a clip point
    if (seam[i]) continue;  // the coplanar neighbour reports the rest
    if (depth >= -margin) {
      add_point(out, round_contact_point(q, -t.normal, r, depth), depth, (whole ? kOwnedByShape : 0u) | (10u + uint32_t(i)));
    }
  }
  return out.count > 0;
}

}  // namespace

void triangle_capsule(const Triangle& t, const Vec3& p0, const Vec3& p1, float r, float margin, Manifold& out) {
  reset(out);
  const float h0 = glm::dot(p0 - t.v[0], t.normal), h1 = glm::dot(p1 - t.v[0], t.normal);
  if (h0 < 0.0f && h1 < 0.0f) return;  // core behind the face
  if (capsule_face_pair(t, p0, p1, r, margin, out)) return;
  reset(out);
  // Closest pair among: each end against the triangle, the segment against each edge.
  Vec3 on_seg = p0, on_tri = p0;
  int region = 0;
  float best = -1.0f;
  auto consider = [&](const Vec3& s, const Vec3& q, int reg) {
    const float d2 = length_sq(s - q);
    if (best < 0.0f || d2 < best) {
      best = d2;
      on_seg = s;
      on_tri = q;
      region = reg;
    }
  };
  const Closest c0 = closest_on_triangle(t, p0), c1 = closest_on_triangle(t, p1);
  consider(p0, c0.point, c0.region);
  consider(p1, c1.point, c1.region);
  for (int k = 0; k < 3; ++k) {
    const SegmentPair sp = closest_segments(p0, p1, t.v[k], t.v[(k + 1) % 3]);
    consider(sp.on_a, sp.on_b, 1 + k);
  }
  if ((h0 < 0.0f) != (h1 < 0.0f)) {
    // The segment pierces the plane; inside the triangle, the end below it is the deepest.
    const Vec3 low = h0 < h1 ? p0 : p1;
    const float hl = h0 < h1 ? h0 : h1;
    const Closest cx = closest_on_triangle(t, p0 + (p1 - p0) * (h0 / (h0 - h1)));
    if (cx.region == 0) {
      out.normal = t.normal;
      add_point(out, round_contact_point(low, -t.normal, r, r - hl), r - hl, 12u);
      return;
    }
  }
  const float dist = std::sqrt(best);
  if (dist > r + margin) return;
  const Vec3 n = dist > kTinyDistance ? (on_seg - on_tri) / dist : t.normal;
  if (glm::dot(n, t.normal) < 0.0f) return;
  out.normal = n;
  add_point(out, round_contact_point(on_seg, -n, r, r - dist), r - dist, uint32_t(region));
}

// ---------------------------------------------------------------------------------------
// Box

namespace {

struct Axis {
  Vec3 l{0.0f};
  float sep = 0.0f;
  int kind = 0;  // 0: triangle face, 1: box face (index), 2: edge pair (index = 3 * box axis + edge)
  int index = 0;
};

float box_radius(const Mat3& u, const Vec3& e, const Vec3& l) {
  return e.x * std::fabs(glm::dot(u[0], l)) + e.y * std::fabs(glm::dot(u[1], l)) + e.z * std::fabs(glm::dot(u[2], l));
}

// Separation of the box from the triangle along `l` (either sense); `l` is flipped to
// point from the triangle towards the box.
float two_sided_sep(const Triangle& t, const Vec3& c, const Mat3& u, const Vec3& e, Vec3& l) {
  const float p0 = glm::dot(t.v[0], l), p1 = glm::dot(t.v[1], l), p2 = glm::dot(t.v[2], l);
  const float tmin = std::min(p0, std::min(p1, p2)), tmax = std::max(p0, std::max(p1, p2));
  const float bc = glm::dot(c, l), br = box_radius(u, e, l);
  const float pos = (bc - br) - tmax, neg = tmin - (bc + br);
  if (neg > pos) {
    l = -l;
    return neg;
  }
  return pos;
}

struct ClipVert {
  Vec3 p;
  uint32_t id;
  bool on_seam = false;  // made by a flat seam's side plane: the neighbour reports that part
};

// Sutherland-Hodgman against the half space dot(p - o, m) <= 0.
int clip_polygon(const ClipVert* in, int n, const Vec3& o, const Vec3& m, uint32_t plane, uint32_t base,
                 uint32_t range, ClipVert* out, bool seam = false) {
  int k = 0;
  for (int i = 0; i < n; ++i) {
    const ClipVert& a = in[i];
    const ClipVert& b = in[(i + 1) % n];
    const float da = glm::dot(a.p - o, m), db = glm::dot(b.p - o, m);
    if (da <= 0.0f) out[k++] = a;
    if ((da <= 0.0f) != (db <= 0.0f)) {
      out[k++] = ClipVert{a.p + (b.p - a.p) * (da / (da - db)), clip_id(a.id, b.id, plane, base, range), seam};
    }
  }
  return k;
}

constexpr int kMaxClip = 16;

// Keeps the candidate points (already in contact terms) and reduces them to four.
void emit(const ManifoldPoint* pts, int n, const Vec3& normal, Manifold& out) {
  out.normal = normal;
  int pick[kMaxManifoldPoints];
  const int k = reduce_points(pts, n, normal, pick);
  for (int i = 0; i < k; ++i) add_point(out, pts[pick[i]].point, pts[pick[i]].depth, pts[pick[i]].id);
}

void face_contact(const Triangle& t, const Vec3& c, const Mat3& u, const Vec3& e, float margin, Manifold& out) {
  const Vec3& n = t.normal;
  int ax = 0;
  float best = -1.0f;
  for (int i = 0; i < 3; ++i) {
    const float d = std::fabs(glm::dot(u[i], n));
    if (d > best) {
      best = d;
      ax = i;
    }
  }
  const float s = glm::dot(u[ax], n) > 0.0f ? -1.0f : 1.0f;  // the box face turned to the triangle
  const int j = (ax + 1) % 3, k = (ax + 2) % 3;
  ClipVert a[kMaxClip], b[kMaxClip];
  const float sj[4] = {1, -1, -1, 1}, sk[4] = {1, 1, -1, -1};
  for (int i = 0; i < 4; ++i) {
    const Vec3 p = c + u[ax] * (s * e[ax]) + u[j] * (sj[i] * e[j]) + u[k] * (sk[i] * e[k]);
    uint32_t code = 0;
    const float sg[3] = {ax == 0 ? s : (j == 0 ? sj[i] : sk[i]), ax == 1 ? s : (j == 1 ? sj[i] : sk[i]),
                         ax == 2 ? s : (j == 2 ? sj[i] : sk[i])};
    for (int q = 0; q < 3; ++q) code |= sg[q] > 0.0f ? (1u << q) : 0u;
    a[i] = ClipVert{p, kOwnedByShape | code};
  }
  int cnt = 4;
  for (int q = 0; q < 3 && cnt > 0; ++q) {
    cnt = clip_polygon(a, cnt, t.v[q], outward(t, q), uint32_t(q), 8u, 92u, b, ((t.flat_edges >> q) & 1u) != 0);
    for (int i = 0; i < cnt; ++i) a[i] = b[i];
  }
  ManifoldPoint pts[kMaxClip];
  int np_ = 0;
  for (int i = 0; i < cnt; ++i) {
    // Points cut at a flat seam are dropped: the coplanar neighbour reports the shape's
    // own corners beyond it, and a cut point would move (and lose its warm start) as
    // the shape slides.
    if (a[i].on_seam) continue;
    const float sep = glm::dot(a[i].p - t.v[0], n);
    if (sep > margin) continue;
    pts[np_++] = ManifoldPoint{a[i].p - n * (0.5f * sep), -sep, a[i].id};
  }
  emit(pts, np_, n, out);
}

void box_face_contact(const Triangle& t, const Vec3& c, const Mat3& u, const Vec3& e, const Axis& axis, float margin,
                      Manifold& out) {
  const Vec3& l = axis.l;  // from the triangle to the box; the box face -l meets it
  const int ax = axis.index, j = (ax + 1) % 3, k = (ax + 2) % 3;
  const Vec3 fc = c - l * e[ax];
  ClipVert a[kMaxClip], b[kMaxClip];
  for (int i = 0; i < 3; ++i) a[i] = ClipVert{t.v[i], kTriCornerId + uint32_t(i)};
  int cnt = 3;
  const Vec3 side[4] = {u[j], -u[j], u[k], -u[k]};
  const float ext[4] = {e[j], e[j], e[k], e[k]};
  for (int q = 0; q < 4 && cnt > 0; ++q) {
    cnt = clip_polygon(a, cnt, c + side[q] * ext[q], side[q], uint32_t(q), 113u, 15u, b);
    for (int i = 0; i < cnt; ++i) a[i] = b[i];
  }
  ManifoldPoint pts[kMaxClip];
  int np_ = 0;
  for (int i = 0; i < cnt; ++i) {
    const float depth = glm::dot(a[i].p - fc, l);
    if (depth < -margin) continue;
    pts[np_++] = ManifoldPoint{a[i].p - l * (0.5f * depth), depth, a[i].id};
  }
  emit(pts, np_, l, out);
}

void edge_contact(const Triangle& t, const Vec3& c, const Mat3& u, const Vec3& e, const Axis& axis, Manifold& out) {
  const int bi = axis.index / 3, tk = axis.index % 3;
  Vec3 mid = c;
  for (int q = 0; q < 3; ++q) {
    if (q != bi) mid += u[q] * (glm::dot(u[q], axis.l) > 0.0f ? -e[q] : e[q]);  // the edge nearest the triangle
  }
  const SegmentPair sp = closest_segments(mid - u[bi] * e[bi], mid + u[bi] * e[bi], t.v[tk], t.v[(tk + 1) % 3]);
  out.normal = axis.l;
  add_point(out, (sp.on_a + sp.on_b) * 0.5f, -axis.sep, kEdgeEdgeId + uint32_t(axis.index));
}

}  // namespace

void triangle_box(const Triangle& t, const Vec3& c, const Mat3& u, const Vec3& e, float margin, Manifold& out) {
  reset(out);
  const Vec3& n = t.normal;
  if (glm::dot(c - t.v[0], n) < 0.0f) return;  // centre behind the face
  const float min_e = std::min(e.x, std::min(e.y, e.z));
  const float abs_tol = std::min(kSatAbsTol, kSatAbsTolScale * min_e);
  Axis best{n, glm::dot(c - t.v[0], n) - box_radius(u, e, n), 0, 0};
  if (best.sep > margin) return;
  for (int i = 0; i < 3; ++i) {
    Vec3 l = u[i];
    const float sep = two_sided_sep(t, c, u, e, l);
    if (sep > margin) return;
    if (sep > sat_beat(kSatFaceRelTol, best.sep, abs_tol)) best = Axis{l, sep, 1, i};
  }
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 3; ++k) {
      const Vec3 edge = t.v[(k + 1) % 3] - t.v[k];
      Vec3 l = glm::cross(u[i], edge);
      const float l2 = glm::dot(l, l);
      if (l2 < kEdgeSkipSinSq * glm::dot(edge, edge)) continue;
      l = l / std::sqrt(l2);
      const float sep = two_sided_sep(t, c, u, e, l);
      if (sep > margin) return;
      if (sep > sat_beat(kSatEdgeRelTol, best.sep, abs_tol)) best = Axis{l, sep, 2, 3 * i + k};
    }
  }
  // An axis that would push the box towards the back side is not used: the centre is in
  // front, so the face normal is the way out.
  if (best.kind != 0 && glm::dot(best.l, n) <= 0.0f) best = Axis{n, best.sep, 0, 0};
  if (best.kind == 1) {
    box_face_contact(t, c, u, e, best, margin, out);
  } else if (best.kind == 2) {
    edge_contact(t, c, u, e, best, out);
  }
  // The face contact is also the fallback when clipping left nothing of an overlap.
  if (best.kind == 0 || out.count == 0) {
    reset(out);
    face_contact(t, c, u, e, margin, out);
  }
}

// ---------------------------------------------------------------------------------------
// Point reduction and internal edges

int reduce_points(const ManifoldPoint* pts, int n, const Vec3& normal, int* pick) {
  if (n <= kMaxManifoldPoints) {
    for (int i = 0; i < n; ++i) pick[i] = i;
    return n;
  }
  // Deepest, then farthest from it, then the largest triangle, then the point farthest
  // outside that triangle: the support polygon stays as wide as the candidates allow.
  int i0 = 0;
  for (int i = 1; i < n; ++i) {
    if (pts[i].depth > pts[i0].depth) i0 = i;
  }
  int i1 = i0 == 0 ? 1 : 0;
  float far = -1.0f;
  for (int i = 0; i < n; ++i) {
    const float d2 = length_sq(pts[i].point - pts[i0].point);
    if (i != i0 && d2 > far) {
      far = d2;
      i1 = i;
    }
  }
  const Vec3 a = pts[i0].point, b = pts[i1].point;
  int i2 = -1;
  float area = 0.0f, signed_area = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float s = glm::dot(glm::cross(b - a, pts[i].point - a), normal);
    if (i != i0 && i != i1 && std::fabs(s) > area) {
      area = std::fabs(s);
      signed_area = s;
      i2 = i;
    }
  }
  pick[0] = i0;
  pick[1] = i1;
  if (i2 < 0) return 2;
  pick[2] = i2;
  const Vec3 c = pts[i2].point;
  const float orient = signed_area > 0.0f ? 1.0f : -1.0f;
  int i3 = -1;
  float outside = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (i == i0 || i == i1 || i == i2) continue;
    const Vec3 p = pts[i].point;
    const float s0 = orient * glm::dot(glm::cross(b - a, p - a), normal);
    const float s1 = orient * glm::dot(glm::cross(c - b, p - b), normal);
    const float s2 = orient * glm::dot(glm::cross(a - c, p - c), normal);
    const float o = -std::min(s0, std::min(s1, s2));
    if (o > outside) {
      outside = o;
      i3 = i;
    }
  }
  if (i3 < 0) return 3;
  pick[3] = i3;
  return 4;
}

void correct_internal_edges(const Triangle& t, const Vec3& center, float margin, Manifold& m) {
  if (m.count == 0) return;
  if (glm::dot(m.normal, t.normal) >= kFaceNormalCos) return;  // a face contact already
  // Where on the triangle does each point touch? A point on an active edge (or its
  // corners) keeps the normal the routine found: that edge really can push sideways.
  const float tol = kOnEdgeTolerance;
  for (int i = 0; i < m.count; ++i) {
    const Vec3 on_tri = m.points[i].point + m.normal * (0.5f * m.points[i].depth);
    for (int k = 0; k < 3; ++k) {
      if (((t.active_edges >> k) & 1u) == 0) continue;
      const Vec3 edge = t.v[(k + 1) % 3] - t.v[k];
      const float len = std::sqrt(length_sq(edge));
      if (glm::dot(on_tri - t.v[k], glm::cross(t.normal, edge)) <= tol * len) return;
    }
  }
  // Only internal edges. A shape centred beyond this triangle lies over the neighbour (a
  // flat or concave neighbour's face covers that side), which reports the contact along
  // its own normal: here it would only be a ghost. A shape centred over this triangle
  // touches it tilted: take the face normal and measure each point's depth along it,
  // from the point on the shape's surface.
  for (int k = 0; k < 3; ++k) {
    if (glm::dot(center - t.v[k], glm::cross(t.v[(k + 1) % 3] - t.v[k], t.normal)) > 0.0f) {
      reset(m);
      return;
    }
  }
  int kept = 0;
  for (int i = 0; i < m.count; ++i) {
    const Vec3 on_b = m.points[i].point - m.normal * (0.5f * m.points[i].depth);
    const float depth = glm::dot(t.v[0] - on_b, t.normal);
    if (depth < -margin) continue;
    m.points[kept++] = ManifoldPoint{on_b + t.normal * (0.5f * depth), depth, m.points[i].id};
  }
  m.count = kept;
  m.normal = t.normal;
}

}  // namespace keel::sim::tri
