// Body state of four solver bodies gathered into lanes (and written back), for packing
// batches and for the four-lane-pair kernels.
//
// SSE2: each body's v and w (and dp and dq) are adjacent floats, so four bodies come in
// with two unaligned 16-byte loads each and two 4x4 transposes, and go back out the same
// way. Pure data movement: the same bits as the element-by-element path below it.
#pragma once

#include "math/float4.h"
#include "solver/solver.h"

#include <cstddef>
#include <cstdint>

namespace keel::sim {

struct Bodies4 {
  Vec3x4 v, w;
};

struct Delta4 {
  Vec3x4 dp;
  Vec3x4 qv;
  Float4 qw;
};

#if KEEL_FLOAT4_SSE2
static_assert(offsetof(SolverBody, w) == offsetof(SolverBody, v) + 12, "v and w must be adjacent");
static_assert(offsetof(SolverBody, dp) == offsetof(SolverBody, w) + 12, "w and dp must be adjacent");
static_assert(offsetof(SolverBody, dq) == offsetof(SolverBody, dp) + 12, "dp and dq must be adjacent");
static_assert(offsetof(SolverBody, inv_mass) == offsetof(SolverBody, dq) + 16, "dq and inv_mass adjacent");
static_assert(sizeof(Quat) == 16, "quaternion of four floats");

inline __m128 load_at(const float* p) { return _mm_loadu_ps(p); }

/// Quaternion components in memory order (glm stores x, y, z, w unless told otherwise).
inline const float* quat_data(const Quat& q) { return &q[0]; }
inline float* quat_data(Quat& q) { return &q[0]; }

inline Bodies4 gather_velocity4(const SolverBody* bodies, const uint32_t* idx) {
  // Row i: [v.x v.y v.z w.x] and [w.x w.y w.z dp.x] of lane i's body.
  __m128 r0 = load_at(&bodies[idx[0]].v.x), r1 = load_at(&bodies[idx[1]].v.x);
  __m128 r2 = load_at(&bodies[idx[2]].v.x), r3 = load_at(&bodies[idx[3]].v.x);
  __m128 s0 = load_at(&bodies[idx[0]].w.x), s1 = load_at(&bodies[idx[1]].w.x);
  __m128 s2 = load_at(&bodies[idx[2]].w.x), s3 = load_at(&bodies[idx[3]].w.x);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _MM_TRANSPOSE4_PS(s0, s1, s2, s3);
  return {{{r0}, {r1}, {r2}}, {{s0}, {s1}, {s2}}};
}

// Writes lanes back in lane order. Lanes that share a body are only ever the static
// stand-in or a kinematic body, whose velocities the solve never changes.
inline void scatter_velocity4(SolverBody* bodies, const uint32_t* idx, const Bodies4& s) {
  __m128 r0 = s.v.x.v, r1 = s.v.y.v, r2 = s.v.z.v, r3 = s.w.x.v;  // rows become [v.x v.y v.z w.x]
  __m128 t0 = s.w.y.v, t1 = s.w.z.v, t2 = s.w.y.v, t3 = s.w.z.v;  // rows become [w.y w.z w.y w.z]
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _MM_TRANSPOSE4_PS(t0, t1, t2, t3);
  const __m128 rows[4] = {r0, r1, r2, r3};
  const __m128 tails[4] = {t0, t1, t2, t3};
  for (int i = 0; i < 4; ++i) {
    SolverBody& b = bodies[idx[i]];
    if (b.inv_mass == 0.0f) continue;  // static or kinematic: unchanged by contacts
    _mm_storeu_ps(&b.v.x, rows[i]);
    _mm_storel_pi(reinterpret_cast<__m64*>(&b.w.y), tails[i]);
  }
}

inline Delta4 gather_delta4(const SolverBody* bodies, const uint32_t* idx) {
  // Row i: [dp.x dp.y dp.z q.x] and [q.y q.z q.w inv_mass] of lane i's body.
  __m128 r0 = load_at(&bodies[idx[0]].dp.x), r1 = load_at(&bodies[idx[1]].dp.x);
  __m128 r2 = load_at(&bodies[idx[2]].dp.x), r3 = load_at(&bodies[idx[3]].dp.x);
  __m128 s0 = load_at(quat_data(bodies[idx[0]].dq) + 1), s1 = load_at(quat_data(bodies[idx[1]].dq) + 1);
  __m128 s2 = load_at(quat_data(bodies[idx[2]].dq) + 1), s3 = load_at(quat_data(bodies[idx[3]].dq) + 1);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _MM_TRANSPOSE4_PS(s0, s1, s2, s3);
  return {{{r0}, {r1}, {r2}}, {{r3}, {s0}, {s1}}, {s2}};
}

#else

inline Bodies4 gather_velocity4(const SolverBody* bodies, const uint32_t* idx) {
  const SolverBody& b0 = bodies[idx[0]];
  const SolverBody& b1 = bodies[idx[1]];
  const SolverBody& b2 = bodies[idx[2]];
  const SolverBody& b3 = bodies[idx[3]];
  return {{load4(b0.v.x, b1.v.x, b2.v.x, b3.v.x), load4(b0.v.y, b1.v.y, b2.v.y, b3.v.y),
           load4(b0.v.z, b1.v.z, b2.v.z, b3.v.z)},
          {load4(b0.w.x, b1.w.x, b2.w.x, b3.w.x), load4(b0.w.y, b1.w.y, b2.w.y, b3.w.y),
           load4(b0.w.z, b1.w.z, b2.w.z, b3.w.z)}};
}

// Writes lanes back in lane order. Lanes that share a body are only ever the static
// stand-in or a kinematic body, whose velocities the solve never changes.
inline void scatter_velocity4(SolverBody* bodies, const uint32_t* idx, const Bodies4& s) {
  float vx[4], vy[4], vz[4], wx[4], wy[4], wz[4];
  store4(s.v.x, vx);
  store4(s.v.y, vy);
  store4(s.v.z, vz);
  store4(s.w.x, wx);
  store4(s.w.y, wy);
  store4(s.w.z, wz);
  for (int i = 0; i < 4; ++i) {
    SolverBody& b = bodies[idx[i]];
    if (b.inv_mass == 0.0f) continue;  // static or kinematic: unchanged by contacts
    b.v = Vec3(vx[i], vy[i], vz[i]);
    b.w = Vec3(wx[i], wy[i], wz[i]);
  }
}

inline Delta4 gather_delta4(const SolverBody* bodies, const uint32_t* idx) {
  const SolverBody& b0 = bodies[idx[0]];
  const SolverBody& b1 = bodies[idx[1]];
  const SolverBody& b2 = bodies[idx[2]];
  const SolverBody& b3 = bodies[idx[3]];
  Delta4 d;
  d.dp = {load4(b0.dp.x, b1.dp.x, b2.dp.x, b3.dp.x), load4(b0.dp.y, b1.dp.y, b2.dp.y, b3.dp.y),
          load4(b0.dp.z, b1.dp.z, b2.dp.z, b3.dp.z)};
  d.qv = {load4(b0.dq.x, b1.dq.x, b2.dq.x, b3.dq.x), load4(b0.dq.y, b1.dq.y, b2.dq.y, b3.dq.y),
          load4(b0.dq.z, b1.dq.z, b2.dq.z, b3.dq.z)};
  d.qw = load4(b0.dq.w, b1.dq.w, b2.dq.w, b3.dq.w);
  return d;
}

#endif

}  // namespace keel::sim
