// Face clipping shared by the box-box and hull routines (internal to sim/src).
//
// A face contact clips the incident face, one reference side plane at a time
// (Sutherland-Hodgman), keeps the points within the margin and, when more than four
// survive, reduces them to four by geometry alone. Each surviving point carries a key
// naming the features that made it, so the contact cache can match it next tick.
//
// Keys, for a routine whose faces have at most `Lanes` edges (4 for a box, 64 for a hull):
//   0 .. Lanes-1                     an incident-face vertex (its position in the loop);
//   KeyBase + Lanes * edge + plane   the crossing of polygon edge `edge` with side plane
//                                    `plane`.
// A vertex's `edge` labels the edge that starts at it: 0 .. Lanes-1 part of that incident
// edge, Lanes + s lying on side plane s (created by that plane's clip).
//
// Determinism: fixed loop orders, ties to the lowest index; no data-dependent reordering.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "geometry.h"

namespace keel::sim::np {

struct ClipVertex {
  Vec3 p;
  uint16_t key;
  uint16_t edge;
};

/// A convex polygon being clipped. The room beyond what exact arithmetic needs (the face's
/// vertices plus one per clip plane) absorbs rounding-induced extra crossings, and push()
/// drops beyond it rather than overflow.
template <int Capacity>
struct ClipPolygon {
  static constexpr int kCapacity = Capacity;
  ClipVertex v[Capacity];
  int n = 0;
  /// Field by field, as vertices are also read: a vertex stored in pieces and then read
  /// back as one 16-byte block (a struct copy) stalls until the pieces reach the cache,
  /// and the clip reads each vertex the pass before it wrote.
  void push(const Vec3& p, uint16_t key, uint16_t edge) {
    if (n >= Capacity) return;
    ClipVertex& x = v[n++];
    x.p = p;
    x.key = key;
    x.edge = edge;
  }
};

/// Sutherland-Hodgman against one plane: keeps dot(normal, p) <= offset + slop. Side plane
/// `s` labels new vertices and the polygon edges that run along it. The slop only decides
/// what counts as inside (so a vertex lying on the plane stays a vertex under jitter); a
/// crossing is then moved back by the slop onto the true plane.
template <uint16_t Lanes, uint16_t KeyBase, int Capacity>
void clip_polygon(const ClipPolygon<Capacity>& in, const Vec3& normal, float offset, float slop, int s,
                  ClipPolygon<Capacity>& out) {
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
      const auto key = uint16_t(KeyBase + Lanes * prev->edge + s);
      // Entering: the new vertex continues the edge it lies on. Leaving: the polygon now
      // runs along plane s until it re-enters.
      out.push(p, key, dcur <= 0.0f ? prev->edge : uint16_t(Lanes + s));
    }
    if (dcur <= 0.0f) out.push(cur.p, cur.key, cur.edge);
    prev = &cur;
    dprev = dcur;
  }
}

/// A point that survived clipping and the margin test.
struct ClipCandidate {
  Vec3 p;       ///< on the incident face
  float depth;  ///< -separation from the reference face
  uint32_t id;
};

/// How close to the best the distance / area picks must be (fraction) to count as a tie.
inline constexpr float kPickRelTol = 0.02f;

/// Index of the first value within kPickRelTol * |best| of the largest value `best`, or
/// -1 when no value exceeds `floor`. Taking the first near-best value rather than the
/// exact best keeps the choice steady while a resting body rocks by rounding-sized amounts.
inline int first_near_max(const float* v, int n, float floor) {
  float best = floor;
  for (int i = 0; i < n; ++i) best = std::max(best, v[i]);
  if (!(best > floor)) return -1;
  const float threshold = best - kPickRelTol * std::abs(best);
  for (int i = 0; i < n; ++i) {
    if (v[i] > floor && v[i] >= threshold) return i;
  }
  return -1;
}

/// Reduces n (at most Capacity) candidates to four: the one farthest from the candidates'
/// centroid, the one farthest from that, then the two that span the largest area on
/// either side of that diagonal. The picks are purely geometric: choosing by depth first
/// lets rounding-sized tilts swap the whole point set of a box resting turned on another
/// (an octagon of candidates), which throws away the warm start every time it happens and
/// keeps a stack wobbling. Near-ties go to the lowest index. Returns the number picked.
template <int Capacity>
int reduce_to_four(const ClipCandidate* c, int n, const Vec3& normal, int pick[4]) {
  float v[Capacity];
  Vec3 centroid(0.0f);
  for (int i = 0; i < n; ++i) centroid += c[i].p;
  centroid *= 1.0f / float(n);
  for (int i = 0; i < n; ++i) v[i] = length_sq(c[i].p - centroid);
  const int i0 = std::max(first_near_max(v, n, -1.0f), 0);  // -1 only for NaN input
  for (int i = 0; i < n; ++i) v[i] = length_sq(c[i].p - c[i0].p);
  const int i1 = first_near_max(v, n, 0.0f);
  int count = 0;
  pick[count++] = i0;
  if (i1 < 0) return count;
  pick[count++] = i1;
  const Vec3 diag = c[i1].p - c[i0].p;
  for (int i = 0; i < n; ++i) v[i] = glm::dot(glm::cross(diag, c[i].p - c[i0].p), normal);
  const int i2 = first_near_max(v, n, 0.0f);
  for (int i = 0; i < n; ++i) v[i] = -v[i];
  const int i3 = first_near_max(v, n, 0.0f);
  if (i2 >= 0) pick[count++] = i2;
  if (i3 >= 0) pick[count++] = i3;
  return count;
}

}  // namespace keel::sim::np
