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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
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

static_assert(std::is_trivially_default_constructible_v<WideConstraint>, "batch storage is left uninitialised");

/// One tick's batches. Sized to an upper bound (each part owns a region as long as its
/// manifold count, and fills about a quarter of it), left uninitialised, and not copied
/// when it grows (batches are rebuilt every tick): memory no batch is written to is
/// never touched, so the bound costs address space, not page faults.
class BatchBuffer {
 public:
  void reserve_for(size_t count) {
    if (count <= capacity_) return;
    capacity_ = std::max({count, 2 * capacity_, size_t(256)});
    data_.reset(new WideConstraint[capacity_]);
  }
  WideConstraint& operator[](size_t i) { return data_[i]; }
  const WideConstraint& operator[](size_t i) const { return data_[i]; }

 private:
  std::unique_ptr<WideConstraint[]> data_;
  size_t capacity_ = 0;
};

/// A run of batches that may be solved in any order (or in parallel): one colour.
/// The overflow group's batches must run one after another.
struct BatchGroup {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool serial = false;
};

}  // namespace keel::sim
