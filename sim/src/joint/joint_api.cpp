// The public joint API (keel/sim/joint.h): adding, removing and reading joints, and the
// links from bodies to their joints that islands and collision filtering use.
#include <keel/sim/joint.h>

#include <keel/sim/det_math.h>
#include <keel/sim/limits.h>

#include "island/sleep.h"
#include "joint/joint.h"
#include "world_access.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace keel::sim {

namespace {

constexpr float kPi = 3.14159265358979323846f;

// Shortest readable form: 4, 0.5, 1e+12 (std::to_string would print 1e30 with 31 digits).
std::string num(float v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
bool finite(const Quat& q) {
  return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}

// Finite and |v| <= limit (keel/sim/limits.h); NaN fails the comparison.
bool within(float v, float limit) { return std::fabs(v) <= limit; }
bool within(const Vec3& v, float limit) { return within(v.x, limit) && within(v.y, limit) && within(v.z, limit); }
std::string limit_text(float limit) { return " (limit +-" + num(limit) + ")"; }

Status check_frame(const Transform& t, const char* name) {
  if (!finite(t.position)) return Error{std::string(name) + ".position must be finite"};
  if (!within(t.position, kMaxWorldExtent)) {
    return Error{std::string(name) + ".position must be within the world" + limit_text(kMaxWorldExtent)};
  }
  if (!finite(t.rotation) || glm::dot(t.rotation, t.rotation) < 1e-12f) {
    return Error{std::string(name) + ".rotation must be a finite, non-zero quaternion"};
  }
  return Status::ok();
}

Status check_limit(const JointLimit& l, const char* name) {
  if (!l.enabled) return Status::ok();
  if (!std::isfinite(l.lower) || !std::isfinite(l.upper)) return Error{std::string(name) + ": lower and upper must be finite"};
  if (!within(l.lower, kMaxWorldExtent) || !within(l.upper, kMaxWorldExtent)) {
    return Error{std::string(name) + ": lower and upper must be within" + limit_text(kMaxWorldExtent)};
  }
  if (l.lower > l.upper) {
    return Error{std::string(name) + ": lower must be <= upper (got " + num(l.lower) + " > " + num(l.upper) + ")"};
  }
  return Status::ok();
}

Status check_spring(const JointSpring& s, const char* name) {
  if (!s.enabled) return Status::ok();
  if (!(s.hertz >= 0.0f) || !std::isfinite(s.hertz)) return Error{std::string(name) + ".hertz must be >= 0"};
  if (!(s.damping_ratio >= 0.0f) || !std::isfinite(s.damping_ratio)) {
    return Error{std::string(name) + ".damping_ratio must be >= 0"};
  }
  if (!std::isfinite(s.target)) return Error{std::string(name) + ".target must be finite"};
  if (s.hertz > kMaxSpringHertz) return Error{std::string(name) + ".hertz must be at most " + num(kMaxSpringHertz)};
  if (s.damping_ratio > kMaxDampingRatio) {
    return Error{std::string(name) + ".damping_ratio must be at most " + num(kMaxDampingRatio)};
  }
  if (!within(s.target, kMaxWorldExtent)) return Error{std::string(name) + ".target must be within" + limit_text(kMaxWorldExtent)};
  return Status::ok();
}

Status check_non_negative(float v, const char* name, float max = kMaxJointForce) {
  if (!(v >= 0.0f) || !std::isfinite(v)) return Error{std::string(name) + " must be finite and >= 0 (got " + num(v) + ")"};
  if (v > max) return Error{std::string(name) + " must be at most " + num(max) + " (got " + num(v) + ")"};
  return Status::ok();
}

/// Frame A in frame B (the reference) for the bodies' poses (the world has the identity pose).
Quat relative_rotation(const WorldImpl& w, uint32_t body_a, uint32_t body_b, const JointDef& d) {
  Quat qa = w.bodies[body_a].origin.rotation * d.frame_a.rotation;
  Quat qb = body_b == kNullIndex ? d.frame_b.rotation : w.bodies[body_b].origin.rotation * d.frame_b.rotation;
  return glm::normalize(glm::conjugate(qb) * qa);
}

Vec3 anchor_world(const WorldImpl& w, uint32_t body, const Transform& frame) {
  return body == kNullIndex ? frame.position : transform_point(w.bodies[body].origin, frame.position);
}

void wake_joint_bodies(WorldImpl& w, const Joint& j) {
  w.shortcuts.edited = true;
  wake_island_of(w, j.body_a);
  if (j.body_b != kNullIndex) wake_island_of(w, j.body_b);
}

/// Makes the broadphase look again at every collider of a body, so pairs a joint hid
/// appear once the joint is gone.
void requery_body(WorldImpl& w, uint32_t slot) {
  for (uint32_t s : w.bodies[slot].shapes) {
    Shape& shape = w.shapes[s];
    if (shape.proxy >= 0 && !shape.is_static) w.broadphase.move(shape.proxy, s, shape.fat, false);
  }
}

void link_joint(WorldImpl& w, uint32_t slot) {
  const Joint& j = w.joints.items[slot];
  w.bodies[j.body_a].joints.push_back(slot);
  if (j.body_b == kNullIndex) return;
  w.bodies[j.body_b].joints.push_back(slot);
  if (j.def.collide_connected || j.broken) return;
  w.bodies[j.body_a].no_collide.push_back(j.body_b);
  w.bodies[j.body_b].no_collide.push_back(j.body_a);
}

void unlink_all(WorldImpl& w) {
  for (Body& b : w.bodies) {
    b.joints.clear();
    b.no_collide.clear();
  }
}

const Joint* get_joint(const WorldImpl& w, JointId id) {
  if (id.index >= w.joints.items.size()) return nullptr;
  const Joint& j = w.joints.items[id.index];
  return j.alive && j.generation == id.generation ? &j : nullptr;
}

Joint* get_joint(WorldImpl& w, JointId id) {
  return const_cast<Joint*>(get_joint(static_cast<const WorldImpl&>(w), id));
}

/// Drops the contacts between two bodies (they stop colliding once joined).
void drop_contacts_between(WorldImpl& w, uint32_t a, uint32_t b) {
  auto& items = w.contacts.items();
  std::vector<uint8_t> dead(items.size(), 0);
  bool any = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const Contact& c = items[i];
    uint32_t ba = w.shapes[c.shape_a].body, bb = w.shapes[c.shape_b].body;
    if ((ba == a && bb == b) || (ba == b && bb == a)) dead[i] = 1, any = true;
  }
  if (any) w.contacts.remove_flagged(dead);
}

}  // namespace

const char* to_string(JointKind k) {
  switch (k) {
    case JointKind::Fixed: return "Fixed";
    case JointKind::Hinge: return "Hinge";
    case JointKind::Ball: return "Ball";
    case JointKind::Slider: return "Slider";
    case JointKind::Distance: return "Distance";
    case JointKind::Wheel: return "Wheel";
  }
  return "Unknown";
}

Status validate_joint(const JointDef& d) {
  if (uint8_t(d.kind) > uint8_t(JointKind::Wheel)) return Error{"kind is unknown"};
  if (d.body_a == kWorldBodyId) return Error{"body_a must name a body (0 is the world)"};
  if (d.body_a == d.body_b) return Error{"body_b: a joint cannot join body " + std::to_string(d.body_a) + " to itself"};
  if (Status st = check_frame(d.frame_a, "frame_a"); !st) return st;
  if (Status st = check_frame(d.frame_b, "frame_b"); !st) return st;
  if (Status st = check_limit(d.limit, "limit"); !st) return st;
  if (Status st = check_limit(d.steer_limit, "steer_limit"); !st) return st;
  if (Status st = check_spring(d.spring, "spring"); !st) return st;
  if (Status st = check_spring(d.steer_spring, "steer_spring"); !st) return st;
  if (!std::isfinite(d.motor.speed)) return Error{"motor.speed must be finite"};
  if (!within(d.motor.speed, kMaxJointSpeed)) return Error{"motor.speed must be within" + limit_text(kMaxJointSpeed)};
  if (Status st = check_non_negative(d.motor.max_force, "motor.max_force"); !st) return st;
  if (!std::isfinite(d.length)) return Error{"length must be finite"};
  if (!within(d.length, kMaxWorldExtent)) return Error{"length must be within" + limit_text(kMaxWorldExtent)};
  if (!(d.cone_angle >= 0.0f) || !(d.cone_angle <= kPi)) return Error{"cone_angle must be in [0, pi] (got " + num(d.cone_angle) + ")"};
  if (Status st = check_non_negative(d.holding_torque, "holding_torque"); !st) return st;
  if (Status st = check_non_negative(d.break_force, "break_force"); !st) return st;
  if (d.kind == JointKind::Distance && d.limit.enabled && d.limit.lower < 0.0f) {
    return Error{"limit: a distance's lower length must be >= 0 (got " + num(d.limit.lower) + ")"};
  }
  return Status::ok();
}

// What the XPBD solver (xpbd/joints.cpp) solves: every kind with its limits, a Ball's cone
// and twist limit, springs (Hinge, Slider, Distance, Wheel suspension and steering) and
// motors (Hinge, Slider, Wheel drive). Holding torque and breaking are refused by name, as
// are a motor or spring on a kind that has none (Ball, Fixed; Distance's motor), which the
// soft step leaves unused: never ignored.
Status xpbd_joint_support(const JointDef& d, const WorldSettings& s) {
  if (s.solver_kind != SolverKind::Xpbd) return Status::ok();
  auto refuse = [&](const std::string& what) {
    return Error{std::string("joint kind ") + to_string(d.kind) + ": " + what + " is not supported by the xpbd solver"};
  };
  const bool has_motor = d.kind == JointKind::Hinge || d.kind == JointKind::Slider || d.kind == JointKind::Wheel;
  const bool has_spring = has_motor || d.kind == JointKind::Distance;
  if (d.motor.enabled && !has_motor) return refuse("motor");
  if (d.spring.enabled && !has_spring) return refuse("spring");
  if (d.holding_torque > 0.0f) return refuse("holding_torque");
  if (d.break_force > 0.0f) return refuse("break_force");
  if (d.kind == JointKind::Fixed && d.limit.enabled) return refuse("limit");
  if (d.kind != JointKind::Ball && d.cone_angle > 0.0f) return refuse("cone_angle");
  return Status::ok();
}

Expected<JointId> add_joint(World& world, const JointDef& def) {
  WorldImpl& w = WorldAccess::impl(world);
  if (Status st = validate_joint(def); !st) return st.error();
  if (Status st = xpbd_joint_support(def, w.settings); !st) return st.error();
  auto ia = w.id_to_slot.find(def.body_a);
  if (ia == w.id_to_slot.end()) return Error{"body_a: no body with id " + std::to_string(def.body_a)};
  uint32_t slot_b = kNullIndex;
  if (def.body_b != kWorldBodyId) {
    auto ib = w.id_to_slot.find(def.body_b);
    if (ib == w.id_to_slot.end()) return Error{"body_b: no body with id " + std::to_string(def.body_b)};
    slot_b = ib->second;
  }
  uint32_t slot;
  if (!w.joints.free.empty()) {
    slot = w.joints.free.back();
    w.joints.free.pop_back();
  } else {
    slot = uint32_t(w.joints.items.size());
    w.joints.items.emplace_back();
  }
  Joint& j = w.joints.items[slot];
  const uint32_t generation = j.generation + 1;
  j = Joint{};
  j.alive = true;
  j.generation = generation;
  j.body_a = ia->second;
  j.body_b = slot_b;
  j.def = def;
  j.def.frame_a.rotation = glm::normalize(def.frame_a.rotation);
  j.def.frame_b.rotation = glm::normalize(def.frame_b.rotation);
  if (def.length < 0.0f) {
    j.def.length = glm::length(anchor_world(w, j.body_b, j.def.frame_b) - anchor_world(w, j.body_a, j.def.frame_a));
  }
  j.steer = 0.0f;
  j.hold_ref = relative_rotation(w, j.body_a, j.body_b, j.def);
  link_joint(w, slot);
  if (slot_b != kNullIndex && !def.collide_connected) drop_contacts_between(w, j.body_a, slot_b);
  wake_joint_bodies(w, j);
  return JointId{slot, generation};
}

bool remove_joint(World& world, JointId id) {
  WorldImpl& w = WorldAccess::impl(world);
  Joint* j = get_joint(w, id);
  if (!j) return false;
  wake_joint_bodies(w, *j);
  const uint32_t a = j->body_a, b = j->body_b;
  const uint32_t generation = j->generation;
  *j = Joint{};
  j->generation = generation;
  w.joints.free.push_back(id.index);
  rebuild_joint_links(w);
  requery_body(w, a);
  if (b != kNullIndex) requery_body(w, b);
  return true;
}

bool is_valid(const World& world, JointId id) { return get_joint(WorldAccess::impl(world), id) != nullptr; }

std::vector<JointId> joints(const World& world) {
  const WorldImpl& w = WorldAccess::impl(world);
  std::vector<JointId> out;
  for (uint32_t i = 0; i < w.joints.items.size(); ++i) {
    if (w.joints.items[i].alive) out.push_back(JointId{i, w.joints.items[i].generation});
  }
  return out;
}

Quat joint_relative_rotation(const WorldImpl& w, const Joint& j) {
  return relative_rotation(w, j.body_a, j.body_b, j.def);
}

JointInfo joint_info(const World& world, JointId id) {
  const WorldImpl& w = WorldAccess::impl(world);
  const Joint* j = get_joint(w, id);
  if (!j) return JointInfo{};
  JointInfo info;
  info.kind = j->def.kind;
  info.body_a = j->def.body_a;
  info.body_b = j->def.body_b;
  info.broken = j->broken;
  Quat rel = joint_relative_rotation(w, *j);
  if (rel.w < 0.0f) rel = -rel;
  info.angle = 2.0f * dmath::atan2(rel.x, rel.w);
  Vec3 bx = rel * Vec3(1.0f, 0.0f, 0.0f);
  info.swing = dmath::atan2(std::sqrt(bx.y * bx.y + bx.z * bx.z), bx.x);
  Vec3 pa = anchor_world(w, j->body_a, j->def.frame_a);
  Vec3 pb = anchor_world(w, j->body_b, j->def.frame_b);
  Quat ref = j->def.frame_b.rotation;
  if (j->body_b != kNullIndex) ref = w.bodies[j->body_b].origin.rotation * ref;
  Vec3 axis = ref * Vec3(1.0f, 0.0f, 0.0f);
  info.translation = j->def.kind == JointKind::Distance ? glm::length(pa - pb) : glm::dot(pa - pb, axis);
  if (j->def.kind == JointKind::Wheel) {
    // Steering: the angle of the wheel's axle (A's Y) about the suspension axis, from B's Y.
    Vec3 by = rel * Vec3(0.0f, 1.0f, 0.0f);
    info.angle = dmath::atan2(by.z, by.y);
  }
  const float inv_h = float(w.settings.tick_rate) * float(std::max<uint32_t>(1, w.settings.substeps));
  info.force = glm::length(j->linear_impulse) * inv_h;
  info.torque = glm::length(j->angular_impulse) * inv_h;
  return info;
}

void set_joint_motor(World& world, JointId id, const JointMotor& motor) {
  WorldImpl& w = WorldAccess::impl(world);
  Joint* j = get_joint(w, id);
  // The limits add_joint applies (keel/sim/limits.h); a motor outside them is ignored.
  if (!j || !within(motor.speed, kMaxJointSpeed) || !(motor.max_force >= 0.0f) || !(motor.max_force <= kMaxJointForce)) {
    return;
  }
  const JointMotor& old = j->def.motor;
  if (old.enabled == motor.enabled && old.speed == motor.speed && old.max_force == motor.max_force) return;
  j->def.motor = motor;
  wake_joint_bodies(w, *j);
}

void set_wheel_steering(World& world, JointId id, float angle) {
  WorldImpl& w = WorldAccess::impl(world);
  Joint* j = get_joint(w, id);
  if (!j || !std::isfinite(angle)) return;
  if (j->def.steer_limit.enabled) angle = std::clamp(angle, j->def.steer_limit.lower, j->def.steer_limit.upper);
  if (j->steer == angle) return;
  j->steer = angle;
  wake_joint_bodies(w, *j);
}

bool joint_blocks_collision(const WorldImpl& w, uint32_t slot_a, uint32_t slot_b) {
  for (uint32_t other : w.bodies[slot_a].no_collide) {
    if (other == slot_b) return true;
  }
  return false;
}

void remove_joints_of(WorldImpl& w, uint32_t slot) {
  bool any = false;
  for (uint32_t i = 0; i < w.joints.items.size(); ++i) {
    Joint& j = w.joints.items[i];
    if (!j.alive || (j.body_a != slot && j.body_b != slot)) continue;
    const uint32_t other = j.body_a == slot ? j.body_b : j.body_a;
    if (other != kNullIndex) {
      wake_island_of(w, other);
      requery_body(w, other);
    }
    const uint32_t generation = j.generation;
    j = Joint{};
    j.generation = generation;
    w.joints.free.push_back(i);
    any = true;
  }
  if (any) rebuild_joint_links(w);
}

void rebuild_joint_links(WorldImpl& w) {
  unlink_all(w);
  for (uint32_t i = 0; i < w.joints.items.size(); ++i) {
    if (w.joints.items[i].alive) link_joint(w, i);
  }
}

void finish_joints(JointPass& p) {
  WorldImpl& w = p.world;
  const float inv_h = 1.0f / p.h;
  bool relink = false;
  for (const JointWork& jw : p.work) {
    Joint& j = w.joints.items[jw.joint];
    if (j.def.break_force > 0.0f && jw.peak_linear * inv_h > j.def.break_force) {
      j.broken = true;
      j.linear_impulse = j.angular_impulse = j.hold_impulse = Vec3(0.0f);
      j.spring_impulse = j.motor_impulse = j.lower_impulse = j.upper_impulse = 0.0f;
      j.cone_impulse = j.rigid_impulse = 0.0f;
      relink = true;
      requery_body(w, j.body_a);
      if (j.body_b != kNullIndex) requery_body(w, j.body_b);
      continue;
    }
    // A muscle that gave way holds from wherever the joint has turned to.
    if (j.def.holding_torque > 0.0f && j.hold_saturated) j.hold_ref = joint_relative_rotation(w, j);
  }
  if (relink) rebuild_joint_links(w);
}

}  // namespace keel::sim
