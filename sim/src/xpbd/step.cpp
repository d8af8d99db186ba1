// One XPBD tick: the substep loop over the awake bodies (see xpbd/xpbd.h for the order).
#include "xpbd/xpbd.h"

#include "world_impl.h"

#include <algorithm>
#include <cmath>

namespace keel::sim::xpbd {

namespace {

void load_bodies(const WorldImpl& w, std::vector<XBody>& out) {
  out.assign(w.bodies.size(), XBody{});
  for (size_t i = 0; i < w.bodies.size(); ++i) {
    const Body& b = w.bodies[i];
    if (!b.alive) continue;
    XBody& x = out[i];
    x.x = x.x_prev = b.center;
    x.q = x.q_prev = b.origin.rotation;
    x.v = b.linear_velocity;
    x.w = b.angular_velocity;
    x.integrate = b.can_move();
    x.dynamic = b.motion == MotionType::Dynamic && !b.sleeping;
    if (x.dynamic) {
      x.inv_mass = b.inv_mass;
      x.inv_inertia_local = b.inv_inertia_local;
    }
  }
}

// Gravity and damping on the velocities, then the positions (the soft step's damping:
// v / (1 + h c), so a body never reverses), for every body that moves.
void integrate(const WorldImpl& w, std::vector<XBody>& bodies, float h) {
  for (size_t i = 0; i < bodies.size(); ++i) {
    XBody& x = bodies[i];
    if (!x.integrate) continue;
    x.x_prev = x.x;
    x.q_prev = x.q;
    if (x.dynamic) {
      const Body& b = w.bodies[i];
      x.v = (x.v + (h * b.gravity_scale) * w.settings.gravity) / (1.0f + h * b.linear_damping);
      x.w = x.w / (1.0f + h * b.angular_damping);
    }
    x.dx = h * x.v;
    x.x = x.x_prev + x.dx;
    const Quat spin(0.0f, x.w.x, x.w.y, x.w.z);
    x.q = glm::normalize(x.q + (0.5f * h) * (spin * x.q));
  }
}

// The velocities the position solve implies: the moves over h.
void derive_velocities(std::vector<XBody>& bodies, float h) {
  const float inv_h = 1.0f / h;
  for (XBody& x : bodies) {
    if (!x.dynamic) continue;
    x.v = x.dx * inv_h;
    Quat dq = x.q * glm::conjugate(x.q_prev);
    if (dq.w < 0.0f) dq = -dq;
    x.w = (2.0f * inv_h) * Vec3(dq.x, dq.y, dq.z);
  }
}

// Each point's approach speed before the substep (restitution's reference) and fresh
// multipliers.
void begin_substep(std::vector<XBody>& bodies, std::vector<XContact>& cs) {
  for (XContact& k : cs) {
    const XBody& a = bodies[k.a];
    const XBody& b = bodies[k.b];
    k.ra = a.q * k.local_a;
    k.rb = b.q * k.local_b;
    const Vec3 u = (b.v + glm::cross(b.w, k.rb)) - (a.v + glm::cross(a.w, k.ra));
    k.vn_pre = glm::dot(u, k.n);
    k.lambda_n = 0.0f;
    k.lambda_t = 0.0f;
  }
}

void store_bodies(WorldImpl& w, const std::vector<XBody>& bodies) {
  for (size_t i = 0; i < bodies.size(); ++i) {
    const XBody& x = bodies[i];
    if (!x.integrate) continue;
    Body& b = w.bodies[i];
    b.center = x.x;
    b.origin.rotation = x.q;
    if (x.dynamic) {
      b.linear_velocity = x.v;
      b.angular_velocity = x.w;
    }
    b.sync_origin();
  }
}

}  // namespace

void solve_tick(WorldImpl& w, float dt) {
  std::vector<XBody> bodies;
  std::vector<XContact> contacts;
  load_bodies(w, bodies);
  gather_contacts(w, bodies, contacts);
  const uint32_t substeps = w.settings.substeps;
  const float h = dt / float(substeps);
  const float alpha_tilde = w.settings.contact_compliance / (h * h);
  std::vector<JointLambdas> lambdas(w.joints.items.size());
  for (uint32_t s = 0; s < substeps; ++s) {
    begin_substep(bodies, contacts);
    std::fill(lambdas.begin(), lambdas.end(), JointLambdas{});
    integrate(w, bodies, h);
    solve_joint_positions(w, bodies, h, lambdas);
    solve_contact_positions(bodies, contacts, alpha_tilde);
    derive_velocities(bodies, h);
    // Joints' velocity rows before the contacts': a surface has the last word.
    solve_joint_velocities(w, bodies, h);
    solve_contact_velocities(bodies, contacts, h, w.settings.restitution_threshold);
    for (XContact& k : contacts) k.peak_lambda = k.lambda_n > k.peak_lambda ? k.lambda_n : k.peak_lambda;
  }
  store_bodies(w, bodies);
  store_contact_impulses(w, contacts, h);
}

}  // namespace keel::sim::xpbd
