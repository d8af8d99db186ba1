// Builders that expand a ragdoll or a vehicle into bodies and joints. They return plain
// definitions (an Assembly), so a scene loader can append them to a SceneDef and game code
// can add them to a World (add_assembly); the same numbers either way.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/joint.h>

#include <array>
#include <cstdint>
#include <vector>

namespace keel::sim {

/// Bodies and joints that belong together; joints name bodies by their user ids.
struct Assembly {
  std::vector<BodyDef> bodies;
  std::vector<JointDef> joints;
};

/// A human of twelve capsule bones, standing with its feet at `position`, facing +Z of
/// `rotation`. Bones take ids first_id .. first_id + 11 in the order of RagdollBone.
struct RagdollDef {
  uint32_t first_id = 1;
  Vec3 position{0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  float height = 1.8f;            ///< m, feet to the top of the head
  float mass = 75.0f;             ///< kg, shared among the bones by body-segment fractions
  float holding_torque = 0.0f;    ///< N·m at the spine and hips, scaled down toward the limbs; 0 = limp
  Vec3 linear_velocity{0.0f};
  float friction = 0.6f;
};

enum class RagdollBone : uint32_t {
  Pelvis, Spine, Chest, Head, UpperArmL, LowerArmL, UpperArmR, LowerArmR, ThighL, CalfL, ThighR, CalfR, Count
};
inline constexpr uint32_t kRagdollBones = uint32_t(RagdollBone::Count);

/// Checks a ragdoll description (finite numbers, height and mass > 0, ids that fit).
Status validate_ragdoll(const RagdollDef& def);
/// Twelve bones and eleven joints: ball joints with swing cones and twist limits at the
/// spine, neck, shoulders and hips; hinges with anatomical limits at elbows and knees.
Assembly build_ragdoll(const RagdollDef& def);

/// A car: a box chassis and four sphere wheels on wheel joints (suspension spring and
/// travel, steering at the front, drive at the rear). Chassis id first_id, wheels
/// first_id + 1 .. + 4 (front left, front right, rear left, rear right); forward is +Z of
/// `rotation`, `position` is the chassis centre.
struct VehicleDef {
  uint32_t first_id = 1;
  Vec3 position{0.0f, 0.8f, 0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  Vec3 half_extents{0.9f, 0.3f, 2.0f};  ///< chassis box
  float mass = 1200.0f;                 ///< chassis, kg
  float wheel_radius = 0.35f;
  float wheel_mass = 20.0f;
  float wheel_friction = 1.0f;
  float suspension_hertz = 10.0f;        ///< of the suspension row (its mass is about the wheel's)
  float suspension_damping_ratio = 1.0f;
  float suspension_travel = 0.15f;       ///< m, each way from the rest point
  float max_steer = 0.6f;                ///< rad
  float drive_torque = 800.0f;           ///< N·m per driven (rear) wheel at full throttle
  float brake_torque = 2500.0f;          ///< N·m per wheel at full brake
  float max_wheel_speed = 60.0f;         ///< rad/s at full throttle
};

Status validate_vehicle(const VehicleDef& def);
Assembly build_vehicle(const VehicleDef& def);

/// Adds an assembly's bodies, then its joints. Stops at the first failure.
Expected<std::vector<JointId>> add_assembly(World& world, const Assembly& assembly);

/// Handles to a vehicle's four wheel joints (front left, front right, rear left, rear right).
struct Vehicle {
  std::array<JointId, 4> wheels{};
  VehicleDef def;
};

/// Finds the wheel joints of a vehicle built from `def` (added by add_assembly or from a
/// scene). Fails when the world does not hold them.
Expected<Vehicle> find_vehicle(const World& world, const VehicleDef& def);
/// throttle in [-1, 1] drives the rear wheels, steer in [-1, 1] turns the front wheels
/// (positive to the left), brake in [0, 1] holds every wheel still with that share of
/// the brake torque (and overrides the throttle).
void drive(World& world, const Vehicle& vehicle, float throttle, float steer, float brake);

}  // namespace keel::sim
