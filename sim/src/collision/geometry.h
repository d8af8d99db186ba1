// Small geometric helpers shared by the narrowphase routines (internal to sim/src).
//
// Determinism: only + - * / and sqrt, evaluated in a fixed order. We normalise with our
// own `a / sqrt(len2)` instead of glm::normalize so that no SIMD reciprocal-sqrt estimate
// can ever sneak in through a glm configuration macro.
#pragma once

#include <keel/sim/math.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "narrowphase.h"

namespace keel::sim::np {

/// Lengths below this (metres) are treated as zero whenever a direction has to be derived
/// from them: a shorter vector's direction is dominated by rounding.
inline constexpr float kTinyDistance = 1.0e-6f;
inline constexpr float kTinyDistanceSq = kTinyDistance * kTinyDistance;

/// |da x db|^2 / (|da|^2 |db|^2) below this: segments treated as parallel when computing
/// closest points (sin(angle) < 1e-3). Below it the 2x2 solve is mostly cancellation noise,
/// and the distance function is so flat along the segments that any choice is as good.
inline constexpr float kParallelSinSq = 1.0e-6f;

/// "Lying flat" tolerance for two-point contacts (capsule on a face, capsule beside a
/// capsule): about 3 degrees. sin(3 deg) = 0.0523, cos(3 deg) = 0.99863.
inline constexpr float kFlatSin = 0.0523f;
inline constexpr float kFlatCos = 0.99863f;

/// Preference of face axes over edge axes in separating-axis tests, in separation terms
/// (separation = -penetration). An edge axis wins only if its separation beats
/// kSatEdgeRelTol * face + kSatAbsTol; face B beats face A only if it beats
/// kSatFaceRelTol * A + kSatAbsTol. Near-equal axes thus resolve to the same feature every
/// tick, so a resting stack neither flickers between features nor loses its warm start.
inline constexpr float kSatEdgeRelTol = 0.95f;
inline constexpr float kSatFaceRelTol = 0.98f;
inline constexpr float kSatAbsTol = 0.0025f;  ///< metres; capped at kSatAbsTolScale * size

/// The absolute preference never exceeds this fraction of the smallest half extent /
/// radius involved, so tiny shapes are not pushed onto the wrong feature.
inline constexpr float kSatAbsTolScale = 0.02f;

/// Gaps (positive separations) above this are only seen with continuous collision's wide
/// margins; there the relative preference applies to the gap's size, so that a clearly
/// separated face is not beaten by an edge axis with the same gap (rel * gap < gap).
inline constexpr float kWideGap = 0.02f;

/// The separation a candidate axis must exceed to beat an axis with separation `sep`,
/// given a relative preference `rel` (< 1) and an absolute one `tol`.
inline float sat_beat(float rel, float sep, float tol) {
  return sep > kWideGap ? sep + (1.0f - rel) * sep + tol : rel * sep + tol;
}

/// |axis_a x axis_b|^2 below this: edge-pair axes are skipped (angle < ~0.18 degrees).
/// Such an axis is nearly a face axis already and normalising it amplifies rounding.
inline constexpr float kEdgeSkipSinSq = 1.0e-5f;

/// A two-point contact whose points are closer together than this collapses to one point.
inline constexpr float kMinPairSpan = 1.0e-3f;

inline float clamp01(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
inline float length_sq(const Vec3& v) { return glm::dot(v, v); }
inline float sign_of(float x) { return x >= 0.0f ? 1.0f : -1.0f; }  // 0 counts as +

/// Rotates a world direction into a frame whose columns are its axes (= transpose * v).
inline Vec3 dir_to_local(const Mat3& r, const Vec3& v) {
  return Vec3(glm::dot(r[0], v), glm::dot(r[1], v), glm::dot(r[2], v));
}
/// Rotates a local direction into world space (= r * v, spelled out for a fixed order).
inline Vec3 dir_to_world(const Mat3& r, const Vec3& v) { return r[0] * v.x + r[1] * v.y + r[2] * v.z; }
inline Vec3 to_local(const ShapeGeom& s, const Vec3& w) { return dir_to_local(s.rotation, w - s.position); }
inline Vec3 to_world(const ShapeGeom& s, const Vec3& l) { return s.position + dir_to_world(s.rotation, l); }

/// World-space end points of a capsule's segment (equal when half_height is 0).
inline void capsule_segment(const ShapeGeom& c, Vec3& p0, Vec3& p1) {
  const Vec3 half = c.rotation[1] * c.half_height;
  p0 = c.position - half;
  p1 = c.position + half;
}

/// Parameter in [0, 1] of the point of segment [p0, p0 + d] closest to `x`
/// (0 for a zero-length segment).
inline float closest_on_segment(const Vec3& p0, const Vec3& d, const Vec3& x) {
  const float dd = glm::dot(d, d);
  return dd > kTinyDistanceSq ? clamp01(glm::dot(x - p0, d) / dd) : 0.0f;
}

struct SegmentPair {
  float s = 0.0f;  ///< parameter on segment a
  float t = 0.0f;  ///< parameter on segment b
  Vec3 on_a{0.0f};
  Vec3 on_b{0.0f};
};

/// Closest points of segments [a0, a1] and [b0, b1]. A zero-length segment acts as a point;
/// (nearly) parallel segments start from s = 0, a deterministic pick among equal answers.
inline SegmentPair closest_segments(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
  const Vec3 da = a1 - a0;
  const Vec3 db = b1 - b0;
  const Vec3 r = a0 - b0;
  const float aa = glm::dot(da, da);
  const float bb = glm::dot(db, db);
  const float fb = glm::dot(db, r);
  float s = 0.0f;
  float t = 0.0f;
  if (aa <= kTinyDistanceSq) {
    if (bb > kTinyDistanceSq) t = clamp01(fb / bb);  // a is a point: project it onto b
  } else {
    const float ca = glm::dot(da, r);
    if (bb <= kTinyDistanceSq) {
      s = clamp01(-ca / aa);  // b is a point: project it onto a
    } else {
      // Minimise |r + s da - t db|^2: the two stationarity equations, then clamp.
      const float ab = glm::dot(da, db);
      const float denom = aa * bb - ab * ab;  // |da x db|^2
      if (denom > kParallelSinSq * aa * bb) s = clamp01((ab * fb - ca * bb) / denom);
      t = (ab * s + fb) / bb;
      if (t < 0.0f) {
        t = 0.0f;
        s = clamp01(-ca / aa);
      } else if (t > 1.0f) {
        t = 1.0f;
        s = clamp01((ab - ca) / aa);
      }
    }
  }
  return SegmentPair{s, t, a0 + da * s, b0 + db * t};
}

/// Unit vector of `v`, or `fallback` when `v` is too short to have a reliable direction.
inline Vec3 normalize_or(const Vec3& v, const Vec3& fallback) {
  const float len2 = glm::dot(v, v);
  return len2 > kTinyDistanceSq ? v / std::sqrt(len2) : fallback;
}

/// Resets a manifold to "no contact".
inline void reset(Manifold& m) {
  m.count = 0;
  m.normal = Vec3(0.0f, 1.0f, 0.0f);
}

/// Appends a point; callers never exceed kMaxManifoldPoints (asserted by construction).
inline void add_point(Manifold& m, const Vec3& p, float depth, uint32_t id) {
  ManifoldPoint& mp = m.points[m.count++];
  mp.point = p;
  mp.depth = depth;
  mp.id = id;
}

/// The point midway between the two surfaces for a round shape of radius `r` whose core
/// point `q` (centre or segment point) touches along unit normal `n` (pointing away from
/// the round shape) with penetration `depth`: its surface is at q + n r, the other
/// surface depth behind that, so the middle is q + n (r - depth / 2).
inline Vec3 round_contact_point(const Vec3& q, const Vec3& n, float r, float depth) {
  return q + n * (r - 0.5f * depth);
}

}  // namespace keel::sim::np
