// Round shapes against round shapes: sphere-sphere, sphere-capsule, capsule-capsule.
//
// All three reduce to "two core points (or segments) swept by radii": find the closest
// points of the cores, then the contact is along the line joining them. Feature ids: 0 for
// the single closest-point contact; 1 and 2 for the two ends of a side-by-side capsule
// contact (the start and end of the overlap along capsule A).
#include "geometry.h"

namespace keel::sim {
namespace {

using np::add_point;
using np::kTinyDistance;
using np::kTinyDistanceSq;
using np::round_contact_point;

/// One contact between round cores at `ca` (radius ra) and `cb` (radius rb). `fallback` is
/// the normal when the cores coincide and the joining line has no direction.
void round_pair(const Vec3& ca, float ra, const Vec3& cb, float rb, const Vec3& fallback, float margin,
                Manifold& out) {
  np::reset(out);
  const Vec3 d = cb - ca;
  const float dist_sq = np::length_sq(d);
  const float reach = ra + rb + margin;
  if (dist_sq > reach * reach) return;
  const float dist = std::sqrt(dist_sq);
  const Vec3 n = dist > kTinyDistance ? d / dist : fallback;
  const float depth = ra + rb - dist;
  out.normal = n;
  add_point(out, round_contact_point(ca, n, ra, depth), depth, 0);
}

/// Normal for two capsules whose segments touch: perpendicular to both segments when they
/// cross, else perpendicular to A's segment (A's local X is, by construction).
Vec3 touching_segments_normal(const ShapeGeom& a, const ShapeGeom& b) {
  const Vec3 c = glm::cross(a.rotation[1], b.rotation[1]);
  return np::normalize_or(c, a.rotation[0]);
}

/// Two capsules lying side by side touch along a line; a single point would let them roll
/// over each other, so emit the two ends of the overlap of their segments (projected onto
/// A). Returns false (and emits nothing) when the segments are not parallel within ~3
/// degrees or overlap over less than kMinPairSpan.
bool add_side_by_side_points(const Vec3& a0, const Vec3& a1, float ra, const Vec3& b0, const Vec3& b1,
                             float rb, const Vec3& n, float margin, Manifold& out) {
  const Vec3 da = a1 - a0;
  const Vec3 db = b1 - b0;
  const float aa = glm::dot(da, da);
  const float bb = glm::dot(db, db);
  if (aa <= kTinyDistanceSq || bb <= kTinyDistanceSq) return false;
  const Vec3 c = glm::cross(da, db);
  if (glm::dot(c, c) > np::kFlatSin * np::kFlatSin * aa * bb) return false;

  const float tb0 = glm::dot(b0 - a0, da) / aa;
  const float tb1 = glm::dot(b1 - a0, da) / aa;
  const float lo = std::max(0.0f, std::min(tb0, tb1));
  const float hi = std::min(1.0f, std::max(tb0, tb1));
  if ((hi - lo) * std::sqrt(aa) <= np::kMinPairSpan) return false;

  const float ends[2] = {lo, hi};
  for (int i = 0; i < 2; ++i) {
    const Vec3 pa = a0 + da * ends[i];
    const Vec3 pb = b0 + db * np::closest_on_segment(b0, db, pa);
    const float depth = ra + rb - glm::dot(pb - pa, n);
    if (depth >= -margin) add_point(out, round_contact_point(pa, n, ra, depth), depth, uint32_t(1 + i));
  }
  return out.count > 0;
}

}  // namespace

void collide_sphere_sphere(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  round_pair(a.position, a.radius, b.position, b.radius, Vec3(0.0f, 1.0f, 0.0f), margin, out);
}

void collide_sphere_capsule(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  Vec3 b0, b1;
  np::capsule_segment(b, b0, b1);
  const Vec3 db = b1 - b0;
  const Vec3 q = b0 + db * np::closest_on_segment(b0, db, a.position);
  // Centre on the segment: leave sideways (capsule local X is perpendicular to the segment).
  round_pair(a.position, a.radius, q, b.radius, b.rotation[0], margin, out);
}

void collide_capsule_capsule(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  Vec3 a0, a1, b0, b1;
  np::capsule_segment(a, a0, a1);
  np::capsule_segment(b, b0, b1);
  const np::SegmentPair cp = np::closest_segments(a0, a1, b0, b1);
  round_pair(cp.on_a, a.radius, cp.on_b, b.radius, touching_segments_normal(a, b), margin, out);
  if (out.count == 0) return;

  // Same normal, but two points when the capsules lie side by side.
  const Manifold single = out;
  out.count = 0;
  if (!add_side_by_side_points(a0, a1, a.radius, b0, b1, b.radius, out.normal, margin, out)) out = single;
}

}  // namespace keel::sim
