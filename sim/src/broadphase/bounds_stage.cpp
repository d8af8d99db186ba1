// The bounds stage (see bounds_stage.h).
#include "broadphase/bounds_stage.h"

#include "parallel/executor.h"
#include "world_impl.h"

#include <span>

namespace keel::sim {

namespace {

// One collider of an awake body: its tight bounds at the body's pose (swept over the
// tick's travel under continuous collision), and new fat bounds if it left its old ones.
void refit_shape(Shape& s, const Body& b, uint8_t& escaped) {
  if (!s.alive || s.proxy < 0 || s.is_static) return;
  s.aabb = compute_shape_aabb(s, b.origin);
  if (b.ccd_reach > 0.0f) {
    s.aabb.lower += glm::min(b.ccd_sweep, Vec3(0.0f));
    s.aabb.upper += glm::max(b.ccd_sweep, Vec3(0.0f));
  }
  if (contains(s.fat, s.aabb)) return;
  escaped = 1;
  s.fat = fatten(s.aabb, b.ccd_sweep);
}

}  // namespace

void refit_bounds(WorldImpl& w, std::vector<uint8_t>& escaped) {
  escaped.assign(w.shapes.size(), 0);
  // Only the awake bodies' colliders (island/body_sets.h): a sleeper's bounds were set as
  // it fell asleep, and a static body's never change. A collider has one body, so the
  // blocks write disjoint colliders whoever runs them. Blocks of 256 bodies: a moving
  // pile's thousand colliders in four blocks took 0.013 ms a tick off the broadphase at
  // two threads (0.118 to 0.104 ms), more than the serial tree updates lose reading
  // bounds another core wrote.
  const std::span<const uint32_t> awake = w.body_sets.awake();
  w.executor.parallel_for(awake.size(), 256, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const Body& b = w.bodies[awake[k]];
      for (uint32_t i : b.shapes) refit_shape(w.shapes[i], b, escaped[i]);
    }
  });
}

}  // namespace keel::sim
