// The three corrections every XPBD constraint is made of (positional, rotational,
// velocity), applied to the pair of bodies it joins.
#include "xpbd/xpbd.h"

namespace keel::sim::xpbd {

namespace {

// Turns a body by the small rotation vector `dtheta`: q += 0.5 [dtheta, 0] q, normalised.
void rotate(XBody& b, const Vec3& dtheta) {
  const Quat spin(0.0f, dtheta.x, dtheta.y, dtheta.z);
  b.q = glm::normalize(b.q + 0.5f * (spin * b.q));
}

}  // namespace

float apply_positional(XBody& a, XBody& b, const Vec3& ra, const Vec3& rb, const Vec3& n, float c,
                       float alpha_tilde, float lambda) {
  const float wa = generalized_inverse_mass(a, ra, n);
  const float wb = generalized_inverse_mass(b, rb, n);
  const float denom = wa + wb + alpha_tilde;
  if (!(denom > 0.0f)) return 0.0f;
  const float dlambda = (c - alpha_tilde * lambda) / denom;
  const Vec3 p = dlambda * n;
  if (a.dynamic) {
    a.x -= a.inv_mass * p;
    a.dx -= a.inv_mass * p;
    rotate(a, -inv_inertia_mul(a, glm::cross(ra, p)));
  }
  if (b.dynamic) {
    b.x += b.inv_mass * p;
    b.dx += b.inv_mass * p;
    rotate(b, inv_inertia_mul(b, glm::cross(rb, p)));
  }
  return dlambda;
}

void apply_angular(XBody& a, XBody& b, const Vec3& theta) {
  const float angle = glm::length(theta);
  if (!(angle > 0.0f)) return;
  const Vec3 axis = theta / angle;
  const float wa = a.dynamic ? glm::dot(axis, inv_inertia_mul(a, axis)) : 0.0f;
  const float wb = b.dynamic ? glm::dot(axis, inv_inertia_mul(b, axis)) : 0.0f;
  if (!(wa + wb > 0.0f)) return;
  const Vec3 l = (angle / (wa + wb)) * axis;
  if (a.dynamic) rotate(a, -inv_inertia_mul(a, l));
  if (b.dynamic) rotate(b, inv_inertia_mul(b, l));
}

float angular_inverse_mass(const XBody& a, const XBody& b, const Vec3& axis) {
  const float wa = a.dynamic ? glm::dot(axis, inv_inertia_mul(a, axis)) : 0.0f;
  const float wb = b.dynamic ? glm::dot(axis, inv_inertia_mul(b, axis)) : 0.0f;
  return wa + wb;
}

float apply_angular_compliant(XBody& a, XBody& b, const Vec3& axis, float c, float alpha_tilde, float lambda) {
  const float denom = angular_inverse_mass(a, b, axis) + alpha_tilde;
  if (!(denom > 0.0f)) return 0.0f;
  const float dlambda = (c - alpha_tilde * lambda) / denom;
  const Vec3 l = dlambda * axis;
  if (a.dynamic) rotate(a, -inv_inertia_mul(a, l));
  if (b.dynamic) rotate(b, inv_inertia_mul(b, l));
  return dlambda;
}

float pivot_inverse_mass(const XBody& b, const Vec3& r, const Vec3& axis) {
  if (!b.dynamic) return 0.0f;
  const float inv_i = glm::dot(axis, inv_inertia_mul(b, axis));
  if (!(inv_i > 0.0f)) return 0.0f;
  // Parallel axes: the inertia about the anchor is the centre's plus m |r x n|^2.
  const Vec3 rn = glm::cross(r, axis);
  const float extra = b.inv_mass > 0.0f ? glm::dot(rn, rn) / b.inv_mass : 0.0f;
  return 1.0f / (1.0f / inv_i + extra);
}

namespace {

// Turns a body by `angle` about unit `axis` through its anchor (arm r): the turn about the
// centre, and the centre swung about the anchor by the same turn (first order, as rotate).
void turn_about(XBody& b, const Vec3& r, const Vec3& axis, float angle) {
  if (!b.dynamic) return;
  rotate(b, angle * axis);
  const Vec3 move = angle * glm::cross(r, axis);
  b.x += move;
  b.dx += move;
}

}  // namespace

float apply_angular_about(XBody& a, XBody& b, const Vec3& ra, const Vec3& rb, const Vec3& axis, float c,
                          float alpha_tilde, float lambda) {
  const float wa = pivot_inverse_mass(a, ra, axis);
  const float wb = pivot_inverse_mass(b, rb, axis);
  const float denom = wa + wb + alpha_tilde;
  if (!(denom > 0.0f)) return 0.0f;
  const float dlambda = (c - alpha_tilde * lambda) / denom;
  turn_about(a, ra, axis, -wa * dlambda);
  turn_about(b, rb, axis, wb * dlambda);
  return dlambda;
}

void apply_angular_impulse(XBody& a, XBody& b, const Vec3& l) {
  if (a.dynamic) a.w -= inv_inertia_mul(a, l);
  if (b.dynamic) b.w += inv_inertia_mul(b, l);
}

void apply_velocity_impulse(XBody& a, XBody& b, const Vec3& ra, const Vec3& rb, const Vec3& p) {
  if (a.dynamic) {
    a.v -= a.inv_mass * p;
    a.w -= inv_inertia_mul(a, glm::cross(ra, p));
  }
  if (b.dynamic) {
    b.v += b.inv_mass * p;
    b.w += inv_inertia_mul(b, glm::cross(rb, p));
  }
}

}  // namespace keel::sim::xpbd
