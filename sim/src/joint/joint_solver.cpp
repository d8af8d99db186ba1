// Joint rows in the soft-step solver. Each substep: warm start, solve (biased, soft
// position recovery), then after positions move, relax (rigid, no recovery), always
// before the contacts of the same pass so a surface has the last word.
//
// Rows are scalar and solved in joint-slot order on one thread: the order is a function
// of the joint slots alone, so results do not depend on the thread count. Positions are
// taken from the start-of-tick pose plus each body's accumulated dp and dq, so the error
// a row sees is the one at this substep.
#include "joint/joint.h"

#include <keel/sim/det_math.h>

#include "solver/solver.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace keel::sim {

namespace {

constexpr float kJointHertz = 90.0f;        // clamped to a quarter of the substep rate
constexpr float kJointDampingRatio = 5.0f;  // heavily damped: joints do not ring

const Vec3 kX{1.0f, 0.0f, 0.0f};
const Vec3 kY{0.0f, 1.0f, 0.0f};
const Vec3 kZ{0.0f, 0.0f, 1.0f};

Mat3 skew(const Vec3& r) { return Mat3(0.0f, r.z, -r.y, -r.z, 0.0f, r.x, r.y, -r.x, 0.0f); }

Mat3 safe_inverse(const Mat3& k) {
  float det = glm::determinant(k);
  if (!(std::abs(det) > 1e-12f)) return Mat3(0.0f);
  return glm::inverse(k);
}

Quat positive_w(Quat q) { return q.w < 0.0f ? -q : q; }

/// Twist angle about X of a rotation (swing-twist split), in (-pi, pi].
float twist_angle(Quat q) {
  q = positive_w(q);
  return 2.0f * dmath::atan2(q.x, q.w);
}

Vec3 clamp_length(const Vec3& v, float max_len) {
  float len2 = glm::dot(v, v);
  if (len2 <= max_len * max_len) return v;
  return v * (max_len / std::sqrt(len2));
}

/// The axis a ball joint's twist is measured about: halfway between the frames' X axes
/// (zero in the degenerate case of opposite axes, where twist has no meaning).
Vec3 twist_axis(const Vec3& ax, const Vec3& bx) {
  Vec3 sum = ax + bx;
  float len2 = glm::dot(sum, sum);
  return len2 > 1e-12f ? sum / std::sqrt(len2) : Vec3(0.0f);
}

/// The current geometry of one joint at this substep.
struct Frame {
  SolverBody* A;
  SolverBody* B;
  JointWork* work;
  Vec3 ra, rb;   // anchors from the centres of mass, world
  Vec3 d;        // anchor B - anchor A
  Quat fa, fb;   // frame rotations, world
  Vec3 ax, ay, az;  // frame A's axes
  Vec3 bx, by;      // frame B's X and Y
};

// A side the solve cannot move (the world's stand-in, a kinematic body) is worked on as a
// copy: a row adds nothing to it but a signed zero, and joints of one colour may share it
// on different threads.
SolverBody* side(JointPass& p, uint32_t i, SolverBody& copy) {
  SolverBody& b = p.bodies[i];
  if (b.inv_mass != 0.0f) return &b;
  copy = b;
  return &copy;
}

Frame current_frame(JointPass& p, JointWork& w, SolverBody (&held)[2]) {
  Frame f;
  f.A = side(p, w.a, held[0]);
  f.B = side(p, w.b, held[1]);
  f.work = &w;
  Quat qa = f.A->dq * w.qa;
  Quat qb = f.B->dq * w.qb;
  f.ra = qa * w.la;
  f.rb = qb * w.lb;
  f.d = (w.cb + f.B->dp + f.rb) - (w.ca + f.A->dp + f.ra);
  f.fa = qa * w.fa;
  f.fb = qb * w.fb;
  f.ax = f.fa * kX;
  f.ay = f.fa * kY;
  f.az = f.fa * kZ;
  f.bx = f.fb * kX;
  f.by = f.fb * kY;
  return f;
}

// ---- scalar rows -------------------------------------------------------------------
// A row's Jacobian: linear direction (applied -to A, +to B) and angular parts for A and B.

struct Row {
  Vec3 lin{0.0f};
  Vec3 ang_a{0.0f};
  Vec3 ang_b{0.0f};
};

Row angular_row(const Vec3& axis) { return Row{Vec3(0.0f), axis, axis}; }

/// A linear row along n through the anchors; A's lever includes the gap d so the row
/// is exact for an axis fixed in A (slider, wheel).
Row linear_row(const Frame& f, const Vec3& n) {
  return Row{n, glm::cross(f.ra + f.d, n), glm::cross(f.rb, n)};
}

float row_mass(const Frame& f, const Row& r) {
  float k = (f.A->inv_mass + f.B->inv_mass) * glm::dot(r.lin, r.lin) +
            glm::dot(r.ang_a, f.A->inv_inertia * r.ang_a) + glm::dot(r.ang_b, f.B->inv_inertia * r.ang_b);
  return k > 0.0f ? 1.0f / k : 0.0f;
}

float row_velocity(const Frame& f, const Row& r) {
  return glm::dot(f.B->v - f.A->v, r.lin) + glm::dot(f.B->w, r.ang_b) - glm::dot(f.A->w, r.ang_a);
}

void apply_row(const Frame& f, const Row& r, float l) {
  f.A->v -= (f.A->inv_mass * l) * r.lin;
  f.A->w -= f.A->inv_inertia * (l * r.ang_a);
  f.B->v += (f.B->inv_mass * l) * r.lin;
  f.B->w += f.B->inv_inertia * (l * r.ang_b);
}

/// Softness of a rigid row in this pass: soft recovery when biased, rigid when relaxing.
struct Soft {
  float bias_rate, mass_scale, impulse_scale;
};

Soft pass_soft(const Softness& s, bool use_bias) {
  return use_bias ? Soft{s.bias_rate, s.mass_scale, s.impulse_scale} : Soft{0.0f, 1.0f, 0.0f};
}

/// An equality row holding C at 0.
void solve_equality(const Frame& f, const Row& r, float c, const Soft& s, float& acc) {
  float m = row_mass(f, r);
  float impulse = -m * s.mass_scale * (row_velocity(f, r) + s.bias_rate * c) - s.impulse_scale * acc;
  acc += impulse;
  apply_row(f, r, impulse);
}

// ---- limits -------------------------------------------------------------------------
// A limit row alone sees only the inertia of the two bodies about their centres of mass.
// On a joint that also holds a point (hinge, ball) or the rotation (slider) the limit's
// coordinate moves with far more inertia than that (a bob on a 1 m arm: m L^2, not its
// own 2/5 m r^2), and the equality rows solved next hand the motion straight back: a bob
// swung 9 degrees past a hinge stop at 5 rad/s. So a limit is solved on the joint's
// constraint manifold: with its impulse go impulses on the joint's rigid rows that keep
// their velocities where they are, and its effective mass is that of the joint's free
// coordinate with every held row in place. Solved after those rows, it has the last word
// within the joint. Its accumulated impulse is warm-started the same way; the held rows'
// own accumulators never see the share that goes with it (they leak when soft, which
// would hand a stopped bob's braking impulse back as spin).

/// The rigid rows a joint holds besides its limits; rows [linear, linear + linear_count)
/// are those whose impulses the joint keeps in linear_impulse (x, y, z in order).
struct HeldRows {
  static constexpr int kMax = 5;
  Row rows[kMax];
  int n = 0;
  int linear = 0, linear_count = 0;
  void add(const Row& r) { rows[n++] = r; }
  void mark_linear(int count) {
    linear = n;
    linear_count = count;
  }
};

/// The shared point's three rows (solve_point's block, one row per world axis).
void hold_point(HeldRows& held, const Frame& f) {
  for (int i = 0; i < 3; ++i) {
    Vec3 e(0.0f);
    e[i] = 1.0f;
    held.add(Row{e, glm::cross(f.ra, e), glm::cross(f.rb, e)});
  }
}

/// The locked rotation's three rows (solve_rotation's block).
void hold_rotation(HeldRows& held) {
  for (int i = 0; i < 3; ++i) {
    Vec3 e(0.0f);
    e[i] = 1.0f;
    held.add(angular_row(e));
  }
}

bool rigid_steering(const JointDef& d) { return !(d.steer_spring.enabled && d.steer_spring.hertz > 0.0f); }

/// The rows a kind's limits are held against, in the order the kind solves them.
HeldRows held_rows(const Joint& j, const Frame& f) {
  HeldRows held;
  switch (j.def.kind) {
    case JointKind::Hinge:
      held.add(angular_row(glm::cross(f.bx, f.ay)));
      held.add(angular_row(glm::cross(f.bx, f.az)));
      held.mark_linear(3);
      hold_point(held, f);
      break;
    case JointKind::Ball:
      held.mark_linear(3);
      hold_point(held, f);
      break;
    case JointKind::Slider:
      hold_rotation(held);
      held.mark_linear(2);
      held.add(linear_row(f, f.ay));
      held.add(linear_row(f, f.az));
      break;
    case JointKind::Wheel:
      if (rigid_steering(j.def)) held.add(angular_row(f.ax));
      held.add(angular_row(glm::cross(f.by, f.ax)));
      held.mark_linear(2);
      held.add(linear_row(f, f.ay));
      held.add(linear_row(f, f.az));
      break;
    case JointKind::Fixed:
    case JointKind::Distance: break;  // nothing held beside a distance limit
  }
  return held;
}

/// A row in double precision with what an impulse along it does to the two bodies' spins
/// (I^-1 times its angular parts). The free coordinate's inverse mass is a small
/// difference of large couplings (0.025 out of 100 for a 5 cm, 10 kg bob on a 2 m arm),
/// which single precision loses.
struct WideRow {
  glm::dvec3 lin, ang_a, ang_b;
  glm::dvec3 spin_a, spin_b;
};

constexpr int kHeld = HeldRows::kMax;

/// The held rows of one joint at one pose, widened, with their coupling K = J M^-1 J^T
/// factored as L D L^T (no square roots). A row whose pivot vanishes is redundant with
/// those before it (a body whose rotation is frozen, say) and is left out.
class HeldFactor {
 public:
  HeldFactor(const Frame& f, const HeldRows& held)
      : inv_mass_(double(f.A->inv_mass) + double(f.B->inv_mass)),
        inertia_a_(f.A->inv_inertia),
        inertia_b_(f.B->inv_inertia),
        held_(held) {
    for (int i = 0; i < held.n; ++i) {
      rows_[i] = widen(held.rows[i]);
      for (int j = 0; j < i; ++j) {
        double s = coupling(rows_[i], rows_[j]);
        for (int m = 0; m < j; ++m) s -= l_[i][m] * l_[j][m] * pivot_[m];
        l_[i][j] = used_[j] ? s / pivot_[j] : 0.0;
      }
      const double k = coupling(rows_[i], rows_[i]);
      double d = k;
      for (int m = 0; m < i; ++m) d -= l_[i][m] * l_[i][m] * pivot_[m];
      used_[i] = d > 1e-9 * k;
      pivot_[i] = used_[i] ? d : 0.0;
    }
  }

  /// The limit row r on the manifold of the held rows: an impulse l along it comes with
  /// -y[i] l on held row i (K y = J_held M^-1 r^T), which together change r's velocity by
  /// l / mass and no held row's velocity at all.
  LimitManifold manifold(const Row& r) const {
    const WideRow limit = widen(r);
    const int n = held_.n;
    double y[kHeld], k_limit[kHeld];
    for (int i = 0; i < n; ++i) k_limit[i] = coupling(rows_[i], limit);
    for (int i = 0; i < n; ++i) {  // L z = k (z in y)
      double s = k_limit[i];
      for (int m = 0; m < i; ++m) s -= l_[i][m] * y[m];
      y[i] = s;
    }
    for (int i = n - 1; i >= 0; --i) {  // D L^T y = z
      double s = used_[i] ? y[i] / pivot_[i] : 0.0;
      for (int m = i + 1; m < n; ++m) s -= l_[m][i] * y[m];
      y[i] = s;
    }
    const double free_k = coupling(limit, limit);
    double schur = free_k;
    for (int i = 0; i < n; ++i) schur -= k_limit[i] * y[i];
    LimitManifold out;
    // Nothing left to move (the held rows lock the coordinate too): the limit has no say.
    if (!(schur > 1e-9 * free_k)) return out;
    out.mass = float(1.0 / schur);
    glm::dvec3 lin = limit.lin, ang_a = limit.ang_a, ang_b = limit.ang_b;
    for (int i = 0; i < n; ++i) {
      lin -= y[i] * rows_[i].lin;
      ang_a -= y[i] * rows_[i].ang_a;
      ang_b -= y[i] * rows_[i].ang_b;
    }
    out.lin = Vec3(lin);
    out.ang_a = Vec3(ang_a);
    out.ang_b = Vec3(ang_b);
    for (int i = 0; i < held_.linear_count; ++i) out.linear_share[i] = float(-y[held_.linear + i]);
    return out;
  }

 private:
  WideRow widen(const Row& r) const {
    WideRow w{glm::dvec3(r.lin), glm::dvec3(r.ang_a), glm::dvec3(r.ang_b), {}, {}};
    w.spin_a = inertia_a_ * w.ang_a;
    w.spin_b = inertia_b_ * w.ang_b;
    return w;
  }
  /// J_r M^-1 J_s^T: how an impulse along row s changes the velocity of row r.
  double coupling(const WideRow& r, const WideRow& s) const {
    return inv_mass_ * glm::dot(r.lin, s.lin) + glm::dot(r.ang_a, s.spin_a) + glm::dot(r.ang_b, s.spin_b);
  }

  const double inv_mass_;
  const glm::dmat3 inertia_a_, inertia_b_;
  const HeldRows& held_;
  WideRow rows_[kHeld];
  double l_[kHeld][kHeld];  // L below the diagonal
  double pivot_[kHeld];     // D
  bool used_[kHeld];
};

/// A limit row alone (nothing held beside it: a distance joint).
LimitManifold plain_row(const Frame& f, const Row& r) {
  LimitManifold out;
  out.mass = row_mass(f, r);
  out.lin = r.lin;
  out.ang_a = r.ang_a;
  out.ang_b = r.ang_b;
  return out;
}

bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(&a, &b, sizeof(Vec3)) == 0; }
bool same_bits(const Quat& a, const Quat& b) { return std::memcmp(&a, &b, sizeof(Quat)) == 0; }

/// What one joint's limit rows share in a pass: the rows they are held against (built
/// when first needed) and their manifolds, kept in the joint's work across passes while
/// the two bodies' poses stay the same bit for bit (so a kept one is exactly the one that
/// would be worked out again).
class Limits {
 public:
  Limits(const Joint& j, const Frame& f) : j_(j), f_(f), w_(*f.work) {
    const SolverBody& a = *f.A;
    const SolverBody& b = *f.B;
    if (same_bits(a.dp, w_.pose_dp_a) && same_bits(b.dp, w_.pose_dp_b) && same_bits(a.dq, w_.pose_dq_a) &&
        same_bits(b.dq, w_.pose_dq_b)) {
      return;
    }
    w_.limit_manifold_ready = 0;
    w_.pose_dp_a = a.dp;
    w_.pose_dp_b = b.dp;
    w_.pose_dq_a = a.dq;
    w_.pose_dq_b = b.dq;
  }

  const Frame& frame() const { return f_; }

  const LimitManifold& manifold(int slot, const Row& r) {
    const uint8_t bit = uint8_t(1u << slot);
    if (!(w_.limit_manifold_ready & bit)) {
      w_.limit_manifold[slot] = work_out(r);
      w_.limit_manifold_ready |= bit;
    }
    return w_.limit_manifold[slot];
  }

 private:
  LimitManifold work_out(const Row& r) {
    if (!factor_) {
      held_ = held_rows(j_, f_);
      if (held_.n == 0) return plain_row(f_, r);
      factor_.emplace(f_, held_);
    }
    return factor_->manifold(r);
  }

  const Joint& j_;
  const Frame& f_;
  JointWork& w_;
  HeldRows held_;
  std::optional<HeldFactor> factor_;  // worked out for the first slot that needs one
};

/// One limit row (or a pair sharing it: lower, and upper as the row negated) in its slot
/// of the joint's limits.
class LimitRow {
 public:
  LimitRow(Limits& limits, int slot, const Row& r) : limits_(limits), slot_(slot), r_(r) {}

  /// Keeps C >= 0 for the row times `sign`. While C > 0 it closes the gap exactly within
  /// the substep and no more (speculative: the limit is met on the substep it is reached,
  /// and a joint moving away, or not fast enough to get there, is left alone); once past,
  /// a soft push-out when biased and a rigid stop when relaxing.
  void solve(float c, float sign, const Soft& s, float inv_h, float& acc) {
    float bias = 0.0f, ms = 1.0f, is = 0.0f;
    if (c > 0.0f) {
      bias = c * inv_h;
    } else {
      bias = s.bias_rate * c;
      ms = s.mass_scale;
      is = s.impulse_scale;
    }
    float v = sign * row_velocity(limits_.frame(), r_) + bias;
    if (acc == 0.0f && !(v < 0.0f)) return;  // idle: not reached within the substep, not pushing
    float impulse = -manifold().mass * ms * v - is * acc;
    float total = std::max(acc + impulse, 0.0f);
    apply(sign * (total - acc));
    acc = total;
  }

  /// Applies an impulse along the row with the held rows' shares (also the warm start).
  void apply(float l) {
    if (l == 0.0f) return;
    const LimitManifold& m = manifold();
    apply_row(limits_.frame(), Row{m.lin, m.ang_a, m.ang_b}, l);
  }

  /// Adds the shares of an impulse l along the row that the joint's linear rows carry.
  void add_linear_share(float l, Vec3& linear) {
    if (l != 0.0f) linear += l * manifold().linear_share;
  }

 private:
  const LimitManifold& manifold() { return limits_.manifold(slot_, r_); }
  Limits& limits_;
  const int slot_;
  const Row r_;
};

constexpr int kAxialSlot = 0;  // hinge angle, slider and wheel travel, ball twist, distance
constexpr int kConeSlot = 1;

/// A spring row (soft at its own frequency in both passes).
void solve_spring(const Frame& f, const Row& r, float c, const Softness& s, float& acc) {
  float m = row_mass(f, r);
  float impulse = -m * s.mass_scale * (row_velocity(f, r) + s.bias_rate * c) - s.impulse_scale * acc;
  acc += impulse;
  apply_row(f, r, impulse);
}

/// A velocity motor with a bounded impulse per substep.
void solve_motor(const Frame& f, const Row& r, float speed, float max_impulse, float& acc) {
  float m = row_mass(f, r);
  float impulse = -m * (row_velocity(f, r) - speed);
  float total = std::clamp(acc + impulse, -max_impulse, max_impulse);
  apply_row(f, r, total - acc);
  acc = total;
}

void solve_limits(Limits& limits, const Row& r, float value, const JointLimit& lim, const Soft& s, float inv_h,
                  float& lower, float& upper) {
  LimitRow row(limits, kAxialSlot, r);
  row.solve(value - lim.lower, 1.0f, s, inv_h, lower);
  row.solve(lim.upper - value, -1.0f, s, inv_h, upper);
}

// ---- blocks -------------------------------------------------------------------------

/// The three linear rows of a shared point, solved together.
void solve_point(const Frame& f, const Soft& s, Vec3& acc) {
  Mat3 sa = skew(f.ra), sb = skew(f.rb);
  float m = f.A->inv_mass + f.B->inv_mass;
  Mat3 k = Mat3(m) - sa * f.A->inv_inertia * sa - sb * f.B->inv_inertia * sb;
  Vec3 cdot = f.B->v + glm::cross(f.B->w, f.rb) - f.A->v - glm::cross(f.A->w, f.ra);
  Vec3 impulse = -s.mass_scale * (safe_inverse(k) * (cdot + s.bias_rate * f.d)) - s.impulse_scale * acc;
  acc += impulse;
  f.A->v -= f.A->inv_mass * impulse;
  f.A->w -= f.A->inv_inertia * glm::cross(f.ra, impulse);
  f.B->v += f.B->inv_mass * impulse;
  f.B->w += f.B->inv_inertia * glm::cross(f.rb, impulse);
}

/// Three angular rows driving the rotation error `c` (world rotation vector) to zero.
/// Returns the impulse applied; `max_impulse` > 0 bounds the accumulated impulse.
bool solve_rotation(const Frame& f, const Vec3& c, const Soft& s, float max_impulse, Vec3& acc) {
  Mat3 k = f.A->inv_inertia + f.B->inv_inertia;
  Vec3 cdot = f.B->w - f.A->w;
  Vec3 impulse = -s.mass_scale * (safe_inverse(k) * (cdot + s.bias_rate * c)) - s.impulse_scale * acc;
  Vec3 total = acc + impulse;
  bool clamped = false;
  if (max_impulse > 0.0f) {
    Vec3 bounded = clamp_length(total, max_impulse);
    clamped = bounded != total;
    total = bounded;
  }
  impulse = total - acc;
  acc = total;
  f.A->w -= f.A->inv_inertia * impulse;
  f.B->w += f.B->inv_inertia * impulse;
  return clamped;
}

/// World rotation vector that takes frame B back onto frame A rotated by `target`
/// (frame B in frame A): small-angle form 2 vec(q), exact enough for a correction.
Vec3 rotation_error(const Frame& f, const Quat& target) {
  Quat e = positive_w(f.fb * glm::conjugate(f.fa * target));
  return 2.0f * Vec3(e.x, e.y, e.z);
}

// ---- joint kinds -------------------------------------------------------------------

struct Ctx {
  Softness joint;
  float h, inv_h;
  bool use_bias;
};

Softness spring_softness(const JointSpring& s, float h) { return make_softness(s.hertz, s.damping_ratio, h); }

void solve_hold_hinge(Joint& j, const Frame& f, const Ctx& x) {
  if (j.def.holding_torque <= 0.0f) return;
  Quat rel = glm::conjugate(f.fa) * f.fb;
  float err = twist_angle(rel * glm::conjugate(j.hold_ref));
  Soft s = pass_soft(x.joint, x.use_bias);
  Row r = angular_row(f.ax);
  float m = row_mass(f, r);
  float max_impulse = j.def.holding_torque * x.h;
  float impulse = -m * s.mass_scale * (row_velocity(f, r) + s.bias_rate * err) - s.impulse_scale * j.hold_impulse.x;
  float total = std::clamp(j.hold_impulse.x + impulse, -max_impulse, max_impulse);
  if (!x.use_bias) j.hold_saturated = total != j.hold_impulse.x + impulse;
  apply_row(f, r, total - j.hold_impulse.x);
  j.hold_impulse.x = total;
}

void solve_hinge(Joint& j, const Frame& f, const Ctx& x) {
  const JointDef& d = j.def;
  Row axis = angular_row(f.ax);
  float angle = twist_angle(glm::conjugate(f.fa) * f.fb);
  if (d.spring.enabled && d.spring.hertz > 0.0f) {
    solve_spring(f, axis, angle - d.spring.target, spring_softness(d.spring, x.h), j.spring_impulse);
  }
  if (d.motor.enabled) solve_motor(f, axis, d.motor.speed, d.motor.max_force * x.h, j.motor_impulse);
  solve_hold_hinge(j, f, x);
  Soft s = pass_soft(x.joint, x.use_bias);
  // Keep B's axis on A's: B's X stays perpendicular to A's Y and Z.
  Vec3 n1 = glm::cross(f.bx, f.ay), n2 = glm::cross(f.bx, f.az);
  solve_equality(f, angular_row(n1), glm::dot(f.bx, f.ay), s, j.angular_impulse.x);
  solve_equality(f, angular_row(n2), glm::dot(f.bx, f.az), s, j.angular_impulse.y);
  solve_point(f, s, j.linear_impulse);
  if (!d.limit.enabled) return;
  Limits limits(j, f);
  solve_limits(limits, axis, angle, d.limit, s, x.inv_h, j.lower_impulse, j.upper_impulse);
}

void solve_ball(Joint& j, const Frame& f, const Ctx& x) {
  const JointDef& d = j.def;
  Soft s = pass_soft(x.joint, x.use_bias);
  if (d.holding_torque > 0.0f) {
    Vec3 c = rotation_error(f, j.hold_ref);
    bool clamped = solve_rotation(f, c, s, d.holding_torque * x.h, j.hold_impulse);
    if (!x.use_bias) j.hold_saturated = clamped;
  }
  solve_point(f, s, j.linear_impulse);
  if (d.cone_angle <= 0.0f && !d.limit.enabled) return;
  Limits limits(j, f);
  if (d.cone_angle > 0.0f) {
    Vec3 n = glm::cross(f.ax, f.bx);
    float sin_swing = glm::length(n);
    if (sin_swing > 1e-6f) {
      float swing = dmath::atan2(sin_swing, glm::dot(f.ax, f.bx));
      Row r = angular_row(-(n / sin_swing));  // positive velocity closes the cone gap
      LimitRow(limits, kConeSlot, r).solve(d.cone_angle - swing, 1.0f, s, x.inv_h, j.cone_impulse);
    }
  }
  if (d.limit.enabled) {
    float twist = twist_angle(glm::conjugate(f.fa) * f.fb);
    solve_limits(limits, angular_row(twist_axis(f.ax, f.bx)), twist, d.limit, s, x.inv_h, j.lower_impulse,
                 j.upper_impulse);
  }
}

void solve_fixed(Joint& j, const Frame& f, const Ctx& x) {
  Soft s = pass_soft(x.joint, x.use_bias);
  solve_rotation(f, rotation_error(f, Quat(1.0f, 0.0f, 0.0f, 0.0f)), s, 0.0f, j.angular_impulse);
  solve_point(f, s, j.linear_impulse);
}

void solve_slider(Joint& j, const Frame& f, const Ctx& x) {
  const JointDef& d = j.def;
  Soft s = pass_soft(x.joint, x.use_bias);
  Row axis = linear_row(f, f.ax);
  float t = glm::dot(f.d, f.ax);
  if (d.spring.enabled && d.spring.hertz > 0.0f) {
    solve_spring(f, axis, t - d.spring.target, spring_softness(d.spring, x.h), j.spring_impulse);
  }
  if (d.motor.enabled) solve_motor(f, axis, d.motor.speed, d.motor.max_force * x.h, j.motor_impulse);
  solve_rotation(f, rotation_error(f, Quat(1.0f, 0.0f, 0.0f, 0.0f)), s, 0.0f, j.angular_impulse);
  solve_equality(f, linear_row(f, f.ay), glm::dot(f.d, f.ay), s, j.linear_impulse.x);
  solve_equality(f, linear_row(f, f.az), glm::dot(f.d, f.az), s, j.linear_impulse.y);
  if (!d.limit.enabled) return;
  Limits limits(j, f);
  solve_limits(limits, axis, t, d.limit, s, x.inv_h, j.lower_impulse, j.upper_impulse);
}

void solve_distance(Joint& j, const Frame& f, const Ctx& x) {
  const JointDef& d = j.def;
  float len = glm::length(f.d);
  Vec3 n = len > 1e-6f ? f.d / len : f.ax;
  Row r{n, glm::cross(f.ra, n), glm::cross(f.rb, n)};
  Soft s = pass_soft(x.joint, x.use_bias);
  if (d.spring.enabled && d.spring.hertz > 0.0f) {
    solve_spring(f, r, len - d.length, spring_softness(d.spring, x.h), j.spring_impulse);
  }
  if (d.limit.enabled) {
    Limits limits(j, f);
    solve_limits(limits, r, len, d.limit, s, x.inv_h, j.lower_impulse, j.upper_impulse);
  }
  if (!d.spring.enabled && !d.limit.enabled) solve_equality(f, r, len - d.length, s, j.rigid_impulse);
}

void solve_wheel(Joint& j, const Frame& f, const Ctx& x) {
  const JointDef& d = j.def;
  Soft s = pass_soft(x.joint, x.use_bias);
  // Suspension along A's X: spring toward its target, travel limited.
  Row susp = linear_row(f, f.ax);
  float t = glm::dot(f.d, f.ax);
  if (d.spring.enabled && d.spring.hertz > 0.0f) {
    solve_spring(f, susp, t - d.spring.target, spring_softness(d.spring, x.h), j.spring_impulse);
  }
  // Drive about the wheel's axle.
  if (d.motor.enabled) solve_motor(f, angular_row(f.by), d.motor.speed, d.motor.max_force * x.h, j.motor_impulse);
  // Steering: turn about the suspension axis to the steering angle.
  Vec3 steered = dmath::axis_angle(f.ax, j.steer) * f.ay;
  float steer_err = dmath::atan2(glm::dot(glm::cross(steered, f.by), f.ax), glm::dot(steered, f.by));
  if (!rigid_steering(d)) {
    solve_spring(f, angular_row(f.ax), steer_err, spring_softness(d.steer_spring, x.h), j.angular_impulse.y);
  } else {
    solve_equality(f, angular_row(f.ax), steer_err, s, j.angular_impulse.y);
  }
  // Camber: the axle stays perpendicular to the suspension axis.
  Vec3 n = glm::cross(f.by, f.ax);
  solve_equality(f, angular_row(n), glm::dot(f.by, f.ax), s, j.angular_impulse.x);
  // The wheel centre stays on the suspension line.
  solve_equality(f, linear_row(f, f.ay), glm::dot(f.d, f.ay), s, j.linear_impulse.x);
  solve_equality(f, linear_row(f, f.az), glm::dot(f.d, f.az), s, j.linear_impulse.y);
  // Suspension travel, against the rows that hold the wheel on its line and upright.
  if (!d.limit.enabled) return;
  Limits limits(j, f);
  solve_limits(limits, susp, t, d.limit, s, x.inv_h, j.lower_impulse, j.upper_impulse);
}

void solve_one(Joint& j, const Frame& f, const Ctx& x) {
  switch (j.def.kind) {
    case JointKind::Fixed: solve_fixed(j, f, x); break;
    case JointKind::Hinge: solve_hinge(j, f, x); break;
    case JointKind::Ball: solve_ball(j, f, x); break;
    case JointKind::Slider: solve_slider(j, f, x); break;
    case JointKind::Distance: solve_distance(j, f, x); break;
    case JointKind::Wheel: solve_wheel(j, f, x); break;
  }
}

// ---- warm start ---------------------------------------------------------------------

void apply_point(const Frame& f, const Vec3& impulse) {
  f.A->v -= f.A->inv_mass * impulse;
  f.A->w -= f.A->inv_inertia * glm::cross(f.ra, impulse);
  f.B->v += f.B->inv_mass * impulse;
  f.B->w += f.B->inv_inertia * glm::cross(f.rb, impulse);
}

void apply_angular(const Frame& f, const Vec3& impulse) {
  f.A->w -= f.A->inv_inertia * impulse;
  f.B->w += f.B->inv_inertia * impulse;
}

/// Calls visit(row, impulse) for each of the joint's limit rows with the impulse it has
/// accumulated (signed along the row), skipping those at zero.
template <typename Visit>
void for_each_limit_impulse(const Joint& j, const Frame& f, Visit&& visit) {
  const float axial = j.lower_impulse - j.upper_impulse;
  Limits limits(j, f);
  switch (j.def.kind) {
    case JointKind::Hinge: visit(LimitRow(limits, kAxialSlot, angular_row(f.ax)), axial); break;
    case JointKind::Ball: {
      Vec3 n = glm::cross(f.ax, f.bx);
      float len = glm::length(n);
      if (len > 1e-6f) visit(LimitRow(limits, kConeSlot, angular_row(-(n / len))), j.cone_impulse);
      visit(LimitRow(limits, kAxialSlot, angular_row(twist_axis(f.ax, f.bx))), axial);
      break;
    }
    case JointKind::Slider:
    case JointKind::Wheel: visit(LimitRow(limits, kAxialSlot, linear_row(f, f.ax)), axial); break;
    case JointKind::Fixed:
    case JointKind::Distance: break;  // a distance limit is warm-started with its length row
  }
}

bool has_limit_impulse(const Joint& j) {
  return j.def.kind != JointKind::Distance &&
         (j.lower_impulse != 0.0f || j.upper_impulse != 0.0f || j.cone_impulse != 0.0f);
}

/// The limits' accumulated impulses along today's rows, each with its held rows' share.
void warm_start_limits(const Joint& j, const Frame& f) {
  if (!has_limit_impulse(j)) return;
  for_each_limit_impulse(j, f, [](LimitRow&& row, float l) { row.apply(l); });
}

/// The joint's linear impulse with the share its limits put on its linear rows (what a
/// hinge's pivot takes when the arm is stopped), for breaking.
float linear_load(const Joint& j, const Frame& f) {
  Vec3 linear = j.linear_impulse;
  if (has_limit_impulse(j)) {
    for_each_limit_impulse(j, f, [&](LimitRow&& row, float l) { row.add_linear_share(l, linear); });
  }
  return glm::length(linear);
}

/// Applies last substep's (or last tick's) accumulated impulses along today's rows.
void warm_start_one(const Joint& j, const Frame& f) {
  switch (j.def.kind) {
    case JointKind::Fixed:
      apply_angular(f, j.angular_impulse);
      apply_point(f, j.linear_impulse);
      break;
    case JointKind::Hinge:
      apply_angular(f, (j.spring_impulse + j.motor_impulse + j.hold_impulse.x) * f.ax);
      apply_angular(f, j.angular_impulse.x * glm::cross(f.bx, f.ay) + j.angular_impulse.y * glm::cross(f.bx, f.az));
      apply_point(f, j.linear_impulse);
      break;
    case JointKind::Ball:
      apply_angular(f, j.hold_impulse);
      apply_point(f, j.linear_impulse);
      break;
    case JointKind::Slider:
      apply_row(f, linear_row(f, f.ax), j.spring_impulse + j.motor_impulse);
      apply_angular(f, j.angular_impulse);
      apply_row(f, linear_row(f, f.ay), j.linear_impulse.x);
      apply_row(f, linear_row(f, f.az), j.linear_impulse.y);
      break;
    case JointKind::Distance: {
      const float axial = j.spring_impulse + j.lower_impulse - j.upper_impulse;
      float len = glm::length(f.d);
      Vec3 n = len > 1e-6f ? f.d / len : f.ax;
      apply_row(f, Row{n, glm::cross(f.ra, n), glm::cross(f.rb, n)}, axial + j.rigid_impulse);
      break;
    }
    case JointKind::Wheel:
      apply_row(f, linear_row(f, f.ax), j.spring_impulse);
      apply_angular(f, j.motor_impulse * f.by + j.angular_impulse.y * f.ax);
      apply_angular(f, j.angular_impulse.x * glm::cross(f.by, f.ax));
      apply_row(f, linear_row(f, f.ay), j.linear_impulse.x);
      apply_row(f, linear_row(f, f.az), j.linear_impulse.y);
      break;
  }
  warm_start_limits(j, f);
}

void clear_impulses(Joint& j) {
  j.linear_impulse = j.angular_impulse = j.hold_impulse = Vec3(0.0f);
  j.spring_impulse = j.motor_impulse = j.lower_impulse = j.upper_impulse = 0.0f;
  j.cone_impulse = j.rigid_impulse = 0.0f;
}

Ctx make_ctx(const JointPass& p, bool use_bias) {
  const WorldSettings& s = p.world.settings;
  float substep_rate = float(std::max<uint32_t>(1, s.substeps)) * float(s.tick_rate);
  return Ctx{make_softness(std::min(kJointHertz, 0.25f * substep_rate), kJointDampingRatio, p.h), p.h,
             1.0f / p.h, use_bias};
}

}  // namespace

void prepare_joints(JointPass& p) {
  p.work.clear();
  WorldImpl& w = p.world;
  for (uint32_t i = 0; i < w.joints.items.size(); ++i) {
    Joint& j = w.joints.items[i];
    if (!j.alive || j.broken) continue;
    // Frame B is the reference (the world, a chassis, a parent bone): the solver's first
    // side is body B, so angles and translations are those of frame A measured in frame B.
    JointWork jw;
    jw.joint = i;
    jw.b = p.solver_index[j.body_a];
    jw.a = j.body_b == kNullIndex ? 0 : p.solver_index[j.body_b];
    if (jw.a == 0 && jw.b == 0) continue;  // neither side can move this tick
    const Body& a = w.bodies[j.body_a];
    jw.cb = a.center;
    jw.qb = a.origin.rotation;
    jw.lb = j.def.frame_a.position - a.local_center;
    jw.fb = j.def.frame_a.rotation;
    if (j.body_b == kNullIndex) {
      jw.la = j.def.frame_b.position;
    } else {
      const Body& b = w.bodies[j.body_b];
      jw.ca = b.center;
      jw.qa = b.origin.rotation;
      jw.la = j.def.frame_b.position - b.local_center;
    }
    jw.fa = j.def.frame_b.rotation;
    if (!p.warm_start_enabled) clear_impulses(j);
    p.work.push_back(jw);
  }
}

void warm_start_joints(JointPass& p) {
  const size_t last = std::min(p.last, p.work.size());
  SolverBody held[2];  // (once per run: a SolverBody is not free to construct)
  for (size_t i = p.first; i < last; ++i) {
    JointWork& jw = p.work[i];
    warm_start_one(p.world.joints.items[jw.joint], current_frame(p, jw, held));
  }
}

void solve_joints(JointPass& p, bool use_bias) {
  const Ctx ctx = make_ctx(p, use_bias);
  const size_t last = std::min(p.last, p.work.size());
  SolverBody held[2];  // (once per run: a SolverBody is not free to construct)
  for (size_t i = p.first; i < last; ++i) {
    JointWork& jw = p.work[i];
    Joint& j = p.world.joints.items[jw.joint];
    const Frame f = current_frame(p, jw, held);
    solve_one(j, f, ctx);
    // The impulse a substep ends with: a spike in one substep is what breaks a joint.
    if (!use_bias && j.def.break_force > 0.0f) jw.peak_linear = std::max(jw.peak_linear, linear_load(j, f));
  }
}

}  // namespace keel::sim
