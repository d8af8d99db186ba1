// Four floats processed lane by lane: SSE2 on x86-64, plain C++ elsewhere.
//
// Determinism: every operation is an elementwise IEEE operation (add, sub, mul, div,
// sqrt, compare, select), so the SSE2 path and the portable path give the same bits; no
// horizontal reductions, no fused multiply-add, no approximate reciprocals. max/min use
// the SSE definition (a > b ? a : b), which the portable path copies exactly.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__) && !defined(KEEL_PORTABLE_FLOAT4)
#include <emmintrin.h>
#define KEEL_FLOAT4_SSE2 1
#endif

namespace keel::sim {

#if KEEL_FLOAT4_SSE2

struct Float4 {
  __m128 v;
};

inline Float4 splat(float a) { return {_mm_set1_ps(a)}; }
inline Float4 zero4() { return {_mm_setzero_ps()}; }
inline Float4 load4(float a, float b, float c, float d) { return {_mm_setr_ps(a, b, c, d)}; }
inline Float4 load4(const float* p) { return {_mm_loadu_ps(p)}; }
inline Float4 operator+(Float4 a, Float4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline Float4 operator-(Float4 a, Float4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline Float4 operator*(Float4 a, Float4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline Float4 operator/(Float4 a, Float4 b) { return {_mm_div_ps(a.v, b.v)}; }
inline Float4 operator-(Float4 a) { return {_mm_sub_ps(_mm_setzero_ps(), a.v)}; }
inline Float4 max4(Float4 a, Float4 b) { return {_mm_max_ps(a.v, b.v)}; }
inline Float4 min4(Float4 a, Float4 b) { return {_mm_min_ps(a.v, b.v)}; }
inline Float4 sqrt4(Float4 a) { return {_mm_sqrt_ps(a.v)}; }
/// Lane-wise a > b as a mask (all bits set where true).
inline Float4 greater(Float4 a, Float4 b) { return {_mm_cmpgt_ps(a.v, b.v)}; }
/// Lane-wise a <= b as a mask (false where either is NaN).
inline Float4 less_equal(Float4 a, Float4 b) { return {_mm_cmple_ps(a.v, b.v)}; }
/// Lane-wise mask ? a : b.
inline Float4 select(Float4 mask, Float4 a, Float4 b) {
  return {_mm_or_ps(_mm_and_ps(mask.v, a.v), _mm_andnot_ps(mask.v, b.v))};
}
inline void store4(Float4 a, float out[4]) { _mm_storeu_ps(out, a.v); }
/// Whether any lane of a mask is set.
inline bool any(Float4 mask) { return _mm_movemask_ps(mask.v) != 0; }

#else

struct Float4 {
  float v[4];
};

inline Float4 splat(float a) { return {{a, a, a, a}}; }
inline Float4 zero4() { return splat(0.0f); }
inline Float4 load4(float a, float b, float c, float d) { return {{a, b, c, d}}; }
inline Float4 load4(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }

#define KEEL_FLOAT4_LANEWISE(expr)                 \
  Float4 r;                                        \
  for (int i = 0; i < 4; ++i) r.v[i] = (expr);     \
  return r

inline Float4 operator+(Float4 a, Float4 b) { KEEL_FLOAT4_LANEWISE(a.v[i] + b.v[i]); }
inline Float4 operator-(Float4 a, Float4 b) { KEEL_FLOAT4_LANEWISE(a.v[i] - b.v[i]); }
inline Float4 operator*(Float4 a, Float4 b) { KEEL_FLOAT4_LANEWISE(a.v[i] * b.v[i]); }
inline Float4 operator/(Float4 a, Float4 b) { KEEL_FLOAT4_LANEWISE(a.v[i] / b.v[i]); }
inline Float4 operator-(Float4 a) { KEEL_FLOAT4_LANEWISE(0.0f - a.v[i]); }
inline Float4 max4(Float4 a, Float4 b) { KEEL_FLOAT4_LANEWISE(a.v[i] > b.v[i] ? a.v[i] : b.v[i]); }
inline Float4 min4(Float4 a, Float4 b) { KEEL_FLOAT4_LANEWISE(a.v[i] < b.v[i] ? a.v[i] : b.v[i]); }
inline Float4 sqrt4(Float4 a);
inline Float4 greater(Float4 a, Float4 b) {
  Float4 r;
  for (int i = 0; i < 4; ++i) {
    uint32_t bits = a.v[i] > b.v[i] ? 0xffffffffu : 0u;
    std::memcpy(&r.v[i], &bits, 4);
  }
  return r;
}
inline Float4 less_equal(Float4 a, Float4 b) {
  Float4 r;
  for (int i = 0; i < 4; ++i) {
    uint32_t bits = a.v[i] <= b.v[i] ? 0xffffffffu : 0u;
    std::memcpy(&r.v[i], &bits, 4);
  }
  return r;
}
inline Float4 select(Float4 mask, Float4 a, Float4 b) {
  Float4 r;
  for (int i = 0; i < 4; ++i) {
    uint32_t m, x, y;
    std::memcpy(&m, &mask.v[i], 4);
    std::memcpy(&x, &a.v[i], 4);
    std::memcpy(&y, &b.v[i], 4);
    uint32_t z = (m & x) | (~m & y);
    std::memcpy(&r.v[i], &z, 4);
  }
  return r;
}
inline void store4(Float4 a, float out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = a.v[i];
}
inline bool any(Float4 mask) {
  for (int i = 0; i < 4; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &mask.v[i], 4);
    if (bits >> 31) return true;
  }
  return false;
}

#undef KEEL_FLOAT4_LANEWISE

#endif

/// Three lanes-of-four: x, y and z of four vectors.
struct Vec3x4 {
  Float4 x, y, z;
};

inline Vec3x4 operator+(const Vec3x4& a, const Vec3x4& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3x4 operator-(const Vec3x4& a, const Vec3x4& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3x4 operator*(Float4 s, const Vec3x4& a) { return {s * a.x, s * a.y, s * a.z}; }
inline Float4 dot(const Vec3x4& a, const Vec3x4& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3x4 cross(const Vec3x4& a, const Vec3x4& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

}  // namespace keel::sim

#if !KEEL_FLOAT4_SSE2
#include <cmath>
namespace keel::sim {
inline Float4 sqrt4(Float4 a) {
  Float4 r;
  for (int i = 0; i < 4; ++i) r.v[i] = std::sqrt(a.v[i]);
  return r;
}
}  // namespace keel::sim
#endif
