// The joints' section of the canonical state. A world that never had a joint writes no
// section at all, so its bytes (and hashes) are those of a build without joints. The
// section opens with a tag no character count can equal, so the reader can tell it apart.
#include "joint/joint.h"

#include "state/state_io.h"
#include "world_impl.h"

#include <cmath>

namespace keel::sim {

namespace {

constexpr uint32_t kJointTag = 0x544e494au;  // "JINT"
constexpr uint32_t kMaxJoints = 1u << 22;

void write_limit(StateWriter& w, const JointLimit& l) {
  w.u8(l.enabled);
  w.f32(l.lower);
  w.f32(l.upper);
}

JointLimit read_limit(StateReader& r) {
  JointLimit l;
  l.enabled = r.u8() != 0;
  l.lower = r.f32();
  l.upper = r.f32();
  return l;
}

void write_spring(StateWriter& w, const JointSpring& s) {
  w.u8(s.enabled);
  w.f32(s.hertz);
  w.f32(s.damping_ratio);
  w.f32(s.target);
}

JointSpring read_spring(StateReader& r) {
  JointSpring s;
  s.enabled = r.u8() != 0;
  s.hertz = r.f32();
  s.damping_ratio = r.f32();
  s.target = r.f32();
  return s;
}

void write_joint(StateWriter& w, const Joint& j) {
  const JointDef& d = j.def;
  w.u8(uint8_t(d.kind));
  w.u32(j.body_a);
  w.u32(j.body_b);
  w.u32(d.body_a);
  w.u32(d.body_b);
  w.transform(d.frame_a);
  w.transform(d.frame_b);
  write_limit(w, d.limit);
  w.u8(d.motor.enabled);
  w.f32(d.motor.speed);
  w.f32(d.motor.max_force);
  write_spring(w, d.spring);
  w.f32(d.length);
  w.f32(d.cone_angle);
  write_limit(w, d.steer_limit);
  write_spring(w, d.steer_spring);
  w.f32(d.holding_torque);
  w.f32(d.break_force);
  w.u8(d.collide_connected);
  w.u8(j.broken);
  w.f32(j.steer);
  w.vec3(j.linear_impulse);
  w.vec3(j.angular_impulse);
  w.f32(j.spring_impulse);
  w.f32(j.motor_impulse);
  w.f32(j.lower_impulse);
  w.f32(j.upper_impulse);
  w.f32(j.cone_impulse);
  w.f32(j.rigid_impulse);
  w.vec3(j.hold_impulse);
  w.quat(j.hold_ref);
  w.u8(j.hold_saturated);
}

void read_joint(StateReader& r, Joint& j) {
  JointDef& d = j.def;
  uint8_t kind = r.u8();
  if (kind > uint8_t(JointKind::Wheel)) r.fail("joint kind unknown");
  d.kind = JointKind(kind);
  j.body_a = r.u32();
  j.body_b = r.u32();
  d.body_a = r.u32();
  d.body_b = r.u32();
  d.frame_a = r.transform();
  d.frame_b = r.transform();
  d.limit = read_limit(r);
  d.motor.enabled = r.u8() != 0;
  d.motor.speed = r.f32();
  d.motor.max_force = r.f32();
  d.spring = read_spring(r);
  d.length = r.f32();
  d.cone_angle = r.f32();
  d.steer_limit = read_limit(r);
  d.steer_spring = read_spring(r);
  d.holding_torque = r.f32();
  d.break_force = r.f32();
  d.collide_connected = r.u8() != 0;
  j.broken = r.u8() != 0;
  j.steer = r.f32();
  j.linear_impulse = r.vec3();
  j.angular_impulse = r.vec3();
  j.spring_impulse = r.f32();
  j.motor_impulse = r.f32();
  j.lower_impulse = r.f32();
  j.upper_impulse = r.f32();
  j.cone_impulse = r.f32();
  j.rigid_impulse = r.f32();
  j.hold_impulse = r.vec3();
  j.hold_ref = r.quat();
  j.hold_saturated = r.u8() != 0;
}

}  // namespace

void write_joints(const WorldImpl& w, StateWriter& out) {
  if (w.joints.items.empty()) return;
  out.u32(kJointTag);
  out.u32(uint32_t(w.joints.items.size()));
  for (const Joint& j : w.joints.items) {
    out.u8(j.alive);
    out.u32(j.generation);
    if (j.alive) write_joint(out, j);
  }
  out.u32(uint32_t(w.joints.free.size()));
  for (uint32_t v : w.joints.free) out.u32(v);
}

void read_joints(StateReader& in, WorldImpl& w) {
  w.joints = JointSet{};
  uint32_t tag = 0;
  if (!in.peek_u32(tag) || tag != kJointTag) return;
  in.u32();
  const uint32_t n = in.count(5, kMaxJoints);
  w.joints.items.assign(n, Joint{});
  for (Joint& j : w.joints.items) {
    if (!in.ok()) break;
    j.alive = in.u8() != 0;
    j.generation = in.u32();
    if (!j.alive) continue;
    read_joint(in, j);
    const bool a_ok = j.body_a < w.bodies.size() && w.bodies[j.body_a].alive;
    const bool b_ok = j.body_b == kNullIndex || (j.body_b < w.bodies.size() && w.bodies[j.body_b].alive);
    if (!a_ok || !b_ok || j.body_a == j.body_b) in.fail("joint names a body slot that does not exist");
  }
  const uint32_t nf = in.count(4, kMaxJoints);
  w.joints.free.resize(nf);
  for (uint32_t& v : w.joints.free) {
    v = in.u32();
    if (v >= n) in.fail("joint free list names a slot that does not exist");
  }
}

}  // namespace keel::sim
