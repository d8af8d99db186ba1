// World::first_non_finite_body: the end-of-tick check a host runs so that a world that
// produced a NaN or an overflowing number stops there, naming the body and the field,
// instead of stepping (and sending) garbage.
#include <keel/sim/limits.h>
#include <keel/sim/world.h>

#include "world_impl.h"

#include <cmath>
#include <optional>

namespace keel::sim {

namespace {

// NaN fails the comparison, so it is caught with the infinities and overflows.
bool usable(float v) { return std::fabs(v) <= kMaxStateMagnitude; }

std::optional<BodyFault> check_vec(uint32_t body, const Vec3& v, const char* const names[3]) {
  for (int k = 0; k < 3; ++k) {
    if (!usable(v[k])) return BodyFault{body, names[k], v[k]};
  }
  return std::nullopt;
}

std::optional<BodyFault> check_body(const Body& b) {
  static const char* const kPosition[3] = {"position.x", "position.y", "position.z"};
  static const char* const kLinear[3] = {"linear_velocity.x", "linear_velocity.y", "linear_velocity.z"};
  static const char* const kAngular[3] = {"angular_velocity.x", "angular_velocity.y", "angular_velocity.z"};
  if (auto f = check_vec(b.id, b.origin.position, kPosition)) return f;
  const Quat& q = b.origin.rotation;
  if (!std::isfinite(q.x)) return BodyFault{b.id, "rotation.x", q.x};
  if (!std::isfinite(q.y)) return BodyFault{b.id, "rotation.y", q.y};
  if (!std::isfinite(q.z)) return BodyFault{b.id, "rotation.z", q.z};
  if (!std::isfinite(q.w)) return BodyFault{b.id, "rotation.w", q.w};
  if (auto f = check_vec(b.id, b.linear_velocity, kLinear)) return f;
  return check_vec(b.id, b.angular_velocity, kAngular);
}

}  // namespace

std::optional<BodyFault> World::first_non_finite_body() const {
  for (const Body& b : impl_->bodies) {
    if (!b.alive || b.sleeping) continue;
    if (auto f = check_body(b)) return f;
  }
  return std::nullopt;
}

}  // namespace keel::sim
