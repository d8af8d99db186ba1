// Plain descriptions of joints (what a scene file says and what add_joint takes). The
// API that adds and reads joints is in joint.h; the frame conventions are described there.
#pragma once

#include <keel/sim/math.h>

#include <cstdint>

namespace keel::sim {

/// Scene values (scene/schemas/scene.fbs JointKind); only appended to.
enum class JointKind : uint8_t {
  Fixed = 0,     ///< weld: no relative motion
  Hinge = 1,     ///< revolute: turns about X
  Ball = 2,      ///< spherical: a shared point; optional swing cone and twist limit
  Slider = 3,    ///< prismatic: slides along X, no rotation
  Distance = 4,  ///< keeps the anchors between a minimum and a maximum length
  Wheel = 5,     ///< suspension along X, steering about X, spins freely about Y
};

/// Returns the kind's scene name ("Fixed", "Hinge", ...).
const char* to_string(JointKind k);

/// Body id that stands for the world (a fixed frame) in JointDef::body_b.
inline constexpr uint32_t kWorldBodyId = 0;

/// A range a joint coordinate may not leave (radians or metres).
struct JointLimit {
  bool enabled = false;
  float lower = 0.0f;
  float upper = 0.0f;
};

/// Drives a joint coordinate at `speed` (rad/s or m/s) with at most `max_force` (N·m or N).
struct JointMotor {
  bool enabled = false;
  float speed = 0.0f;
  float max_force = 0.0f;
};

/// A damped spring pulling a joint coordinate toward `target` (rad or m).
struct JointSpring {
  bool enabled = false;
  float hertz = 0.0f;
  float damping_ratio = 0.0f;
  float target = 0.0f;
};

struct JointDef {
  JointKind kind = JointKind::Fixed;
  uint32_t body_a = 0;             ///< user id of a body (required)
  uint32_t body_b = kWorldBodyId;  ///< user id of a body, or kWorldBodyId for the world
  Transform frame_a;               ///< anchor frame in body A
  Transform frame_b;               ///< anchor frame in body B (world space for the world)
  /// Hinge: angle; Slider: translation; Wheel: suspension travel; Distance: length;
  /// Ball: twist about X.
  JointLimit limit;
  /// Hinge: about X; Slider: along X; Wheel: drive about the axle (Y of frame A).
  JointMotor motor;
  /// Hinge: angle; Slider, Wheel (suspension): translation; Distance: length.
  JointSpring spring;
  float length = -1.0f;  ///< Distance: rest length; < 0 takes the anchors' distance when added
  float cone_angle = 0.0f;  ///< Ball: largest swing of frame B's X from frame A's X; 0 = free
  /// Wheel steering: the steering angle's range and the spring that turns the wheel to it
  /// (hertz 0 = rigid steering).
  JointLimit steer_limit;
  JointSpring steer_spring;
  /// N·m: a muscle that holds the joint at the pose it last came to rest in, up to this
  /// torque (Hinge and Ball; 0 = none). A larger load turns the joint.
  float holding_torque = 0.0f;
  float break_force = 0.0f;  ///< N; 0 = unbreakable. A broken joint stops acting.
  bool collide_connected = false;  ///< whether the two bodies still collide with each other
};

}  // namespace keel::sim
