#include "solver/integrate.h"

#include "solver/gather4.h"

#include <cmath>

namespace keel::sim {

namespace {

constexpr float kPi = 3.14159265358979323846f;
constexpr float kMaxLinearSpeed = 400.0f;              // m/s: a guard against blow-ups, above any bullet
constexpr float kMaxRotationPerSubstep = 0.25f * kPi;  // rad: keeps the quaternion update valid

#if KEEL_FLOAT4_SSE2
// integrate_positions for the four bodies from `first` at once, each lane with the very
// operations (and order) of the scalar loop: glm's quaternion product, sum and
// normalisation are written out below as glm evaluates them.
void integrate_positions_wide(SolverBody* first, float step) {
  SolverBody* b[4] = {first, first + 1, first + 2, first + 3};
  // Rows [v.x v.y v.z w.x], [w.x w.y w.z dp.x], [dp.x dp.y dp.z q.x], [q.x q.y q.z q.w].
  __m128 v0 = load_at(&b[0]->v.x), v1 = load_at(&b[1]->v.x), v2 = load_at(&b[2]->v.x), v3 = load_at(&b[3]->v.x);
  __m128 w0 = load_at(&b[0]->w.x), w1 = load_at(&b[1]->w.x), w2 = load_at(&b[2]->w.x), w3 = load_at(&b[3]->w.x);
  __m128 p0 = load_at(&b[0]->dp.x), p1 = load_at(&b[1]->dp.x), p2 = load_at(&b[2]->dp.x), p3 = load_at(&b[3]->dp.x);
  __m128 q0 = load_at(quat_data(b[0]->dq)), q1 = load_at(quat_data(b[1]->dq));
  __m128 q2 = load_at(quat_data(b[2]->dq)), q3 = load_at(quat_data(b[3]->dq));
  _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
  _MM_TRANSPOSE4_PS(w0, w1, w2, w3);
  _MM_TRANSPOSE4_PS(p0, p1, p2, p3);
  _MM_TRANSPOSE4_PS(q0, q1, q2, q3);
  const Float4 vx{v0}, vy{v1}, vz{v2}, wx{w0}, wy{w1}, wz{w2};
  const Float4 qx{q0}, qy{q1}, qz{q2}, qw{q3};
  const Float4 h = splat(step), zero = zero4();
  // spin * dq with spin = (w: 0, x: wx, y: wy, z: wz), as glm's product.
  const Float4 mw = zero * qw - wx * qx - wy * qy - wz * qz;
  const Float4 mx = zero * qx + wx * qw + wy * qz - wz * qy;
  const Float4 my = zero * qy + wy * qw + wz * qx - wx * qz;
  const Float4 mz = zero * qz + wz * qw + wx * qy - wy * qx;
  const Float4 half_h = splat(0.5f * step);
  const Float4 nw = qw + mw * half_h, nx = qx + mx * half_h, ny = qy + my * half_h, nz = qz + mz * half_h;
  // glm::normalize: the length from (w w + x x) + (y y + z z); identity when not above 0.
  const Float4 len = sqrt4((nw * nw + nx * nx) + (ny * ny + nz * nz));
  const Float4 not_positive = less_equal(len, zero);
  const Float4 inv = splat(1.0f) / len;
  const Float4 rw = select(not_positive, splat(1.0f), nw * inv);
  const Float4 rx = select(not_positive, zero, nx * inv);
  const Float4 ry = select(not_positive, zero, ny * inv);
  const Float4 rz = select(not_positive, zero, nz * inv);
  const Float4 dx = Float4{p0} + h * vx, dy = Float4{p1} + h * vy, dz = Float4{p2} + h * vz;
  // Back to rows: [dp.x dp.y dp.z -] is stored first, then [q.x q.y q.z q.w] over its tail.
  __m128 d0 = dx.v, d1 = dy.v, d2 = dz.v, d3 = rx.v;
  __m128 o0 = rx.v, o1 = ry.v, o2 = rz.v, o3 = rw.v;
  _MM_TRANSPOSE4_PS(d0, d1, d2, d3);
  _MM_TRANSPOSE4_PS(o0, o1, o2, o3);
  const __m128 drows[4] = {d0, d1, d2, d3};
  const __m128 qrows[4] = {o0, o1, o2, o3};
  for (int k = 0; k < 4; ++k) {
    _mm_storeu_ps(&b[k]->dp.x, drows[k]);
    _mm_storeu_ps(quat_data(b[k]->dq), qrows[k]);
  }
}
#endif


}  // namespace

void integrate_velocities(SolverBody* bodies, const BodyMotion* motion, uint32_t begin, uint32_t end, float inv_h) {
  float max_w = kMaxRotationPerSubstep * inv_h;
  for (uint32_t i = begin; i < end; ++i) {
    SolverBody& b = bodies[i];
    const BodyMotion& m = motion[i];
    b.v = m.gravity_dv + m.linear_factor * b.v;
    b.w = m.angular_factor * b.w;
    float v2 = glm::dot(b.v, b.v);
    if (v2 > kMaxLinearSpeed * kMaxLinearSpeed) b.v *= kMaxLinearSpeed / std::sqrt(v2);
    float w2 = glm::dot(b.w, b.w);
    if (w2 > max_w * max_w) b.w *= max_w / std::sqrt(w2);
  }
}

void integrate_positions(SolverBody* bodies, uint32_t begin, uint32_t end, float h) {
  uint32_t i = begin;
#if KEEL_FLOAT4_SSE2
  for (; i + 4 <= end; i += 4) integrate_positions_wide(bodies + i, h);
#endif
  for (; i < end; ++i) {
    SolverBody& b = bodies[i];
    // Everything is read before anything is stored: a store into dp followed by a wide
    // load over dp and dq (as the compiler packs them) stalls on every body.
    const Vec3 v = b.v, w = b.w, dp = b.dp;
    const Quat dq = b.dq;
    const Quat spin(0.0f, w.x, w.y, w.z);
    const Quat q = dq + (0.5f * h) * (spin * dq);
    b.dp = dp + h * v;
    b.dq = glm::normalize(q);
  }
}

}  // namespace keel::sim
