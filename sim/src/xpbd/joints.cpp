// XPBD joints (Müller et al. 2020, sections 3.3 and 3.4), every kind, with the scene
// fields meaning what they mean to the soft step (joint/joint_solver.cpp): body B is the
// reference, angles and translations are those of frame A measured in frame B, frame B's
// X is the joint's axis.
//
//   Fixed     frames equal, a shared point
//   Hinge     X axes aligned, a shared point; angle limit, spring, motor
//   Ball      a shared point; swing cone (A's X within cone_angle of B's X), twist limit
//   Slider    rotation locked, A's anchor on B's X line; travel limit, spring, motor
//   Distance  a fixed length, or a [lower, upper] range, or a spring toward the length
//   Wheel     A's axle (Y) on B's steered Y (or a steering spring), anchor on B's X line;
//             suspension spring and travel limit along B's X; drive about the axle
//
// Rigid rows have compliance 0. A spring of `hertz` has stiffness k = m_eff (2 pi f)^2 for
// the effective mass m_eff of its coordinate at this pose (what the soft step's softness
// means too), so its compliance is alpha = 1 / k; its damping ratio is a velocity row after
// the velocities are derived (damping 2 zeta m_eff omega, implicit). Motors are velocity
// rows there as well, each bounded by max_force h per substep (the paper's velocity-level
// drive), solved before the contacts' velocity rows. Holding torque and breaking are
// refused when the joint is added (joint/joint_api.cpp, xpbd_joint_support).
#include "xpbd/xpbd.h"

#include <keel/sim/det_math.h>

#include "world_impl.h"

#include <algorithm>

namespace keel::sim::xpbd {

namespace {

constexpr float kTwoPi = 6.28318530717958647692f;
const Vec3 kX{1.0f, 0.0f, 0.0f};
const Vec3 kY{0.0f, 1.0f, 0.0f};

struct JointPose {
  XBody* a;
  XBody* b;
  Vec3 ra, rb;  // anchor arms (world)
  Quat fa, fb;  // frames (world)
  Vec3 d;       // anchor A - anchor B
  Vec3 rb_at_a; // A's anchor from B's centre: the arm of a row along an axis fixed in B
};

// `world` stands in for body B when B is the world (it never moves; frame_b is in world
// space).
JointPose pose_of(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world) {
  JointPose p{&bodies[j.body_a], nullptr, {}, {}, {}, {}, {}, {}};
  const Body& ba = w.bodies[j.body_a];
  p.ra = p.a->q * (j.def.frame_a.position - ba.local_center);
  p.fa = p.a->q * j.def.frame_a.rotation;
  if (j.body_b == kNullIndex) {
    world = XBody{};
    world.x = j.def.frame_b.position;
    p.b = &world;
    p.rb = Vec3(0.0f);
    p.fb = j.def.frame_b.rotation;
  } else {
    p.b = &bodies[j.body_b];
    const Body& bb = w.bodies[j.body_b];
    p.rb = p.b->q * (j.def.frame_b.position - bb.local_center);
    p.fb = p.b->q * j.def.frame_b.rotation;
  }
  p.d = (p.a->x + p.ra) - (p.b->x + p.rb);
  p.rb_at_a = p.rb + p.d;
  return p;
}

Quat positive_w(Quat q) { return q.w < 0.0f ? -q : q; }

// The angle of frame A about frame B's X (swing-twist), as joint_info reports it.
float twist_angle(const JointPose& p) {
  const Quat rel = positive_w(glm::conjugate(p.fb) * p.fa);
  return 2.0f * dmath::atan2(rel.x, rel.w);
}

// The amount a coordinate lies outside [lower, upper] (0 inside): the error to remove.
float limit_error(float value, const JointLimit& limit) {
  if (!limit.enabled) return 0.0f;
  if (value < limit.lower) return value - limit.lower;
  if (value > limit.upper) return value - limit.upper;
  return 0.0f;
}

// Compliance over h^2 of a spring of `hertz` on a coordinate of inverse effective mass
// `inv_mass`: alpha = 1 / k, k = m_eff omega^2.
float spring_alpha_tilde(float hertz, float inv_mass, float h) {
  const float omega = kTwoPi * hertz;
  return inv_mass / (omega * omega * h * h);
}

bool spring_on(const JointSpring& s) { return s.enabled && s.hertz > 0.0f; }

// Moves A's anchor by -v relative to B's (a rigid positional row along v).
void remove_offset(JointPose& p, const Vec3& v, bool fixed_in_b) {
  const float c = glm::length(v);
  if (!(c > 0.0f)) return;
  apply_positional(*p.a, *p.b, p.ra, fixed_in_b ? p.rb_at_a : p.rb, v / c, c, 0.0f, 0.0f);
}

void solve_point(JointPose& p) { remove_offset(p, p.d, false); }

// A spring along unit n fixed in B on the offset's component `value` toward `target`.
void solve_linear_spring(JointPose& p, const Vec3& n, float value, const JointSpring& s, float h, float& lambda) {
  const float inv_mass = generalized_inverse_mass(*p.a, p.ra, n) + generalized_inverse_mass(*p.b, p.rb_at_a, n);
  if (!(inv_mass > 0.0f)) return;
  lambda += apply_positional(*p.a, *p.b, p.ra, p.rb_at_a, n, value - s.target,
                             spring_alpha_tilde(s.hertz, inv_mass, h), lambda);
}

// A spring on the angle of A about unit `axis` toward its target (error `c` = angle -
// target). On a point joint (`pivot`) the bodies turn about the anchor, against the
// inertia about it.
void solve_angular_spring(JointPose& p, const Vec3& axis, float c, float hertz, float h, bool pivot, float& lambda) {
  const float inv_mass = pivot ? pivot_inverse_mass(*p.a, p.ra, axis) + pivot_inverse_mass(*p.b, p.rb, axis)
                               : angular_inverse_mass(*p.a, *p.b, axis);
  if (!(inv_mass > 0.0f)) return;
  const float alpha_tilde = spring_alpha_tilde(hertz, inv_mass, h);
  // B turning +c about the axis takes A's angle in B down by c.
  lambda += pivot ? apply_angular_about(*p.a, *p.b, p.ra, p.rb, axis, c, alpha_tilde, lambda)
                  : apply_angular_compliant(*p.a, *p.b, axis, c, alpha_tilde, lambda);
}

// Turns B's X axis onto A's (hinge).
void solve_axis(JointPose& p) {
  const Vec3 ax = p.fa * kX;
  const Vec3 bx = p.fb * kX;
  apply_angular(*p.a, *p.b, glm::cross(bx, ax));
}

// Turns B's frame onto A's (fixed, slider).
void solve_frames(JointPose& p) {
  const Quat r = positive_w(p.fa * glm::conjugate(p.fb));
  apply_angular(*p.a, *p.b, 2.0f * Vec3(r.x, r.y, r.z));
}

// Turns B relative to A by `c` about unit `axis`, each about the joint's anchor (rigid).
void turn_about_pivot(JointPose& p, const Vec3& axis, float c) {
  apply_angular_about(*p.a, *p.b, p.ra, p.rb, axis, c, 0.0f, 0.0f);
}

// A hinge's angle (A about B's X), measured as the turn of B's Y from A's Y about A's X,
// negated: the axes are aligned first, so it is joint_info's angle.
float hinge_angle(const JointPose& p) {
  const Vec3 n = p.fa * kX;
  const Vec3 ay = p.fa * kY;
  const Vec3 by = p.fb * kY;
  return -dmath::atan2(glm::dot(glm::cross(ay, by), n), glm::dot(ay, by));
}

// Keeps a hinge's angle within the limit, turning each body about its centre. (Turning
// about the pivot, as the ball's limits do, would serve a light bob on a long arm better;
// this form keeps the bits of the scenes recorded before it, tests/golden/xpbd_pile.golden.)
void solve_hinge_limit(JointPose& p, const JointLimit& limit) {
  const float c = limit_error(hinge_angle(p), limit);
  if (c != 0.0f) apply_angular(*p.a, *p.b, c * (p.fa * kX));
}

// Keeps a ball's twist (A about the twist axis) within the limit, about the pivot.
void solve_twist_limit(JointPose& p, const Vec3& axis, const JointLimit& limit) {
  const float c = limit_error(twist_angle(p), limit);
  if (c != 0.0f) turn_about_pivot(p, axis, c);
}

// Keeps A's X within cone_angle of B's X: B turns its X toward A's by the excess.
void solve_cone(JointPose& p, float cone_angle) {
  const Vec3 ax = p.fa * kX;
  const Vec3 bx = p.fb * kX;
  const Vec3 n = glm::cross(bx, ax);
  const float sin_swing = glm::length(n);
  if (!(sin_swing > 1e-6f)) return;
  const float swing = dmath::atan2(sin_swing, glm::dot(ax, bx));
  if (swing > cone_angle) turn_about_pivot(p, n / sin_swing, swing - cone_angle);
}

// The twist axis: halfway between the frames' X axes (the soft step's choice).
Vec3 twist_axis(const JointPose& p) {
  const Vec3 sum = p.fa * kX + p.fb * kX;
  const float len = glm::length(sum);
  return len > 1e-6f ? sum / len : Vec3(0.0f);
}

// A's anchor kept on B's X line, the travel along it within the limit.
void solve_line(JointPose& p, const JointLimit& limit) {
  const Vec3 axis = p.fb * kX;
  const float t = glm::dot(p.d, axis);
  const Vec3 off = p.d - t * axis + limit_error(t, limit) * axis;
  remove_offset(p, off, true);
}

void solve_slider(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world, float h,
                  JointLambdas& lam) {
  JointPose p = pose_of(w, j, bodies, world);
  if (spring_on(j.def.spring)) {
    const Vec3 axis = p.fb * kX;
    solve_linear_spring(p, axis, glm::dot(p.d, axis), j.def.spring, h, lam.spring);
    p = pose_of(w, j, bodies, world);
  }
  solve_frames(p);
  p = pose_of(w, j, bodies, world);
  solve_line(p, j.def.limit);
}

void solve_distance(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world, float h,
                    JointLambdas& lam) {
  const JointDef& d = j.def;
  JointPose p = pose_of(w, j, bodies, world);
  float len = glm::length(p.d);
  if (!(len > 1e-6f)) return;  // no direction to push along
  if (spring_on(d.spring)) {
    const Vec3 n = p.d / len;
    const float inv_mass = generalized_inverse_mass(*p.a, p.ra, n) + generalized_inverse_mass(*p.b, p.rb, n);
    if (inv_mass > 0.0f) {
      lam.spring += apply_positional(*p.a, *p.b, p.ra, p.rb, n, len - d.length,
                                     spring_alpha_tilde(d.spring.hertz, inv_mass, h), lam.spring);
    }
    p = pose_of(w, j, bodies, world);
    len = glm::length(p.d);
    if (!(len > 1e-6f)) return;
  }
  // Rigid at the length unless a spring or a range says otherwise (the soft step's rule).
  const float c = d.limit.enabled ? limit_error(len, d.limit) : (spring_on(d.spring) ? 0.0f : len - d.length);
  if (c != 0.0f) apply_positional(*p.a, *p.b, p.ra, p.rb, p.d / len, c, 0.0f, 0.0f);
}

// The wheel's axle (A's Y) where the chassis puts it: on B's Y turned by the steering angle
// about B's X, or, with a steering spring, only perpendicular to B's X (camber) and drawn
// toward the steered direction by the spring.
void solve_axle(JointPose& p, const Joint& j, float h, float& lambda) {
  const Vec3 bx = p.fb * kX;
  const Vec3 steered = dmath::axis_angle(bx, j.steer) * (p.fb * kY);
  const Vec3 ay = p.fa * kY;
  if (!spring_on(j.def.steer_spring)) {
    apply_angular(*p.a, *p.b, glm::cross(steered, ay));
    return;
  }
  const float steer_err = dmath::atan2(glm::dot(glm::cross(steered, ay), bx), glm::dot(steered, ay));
  solve_angular_spring(p, bx, steer_err, j.def.steer_spring.hertz, h, false, lambda);
  const Vec3 flat = ay - glm::dot(ay, bx) * bx;
  const float len = glm::length(flat);
  if (len > 1e-6f) apply_angular(*p.a, *p.b, glm::cross(flat / len, p.fa * kY));
}

void solve_wheel(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world, float h,
                 JointLambdas& lam) {
  JointPose p = pose_of(w, j, bodies, world);
  if (spring_on(j.def.spring)) {
    const Vec3 axis = p.fb * kX;
    solve_linear_spring(p, axis, glm::dot(p.d, axis), j.def.spring, h, lam.spring);
    p = pose_of(w, j, bodies, world);
  }
  solve_axle(p, j, h, lam.steer);
  p = pose_of(w, j, bodies, world);
  solve_line(p, j.def.limit);
}

void solve_hinge(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world, float h,
                 JointLambdas& lam) {
  JointPose p = pose_of(w, j, bodies, world);
  if (spring_on(j.def.spring)) {
    solve_angular_spring(p, p.fb * kX, hinge_angle(p) - j.def.spring.target, j.def.spring.hertz, h, true,
                         lam.spring);
    p = pose_of(w, j, bodies, world);
  }
  solve_axis(p);
  p = pose_of(w, j, bodies, world);
  if (j.def.limit.enabled) {
    solve_hinge_limit(p, j.def.limit);
    p = pose_of(w, j, bodies, world);
  }
  solve_point(p);
}

void solve_ball(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world) {
  JointPose p = pose_of(w, j, bodies, world);
  if (j.def.cone_angle > 0.0f) {
    solve_cone(p, j.def.cone_angle);
    p = pose_of(w, j, bodies, world);
  }
  if (j.def.limit.enabled) {
    const Vec3 axis = twist_axis(p);
    if (axis != Vec3(0.0f)) solve_twist_limit(p, axis, j.def.limit);
    p = pose_of(w, j, bodies, world);
  }
  solve_point(p);
}

bool joint_moves(const Joint& j, const std::vector<XBody>& bodies) {
  if (!j.alive || j.broken) return false;
  const bool b_moves = j.body_b != kNullIndex && bodies[j.body_b].dynamic;
  return bodies[j.body_a].dynamic || b_moves;
}

// Angles first, the point (or line) last: the point is what a viewer sees come apart.
void solve_joint(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, float h, JointLambdas& lam) {
  if (!joint_moves(j, bodies)) return;
  XBody world;
  switch (j.def.kind) {
    case JointKind::Hinge: solve_hinge(w, j, bodies, world, h, lam); break;
    case JointKind::Ball: solve_ball(w, j, bodies, world); break;
    case JointKind::Slider: solve_slider(w, j, bodies, world, h, lam); break;
    case JointKind::Distance: solve_distance(w, j, bodies, world, h, lam); break;
    case JointKind::Wheel: solve_wheel(w, j, bodies, world, h, lam); break;
    case JointKind::Fixed: {
      JointPose p = pose_of(w, j, bodies, world);
      solve_frames(p);
      p = pose_of(w, j, bodies, world);
      solve_point(p);
      break;
    }
  }
}

// ---- velocity rows -------------------------------------------------------------------

Vec3 point_velocity(const XBody& b, const Vec3& r) { return b.v + glm::cross(b.w, r); }

// Fraction of a coordinate's speed a damper of ratio zeta at omega removes in one implicit
// substep: c h / (m_eff + c h) with c = 2 zeta m_eff omega.
float damper_share(const JointSpring& s, float h) {
  const float ch = 2.0f * s.damping_ratio * kTwoPi * s.hertz * h;
  return ch / (1.0f + ch);
}

// The impulse along unit n (at A's anchor, fixed in B when `fixed_in_b`) that moves the
// speed of A's anchor relative to B's along n toward `target`, removing `share` of the
// difference, bounded by `max_impulse` (< 0: unbounded).
void drive_linear(JointPose& p, const Vec3& n, bool fixed_in_b, float target, float share, float max_impulse) {
  const Vec3 rb = fixed_in_b ? p.rb_at_a : p.rb;
  const float inv_mass = generalized_inverse_mass(*p.a, p.ra, n) + generalized_inverse_mass(*p.b, rb, n);
  if (!(inv_mass > 0.0f)) return;
  const float v = glm::dot(point_velocity(*p.a, p.ra) - point_velocity(*p.b, rb), n);
  float l = share * (v - target) / inv_mass;
  if (max_impulse >= 0.0f) l = std::clamp(l, -max_impulse, max_impulse);
  apply_velocity_impulse(*p.a, *p.b, p.ra, rb, l * n);
}

// A body's inverse inertia about unit `axis` through its centre.
float spin_inverse_mass(const XBody& b, const Vec3& axis) {
  return b.dynamic ? glm::dot(axis, inv_inertia_mul(b, axis)) : 0.0f;
}

// Changes a body's spin by `dw` about its anchor (arm r): the centre's velocity with it.
void spin_about(XBody& b, const Vec3& r, const Vec3& dw) {
  if (!b.dynamic) return;
  b.w += dw;
  b.v += glm::cross(r, dw);
}

// The angular form: A's spin relative to B's about unit `axis`. On a point joint
// (`pivot`) the impulse is about the anchor, with the reaction there that keeps the point
// shared, against the inertia about it (a pure torque's effect on a pinned body).
void drive_angular(JointPose& p, const Vec3& axis, float target, float share, float max_impulse, bool pivot) {
  const float wa = pivot ? pivot_inverse_mass(*p.a, p.ra, axis) : spin_inverse_mass(*p.a, axis);
  const float wb = pivot ? pivot_inverse_mass(*p.b, p.rb, axis) : spin_inverse_mass(*p.b, axis);
  if (!(wa + wb > 0.0f)) return;
  const float v = glm::dot(p.a->w - p.b->w, axis);
  float l = share * (v - target) / (wa + wb);
  if (max_impulse >= 0.0f) l = std::clamp(l, -max_impulse, max_impulse);
  if (!pivot) {
    apply_angular_impulse(*p.a, *p.b, l * axis);
    return;
  }
  spin_about(*p.a, p.ra, (-wa * l) * axis);
  spin_about(*p.b, p.rb, (wb * l) * axis);
}

void solve_velocity_rows(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, float h) {
  const JointDef& d = j.def;
  XBody world;
  JointPose p = pose_of(w, j, bodies, world);
  const Vec3 bx = p.fb * kX;
  const bool damped = spring_on(d.spring) && d.spring.damping_ratio > 0.0f;
  const float share = damped ? damper_share(d.spring, h) : 0.0f;
  const float max_impulse = d.motor.max_force * h;
  switch (d.kind) {
    case JointKind::Hinge:
      if (damped) drive_angular(p, bx, 0.0f, share, -1.0f, true);
      if (d.motor.enabled) drive_angular(p, bx, d.motor.speed, 1.0f, max_impulse, true);
      break;
    case JointKind::Slider:
      if (damped) drive_linear(p, bx, true, 0.0f, share, -1.0f);
      if (d.motor.enabled) drive_linear(p, bx, true, d.motor.speed, 1.0f, max_impulse);
      break;
    case JointKind::Wheel:
      if (damped) drive_linear(p, bx, true, 0.0f, share, -1.0f);
      if (spring_on(d.steer_spring) && d.steer_spring.damping_ratio > 0.0f) {
        drive_angular(p, bx, 0.0f, damper_share(d.steer_spring, h), -1.0f, false);
      }
      if (d.motor.enabled) drive_angular(p, p.fa * kY, d.motor.speed, 1.0f, max_impulse, false);
      break;
    case JointKind::Distance: {
      const float len = glm::length(p.d);
      if (damped && len > 1e-6f) drive_linear(p, p.d / len, false, 0.0f, share, -1.0f);
      break;
    }
    case JointKind::Ball:
    case JointKind::Fixed: break;  // no drive, no spring (refused when added)
  }
}

}  // namespace

void solve_joint_positions(const WorldImpl& w, std::vector<XBody>& bodies, float h, std::vector<JointLambdas>& lambdas) {
  // Two passes: a light bob on a long arm turns more than it moves under one correction
  // (its rotational inverse mass dwarfs its linear one), and the linearised turn leaves
  // a residual a second pass removes. A spring's multiplier carries over to the second
  // pass, so the two together converge on the one compliant solve.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < w.joints.items.size(); ++i) solve_joint(w, w.joints.items[i], bodies, h, lambdas[i]);
  }
}

void solve_joint_velocities(const WorldImpl& w, std::vector<XBody>& bodies, float h) {
  for (const Joint& j : w.joints.items) {
    if (joint_moves(j, bodies)) solve_velocity_rows(w, j, bodies, h);
  }
}

}  // namespace keel::sim::xpbd
