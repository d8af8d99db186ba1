// Joints: soft constraints between two bodies (or a body and the world), solved in the
// same substepped solver as contacts. See docs/sim.md, "Joints".
//
// Every joint has an anchor frame in each body (a Transform relative to the body origin;
// for the world side, a frame in world space). Body B is the reference (the world, a
// chassis, a parent bone) and body A moves against it: angles and translations are those
// of frame A measured in frame B. Frame B's local X axis is the joint's axis: the hinge
// axis, the slider's direction, the wheel's suspension (and steering) axis, the ball
// joint's twist axis. A wheel spins about frame A's local Y axis (its axle).
#pragma once

#include <keel/base/expected.h>
#include <keel/sim/joint_def.h>
#include <keel/sim/math.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <span>
#include <vector>

namespace keel::sim {

/// A generational handle to a joint, like BodyId.
struct JointId {
  uint32_t index = 0xffffffffu;
  uint32_t generation = 0;
  bool valid() const { return index != 0xffffffffu; }
  friend bool operator==(const JointId&, const JointId&) = default;
};

/// A joint as game code reads it, after the last step.
struct JointInfo {
  JointKind kind = JointKind::Fixed;
  uint32_t body_a = 0;
  uint32_t body_b = 0;
  bool broken = false;
  float angle = 0.0f;        ///< Hinge: angle about X; Wheel: steering angle; Ball: twist
  float swing = 0.0f;        ///< Ball: angle between the two frames' X axes
  float translation = 0.0f;  ///< Slider, Wheel: along X; Distance: length
  float force = 0.0f;        ///< N: the joint's linear constraint force in the last substep
  float torque = 0.0f;       ///< N·m: its angular constraint torque in the last substep
};

/// Checks a joint description alone (finite numbers, ranges); the message names the field,
/// e.g. "limit: lower must be <= upper (got 1 > 0)".
Status validate_joint(const JointDef& def);

/// Adds a joint between two live bodies. Fails on an unknown body, a joint of a body to
/// itself, or an invalid definition. Wakes both bodies.
Expected<JointId> add_joint(World& world, const JointDef& def);
/// Removes a joint; returns false for a stale handle. Removing a body removes its joints.
bool remove_joint(World& world, JointId id);
bool is_valid(const World& world, JointId id);
/// Handles of every joint, in slot order (the solver's order).
std::vector<JointId> joints(const World& world);
JointInfo joint_info(const World& world, JointId id);
/// Changes a joint's motor (Hinge, Slider, Wheel drive). Wakes the joint's bodies.
void set_joint_motor(World& world, JointId id, const JointMotor& motor);
/// Sets a wheel's steering angle (clamped to its steer_limit). Wakes its bodies.
void set_wheel_steering(World& world, JointId id, float angle);

}  // namespace keel::sim
