// The bounds stage (see bounds_stage.h).
#include "broadphase/bounds_stage.h"

#include "parallel/executor.h"
#include "world_impl.h"

namespace keel::sim {

void refit_bounds(WorldImpl& w, std::vector<uint8_t>& escaped) {
  escaped.assign(w.shapes.size(), 0);
  // Blocks of 256: a moving pile's thousand colliders in four blocks took 0.013 ms a
  // tick off the broadphase at two threads (0.118 to 0.104 ms), more than the serial tree
  // updates lose reading bounds another core wrote.
  w.executor.parallel_for(w.shapes.size(), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      Shape& s = w.shapes[i];
      if (!s.alive || s.proxy < 0 || s.is_static) continue;
      const Body& b = w.bodies[s.body];
      if (b.sleeping) continue;
      s.aabb = compute_shape_aabb(s, b.origin);
      if (b.ccd_reach > 0.0f) {
        // Continuous collision: the bounds cover the whole tick's travel.
        s.aabb.lower += glm::min(b.ccd_sweep, Vec3(0.0f));
        s.aabb.upper += glm::max(b.ccd_sweep, Vec3(0.0f));
      }
      if (contains(s.fat, s.aabb)) continue;
      escaped[i] = 1;
      s.fat = fatten(s.aabb, b.ccd_sweep);
    }
  });
}

}  // namespace keel::sim
