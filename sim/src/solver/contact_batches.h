// Contact constraints packed four to a batch for the wide (SSE2) solver.
//
// Graph colouring puts manifolds into colours such that no two manifolds of one colour
// share a dynamic body; each colour is then cut into batches of four lanes. A batch
// solves its four manifolds at once, and batches of one colour never touch the same
// dynamic body, so their order (or the thread that runs them) cannot change the result.
// Colours run in a fixed sequence; manifolds that fit no colour become single-lane
// batches solved last, one after another. The colouring walks manifolds in pair-key
// order, so it is a pure function of the IDs.
#pragma once

#include "math/float4.h"
#include "solver/solver.h"

#include <cstdint>
#include <vector>

namespace keel::sim {

inline constexpr int kLanes = 4;
inline constexpr int kColorCount = 24;

/// One Jacobian row of four lanes, with the angular parts precomputed: iteration is
/// then dot products and scaled adds only (inertia is frozen over the tick).
struct WideRow {
  Vec3x4 ang_a;   // r_a x dir
  Vec3x4 ang_b;   // r_b x dir
  Vec3x4 iang_a;  // I_a^-1 (r_a x dir)
  Vec3x4 iang_b;  // I_b^-1 (r_b x dir)
  Float4 mass;    // effective mass along dir (0 in an empty lane)
  Float4 impulse;
};

struct WidePoint {
  Vec3x4 r_a;
  Vec3x4 r_b;
  Float4 adjusted_separation;
  Float4 relative_velocity;
  Float4 max_normal_impulse;
  WideRow normal;
  WideRow tangent1;
  WideRow tangent2;
};

struct WideConstraint {
  uint32_t body_a[kLanes];   // solver body index; 0 = the static stand-in
  uint32_t body_b[kLanes];
  uint32_t contact[kLanes];  // contact index, kNoContact for an empty lane
  int point_count;           // the most points any lane has
  bool bounces;              // some lane has restitution > 0
  Vec3x4 normal;
  Vec3x4 t1;
  Vec3x4 t2;
  Float4 inv_mass_a;
  Float4 inv_mass_b;
  Float4 friction;
  Float4 restitution;
  Float4 bias_rate;
  Float4 mass_scale;
  Float4 impulse_scale;
  WidePoint p[4];
};

inline constexpr uint32_t kNoContact = 0xffffffffu;

/// A run of batches that may be solved in any order (or in parallel): one colour.
/// The overflow group's batches must run one after another.
struct BatchGroup {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool serial = false;
};

}  // namespace keel::sim
