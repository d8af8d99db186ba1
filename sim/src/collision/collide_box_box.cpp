// Box against box: separating-axis test over the 15 candidate axes, then either a clipped
// face manifold (up to 4 points) or a single edge-edge point.
//
// Feature ids (uint32):
//   face contact: bits 0-5  clip key of the point (see ClipVertex::key),
//                 bits 6-8  incident face, bits 9-11 reference face
//                 (face = 2 * axis + (outward normal along -axis)),
//                 bit 12    set when the reference face belongs to box B;
//   edge contact: bit 14 set, bits 0-1 A's edge axis, bits 2-3 B's edge axis, bits 4-5 /
//                 6-7 which of the four parallel edges of A / B (sign bits of the other
//                 two axes, in increasing axis order).
// All of it is determined by the touching features alone, so ids survive small motion.
#include <limits>

#include "geometry.h"

namespace keel::sim {
namespace {

using np::add_point;

struct Box {
  Vec3 c;
  Vec3 axis[3];
  float h[3];
};

Box make_box(const ShapeGeom& s) {
  return Box{s.position,
             {s.rotation[0], s.rotation[1], s.rotation[2]},
             {s.half_extents.x, s.half_extents.y, s.half_extents.z}};
}

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

/// A vertex of the incident polygon while it is clipped. `key` names the features that
/// made it: 0-3 an incident-face vertex; 4 + 4 * edge + plane the crossing of polygon
/// edge `edge` with reference side plane `plane`. `edge` labels the edge that starts at
/// this vertex: 0-3 part of incident edge e (vertex e to e + 1), 4 + s lying on side plane
/// s (created by that plane's clip).
struct ClipVertex {
  Vec3 p;
  uint16_t key;  // 16-bit fields fill the struct to 16 bytes: copies are single moves
  uint16_t edge;
};

/// Convex polygon of at most 8 vertices (4 + one per clip plane); the extra room absorbs
/// any rounding-induced extra crossing, and push() drops beyond it rather than overflow.
struct Polygon {
  static constexpr int kCapacity = 12;
  ClipVertex v[kCapacity];
  int n = 0;
  void push(const ClipVertex& x) {
    if (n < kCapacity) v[n++] = x;
  }
};

/// Sutherland-Hodgman against one plane: keeps dot(normal, p) <= offset + slop. Side
/// plane `s` labels new vertices and the polygon edges that run along it. The slop only
/// decides what counts as inside (so a vertex lying on the plane stays a vertex under
/// jitter); a crossing is then moved back by the slop onto the true plane.
void clip_polygon(const Polygon& in, const Vec3& normal, float offset, float slop, int s, Polygon& out) {
  offset += slop;
  out.n = 0;
  if (in.n == 0) return;
  const ClipVertex* prev = &in.v[in.n - 1];
  float dprev = glm::dot(normal, prev->p) - offset;
  for (int i = 0; i < in.n; ++i) {
    const ClipVertex& cur = in.v[i];
    const float dcur = glm::dot(normal, cur.p) - offset;
    if ((dprev <= 0.0f) != (dcur <= 0.0f)) {
      const Vec3 p = prev->p + (cur.p - prev->p) * (dprev / (dprev - dcur)) - normal * slop;
      const auto key = uint16_t(4 + 4 * prev->edge + s);
      // Entering: the new vertex continues the edge it lies on. Leaving: the polygon now
      // runs along plane s until it re-enters.
      out.push(ClipVertex{p, key, dcur <= 0.0f ? prev->edge : uint16_t(4 + s)});
    }
    if (dcur <= 0.0f) out.push(cur);
    prev = &cur;
    dprev = dcur;
  }
}

/// A point that survived clipping and the margin test.
struct Candidate {
  Vec3 p;       ///< on the incident face
  float depth;  ///< -separation from the reference face
  uint32_t id;
};

/// Index of the first value within `rel * best + abs` of the largest value `best`, or -1
/// when no value exceeds `floor`. Taking the first near-best value rather than the exact
/// best keeps the choice steady while a resting body rocks by rounding-sized amounts.
int first_near_max(const float* v, int n, float rel, float abs, float floor) {
  float best = floor;
  for (int i = 0; i < n; ++i) best = std::max(best, v[i]);
  if (!(best > floor)) return -1;
  const float threshold = best - (rel * std::abs(best) + abs);
  for (int i = 0; i < n; ++i) {
    if (v[i] > floor && v[i] >= threshold) return i;
  }
  return -1;
}

/// How close to the best the distance / area picks must be (fraction) to count as a tie.
constexpr float kPickRelTol = 0.02f;

/// Reduces more than four candidates to four: the one farthest from the candidates'
/// centroid, the one farthest from that, then the two that span the largest area on
/// either side of that diagonal. The picks are purely geometric: choosing by depth
/// first lets rounding-sized tilts swap the whole point set of a box resting turned on
/// another (an octagon of candidates), which throws away the warm start every time it
/// happens and keeps a stack wobbling. Near-ties go to the lowest index.
int reduce_to_four(const Candidate* c, int n, const Vec3& normal, int pick[4]) {
  float v[Polygon::kCapacity];
  Vec3 centroid(0.0f);
  for (int i = 0; i < n; ++i) centroid += c[i].p;
  centroid *= 1.0f / float(n);
  for (int i = 0; i < n; ++i) v[i] = np::length_sq(c[i].p - centroid);
  const int i0 = first_near_max(v, n, kPickRelTol, 0.0f, -1.0f);
  for (int i = 0; i < n; ++i) v[i] = np::length_sq(c[i].p - c[i0].p);
  const int i1 = first_near_max(v, n, kPickRelTol, 0.0f, 0.0f);
  int count = 0;
  pick[count++] = i0;
  if (i1 < 0) return count;
  pick[count++] = i1;
  const Vec3 diag = c[i1].p - c[i0].p;
  for (int i = 0; i < n; ++i) v[i] = glm::dot(glm::cross(diag, c[i].p - c[i0].p), normal);
  const int i2 = first_near_max(v, n, kPickRelTol, 0.0f, 0.0f);
  for (int i = 0; i < n; ++i) v[i] = -v[i];
  const int i3 = first_near_max(v, n, kPickRelTol, 0.0f, 0.0f);
  if (i2 >= 0) pick[count++] = i2;
  if (i3 >= 0) pick[count++] = i3;
  return count;
}

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
  poly.n = 4;
  for (int e = 0; e < 4; ++e) poly.v[e] = ClipVertex{corners[e], uint16_t(e), uint16_t(e)};
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
    clip_polygon(buf[cur], side[s], glm::dot(side[s], ref.c) + extent[s], slop, s, buf[1 - cur]);
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
  const int count = n > kMaxManifoldPoints ? reduce_to_four(cand, n, n_ref, pick) : n;
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
