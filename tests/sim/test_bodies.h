// Small builders for the bodies the sim tests drop, push and stack.
#pragma once

#include <keel/sim/defs.h>

namespace keel::sim::test {

/// A body with one box collider (half extents `half`).
inline BodyDef box_body(uint32_t id, MotionType motion, Vec3 position, Vec3 half, Quat rotation = identity_quat()) {
  BodyDef b;
  b.id = id;
  b.motion = motion;
  b.position = position;
  b.rotation = rotation;
  ColliderDef c;
  c.shape = ShapeType::Box;
  c.half_extents = half;
  b.colliders.push_back(c);
  return b;
}

/// A body with one sphere collider.
inline BodyDef sphere_body(uint32_t id, MotionType motion, Vec3 position, float radius) {
  BodyDef b;
  b.id = id;
  b.motion = motion;
  b.position = position;
  ColliderDef c;
  c.shape = ShapeType::Sphere;
  c.radius = radius;
  b.colliders.push_back(c);
  return b;
}

/// A body with one capsule collider (segment along the body's y axis).
inline BodyDef capsule_body(uint32_t id, MotionType motion, Vec3 position, float radius, float half_height) {
  BodyDef b = sphere_body(id, motion, position, radius);
  b.colliders[0].shape = ShapeType::Capsule;
  b.colliders[0].half_height = half_height;
  return b;
}

}  // namespace keel::sim::test
