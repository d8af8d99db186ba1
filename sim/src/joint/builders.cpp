// Ragdoll and vehicle builders (keel/sim/builders.h). Sizes are those of a 1.8 m person
// and a small car, scaled; all trigonometry is precomputed constants, so building is
// exact and the same on every machine.
#include <keel/sim/builders.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace keel::sim {

namespace {

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
bool finite(const Quat& q) {
  return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}

constexpr float kHalfSqrt2 = 0.70710678f;
// Joint frame rotations: local X onto world +Y (a twist axis along a bone standing up;
// frame Y then points along world -X), and local X onto +Y with local Y onto +X (the
// wheel frame: suspension up, axle along the car's +X so positive speed rolls forward).
const Quat kXUp(kHalfSqrt2, 0.0f, 0.0f, kHalfSqrt2);
const Quat kWheelFrame(0.0f, kHalfSqrt2, kHalfSqrt2, 0.0f);

struct Bone {
  RagdollBone id;
  Vec3 center;    // standing, for a 1.8 m figure, feet at the origin
  float radius;
  float half_height;
  float mass_fraction;
};

// Segment sizes and mass shares (they sum to 1) of a standing adult.
constexpr float kRefHeight = 1.8f;
const Bone kBones[kRagdollBones] = {
    {RagdollBone::Pelvis, {0.0f, 0.95f, 0.0f}, 0.12f, 0.05f, 0.18f},
    {RagdollBone::Spine, {0.0f, 1.13f, 0.0f}, 0.11f, 0.04f, 0.12f},
    {RagdollBone::Chest, {0.0f, 1.32f, 0.0f}, 0.13f, 0.06f, 0.20f},
    {RagdollBone::Head, {0.0f, 1.66f, 0.0f}, 0.10f, 0.04f, 0.08f},
    {RagdollBone::UpperArmL, {0.26f, 1.28f, 0.0f}, 0.05f, 0.09f, 0.03f},
    {RagdollBone::LowerArmL, {0.26f, 0.98f, 0.0f}, 0.045f, 0.09f, 0.025f},
    {RagdollBone::UpperArmR, {-0.26f, 1.28f, 0.0f}, 0.05f, 0.09f, 0.03f},
    {RagdollBone::LowerArmR, {-0.26f, 0.98f, 0.0f}, 0.045f, 0.09f, 0.025f},
    {RagdollBone::ThighL, {0.1f, 0.65f, 0.0f}, 0.07f, 0.13f, 0.10f},
    {RagdollBone::CalfL, {0.1f, 0.255f, 0.0f}, 0.055f, 0.2f, 0.055f},
    {RagdollBone::ThighR, {-0.1f, 0.65f, 0.0f}, 0.07f, 0.13f, 0.10f},
    {RagdollBone::CalfR, {-0.1f, 0.255f, 0.0f}, 0.055f, 0.2f, 0.055f},
};

struct Link {
  RagdollBone child, parent;
  Vec3 pivot;  // standing, 1.8 m figure
  JointKind kind;
  float cone;          // Ball: swing limit
  float lower, upper;  // Ball: twist; Hinge: bend
  float strength;      // share of the holding torque
};

// Facing +Z; elbows bend the forearm forward (negative about +X), knees the calf back.
const Link kLinks[kRagdollBones - 1] = {
    {RagdollBone::Spine, RagdollBone::Pelvis, {0.0f, 1.05f, 0.0f}, JointKind::Ball, 0.35f, -0.3f, 0.3f, 1.0f},
    {RagdollBone::Chest, RagdollBone::Spine, {0.0f, 1.22f, 0.0f}, JointKind::Ball, 0.3f, -0.3f, 0.3f, 1.0f},
    {RagdollBone::Head, RagdollBone::Chest, {0.0f, 1.5f, 0.0f}, JointKind::Ball, 0.5f, -0.6f, 0.6f, 0.3f},
    {RagdollBone::UpperArmL, RagdollBone::Chest, {0.26f, 1.42f, 0.0f}, JointKind::Ball, 1.5f, -0.8f, 0.8f, 0.3f},
    {RagdollBone::LowerArmL, RagdollBone::UpperArmL, {0.26f, 1.13f, 0.0f}, JointKind::Hinge, 0.0f, -2.5f, 0.0f, 0.2f},
    {RagdollBone::UpperArmR, RagdollBone::Chest, {-0.26f, 1.42f, 0.0f}, JointKind::Ball, 1.5f, -0.8f, 0.8f, 0.3f},
    {RagdollBone::LowerArmR, RagdollBone::UpperArmR, {-0.26f, 1.13f, 0.0f}, JointKind::Hinge, 0.0f, -2.5f, 0.0f, 0.2f},
    {RagdollBone::ThighL, RagdollBone::Pelvis, {0.1f, 0.86f, 0.0f}, JointKind::Ball, 1.0f, -0.5f, 0.5f, 1.0f},
    {RagdollBone::CalfL, RagdollBone::ThighL, {0.1f, 0.45f, 0.0f}, JointKind::Hinge, 0.0f, 0.0f, 2.4f, 0.6f},
    {RagdollBone::ThighR, RagdollBone::Pelvis, {-0.1f, 0.86f, 0.0f}, JointKind::Ball, 1.0f, -0.5f, 0.5f, 1.0f},
    {RagdollBone::CalfR, RagdollBone::ThighR, {-0.1f, 0.45f, 0.0f}, JointKind::Hinge, 0.0f, 0.0f, 2.4f, 0.6f},
};

BodyDef capsule(uint32_t id, const Vec3& position, const Quat& rotation, float radius, float half_height, float mass,
                float friction) {
  BodyDef b;
  b.id = id;
  b.position = position;
  b.rotation = rotation;
  b.mass = mass;
  ColliderDef c;
  c.shape = ShapeType::Capsule;
  c.radius = radius;
  c.half_height = half_height;
  c.friction = friction;
  b.colliders.push_back(c);
  return b;
}

}  // namespace

Status validate_ragdoll(const RagdollDef& d) {
  if (!finite(d.position) || !finite(d.linear_velocity)) return Error{"position and linear_velocity must be finite"};
  if (!finite(d.rotation) || glm::dot(d.rotation, d.rotation) < 1e-12f) return Error{"rotation must be a non-zero quaternion"};
  if (!(d.height > 0.1f) || !(d.height < 100.0f)) return Error{"height must be in (0.1, 100) m"};
  if (!(d.mass > 0.0f) || !std::isfinite(d.mass)) return Error{"mass must be > 0"};
  if (!(d.holding_torque >= 0.0f) || !std::isfinite(d.holding_torque)) return Error{"holding_torque must be >= 0"};
  if (!(d.friction >= 0.0f) || !std::isfinite(d.friction)) return Error{"friction must be >= 0"};
  if (d.first_id == kWorldBodyId || d.first_id > kAutoBodyId - kRagdollBones) {
    return Error{"first_id must be > 0 and leave room for 12 bones"};
  }
  return Status::ok();
}

Assembly build_ragdoll(const RagdollDef& d) {
  Assembly out;
  const float s = d.height / kRefHeight;
  const Quat rot = glm::normalize(d.rotation);
  for (const Bone& bone : kBones) {
    Vec3 p = d.position + rot * (s * bone.center);
    BodyDef b = capsule(d.first_id + uint32_t(bone.id), p, rot, s * bone.radius, s * bone.half_height,
                        d.mass * bone.mass_fraction, d.friction);
    b.linear_velocity = d.linear_velocity;
    out.bodies.push_back(b);
  }
  for (const Link& l : kLinks) {
    JointDef j;
    j.kind = l.kind;
    j.body_a = d.first_id + uint32_t(l.child);
    j.body_b = d.first_id + uint32_t(l.parent);
    // Both frames sit at the pivot; bodies share the ragdoll's rotation, so the same
    // local frame rotation lines the two up in the standing pose (every angle 0).
    const Vec3 pivot = s * l.pivot;
    j.frame_a = Transform{pivot - s * kBones[uint32_t(l.child)].center, l.kind == JointKind::Ball ? kXUp : identity_quat()};
    j.frame_b = Transform{pivot - s * kBones[uint32_t(l.parent)].center, j.frame_a.rotation};
    j.limit = JointLimit{true, l.lower, l.upper};
    j.cone_angle = l.cone;
    // A muscle's strength grows with the body it carries: mass times height.
    j.holding_torque = d.holding_torque * l.strength;
    out.joints.push_back(j);
  }
  return out;
}

Status validate_vehicle(const VehicleDef& d) {
  if (!finite(d.position) || !finite(d.half_extents)) return Error{"position and half_extents must be finite"};
  if (!finite(d.rotation) || glm::dot(d.rotation, d.rotation) < 1e-12f) return Error{"rotation must be a non-zero quaternion"};
  if (!(d.half_extents.x > 0.0f && d.half_extents.y > 0.0f && d.half_extents.z > 0.0f)) {
    return Error{"half_extents must all be > 0"};
  }
  const float positives[] = {d.mass, d.wheel_radius, d.wheel_mass, d.suspension_hertz, d.max_wheel_speed};
  const char* names[] = {"mass", "wheel_radius", "wheel_mass", "suspension_hertz", "max_wheel_speed"};
  for (int i = 0; i < 5; ++i) {
    if (!(positives[i] > 0.0f) || !std::isfinite(positives[i])) return Error{std::string(names[i]) + " must be > 0"};
  }
  const float non_negative[] = {d.wheel_friction, d.suspension_damping_ratio, d.suspension_travel, d.max_steer,
                                d.drive_torque, d.brake_torque};
  const char* nn_names[] = {"wheel_friction", "suspension_damping_ratio", "suspension_travel", "max_steer",
                            "drive_torque", "brake_torque"};
  for (int i = 0; i < 6; ++i) {
    if (!(non_negative[i] >= 0.0f) || !std::isfinite(non_negative[i])) return Error{std::string(nn_names[i]) + " must be >= 0"};
  }
  if (d.first_id == kWorldBodyId || d.first_id > kAutoBodyId - 5) return Error{"first_id must be > 0 and leave room for 5 bodies"};
  return Status::ok();
}

Assembly build_vehicle(const VehicleDef& d) {
  Assembly out;
  const Quat rot = glm::normalize(d.rotation);
  BodyDef chassis;
  chassis.id = d.first_id;
  chassis.position = d.position;
  chassis.rotation = rot;
  chassis.mass = d.mass;
  ColliderDef box;
  box.shape = ShapeType::Box;
  box.half_extents = d.half_extents;
  chassis.colliders.push_back(box);
  out.bodies.push_back(chassis);
  const Vec3 h = d.half_extents;
  // Wheel centres: at the chassis' sides, 70 % of the way to each end, hanging below it.
  const float drop = -(h.y + 0.5f * d.wheel_radius);
  const Vec3 mounts[4] = {{h.x, drop, 0.7f * h.z}, {-h.x, drop, 0.7f * h.z}, {h.x, drop, -0.7f * h.z},
                          {-h.x, drop, -0.7f * h.z}};
  for (uint32_t i = 0; i < 4; ++i) {
    BodyDef wheel;
    wheel.id = d.first_id + 1 + i;
    wheel.position = d.position + rot * mounts[i];
    wheel.rotation = rot;
    wheel.mass = d.wheel_mass;
    ColliderDef ball;
    ball.shape = ShapeType::Sphere;
    ball.radius = d.wheel_radius;
    ball.friction = d.wheel_friction;
    wheel.colliders.push_back(ball);
    out.bodies.push_back(wheel);
    JointDef j;
    j.kind = JointKind::Wheel;
    j.body_a = wheel.id;
    j.body_b = chassis.id;
    j.frame_a = Transform{Vec3(0.0f), kWheelFrame};
    j.frame_b = Transform{mounts[i], kWheelFrame};
    j.spring = JointSpring{true, d.suspension_hertz, d.suspension_damping_ratio, 0.0f};
    j.limit = JointLimit{true, -d.suspension_travel, d.suspension_travel};
    const bool front = i < 2;
    j.steer_limit = JointLimit{true, front ? -d.max_steer : 0.0f, front ? d.max_steer : 0.0f};
    out.joints.push_back(j);
  }
  return out;
}

Expected<std::vector<JointId>> add_assembly(World& world, const Assembly& a) {
  for (const BodyDef& b : a.bodies) {
    auto id = world.add_body(b);
    if (!id) return id.error();
  }
  std::vector<JointId> out;
  for (size_t i = 0; i < a.joints.size(); ++i) {
    auto id = add_joint(world, a.joints[i]);
    if (!id) return Error{"joints[" + std::to_string(i) + "]: " + id.error().message};
    out.push_back(*id);
  }
  return out;
}

Expected<Vehicle> find_vehicle(const World& world, const VehicleDef& def) {
  Vehicle v;
  v.def = def;
  bool found[4] = {};
  for (JointId id : joints(world)) {
    JointInfo info = joint_info(world, id);
    if (info.kind != JointKind::Wheel || info.body_b != def.first_id) continue;
    uint32_t k = info.body_a - def.first_id - 1;
    if (info.body_a <= def.first_id || k >= 4 || found[k]) continue;
    v.wheels[k] = id;
    found[k] = true;
  }
  for (bool f : found) {
    if (!f) return Error{"vehicle " + std::to_string(def.first_id) + ": the world does not hold its four wheel joints"};
  }
  return v;
}

void drive(World& world, const Vehicle& v, float throttle, float steer, float brake) {
  throttle = std::clamp(std::isfinite(throttle) ? throttle : 0.0f, -1.0f, 1.0f);
  steer = std::clamp(std::isfinite(steer) ? steer : 0.0f, -1.0f, 1.0f);
  brake = std::clamp(std::isfinite(brake) ? brake : 0.0f, 0.0f, 1.0f);
  for (uint32_t i = 0; i < 4; ++i) {
    JointMotor m;
    if (brake > 0.0f) {
      m = JointMotor{true, 0.0f, brake * v.def.brake_torque};  // a brake holds the wheel still
    } else if (i >= 2 && throttle != 0.0f) {
      m = JointMotor{true, throttle > 0.0f ? v.def.max_wheel_speed : -v.def.max_wheel_speed,
                     std::abs(throttle) * v.def.drive_torque};
    }
    set_joint_motor(world, v.wheels[i], m);
    if (i < 2) set_wheel_steering(world, v.wheels[i], steer * v.def.max_steer);
  }
}

}  // namespace keel::sim
