// XPBD contacts: the normal as a positional constraint with compliance, static friction
// as a positional constraint bounded by mu_s times the normal multiplier, then dynamic
// friction and restitution as velocity changes (Müller et al. 2020, sections 3.5, 3.6).
#include "xpbd/xpbd.h"

#include "world_impl.h"

#include <algorithm>
#include <cmath>

namespace keel::sim::xpbd {

namespace {

Vec3 point_velocity(const XBody& b, const Vec3& r) { return b.v + glm::cross(b.w, r); }

// B's point velocity relative to A's at the contact.
Vec3 relative_velocity(const XBody& a, const XBody& b, const XContact& k) {
  return point_velocity(b, k.rb) - point_velocity(a, k.ra);
}

// Removes the velocity `dv` (a change of B's velocity relative to A's) with one impulse.
void change_velocity(XBody& a, XBody& b, const XContact& k, const Vec3& dv) {
  const float len = glm::length(dv);
  if (!(len > 0.0f)) return;
  const Vec3 dir = dv / len;
  const float wsum = generalized_inverse_mass(a, k.ra, dir) + generalized_inverse_mass(b, k.rb, dir);
  if (!(wsum > 0.0f)) return;
  apply_velocity_impulse(a, b, k.ra, k.rb, (len / wsum) * dir);
}

}  // namespace

void gather_contacts(const WorldImpl& w, const std::vector<XBody>& bodies, std::vector<XContact>& out) {
  out.clear();
  const auto& items = w.contacts.items();
  for (uint32_t i = 0; i < items.size(); ++i) {
    const Contact& c = items[i];
    if (c.count == 0 || c.sensor) continue;
    const XBody& a = bodies[c.body_a];
    const XBody& b = bodies[c.body_b];
    if (!a.dynamic && !b.dynamic) continue;
    for (int p = 0; p < c.count; ++p) {
      const ContactPoint& cp = c.points[p];
      XContact k;
      k.contact = i;
      k.point = p;
      k.a = c.body_a;
      k.b = c.body_b;
      k.n = c.normal;
      // The manifold point lies midway between the surfaces: A's surface is half the
      // depth along the normal (into B), B's half the depth back.
      const Vec3 half = (0.5f * cp.depth) * c.normal;
      k.local_a = glm::conjugate(a.q) * (cp.anchor_a + half);
      k.local_b = glm::conjugate(b.q) * (cp.anchor_b - half);
      k.mu_s = c.static_friction;
      k.mu_k = c.friction;
      k.e = c.restitution;
      out.push_back(k);
    }
  }
}

namespace {

// The normal: push the surfaces apart along n by their overlap, with compliance.
void solve_normal(std::vector<XBody>& bodies, XContact& k, float alpha_tilde) {
  XBody& a = bodies[k.a];
  XBody& b = bodies[k.b];
  k.ra = a.q * k.local_a;
  k.rb = b.q * k.local_b;
  const float depth = glm::dot((a.x + k.ra) - (b.x + k.rb), k.n);
  if (!(depth > 0.0f)) return;
  k.lambda_n += apply_positional(a, b, k.ra, k.rb, k.n, depth, alpha_tilde, k.lambda_n);
}

// Static friction: undo the point's tangential slip over this substep while the
// manifold's tangential multipliers stay within mu_s times its normal ones (taken per
// manifold, not per point: the first point of a resting box carries most of the normal
// correction, and per point the others would slip).
void solve_static_friction(std::vector<XBody>& bodies, XContact& k, float& lambda_t, float lambda_n) {
  if (!(k.lambda_n > 0.0f)) return;
  XBody& a = bodies[k.a];
  XBody& b = bodies[k.b];
  k.ra = a.q * k.local_a;
  k.rb = b.q * k.local_b;
  const Vec3 moved_a = (a.x + k.ra) - (a.x_prev + a.q_prev * k.local_a);
  const Vec3 moved_b = (b.x + k.rb) - (b.x_prev + b.q_prev * k.local_b);
  const Vec3 slip = moved_a - moved_b;
  const Vec3 slip_t = slip - glm::dot(slip, k.n) * k.n;
  const float c = glm::length(slip_t);
  if (!(c > 0.0f)) return;
  const Vec3 dir = slip_t / c;
  const float wsum = generalized_inverse_mass(a, k.ra, dir) + generalized_inverse_mass(b, k.rb, dir);
  if (!(wsum > 0.0f) || lambda_t + c / wsum > k.mu_s * lambda_n) return;
  lambda_t += apply_positional(a, b, k.ra, k.rb, dir, c, 0.0f, 0.0f);
  k.lambda_t = lambda_t;
}

}  // namespace

void solve_contact_positions(std::vector<XBody>& bodies, std::vector<XContact>& cs, float alpha_tilde) {
  for (size_t first = 0; first < cs.size();) {
    size_t last = first + 1;
    while (last < cs.size() && cs[last].contact == cs[first].contact) ++last;
    float lambda_n = 0.0f, lambda_t = 0.0f;
    for (size_t i = first; i < last; ++i) {
      solve_normal(bodies, cs[i], alpha_tilde);
      lambda_n += cs[i].lambda_n;
    }
    for (size_t i = first; i < last; ++i) solve_static_friction(bodies, cs[i], lambda_t, lambda_n);
    first = last;
  }
}

void solve_contact_velocities(std::vector<XBody>& bodies, std::vector<XContact>& cs, float h,
                              float restitution_threshold) {
  for (XContact& k : cs) {
    if (!(k.lambda_n > 0.0f)) continue;
    XBody& a = bodies[k.a];
    XBody& b = bodies[k.b];
    const Vec3 u = relative_velocity(a, b, k);
    const float vn = glm::dot(u, k.n);  // < 0: approaching
    const Vec3 vt = u - vn * k.n;
    const float vt_len = glm::length(vt);
    // Dynamic friction: an impulse of at most mu_k times the normal one (the force
    // lambda_n / h^2 over the substep h), and never more than stops the slide.
    if (vt_len > 0.0f) {
      const Vec3 dir = vt / vt_len;
      const float wsum = generalized_inverse_mass(a, k.ra, dir) + generalized_inverse_mass(b, k.rb, dir);
      if (wsum > 0.0f) {
        const float impulse = std::min(k.mu_k * k.lambda_n / h, vt_len / wsum);
        apply_velocity_impulse(a, b, k.ra, k.rb, -impulse * dir);
      }
    }
    // Restitution against the approach speed before the substep; slow approaches stop.
    const float e = std::fabs(k.vn_pre) <= restitution_threshold ? 0.0f : k.e;
    const float vn_now = glm::dot(relative_velocity(a, b, k), k.n);
    const float target = std::max(-e * k.vn_pre, 0.0f);
    change_velocity(a, b, k, (target - vn_now) * k.n);
  }
}

void store_contact_impulses(WorldImpl& w, const std::vector<XContact>& cs, float h) {
  auto& items = w.contacts.items();
  for (const XContact& k : cs) {
    ContactPoint& p = items[k.contact].points[k.point];
    // The soft step stores per-substep impulses; XPBD's multiplier is a positional
    // impulse (N s^2), so the peak multiplier over h is the same kind of number.
    p.normal_impulse = k.peak_lambda / h;
    p.max_normal_impulse = p.normal_impulse;
    p.friction_impulse = Vec3(0.0f);
  }
  for (const XContact& k : cs) items[k.contact].sliding = false;
}

}  // namespace keel::sim::xpbd
