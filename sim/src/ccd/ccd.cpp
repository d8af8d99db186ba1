#include "ccd/ccd.h"

#include "world_impl.h"

#include <cmath>

namespace keel::sim {

void update_ccd(WorldImpl& w, float dt) {
  const Vec3 g = w.settings.gravity;
  // Only the awake set: a static body never has a reach, and a body falls asleep with
  // none (island/sleep.cpp).
  for (uint32_t slot : w.body_sets.awake()) {
    Body& b = w.bodies[slot];
    b.ccd_reach = 0.0f;
    b.ccd_sweep = Vec3(0.0f);
    // Predicted displacement of the centre this tick (gravity included for a dynamic
    // body: a falling body ends the tick faster than it starts it).
    const float gravity_scale = b.motion == MotionType::Dynamic ? b.gravity_scale : 0.0f;
    const Vec3 d = (b.linear_velocity + g * (gravity_scale * dt)) * dt;
    const float len = std::sqrt(glm::dot(d, d));
    if (!b.bullet && !(len > kSpeculativeDistance)) continue;
    b.ccd_reach = len;
    b.ccd_sweep = d;
  }
}

// Both bodies may travel towards each other: the gap that can close is the sum.
float ccd_margin(const Body& a, const Body& b) { return a.ccd_reach + b.ccd_reach; }

}  // namespace keel::sim
