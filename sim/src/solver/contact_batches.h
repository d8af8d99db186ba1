// Contact constraints packed eight to a batch for the wide solver.
//
// Graph colouring puts manifolds into colours such that no two manifolds of one colour
// share a dynamic body; each colour is then cut into batches of eight lanes. A batch
// solves its eight manifolds at once, and batches of one colour never touch the same
// dynamic body, so their order (or the thread that runs them) cannot change the result.
// Colours run in a fixed sequence; manifolds that fit no colour become single-lane
// batches solved last, one after another. The colouring walks manifolds in pair-key
// order, so it is a pure function of the IDs.
#pragma once

#include "solver/solver.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace keel::sim {

inline constexpr int kLanes = 8;
inline constexpr int kColorCount = 24;

/// One float per lane, as stored between the solve's passes. Kept as plain floats so the
/// same batches serve every instruction set: the kernels load a lane group into two SSE2
/// registers, one AVX register or plain floats (contact_kernels.h).
struct alignas(32) Lanes {
  float v[kLanes];
};

/// Three lanes-of-eight: x, y and z of eight vectors.
struct Lanes3 {
  Lanes x, y, z;
};

/// One Jacobian row of eight lanes, with the angular parts precomputed: iteration is
/// then dot products and scaled adds only (inertia is frozen over the tick).
struct WideRow {
  Lanes3 ang_a;   // r_a x dir
  Lanes3 ang_b;   // r_b x dir
  Lanes3 iang_a;  // I_a^-1 (r_a x dir)
  Lanes3 iang_b;  // I_b^-1 (r_b x dir)
  Lanes mass;     // effective mass along dir (0 in an empty lane)
  Lanes impulse;
};

struct WidePoint {
  Lanes3 r_a;
  Lanes3 r_b;
  Lanes adjusted_separation;
  Lanes relative_velocity;
  Lanes max_normal_impulse;
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
  Lanes3 normal;
  Lanes3 t1;
  Lanes3 t2;
  Lanes inv_mass_a;
  Lanes inv_mass_b;
  Lanes friction;
  Lanes restitution;
  Lanes bias_rate;
  Lanes mass_scale;
  Lanes impulse_scale;
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
  /// The first batch, or null before any reservation: the kernels take this pointer and
  /// index it only within [begin, end), which is empty in a world with no contacts (so
  /// `&buffer[0]` there would form a reference through a null pointer).
  WideConstraint* data() { return data_.get(); }

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
