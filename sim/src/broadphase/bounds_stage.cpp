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

// Below one awake body in this many, the refit walks the awake bodies' colliders; above,
// the whole collider array (see refit_bounds).
constexpr uint64_t kAwakeShareForBodyWalk = 8;

}  // namespace

void refit_bounds(WorldImpl& w, std::vector<uint8_t>& escaped) {
  escaped.assign(w.shapes.size(), 0);
  // Each collider is refitted at most once and writes only itself, so either walk below
  // gives the same bounds, whoever runs which block. Blocks of 256: a moving pile's
  // thousand colliders in four blocks took 0.013 ms a tick off the broadphase at two
  // threads (0.118 to 0.104 ms), more than the serial tree updates lose reading bounds
  // another core wrote.
  const std::span<const uint32_t> awake = w.body_sets.awake();
  if (uint64_t(awake.size()) * kAwakeShareForBodyWalk < w.bodies.size()) {
    // Few bodies awake (island/body_sets.h): their colliders only, so the sleepers cost
    // nothing. Each body's collider list is a separate allocation, a cache miss per
    // body (measured 0.18 to 0.50 ms on the awake 4,000-box pile), which is why a
    // world mostly awake takes the walk over the collider array instead.
    w.executor.parallel_for(awake.size(), 256, [&](size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k) {
        const Body& b = w.bodies[awake[k]];
        for (uint32_t i : b.shapes) refit_shape(w.shapes[i], b, escaped[i]);
      }
    });
    return;
  }
  w.executor.parallel_for(w.shapes.size(), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      Shape& s = w.shapes[i];
      if (!s.alive || s.proxy < 0 || s.is_static) continue;
      const Body& b = w.bodies[s.body];
      if (!b.sleeping) refit_shape(s, b, escaped[i]);
    }
  });
}

}  // namespace keel::sim
