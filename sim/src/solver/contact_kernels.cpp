// The contact kernels' backends: pairs of Float4 (any machine) and AVX (x86-64), each
// compiling contact_kernel.inc over its own eight-lane type.
#include "solver/contact_kernels.h"

#include "math/float4.h"
#include "solver/gather4.h"

#include <cstdlib>
#include <cstring>

#if KEEL_FLOAT4_SSE2 && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KEEL_KERNELS_AVX 1
#endif

namespace keel::sim {

// ---- pairs of four lanes: SSE2 on x86-64, plain C++ elsewhere -------------------------

namespace {
namespace kernels_pair {

struct V {
  Float4 lo, hi;
};

inline V operator+(V a, V b) { return {a.lo + b.lo, a.hi + b.hi}; }
inline V operator-(V a, V b) { return {a.lo - b.lo, a.hi - b.hi}; }
inline V operator*(V a, V b) { return {a.lo * b.lo, a.hi * b.hi}; }
inline V operator/(V a, V b) { return {a.lo / b.lo, a.hi / b.hi}; }
inline V max8(V a, V b) { return {max4(a.lo, b.lo), max4(a.hi, b.hi)}; }
inline V sqrt8(V a) { return {sqrt4(a.lo), sqrt4(a.hi)}; }
inline V greater(V a, V b) { return {keel::sim::greater(a.lo, b.lo), keel::sim::greater(a.hi, b.hi)}; }
inline V select(V m, V a, V b) { return {keel::sim::select(m.lo, a.lo, b.lo), keel::sim::select(m.hi, a.hi, b.hi)}; }
inline bool any(V m) { return keel::sim::any(m.lo) || keel::sim::any(m.hi); }
inline V splat8(float f) { return {splat(f), splat(f)}; }
inline V zero8() { return {zero4(), zero4()}; }
inline V load(const Lanes& l) { return {load4(l.v), load4(l.v + 4)}; }
inline void store(V a, Lanes& l) {
  store4(a.lo, l.v);
  store4(a.hi, l.v + 4);
}

#include "solver/contact_kernel.inc"

inline WideBodies gather_velocity(const SolverBody* bodies, const uint32_t (&idx)[kLanes]) {
  const Bodies4 lo = gather_velocity4(bodies, idx), hi = gather_velocity4(bodies, idx + 4);
  return {{{lo.v.x, hi.v.x}, {lo.v.y, hi.v.y}, {lo.v.z, hi.v.z}},
          {{lo.w.x, hi.w.x}, {lo.w.y, hi.w.y}, {lo.w.z, hi.w.z}}};
}

inline void scatter_velocity(SolverBody* bodies, const uint32_t (&idx)[kLanes], const WideBodies& s) {
  scatter_velocity4(bodies, idx, Bodies4{{s.v.x.lo, s.v.y.lo, s.v.z.lo}, {s.w.x.lo, s.w.y.lo, s.w.z.lo}});
  scatter_velocity4(bodies, idx + 4, Bodies4{{s.v.x.hi, s.v.y.hi, s.v.z.hi}, {s.w.x.hi, s.w.y.hi, s.w.z.hi}});
}

inline WideDelta gather_delta(const SolverBody* bodies, const uint32_t (&idx)[kLanes]) {
  const Delta4 lo = gather_delta4(bodies, idx), hi = gather_delta4(bodies, idx + 4);
  return {{{lo.dp.x, hi.dp.x}, {lo.dp.y, hi.dp.y}, {lo.dp.z, hi.dp.z}},
          {{lo.qv.x, hi.qv.x}, {lo.qv.y, hi.qv.y}, {lo.qv.z, hi.qv.z}},
          {lo.qw, hi.qw}};
}

}  // namespace kernels_pair
}  // namespace

// ---- AVX: eight lanes in one register -------------------------------------------------
//
// Everything defined between the target pragmas is compiled for AVX (without FMA: no
// contraction may change a bit) and is called only after the CPU was checked. It uses
// only its own functions and intrinsics, so no AVX-encoded copy of a shared inline
// function can end up where the SSE2 build calls it.

#if KEEL_KERNELS_AVX

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx")
#endif

namespace {
namespace kernels_avx {

struct V {
  __m256 v;
};

inline V operator+(V a, V b) { return {_mm256_add_ps(a.v, b.v)}; }
inline V operator-(V a, V b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline V operator*(V a, V b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline V operator/(V a, V b) { return {_mm256_div_ps(a.v, b.v)}; }
inline V max8(V a, V b) { return {_mm256_max_ps(a.v, b.v)}; }  // a > b ? a : b, as SSE's
inline V sqrt8(V a) { return {_mm256_sqrt_ps(a.v)}; }
inline V greater(V a, V b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OS)}; }  // SSE's cmpgt
inline V select(V m, V a, V b) { return {_mm256_or_ps(_mm256_and_ps(m.v, a.v), _mm256_andnot_ps(m.v, b.v))}; }
inline bool any(V m) { return _mm256_movemask_ps(m.v) != 0; }
inline V splat8(float f) { return {_mm256_set1_ps(f)}; }
inline V zero8() { return {_mm256_setzero_ps()}; }
inline V load(const Lanes& l) { return {_mm256_load_ps(l.v)}; }
inline void store(V a, Lanes& l) { _mm256_store_ps(l.v, a.v); }

/// Lanes i and i+4 of a row pair: [rows[i] | rows[i + 4]].
inline __m256 pair_rows(__m128 low, __m128 high) { return _mm256_insertf128_ps(_mm256_castps128_ps256(low), high, 1); }

/// _MM_TRANSPOSE4_PS within each 128-bit half: four rows of four become four columns.
inline void transpose_halves(__m256& r0, __m256& r1, __m256& r2, __m256& r3) {
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpacklo_ps(r2, r3);
  const __m256 t2 = _mm256_unpackhi_ps(r0, r1), t3 = _mm256_unpackhi_ps(r2, r3);
  r0 = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
  r1 = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
  r2 = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
  r3 = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

inline __m128 load_row(const SolverBody& body, size_t offset) {
  return _mm_loadu_ps(reinterpret_cast<const float*>(reinterpret_cast<const char*>(&body) + offset));
}

/// Four floats from `offset` bytes into each of eight bodies, as four columns of eight.
inline void gather_columns(const SolverBody* bodies, const uint32_t (&idx)[kLanes], size_t offset, __m256 (&out)[4]) {
  for (int i = 0; i < 4; ++i) out[i] = pair_rows(load_row(bodies[idx[i]], offset), load_row(bodies[idx[i + 4]], offset));
  transpose_halves(out[0], out[1], out[2], out[3]);
}

#include "solver/contact_kernel.inc"

inline WideBodies gather_velocity(const SolverBody* bodies, const uint32_t (&idx)[kLanes]) {
  // Rows [v.x v.y v.z w.x] and [w.x w.y w.z dp.x] (gather4.h's layout checks).
  __m256 r[4], s[4];
  gather_columns(bodies, idx, offsetof(SolverBody, v), r);
  gather_columns(bodies, idx, offsetof(SolverBody, w), s);
  return {{{r[0]}, {r[1]}, {r[2]}}, {{s[0]}, {s[1]}, {s[2]}}};
}

// Writes lanes back in lane order. Lanes that share a body are only ever the static
// stand-in or a kinematic body, whose velocities the solve never changes.
inline void scatter_velocity(SolverBody* bodies, const uint32_t (&idx)[kLanes], const WideBodies& s) {
  __m256 r0 = s.v.x.v, r1 = s.v.y.v, r2 = s.v.z.v, r3 = s.w.x.v;  // rows become [v.x v.y v.z w.x]
  __m256 t0 = s.w.y.v, t1 = s.w.z.v, t2 = s.w.y.v, t3 = s.w.z.v;  // rows become [w.y w.z w.y w.z]
  transpose_halves(r0, r1, r2, r3);
  transpose_halves(t0, t1, t2, t3);
  const __m256 rows[4] = {r0, r1, r2, r3};
  const __m256 tails[4] = {t0, t1, t2, t3};
  for (int i = 0; i < kLanes; ++i) {
    SolverBody& b = bodies[idx[i]];
    if (b.inv_mass == 0.0f) continue;  // static or kinematic: unchanged by contacts
    const int row = i & 3;
    const __m128 body_row = i < 4 ? _mm256_castps256_ps128(rows[row]) : _mm256_extractf128_ps(rows[row], 1);
    const __m128 body_tail = i < 4 ? _mm256_castps256_ps128(tails[row]) : _mm256_extractf128_ps(tails[row], 1);
    _mm_storeu_ps(&b.v.x, body_row);
    _mm_storel_pi(reinterpret_cast<__m64*>(&b.w.y), body_tail);
  }
}

inline WideDelta gather_delta(const SolverBody* bodies, const uint32_t (&idx)[kLanes]) {
  // Rows [dp.x dp.y dp.z q.x] and [q.y q.z q.w inv_mass].
  __m256 r[4], s[4];
  gather_columns(bodies, idx, offsetof(SolverBody, dp), r);
  gather_columns(bodies, idx, offsetof(SolverBody, dq) + sizeof(float), s);
  return {{{r[0]}, {r[1]}, {r[2]}}, {{r[3]}, {s[0]}, {s[1]}}, {s[2]}};
}

}  // namespace kernels_avx
}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // KEEL_KERNELS_AVX

// ---- choosing -------------------------------------------------------------------------

namespace {

const ContactKernels kPairKernels{"sse2", kernels_pair::warm_start_range, kernels_pair::solve_range,
                                  kernels_pair::restitution_range};
#if KEEL_KERNELS_AVX
const ContactKernels kAvxKernels{"avx", kernels_avx::warm_start_range, kernels_avx::solve_range,
                                 kernels_avx::restitution_range};
#endif

const ContactKernels& choose_kernels() {
  const char* want = std::getenv("KEEL_SIMD");
  if (want && std::strcmp(want, "sse2") == 0) return kPairKernels;
  const ContactKernels* avx = avx_kernels();
  return avx ? *avx : kPairKernels;
}

}  // namespace

const ContactKernels& pair_kernels() { return kPairKernels; }

const ContactKernels* avx_kernels() {
#if KEEL_KERNELS_AVX
  static const bool supported = __builtin_cpu_supports("avx");
  return supported ? &kAvxKernels : nullptr;
#else
  return nullptr;
#endif
}

const ContactKernels& contact_kernels() {
  static const ContactKernels& chosen = choose_kernels();
  return chosen;
}

}  // namespace keel::sim
