// Box against box: separating-axis test over the 15 candidate axes, then either a clipped
// face manifold (up to 4 points) or a single edge-edge point.
//
// Feature ids (uint32):
//   face contact: bits 0-5  clip key of the point (see clip.h),
//                 bits 6-8  incident face, bits 9-11 reference face
//                 (face = 2 * axis + (outward normal along -axis)),
//                 bit 12    set when the reference face belongs to box B;
//   edge contact: bit 14 set, bits 0-1 A's edge axis, bits 2-3 B's edge axis, bits 4-5 /
//                 6-7 which of the four parallel edges of A / B (sign bits of the other
//                 two axes, in increasing axis order).
// All of it is determined by the touching features alone, so ids survive small motion.
#include <limits>

#include "clip.h"
#include "geometry.h"

namespace keel::sim {
namespace {

using np::add_point;

/// A view of a placed box: its centre, axes (the rotation's columns) and half extents,
/// read where the collider keeps them. Copying them into a box of their own made the
/// compiler store them in pieces and load them back whole, a stall on every pair.
struct Box {
  const Vec3& c;
  const Mat3& axis;
  const Vec3& h;
};

Box make_box(const ShapeGeom& s) { return Box{s.position, s.rotation, s.half_extents}; }

/// The axis the SAT settled on. `normal` is unit, world space, from A to B.
struct SatAxis {
  float sep = 0.0f;
  Vec3 normal{0.0f};
  int i = 0;          ///< face axis of A / B, or A's edge axis
  int j = 0;          ///< B's edge axis (edge contacts only)
  float sign = 1.0f;  ///< face axes: the normal is axis * sign
};

// ----------------------------------------------------------------------------- SAT

/// Precomputed relation of the two boxes: R[i][j] = A_i . B_j, t = (cB - cA) in A's frame.
struct Relation {
  float r[3][3];
  float abs_r[3][3];
  Vec3 d;  ///< cB - cA, world
  float t[3];
};

Relation relate(const Box& a, const Box& b) {
  Relation rel;  // every field is written below
  rel.d = b.c - a.c;
  for (int i = 0; i < 3; ++i) {
    rel.t[i] = glm::dot(rel.d, a.axis[i]);
    for (int j = 0; j < 3; ++j) {
      rel.r[i][j] = glm::dot(a.axis[i], b.axis[j]);
      rel.abs_r[i][j] = std::abs(rel.r[i][j]);
    }
  }
  return rel;
}

/// Best face axis of A (largest separation, lowest index on ties).
SatAxis best_face_a(const Box& a, const Box& b, const Relation& rel) {
  SatAxis best;
  for (int i = 0; i < 3; ++i) {
    const float rb = b.h[0] * rel.abs_r[i][0] + b.h[1] * rel.abs_r[i][1] + b.h[2] * rel.abs_r[i][2];
    const float sep = std::abs(rel.t[i]) - a.h[i] - rb;
    if (i == 0 || sep > best.sep)
      best = SatAxis{sep, a.axis[i] * np::sign_of(rel.t[i]), i, 0, np::sign_of(rel.t[i])};
  }
  return best;
}

/// Best face axis of B.
SatAxis best_face_b(const Box& a, const Box& b, const Relation& rel) {
  SatAxis best;
  for (int j = 0; j < 3; ++j) {
    const float ra = a.h[0] * rel.abs_r[0][j] + a.h[1] * rel.abs_r[1][j] + a.h[2] * rel.abs_r[2][j];
    const float dist = glm::dot(rel.d, b.axis[j]);
    const float sep = std::abs(dist) - ra - b.h[j];
    if (j == 0 || sep > best.sep) best = SatAxis{sep, b.axis[j] * np::sign_of(dist), j, 0, np::sign_of(dist)};
  }
  return best;
}

/// Best edge-pair axis A_i x B_j, skipping near-parallel pairs; false when all are.
///
/// In A's frame the axis is L = e_i x b_j with b_j = (R[0][j], R[1][j], R[2][j]). With
/// (i, i1, i2) and (j, j1, j2) cyclic, L = -R[i2][j] e_i1 + R[i1][j] e_i2, and because B's
/// frame is orthonormal L . b_j1 = R[i][j2], L . b_j2 = -R[i][j1]: every projection is a
/// product of entries of R, so no axis costs more than a handful of multiplies.
bool best_edge(const Box& a, const Box& b, const Relation& rel, SatAxis& best) {
  bool found = false;
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3;
    const int i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3;
      const int j2 = (j + 2) % 3;
      const float l2 = rel.r[i1][j] * rel.r[i1][j] + rel.r[i2][j] * rel.r[i2][j];  // = 1 - R[i][j]^2
      if (l2 <= np::kEdgeSkipSinSq) continue;
      const float ra = a.h[i1] * rel.abs_r[i2][j] + a.h[i2] * rel.abs_r[i1][j];
      const float rb = b.h[j1] * rel.abs_r[i][j2] + b.h[j2] * rel.abs_r[i][j1];
      const float dist = rel.t[i2] * rel.r[i1][j] - rel.t[i1] * rel.r[i2][j];
      const float len = std::sqrt(l2);
      const float sep = (std::abs(dist) - ra - rb) / len;
      if (!found || sep > best.sep) {
        const float s = np::sign_of(dist) / len;
        const Vec3 world = a.axis[i2] * (rel.r[i1][j] * s) - a.axis[i1] * (rel.r[i2][j] * s);
        best = SatAxis{sep, world, i, j, 1.0f};
        found = true;
      }
    }
  }
  return found;
}

// ----------------------------------------------------------------------------- clipping

/// Clipping state for a box face: four incident vertices plus one per side plane (see
/// clip.h for the keys); clip keys fit bits 0-5 of the feature id.
using Polygon = np::ClipPolygon<12>;
using Candidate = np::ClipCandidate;

/// Builds the incident face of `inc` against reference normal n_ref: the face whose normal
/// is most anti-parallel to it (lowest axis on ties). Returns the face index.
int incident_face(const Box& inc, const Vec3& n_ref, Polygon& poly) {
  int k = 0;
  float best = -1.0f;
  float dk = 0.0f;
  for (int j = 0; j < 3; ++j) {
    const float d = glm::dot(inc.axis[j], n_ref);
    if (std::abs(d) > best) {
      best = std::abs(d);
      k = j;
      dk = d;
    }
  }
  const float s = dk > 0.0f ? -1.0f : 1.0f;  // outward normal facing the reference face
  const int u = (k + 1) % 3;
  const int v = (k + 2) % 3;
  const Vec3 centre = inc.c + inc.axis[k] * (s * inc.h[k]);
  const Vec3 du = inc.axis[u] * inc.h[u];
  const Vec3 dv = inc.axis[v] * inc.h[v];
  // Fixed winding (+u+v, -u+v, -u-v, +u-v): vertex e and edge e are the same every tick.
  const Vec3 corners[4] = {centre + du + dv, centre - du + dv, centre - du - dv, centre + du - dv};
  poly.n = 0;
  for (int e = 0; e < 4; ++e) poly.push(corners[e], uint16_t(e), uint16_t(e));
  return 2 * k + (s < 0.0f ? 1 : 0);
}

/// Face contact: clip the incident face of `inc` against the side planes of reference face
/// (axis ra, outward sign rs) of `ref`, keep points within the margin, reduce to four.
void face_contact(const Box& ref, const Box& inc, int ra, float rs, bool ref_is_b, float margin,
                  Manifold& out) {
  const Vec3 n_ref = ref.axis[ra] * rs;  // points from ref towards inc
  Polygon buf[2];
  const int inc_face = incident_face(inc, n_ref, buf[0]);

  // Side planes with a small inside slop so an incident vertex lying on a side plane (equal
  // boxes stacked flush) stays a vertex instead of flickering between vertex and crossing.
  const int u = (ra + 1) % 3;
  const int v = (ra + 2) % 3;
  const float slop = std::min(1.0e-3f, 0.01f * std::min(ref.h[u], ref.h[v]));
  const Vec3 side[4] = {ref.axis[u], -ref.axis[u], ref.axis[v], -ref.axis[v]};
  const float extent[4] = {ref.h[u], ref.h[u], ref.h[v], ref.h[v]};
  int cur = 0;
  for (int s = 0; s < 4; ++s) {
    np::clip_polygon<4, 4>(buf[cur], side[s], glm::dot(side[s], ref.c) + extent[s], slop, s, buf[1 - cur]);
    cur = 1 - cur;
  }

  const float face_offset = glm::dot(n_ref, ref.c) + ref.h[ra];
  const uint32_t base =
      uint32_t(inc_face) << 6 | uint32_t(2 * ra + (rs < 0.0f ? 1 : 0)) << 9 | (ref_is_b ? 1u << 12 : 0u);
  Candidate cand[Polygon::kCapacity];
  int n = 0;
  const Polygon& poly = buf[cur];
  for (int i = 0; i < poly.n; ++i) {
    const float sep = glm::dot(n_ref, poly.v[i].p) - face_offset;
    if (sep <= margin) cand[n++] = Candidate{poly.v[i].p, -sep, base | poly.v[i].key};
  }

  out.normal = ref_is_b ? -n_ref : n_ref;
  int pick[4] = {0, 1, 2, 3};
  const int count = n > kMaxManifoldPoints ? np::reduce_to_four<Polygon::kCapacity>(cand, n, n_ref, pick) : n;
  for (int i = 0; i < count; ++i) {
    const Candidate& k = cand[pick[i]];
    // Midway between the incident point and its projection onto the reference face.
    add_point(out, k.p - n_ref * (0.5f * -k.depth), k.depth, k.id);
  }
}

/// Support edge of box `b` along axis `e` in direction `dir`: its centre, and the sign
/// bits of the other two axes (for the feature id).
Vec3 support_edge(const Box& b, int e, const Vec3& dir, uint32_t& bits) {
  Vec3 centre = b.c;
  bits = 0;
  int bit = 0;
  for (int k = 0; k < 3; ++k) {
    if (k == e) continue;
    const float s = np::sign_of(glm::dot(b.axis[k], dir));
    centre += b.axis[k] * (s * b.h[k]);
    if (s < 0.0f) bits |= 1u << bit;
    ++bit;
  }
  return centre;
}

/// Edge contact: one point midway between the closest points of the two support edges.
void edge_contact(const Box& a, const Box& b, const SatAxis& axis, Manifold& out) {
  uint32_t bits_a = 0;
  uint32_t bits_b = 0;
  const Vec3 ca = support_edge(a, axis.i, axis.normal, bits_a);
  const Vec3 cb = support_edge(b, axis.j, -axis.normal, bits_b);
  const Vec3 ha = a.axis[axis.i] * a.h[axis.i];
  const Vec3 hb = b.axis[axis.j] * b.h[axis.j];
  const np::SegmentPair cp = np::closest_segments(ca - ha, ca + ha, cb - hb, cb + hb);
  out.normal = axis.normal;
  const uint32_t id = 1u << 14 | uint32_t(axis.i) | uint32_t(axis.j) << 2 | bits_a << 4 | bits_b << 6;
  add_point(out, (cp.on_a + cp.on_b) * 0.5f, -axis.sep, id);
}

}  // namespace

void collide_box_box(const ShapeGeom& sa, const ShapeGeom& sb, float margin, Manifold& out) {
  np::reset(out);
  const Box a = make_box(sa);
  const Box b = make_box(sb);
  const Relation rel = relate(a, b);

  const SatAxis fa = best_face_a(a, b, rel);
  if (fa.sep > margin) return;
  const SatAxis fb = best_face_b(a, b, rel);
  if (fb.sep > margin) return;
  SatAxis edge;
  const bool has_edge = best_edge(a, b, rel, edge);
  if (has_edge && edge.sep > margin) return;

  const float smallest =
      std::min(std::min(std::min(a.h[0], a.h[1]), std::min(a.h[2], b.h[0])), std::min(b.h[1], b.h[2]));
  const float tol = std::min(np::kSatAbsTol, np::kSatAbsTolScale * smallest);
  // Prefer A's face, then B's face, then an edge; each must win clearly to be chosen.
  const bool use_b = fb.sep > np::sat_beat(np::kSatFaceRelTol, fa.sep, tol);
  const SatAxis& face = use_b ? fb : fa;
  if (has_edge && edge.sep > np::sat_beat(np::kSatEdgeRelTol, face.sep, tol)) {
    edge_contact(a, b, edge, out);
    return;
  }
  if (use_b) {
    face_contact(b, a, fb.i, -fb.sign, true, margin, out);  // B's reference face looks at A
  } else {
    face_contact(a, b, fa.i, fa.sign, false, margin, out);
  }
}

}  // namespace keel::sim
