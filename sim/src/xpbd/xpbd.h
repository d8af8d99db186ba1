// The XPBD solver (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended
// Position Based Dynamics"), the world's second solver (WorldSettings::solver_kind).
//
// Per tick, over the contacts the shared stages made (broadphase, narrowphase, contact
// set) and the joints:
//   for each substep:  integrate (gravity, damping, positions) -> joints (positional;
//                      springs compliant) -> contacts (normal with compliance, static
//                      friction positional) -> velocities from the moves -> joints'
//                      motors and spring damping -> dynamic friction and restitution
// then the bodies and the contacts' impulses are written back; islands, sleeping and
// events run after it as they do after the soft step. The solve is one thread, in an
// order keyed on slots (bodies), contact keys and joint slots, so no thread count can
// change a bit. See docs/sim.md, "Solvers".
#pragma once

#include <keel/sim/math.h>

#include <cstdint>
#include <vector>

namespace keel::sim {

struct WorldImpl;
struct Joint;

namespace xpbd {

/// A body as the substeps see it: pose now and at the substep's start, velocities, and
/// the inverse mass and inertia (zero for bodies that do not answer to constraints:
/// static, kinematic and sleeping ones).
struct XBody {
  Vec3 x{0.0f}, x_prev{0.0f};  // centre of mass
  // The move since the substep began, kept apart from x: the velocity (dx / h) from
  // x - x_prev would lose bits to cancellation far from the origin (a body at y = 100 m
  // would fall 1.5 % slow over a second).
  Vec3 dx{0.0f};
  Quat q{1, 0, 0, 0}, q_prev{1, 0, 0, 0};
  Vec3 v{0.0f}, w{0.0f};
  float inv_mass = 0.0f;
  Mat3 inv_inertia_local{0.0f};
  bool integrate = false;  // moves by its velocity (dynamic awake, or kinematic)
  bool dynamic = false;    // answers to constraints and gravity
};

/// World-frame inverse inertia applied to a vector.
inline Vec3 inv_inertia_mul(const XBody& b, const Vec3& v) {
  const Vec3 local = glm::conjugate(b.q) * v;
  return b.q * (b.inv_inertia_local * local);
}

/// Generalised inverse mass of a body at arm r along unit direction n.
inline float generalized_inverse_mass(const XBody& b, const Vec3& r, const Vec3& n) {
  if (!b.dynamic) return 0.0f;
  const Vec3 rn = glm::cross(r, n);
  return b.inv_mass + glm::dot(rn, inv_inertia_mul(b, rn));
}

/// Moves two bodies apart along unit `n` by `c` (B along +n, A along -n) at arms ra, rb,
/// as one positional XPBD constraint with compliance alpha_tilde (alpha / h^2) and
/// accumulated multiplier `lambda`. Returns the multiplier's change.
float apply_positional(XBody& a, XBody& b, const Vec3& ra, const Vec3& rb, const Vec3& n, float c,
                       float alpha_tilde, float lambda);
/// Rotates B by `theta` (a rotation vector) relative to A, shared by their inertia.
void apply_angular(XBody& a, XBody& b, const Vec3& theta);
/// Sum of the two bodies' inverse inertia about unit `axis` (world).
float angular_inverse_mass(const XBody& a, const XBody& b, const Vec3& axis);
/// The compliant form of apply_angular: rotates B relative to A about unit `axis` by the
/// multiplier's change for an error `c`, compliance alpha_tilde and accumulated `lambda`.
/// Returns the change.
float apply_angular_compliant(XBody& a, XBody& b, const Vec3& axis, float c, float alpha_tilde, float lambda);
/// Inverse inertia of a body about unit `axis` through its anchor at arm r (zero for a body
/// that does not answer to constraints).
float pivot_inverse_mass(const XBody& b, const Vec3& r, const Vec3& axis);
/// Rotates B relative to A about unit `axis` by the multiplier's change for an error `c`
/// (compliance alpha_tilde, accumulated `lambda`), each body turning about its anchor so a
/// point the two share stays shared: an angle limit or spring on a point joint works
/// against the inertia about the pivot (a bob on a long arm: m L^2, not its own 2/5 m r^2),
/// where a turn about the centre would be handed straight back by the point's solve.
float apply_angular_about(XBody& a, XBody& b, const Vec3& ra, const Vec3& rb, const Vec3& axis, float c,
                          float alpha_tilde, float lambda);
/// An angular velocity impulse `l`: B gains +l, A loses it.
void apply_angular_impulse(XBody& a, XBody& b, const Vec3& l);
/// A velocity impulse `p` at arms ra, rb: B gains +p, A loses it.
void apply_velocity_impulse(XBody& a, XBody& b, const Vec3& ra, const Vec3& rb, const Vec3& p);

/// One contact point in the frames of its bodies, made once per tick.
struct XContact {
  uint32_t contact = 0;  // index into the contact set
  int point = 0;
  uint32_t a = 0, b = 0;  // body slots
  Vec3 local_a{0.0f}, local_b{0.0f};  // surface points from the centres, body frames
  Vec3 n{0.0f, 1.0f, 0.0f};           // A -> B, fixed for the tick
  float mu_s = 0.0f, mu_k = 0.0f, e = 0.0f;
  // Per substep:
  float lambda_n = 0.0f, lambda_t = 0.0f, vn_pre = 0.0f;
  Vec3 ra{0.0f}, rb{0.0f};  // arms at the last position solve (world)
  // Over the tick: the largest normal multiplier of a substep (for the impulse output).
  float peak_lambda = 0.0f;
};

/// The tick's contact points, in contact key order then point order.
void gather_contacts(const WorldImpl& w, const std::vector<XBody>& bodies, std::vector<XContact>& out);
void solve_contact_positions(std::vector<XBody>& bodies, std::vector<XContact>& cs, float alpha_tilde);
void solve_contact_velocities(std::vector<XBody>& bodies, std::vector<XContact>& cs, float h,
                              float restitution_threshold);
void store_contact_impulses(WorldImpl& w, const std::vector<XContact>& cs, float h);

/// A joint's multipliers over one substep (its compliant rows: the spring, the steering
/// spring), zeroed when the substep begins; never state.
struct JointLambdas {
  float spring = 0.0f;
  float steer = 0.0f;
};

/// Every joint's positional constraints, in joint-slot order: springs with compliance
/// 1 / k, the rest rigid. `lambdas` has one entry per joint slot.
void solve_joint_positions(const WorldImpl& w, std::vector<XBody>& bodies, float h, std::vector<JointLambdas>& lambdas);
/// Every joint's velocity rows after the velocities are derived, in joint-slot order:
/// motors (bounded by max_force h per substep) and spring damping.
void solve_joint_velocities(const WorldImpl& w, std::vector<XBody>& bodies, float h);

/// One tick of the XPBD solver over the world's awake bodies.
void solve_tick(WorldImpl& w, float dt);

}  // namespace xpbd
}  // namespace keel::sim
