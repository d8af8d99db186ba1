#include "ccd/ccd.h"

#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace keel::sim {

namespace {

// The thinnest part of a body: how far it can move in one tick without skipping over
// anything as thin as itself.
float thinnest(const WorldImpl& w, const Body& b) {
  float t = std::numeric_limits<float>::max();
  for (uint32_t slot : b.shapes) {
    const Shape& s = w.shapes[slot];
    if (!s.enabled || s.is_trigger) continue;
    switch (s.type) {
      case ShapeType::Sphere:
      case ShapeType::Capsule: t = std::min(t, s.radius); break;
      case ShapeType::Box: t = std::min(t, std::min(s.half_extents.x, std::min(s.half_extents.y, s.half_extents.z))); break;
      default: break;
    }
  }
  return t;
}

}  // namespace

void update_ccd(WorldImpl& w, float dt) {
  const Vec3 g = w.settings.gravity;
  for (Body& b : w.bodies) {
    b.ccd_reach = 0.0f;
    b.ccd_sweep = Vec3(0.0f);
    if (!b.alive || b.motion != MotionType::Dynamic || b.sleeping) continue;
    // Predicted displacement of the centre this tick (gravity included: a falling body
    // ends the tick faster than it starts it).
    const Vec3 d = (b.linear_velocity + g * (b.gravity_scale * dt)) * dt;
    const float len = std::sqrt(glm::dot(d, d));
    if (!b.bullet && !(len > kAutoCcdFraction * thinnest(w, b))) continue;
    b.ccd_reach = len;
    b.ccd_sweep = d;
  }
}

float ccd_margin(const Body& a, const Body& b) { return std::max(a.ccd_reach, b.ccd_reach); }

}  // namespace keel::sim
