// Round shapes against boxes: sphere-box and capsule-box.
//
// Both work in the box's local frame, where the box is the axis-aligned [-h, h] and
// closest points are plain clamps. The normal points from the round shape (A) to the box
// (B). Feature ids: 0 for a single point; for a capsule lying flat on face f
// (f = 2 * axis + (outward normal negative)), 0x10 | f << 1 | end, end 0 or 1 being the
// clipped segment end nearer the capsule's -Y or +Y end.
#include "geometry.h"

namespace keel::sim {
namespace {

using np::add_point;
using np::kTinyDistanceSq;

/// Writes one point: `q` is the core point (sphere centre or segment point) in box space,
/// `n_local` the unit normal in box space.
void emit_local(const ShapeGeom& box, const Vec3& q, const Vec3& n_local, float r, float depth, uint32_t id,
                Manifold& out) {
  out.normal = np::dir_to_world(box.rotation, n_local);
  add_point(out, np::to_world(box, np::round_contact_point(q, n_local, r, depth)), depth, id);
}

/// Unit vector along local axis k with sign s.
Vec3 axis_vec(int k, float s) {
  Vec3 v(0.0f);
  v[k] = s;
  return v;
}

/// Smallest absolute SAT tolerance for these sizes (see kSatAbsTolScale).
float abs_tolerance(float smallest_size) {
  return std::min(np::kSatAbsTol, np::kSatAbsTolScale * smallest_size);
}

// ----------------------------------------------------------------------------- capsule

/// The capsule's segment in box space, p(t) = p0 + d t for t in [0, 1].
struct CapsuleInBox {
  const ShapeGeom& box;
  Vec3 p0, p1, d, h;
  float r;
  float margin;
};

struct SegmentBoxClosest {
  float t = 0.0f;
  float dist_sq = 0.0f;
};

/// Squared distance from local point x to the box [-h, h].
float box_dist_sq(const Vec3& x, const Vec3& h) { return np::length_sq(x - glm::clamp(x, -h, h)); }

/// Closest point of the segment to the box. dist^2(t) is convex and piecewise quadratic:
/// a piece ends where a coordinate of p(t) crosses a face plane (at most 6 crossings). On
/// one piece the set of coordinates outside the box is fixed, so its minimum is a single
/// linear solve; the answer is the best piece (first one on exact ties).
SegmentBoxClosest closest_segment_box(const Vec3& p0, const Vec3& d, const Vec3& h) {
  float ts[8];
  int n = 0;
  ts[n++] = 0.0f;
  ts[n++] = 1.0f;
  for (int k = 0; k < 3; ++k) {
    if (d[k] == 0.0f) continue;
    const float tlo = (-h[k] - p0[k]) / d[k];
    const float thi = (h[k] - p0[k]) / d[k];
    if (tlo > 0.0f && tlo < 1.0f) ts[n++] = tlo;
    if (thi > 0.0f && thi < 1.0f) ts[n++] = thi;
  }
  for (int i = 1; i < n; ++i) {  // insertion sort: equal values are interchangeable
    const float v = ts[i];
    int j = i - 1;
    for (; j >= 0 && ts[j] > v; --j) ts[j + 1] = ts[j];
    ts[j + 1] = v;
  }
  SegmentBoxClosest best{0.0f, box_dist_sq(p0, h)};
  for (int i = 0; i + 1 < n; ++i) {
    const float ta = ts[i];
    const float tb = ts[i + 1];
    if (!(tb > ta)) continue;
    const float tm = 0.5f * (ta + tb);
    float num = 0.0f;
    float den = 0.0f;
    for (int k = 0; k < 3; ++k) {
      const float x = p0[k] + d[k] * tm;
      const float bound = x > h[k] ? h[k] : (x < -h[k] ? -h[k] : x);
      if (bound == x) continue;  // inside this slab over the whole piece
      num += d[k] * (bound - p0[k]);
      den += d[k] * d[k];
    }
    // No outside coordinate (or none that moves): dist^2 is constant on the piece.
    const float t = den > 0.0f ? np::clampf(num / den, ta, tb) : tm;
    const float g = box_dist_sq(p0 + d * t, h);
    if (g < best.dist_sq) best = SegmentBoxClosest{t, g};
  }
  return best;
}

/// Keeps the t-range where |x0 + dx t| <= hh (one slab of a Liang-Barsky clip).
bool clip_slab(float x0, float dx, float hh, float& t0, float& t1) {
  if (dx == 0.0f) return x0 >= -hh && x0 <= hh;
  float ta = (-hh - x0) / dx;
  float tb = (hh - x0) / dx;
  if (ta > tb) std::swap(ta, tb);
  t0 = std::max(t0, ta);
  t1 = std::min(t1, tb);
  return t0 <= t1;
}

/// Capsule lying flat on face (axis k, outward sign m): the segment clipped to the face
/// rectangle gives two points, each at its own depth, so the capsule cannot rock. Returns
/// false (emitting nothing) when the segment is not parallel to the face within ~3
/// degrees or its clipped part is too short.
bool add_face_points(const CapsuleInBox& c, int k, float m, Manifold& out) {
  const float dd = np::length_sq(c.d);
  if (c.d[k] * c.d[k] > np::kFlatSin * np::kFlatSin * dd) return false;
  float t0 = 0.0f;
  float t1 = 1.0f;
  const int u = (k + 1) % 3;
  const int v = (k + 2) % 3;
  if (!clip_slab(c.p0[u], c.d[u], c.h[u], t0, t1) || !clip_slab(c.p0[v], c.d[v], c.h[v], t0, t1))
    return false;
  if ((t1 - t0) * (t1 - t0) * dd <= np::kMinPairSpan * np::kMinPairSpan) return false;

  const Vec3 n_local = axis_vec(k, -m);
  const uint32_t face = uint32_t(2 * k + (m < 0.0f ? 1 : 0));
  const float ts[2] = {t0, t1};
  for (int i = 0; i < 2; ++i) {
    const Vec3 q = c.p0 + c.d * ts[i];
    const float depth = c.r - (m * q[k] - c.h[k]);
    if (depth >= -c.margin) emit_local(c.box, q, n_local, c.r, depth, 0x10u | face << 1 | uint32_t(i), out);
  }
  return out.count > 0;
}

/// Segment outside the box: the contact is along the closest-point line, unless the
/// capsule lies flat on a face.
void segment_outside(const CapsuleInBox& c, const SegmentBoxClosest& cl, Manifold& out) {
  const float reach = c.r + c.margin;
  if (cl.dist_sq > reach * reach) return;
  const Vec3 s = c.p0 + c.d * cl.t;
  const float dist = std::sqrt(cl.dist_sq);
  const Vec3 n = (glm::clamp(s, -c.h, c.h) - s) / dist;
  int k = 0;
  for (int j = 1; j < 3; ++j) {
    if (std::abs(n[j]) > std::abs(n[k])) k = j;
  }
  if (std::abs(n[k]) >= np::kFlatCos && add_face_points(c, k, -np::sign_of(n[k]), out)) return;
  emit_local(c.box, s, n, c.r, c.r - dist, 0, out);
}

/// One candidate axis of the segment-in-box SAT: moving the segment by `pen` along `u`
/// frees it. `edge` marks the cross product of the segment with box axis k.
struct SegmentAxis {
  float pen = 0.0f;
  Vec3 u{0.0f};
  int k = 0;
  bool edge = false;
};

/// Penetration of the segment interval [lo, hi] into the box interval [-rb, rb] along a
/// unit axis, leaving whichever way is shorter (+ on ties).
SegmentAxis axis_penetration(float lo, float hi, float rb, const Vec3& axis, int k, bool edge) {
  const float pen_plus = rb - lo;
  const float pen_minus = hi + rb;
  if (pen_plus <= pen_minus) return SegmentAxis{pen_plus, axis, k, edge};
  return SegmentAxis{pen_minus, -axis, k, edge};
}

/// The segment touches or crosses the box (deep penetration): closest points give no
/// direction, so run a SAT over the box faces and segment x box-edge axes (complete for a
/// segment against a box) and leave along the axis that frees the segment soonest.
void segment_inside(const CapsuleInBox& c, Manifold& out) {
  SegmentAxis face;
  for (int k = 0; k < 3; ++k) {
    const SegmentAxis a = axis_penetration(std::min(c.p0[k], c.p1[k]), std::max(c.p0[k], c.p1[k]), c.h[k],
                                           axis_vec(k, 1.0f), k, false);
    if (k == 0 || a.pen < face.pen) face = a;
  }
  SegmentAxis best = face;
  const float dd = np::length_sq(c.d);
  const float tol = abs_tolerance(std::min(std::min(c.h.x, c.h.y), std::min(c.h.z, c.r)));
  for (int k = 0; k < 3; ++k) {
    Vec3 l = glm::cross(c.d, axis_vec(k, 1.0f));
    const float l2 = np::length_sq(l);
    if (l2 <= np::kEdgeSkipSinSq * dd) continue;  // also skips a zero-length segment
    l = l / std::sqrt(l2);
    const float rb = c.h.x * std::abs(l.x) + c.h.y * std::abs(l.y) + c.h.z * std::abs(l.z);
    const float x = glm::dot(c.p0, l);  // the segment projects to one point (l is normal to d)
    const SegmentAxis a = axis_penetration(x, x, rb, l, k, true);
    // Edge axes must beat the best face clearly (separation = -pen).
    if (-a.pen > -np::kSatEdgeRelTol * face.pen + tol && a.pen < best.pen) best = a;
  }

  const Vec3 n_local = -best.u;  // the box moves opposite to the segment
  const float depth = best.pen + c.r;
  if (!best.edge) {
    const float m = best.u[best.k];
    if (add_face_points(c, best.k, m, out)) return;
    // Deepest end along the exit direction (p0 on ties).
    const Vec3 q = glm::dot(c.p1, best.u) < glm::dot(c.p0, best.u) ? c.p1 : c.p0;
    emit_local(c.box, q, n_local, c.r, depth, 0, out);
    return;
  }
  // Edge axis: the box edge along k on the exit side, against the segment.
  Vec3 mid(0.0f);
  for (int j = 0; j < 3; ++j) mid[j] = j == best.k ? 0.0f : np::sign_of(best.u[j]) * c.h[j];
  const Vec3 half = axis_vec(best.k, c.h[best.k]);
  const np::SegmentPair cp = np::closest_segments(c.p0, c.p1, mid - half, mid + half);
  emit_local(c.box, cp.on_a, n_local, c.r, depth, 0, out);
}

}  // namespace

void collide_sphere_box(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  np::reset(out);
  const Vec3 c = np::to_local(b, a.position);
  const Vec3 h = b.half_extents;
  const Vec3 d = glm::clamp(c, -h, h) - c;
  const float dist_sq = np::length_sq(d);
  if (dist_sq > kTinyDistanceSq) {
    const float reach = a.radius + margin;
    if (dist_sq > reach * reach) return;
    const float dist = std::sqrt(dist_sq);
    emit_local(b, c, d / dist, a.radius, a.radius - dist, 0, out);
    return;
  }
  // Centre inside (or on) the box: leave through the nearest face (lowest axis on ties,
  // + side when the centre is on the mid-plane), so coincident centres are well defined.
  int k = 0;
  for (int j = 1; j < 3; ++j) {
    if (h[j] - std::abs(c[j]) < h[k] - std::abs(c[k])) k = j;
  }
  const float pen = h[k] - std::abs(c[k]);
  emit_local(b, c, axis_vec(k, -np::sign_of(c[k])), a.radius, a.radius + pen, 0, out);
}

void collide_capsule_box(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  np::reset(out);
  Vec3 w0, w1;
  np::capsule_segment(a, w0, w1);
  const Vec3 p0 = np::to_local(b, w0);
  const Vec3 p1 = np::to_local(b, w1);
  const CapsuleInBox c{b, p0, p1, p1 - p0, b.half_extents, a.radius, margin};
  const SegmentBoxClosest cl = closest_segment_box(c.p0, c.d, c.h);
  if (cl.dist_sq > kTinyDistanceSq) {
    segment_outside(c, cl, out);
  } else {
    segment_inside(c, out);
  }
}

}  // namespace keel::sim
