// Round shapes against hulls: sphere-hull and capsule-hull.
//
// While the round shape's core (centre or segment) is outside the hull, GJK gives the
// closest points and the normal. Once the core is inside, the hull face with the least
// penetration gives the normal (edge axes are not tried: a core inside a hull is already a
// deep overlap, and the face axis pushes it out). A capsule lying flat on a face (within
// ~3 degrees, np::kFlatSin/kFlatCos) gets two points: its segment clipped to the face.
// The normal points from the round shape (A) to the hull (B). Feature ids: 0 for a GJK
// point; 0x100 | face for a sphere centre inside; 0x200 | face << 1 | end for a capsule
// on (or in) face `face`, end 0 / 1 the clipped segment end nearer p0 / p1.
#include "geometry.h"
#include "hull_geom.h"
#include "query/convex.h"

namespace keel::sim {
namespace {

using np::add_point;

/// Face of `h` whose plane `p` (and `q`) lie least deep behind: largest min separation.
int least_deep_face(const WorldHull& h, const Vec3& p, const Vec3& q, float& sep) {
  int best = 0;
  sep = -3.4e38f;
  for (int f = 0; f < h.topo.face_count; ++f) {
    const float s = std::min(glm::dot(h.n[f], p), glm::dot(h.n[f], q)) - h.d[f];
    if (s > sep) {
      sep = s;
      best = f;
    }
  }
  return best;
}

/// Clips segment [p0, p1] to the side planes of face `f`; false when nothing is left.
bool clip_to_face(const WorldHull& h, int f, Vec3& p0, Vec3& p1) {
  const HullFace& face = h.topo.faces[f];
  float t0 = 0.0f;
  float t1 = 1.0f;
  const Vec3 d = p1 - p0;
  for (int s = 0; s < face.count; ++s) {
    const Vec3 a = h.v[h.topo.loops[face.first + s]];
    const Vec3 b = h.v[h.topo.loops[face.first + (s + 1) % face.count]];
    const Vec3 side = glm::cross(b - a, h.n[f]);
    const float dist0 = glm::dot(side, p0 - a);  // > 0 outside
    const float dd = glm::dot(side, d);
    if (dd == 0.0f) {
      if (dist0 > 0.0f) return false;
      continue;
    }
    const float t = -dist0 / dd;
    if (dd > 0.0f) t1 = std::min(t1, t);
    else t0 = std::max(t0, t);
    if (t0 > t1) return false;
  }
  const Vec3 s0 = p0 + d * t0;
  p1 = p0 + d * t1;
  p0 = s0;
  return true;
}

/// Up to two points for a segment of radius r resting on (or sunk into) face `f`.
void segment_on_face(const WorldHull& h, int f, Vec3 p0, Vec3 p1, float r, float margin, Manifold& out) {
  if (!clip_to_face(h, f, p0, p1)) return;
  const Vec3 n = h.n[f];  // out of the hull, towards the capsule
  const bool single = np::length_sq(p1 - p0) < np::kMinPairSpan * np::kMinPairSpan;
  out.normal = -n;
  const Vec3 ends[2] = {p0, p1};
  for (int e = 0; e < (single ? 1 : 2); ++e) {
    const float sep = glm::dot(n, ends[e]) - h.d[f];
    const float depth = r - sep;
    if (depth < -margin) continue;
    add_point(out, ends[e] - n * (0.5f * (r + sep)), depth, 0x200u | uint32_t(f) << 1 | uint32_t(e));
  }
}

}  // namespace

void collide_sphere_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  np::reset(out);
  const query::Distance d = query::core_distance(query::point_core(a.position, 0.0f), query::core_of(b));
  if (!d.overlap && d.distance > np::kTinyDistance) {
    if (d.distance - a.radius > margin) return;
    out.normal = (d.on_b - d.on_a) / d.distance;
    const float depth = a.radius - d.distance;
    add_point(out, np::round_contact_point(a.position, out.normal, a.radius, depth), depth, 0);
    return;
  }
  WorldHull scratch;
  const WorldHull& h = placed(b, scratch);
  float sep = 0.0f;
  const int f = least_deep_face(h, a.position, a.position, sep);
  out.normal = -h.n[f];
  const float depth = a.radius - sep;
  add_point(out, a.position - h.n[f] * (0.5f * (a.radius + sep)), depth, 0x100u | uint32_t(f));
}

void collide_capsule_hull(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  np::reset(out);
  Vec3 p0(0.0f);
  Vec3 p1(0.0f);
  np::capsule_segment(a, p0, p1);
  const query::Distance d = query::core_distance(query::core_of(a), query::core_of(b));
  const bool apart = !d.overlap && d.distance > np::kTinyDistance;
  if (apart && d.distance - a.radius > margin) return;
  WorldHull scratch;
  const WorldHull& h = placed(b, scratch);
  if (!apart) {
    float sep = 0.0f;
    const int f = least_deep_face(h, p0, p1, sep);
    segment_on_face(h, f, p0, p1, a.radius, margin, out);
    if (out.count == 0) {  // the segment pokes out past the face's rim: push its deeper end
      const Vec3 q = glm::dot(h.n[f], p0) <= glm::dot(h.n[f], p1) ? p0 : p1;
      out.normal = -h.n[f];
      add_point(out, q - h.n[f] * (0.5f * (a.radius + sep)), a.radius - sep, 0x200u | uint32_t(f) << 1);
    }
    return;
  }
  const Vec3 n = (d.on_b - d.on_a) / d.distance;  // capsule -> hull
  // Flat on a face: the face looks back along n and the segment runs across it.
  const Vec3 axis = np::normalize_or(p1 - p0, Vec3(0.0f));
  int f = 0;
  float best = glm::dot(h.n[0], n);
  for (int k = 1; k < h.topo.face_count; ++k) {
    const float x = glm::dot(h.n[k], n);
    if (x < best) {
      best = x;
      f = k;
    }
  }
  if (-best >= np::kFlatCos && std::abs(glm::dot(axis, h.n[f])) <= np::kFlatSin && axis != Vec3(0.0f)) {
    segment_on_face(h, f, p0, p1, a.radius, margin, out);
    if (out.count > 0) return;
  }
  np::reset(out);
  out.normal = n;
  const float depth = a.radius - d.distance;
  add_point(out, (d.on_a + n * a.radius + d.on_b) * 0.5f, depth, 0);
}

}  // namespace keel::sim
