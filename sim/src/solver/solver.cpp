#include "solver/solver.h"

#include "world_impl.h"

#include <algorithm>
#include <cmath>

namespace keel::sim {

namespace {

constexpr float kPi = 3.14159265358979323846f;
constexpr float kMaxLinearSpeed = 400.0f;        // m/s: a guard against blow-ups, above any bullet
constexpr float kMaxRotationPerSubstep = 0.25f * kPi;  // rad: keeps the quaternion update valid

// One contact point's rows. The angular parts of each row's Jacobian (r x dir) and
// their images under the inverse inertia are precomputed once per tick, so an
// iteration is dot products and scaled adds only (inertia is frozen over the tick).
struct Row {
  Vec3 ang_a{0.0f};    // r_a x dir
  Vec3 ang_b{0.0f};    // r_b x dir
  Vec3 iang_a{0.0f};   // I_a^-1 (r_a x dir)
  Vec3 iang_b{0.0f};   // I_b^-1 (r_b x dir)
  float mass = 0.0f;   // effective mass along dir
  float impulse = 0.0f;
};

struct ConstraintPoint {
  Vec3 r_a{0.0f};
  Vec3 r_b{0.0f};
  float adjusted_separation = 0.0f;
  float max_normal_impulse = 0.0f;
  float relative_velocity = 0.0f;
  Row normal;
  Row tangent1;
  Row tangent2;
};

struct ContactConstraint {
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t contact = 0;
  int count = 0;
  Vec3 normal{0.0f};
  Vec3 t1{0.0f};
  Vec3 t2{0.0f};
  float friction = 0.0f;
  float restitution = 0.0f;
  Softness soft;
  ConstraintPoint p[kMaxManifoldPoints];
};

/// Per-body constants of the velocity integration.
struct BodyMotion {
  Vec3 gravity_dv{0.0f};       // velocity gained from gravity per substep
  float linear_factor = 1.0f;  // damping multiplier per substep
  float angular_factor = 1.0f;
};

/// A fixed orthonormal tangent basis for a normal. Chosen from the normal alone, so the
/// same normal always gets the same tangents.
void tangent_basis(const Vec3& n, Vec3& t1, Vec3& t2) {
  if (std::abs(n.x) >= 0.57735027f) {
    t1 = glm::normalize(Vec3(n.y, -n.x, 0.0f));
  } else {
    t1 = glm::normalize(Vec3(0.0f, n.z, -n.y));
  }
  t2 = glm::cross(n, t1);
}

Row make_row(const SolverBody& a, const SolverBody& b, const Vec3& ra, const Vec3& rb, const Vec3& dir,
             float impulse) {
  Row row;
  row.ang_a = glm::cross(ra, dir);
  row.ang_b = glm::cross(rb, dir);
  row.iang_a = a.inv_inertia * row.ang_a;
  row.iang_b = b.inv_inertia * row.ang_b;
  float k = a.inv_mass + b.inv_mass + glm::dot(row.ang_a, row.iang_a) + glm::dot(row.ang_b, row.iang_b);
  row.mass = k > 0.0f ? 1.0f / k : 0.0f;
  row.impulse = impulse;
  return row;
}

// Velocity of B relative to A along a row's direction.
inline float row_velocity(const Row& r, const Vec3& dir, const Vec3& va, const Vec3& wa, const Vec3& vb,
                          const Vec3& wb) {
  return glm::dot(vb - va, dir) + glm::dot(wb, r.ang_b) - glm::dot(wa, r.ang_a);
}

// Applies impulse `l` along a row (to B, and its reaction to A).
inline void apply_row(const Row& r, const Vec3& dir, float l, float ma, float mb, Vec3& va, Vec3& wa,
                      Vec3& vb, Vec3& wb) {
  va -= (ma * l) * dir;
  wa -= l * r.iang_a;
  vb += (mb * l) * dir;
  wb += l * r.iang_b;
}

Vec3 relative_velocity(const SolverBody& a, const SolverBody& b, const Vec3& ra, const Vec3& rb) {
  return b.v + glm::cross(b.w, rb) - a.v - glm::cross(a.w, ra);
}

class ContactSolver {
 public:
  ContactSolver(WorldImpl& world, float dt) : world_(world) {
    substeps_ = std::max<uint32_t>(1, world.settings.substeps);
    h_ = dt / float(substeps_);
    inv_h_ = 1.0f / h_;
    float substep_rate = float(substeps_) * float(world.settings.tick_rate);
    float hertz = std::min(world.settings.contact_hertz, 0.25f * substep_rate);
    soft_ = make_softness(hertz, world.settings.contact_damping_ratio, h_);
    static_soft_ = make_softness(std::min(2.0f * hertz, 0.25f * substep_rate), world.settings.contact_damping_ratio, h_);
    max_push_ = world.settings.contact_push_max_speed;
  }

  void run() {
    gather_bodies();
    prepare_contacts();
    for (uint32_t i = 0; i < substeps_; ++i) {
      integrate_velocities();
      warm_start();
      solve(true);
      integrate_positions();
      solve(false);
    }
    apply_restitution();
    store_impulses();
    write_back();
  }

 private:
  void gather_bodies();
  void prepare_contacts();
  void integrate_velocities();
  void warm_start();
  void solve(bool use_bias);
  void solve_contact(ContactConstraint& c, bool use_bias);
  void integrate_positions();
  void apply_restitution();
  void store_impulses();
  void write_back();

  WorldImpl& world_;
  uint32_t substeps_ = 4;
  float h_ = 0.0f;
  float inv_h_ = 0.0f;
  float max_push_ = 3.0f;
  Softness soft_;
  Softness static_soft_;
  std::vector<uint32_t> solver_index_;  // per body slot; 0 = the static stand-in
  std::vector<uint32_t> body_slot_;     // per solver body (index 0 unused)
  std::vector<SolverBody> bodies_;
  std::vector<BodyMotion> motion_;
  std::vector<ContactConstraint> constraints_;
};

void ContactSolver::gather_bodies() {
  const auto& bodies = world_.bodies;
  solver_index_.assign(bodies.size(), 0);
  bodies_.clear();
  motion_.clear();
  body_slot_.clear();
  bodies_.emplace_back();  // the static stand-in
  motion_.emplace_back();
  body_slot_.push_back(kNullIndex);
  Vec3 gravity = world_.settings.gravity;
  for (uint32_t i = 0; i < bodies.size(); ++i) {
    const Body& b = bodies[i];
    if (!b.alive || b.motion == MotionType::Static || b.sleeping) continue;
    solver_index_[i] = uint32_t(bodies_.size());
    body_slot_.push_back(i);
    SolverBody sb;
    sb.v = b.linear_velocity;
    sb.w = b.angular_velocity;
    BodyMotion m;
    if (b.motion == MotionType::Dynamic) {
      sb.inv_mass = b.inv_mass;
      Mat3 r = glm::mat3_cast(b.origin.rotation);
      sb.inv_inertia = r * b.inv_inertia_local * glm::transpose(r);
      m.gravity_dv = (h_ * b.gravity_scale) * gravity;
      m.linear_factor = 1.0f / (1.0f + h_ * b.linear_damping);
      m.angular_factor = b.freeze_rotation ? 0.0f : 1.0f / (1.0f + h_ * b.angular_damping);
    }
    bodies_.push_back(sb);
    motion_.push_back(m);
  }
}

void ContactSolver::prepare_contacts() {
  constraints_.clear();
  const auto& contacts = world_.contacts.items();
  for (uint32_t ci = 0; ci < contacts.size(); ++ci) {
    const Contact& k = contacts[ci];
    if (k.count == 0) continue;
    ContactConstraint c;
    c.a = solver_index_[k.body_a];
    c.b = solver_index_[k.body_b];
    if (c.a == 0 && c.b == 0) continue;  // nothing here can move (e.g. both asleep)
    c.contact = ci;
    c.count = k.count;
    c.normal = k.normal;
    tangent_basis(c.normal, c.t1, c.t2);
    c.friction = k.friction;
    c.restitution = k.restitution;
    const SolverBody& a = bodies_[c.a];
    const SolverBody& b = bodies_[c.b];
    c.soft = (a.inv_mass == 0.0f || b.inv_mass == 0.0f) ? static_soft_ : soft_;
    for (int i = 0; i < k.count; ++i) {
      const ContactPoint& kp = k.points[i];
      ConstraintPoint& p = c.p[i];
      p.r_a = kp.anchor_a;
      p.r_b = kp.anchor_b;
      p.adjusted_separation = -kp.depth - glm::dot(p.r_b - p.r_a, c.normal);
      p.normal = make_row(a, b, p.r_a, p.r_b, c.normal, kp.normal_impulse);
      p.tangent1 = make_row(a, b, p.r_a, p.r_b, c.t1, glm::dot(kp.friction_impulse, c.t1));
      p.tangent2 = make_row(a, b, p.r_a, p.r_b, c.t2, glm::dot(kp.friction_impulse, c.t2));
      p.relative_velocity = glm::dot(c.normal, relative_velocity(a, b, p.r_a, p.r_b));
    }
    constraints_.push_back(c);
  }
}

void ContactSolver::integrate_velocities() {
  float max_w = kMaxRotationPerSubstep * inv_h_;
  for (size_t i = 1; i < bodies_.size(); ++i) {
    SolverBody& b = bodies_[i];
    const BodyMotion& m = motion_[i];
    b.v = m.gravity_dv + m.linear_factor * b.v;
    b.w = m.angular_factor * b.w;
    float v2 = glm::dot(b.v, b.v);
    if (v2 > kMaxLinearSpeed * kMaxLinearSpeed) b.v *= kMaxLinearSpeed / std::sqrt(v2);
    float w2 = glm::dot(b.w, b.w);
    if (w2 > max_w * max_w) b.w *= max_w / std::sqrt(w2);
  }
}

void ContactSolver::warm_start() {
  for (ContactConstraint& c : constraints_) {
    SolverBody& a = bodies_[c.a];
    SolverBody& b = bodies_[c.b];
    for (int i = 0; i < c.count; ++i) {
      const ConstraintPoint& p = c.p[i];
      apply_row(p.normal, c.normal, p.normal.impulse, a.inv_mass, b.inv_mass, a.v, a.w, b.v, b.w);
      apply_row(p.tangent1, c.t1, p.tangent1.impulse, a.inv_mass, b.inv_mass, a.v, a.w, b.v, b.w);
      apply_row(p.tangent2, c.t2, p.tangent2.impulse, a.inv_mass, b.inv_mass, a.v, a.w, b.v, b.w);
    }
  }
}

void ContactSolver::solve(bool use_bias) {
  for (ContactConstraint& c : constraints_) solve_contact(c, use_bias);
}

// One Gauss-Seidel pass over a manifold: the normal rows first, then friction, so the
// friction cone is clamped against this pass's normal impulse.
void ContactSolver::solve_contact(ContactConstraint& c, bool use_bias) {
  SolverBody& a = bodies_[c.a];
  SolverBody& b = bodies_[c.b];
  Vec3 va = a.v, wa = a.w, vb = b.v, wb = b.w;
  const float ma = a.inv_mass, mb = b.inv_mass;
  const Vec3 dp = b.dp - a.dp;
  const Vec3 n = c.normal;

  for (int i = 0; i < c.count; ++i) {
    ConstraintPoint& p = c.p[i];
    // Separation now, from how far each body has moved and turned this tick.
    Vec3 pra = a.dq * p.r_a;
    Vec3 prb = b.dq * p.r_b;
    float s = glm::dot(dp + prb - pra, n) + p.adjusted_separation;
    float bias = 0.0f, mass_scale = 1.0f, impulse_scale = 0.0f;
    if (s > 0.0f) {
      bias = s * inv_h_;  // speculative: close exactly the gap this substep
    } else if (use_bias) {
      bias = std::max(c.soft.bias_rate * s, -max_push_);
      mass_scale = c.soft.mass_scale;
      impulse_scale = c.soft.impulse_scale;
    }
    Row& row = p.normal;
    float vn = row_velocity(row, n, va, wa, vb, wb);
    float impulse = -row.mass * mass_scale * (vn + bias) - impulse_scale * row.impulse;
    float total = std::max(row.impulse + impulse, 0.0f);
    impulse = total - row.impulse;
    row.impulse = total;
    p.max_normal_impulse = std::max(p.max_normal_impulse, impulse);
    apply_row(row, n, impulse, ma, mb, va, wa, vb, wb);
  }

  for (int i = 0; i < c.count; ++i) {
    ConstraintPoint& p = c.p[i];
    float l1 = p.tangent1.impulse - p.tangent1.mass * row_velocity(p.tangent1, c.t1, va, wa, vb, wb);
    float l2 = p.tangent2.impulse - p.tangent2.mass * row_velocity(p.tangent2, c.t2, va, wa, vb, wb);
    // Coulomb cone: clamp the two tangent impulses together, not each on its own.
    float max_f = c.friction * p.normal.impulse;
    float len2 = l1 * l1 + l2 * l2;
    if (len2 > max_f * max_f) {
      float scale = len2 > 0.0f ? max_f / std::sqrt(len2) : 0.0f;
      l1 *= scale;
      l2 *= scale;
    }
    apply_row(p.tangent1, c.t1, l1 - p.tangent1.impulse, ma, mb, va, wa, vb, wb);
    apply_row(p.tangent2, c.t2, l2 - p.tangent2.impulse, ma, mb, va, wa, vb, wb);
    p.tangent1.impulse = l1;
    p.tangent2.impulse = l2;
  }
  a.v = va;
  a.w = wa;
  b.v = vb;
  b.w = wb;
}

void ContactSolver::integrate_positions() {
  for (size_t i = 1; i < bodies_.size(); ++i) {
    SolverBody& b = bodies_[i];
    b.dp += h_ * b.v;
    Quat spin(0.0f, b.w.x, b.w.y, b.w.z);
    Quat q = b.dq + (0.5f * h_) * (spin * b.dq);
    b.dq = glm::normalize(q);
  }
}

// Bounce: after the substeps, push each point that approached faster than the
// threshold (and actually carried load) to `restitution` times its approach speed.
void ContactSolver::apply_restitution() {
  float threshold = world_.settings.restitution_threshold;
  for (ContactConstraint& c : constraints_) {
    if (c.restitution == 0.0f) continue;
    SolverBody& a = bodies_[c.a];
    SolverBody& b = bodies_[c.b];
    for (int i = 0; i < c.count; ++i) {
      ConstraintPoint& p = c.p[i];
      if (p.relative_velocity > -threshold || p.max_normal_impulse == 0.0f) continue;
      Row& row = p.normal;
      float vn = row_velocity(row, c.normal, a.v, a.w, b.v, b.w);
      float impulse = -row.mass * (vn + c.restitution * p.relative_velocity);
      float total = std::max(row.impulse + impulse, 0.0f);
      impulse = total - row.impulse;
      row.impulse = total;
      p.max_normal_impulse = std::max(p.max_normal_impulse, impulse);
      apply_row(row, c.normal, impulse, a.inv_mass, b.inv_mass, a.v, a.w, b.v, b.w);
    }
  }
}

void ContactSolver::store_impulses() {
  auto& contacts = world_.contacts.items();
  for (const ContactConstraint& c : constraints_) {
    Contact& k = contacts[c.contact];
    for (int i = 0; i < c.count; ++i) {
      const ConstraintPoint& p = c.p[i];
      k.points[i].normal_impulse = p.normal.impulse;
      k.points[i].friction_impulse = p.tangent1.impulse * c.t1 + p.tangent2.impulse * c.t2;
      k.points[i].max_normal_impulse = p.max_normal_impulse;
    }
  }
}

void ContactSolver::write_back() {
  for (size_t i = 1; i < bodies_.size(); ++i) {
    const SolverBody& sb = bodies_[i];
    Body& b = world_.bodies[body_slot_[i]];
    b.linear_velocity = sb.v;
    b.angular_velocity = sb.w;
    b.center += sb.dp;
    b.origin.rotation = glm::normalize(sb.dq * b.origin.rotation);
    b.sync_origin();
  }
}

}  // namespace

Softness make_softness(float hertz, float damping_ratio, float h) {
  if (hertz == 0.0f) return Softness{0.0f, 1.0f, 0.0f};
  float omega = 2.0f * kPi * hertz;
  float a1 = 2.0f * damping_ratio + h * omega;
  float a2 = h * omega * a1;
  float a3 = 1.0f / (1.0f + a2);
  return Softness{omega / a1, a2 * a3, a3};
}

void solve_tick(WorldImpl& world, float dt) {
  ContactSolver solver(world, dt);
  solver.run();
}

}  // namespace keel::sim
