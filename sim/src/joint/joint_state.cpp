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

// Each field list is written once, over the direction (state/state_io.h: a FieldWriter
// with const fields, or a FieldReader).
template <class IO, class L>
void visit_limit(IO& io, L& l) {
  io.flag(l.enabled);
  io.f32(l.lower);
  io.f32(l.upper);
}

template <class IO, class S>
void visit_spring(IO& io, S& s) {
  io.flag(s.enabled);
  io.f32(s.hertz);
  io.f32(s.damping_ratio);
  io.f32(s.target);
}

template <class IO, class J>
void visit_joint(IO& io, J& j) {
  auto& d = j.def;
  io.enum8(d.kind, JointKind::Wheel, "joint kind unknown");
  io.u32(j.body_a);
  io.u32(j.body_b);
  io.u32(d.body_a);
  io.u32(d.body_b);
  io.transform(d.frame_a);
  io.transform(d.frame_b);
  visit_limit(io, d.limit);
  io.flag(d.motor.enabled);
  io.f32(d.motor.speed);
  io.f32(d.motor.max_force);
  visit_spring(io, d.spring);
  io.f32(d.length);
  io.f32(d.cone_angle);
  visit_limit(io, d.steer_limit);
  visit_spring(io, d.steer_spring);
  io.f32(d.holding_torque);
  io.f32(d.break_force);
  io.flag(d.collide_connected);
  io.flag(j.broken);
  io.f32(j.steer);
  io.vec3(j.linear_impulse);
  io.vec3(j.angular_impulse);
  io.f32(j.spring_impulse);
  io.f32(j.motor_impulse);
  io.f32(j.lower_impulse);
  io.f32(j.upper_impulse);
  io.f32(j.cone_impulse);
  io.f32(j.rigid_impulse);
  io.vec3(j.hold_impulse);
  io.quat(j.hold_ref);
  io.flag(j.hold_saturated);
}

}  // namespace

void write_joints(const WorldImpl& w, StateWriter& out) {
  if (w.joints.items.empty()) return;
  out.u32(kJointTag);
  out.u32(uint32_t(w.joints.items.size()));
  for (const Joint& j : w.joints.items) {
    out.u8(j.alive);
    out.u32(j.generation);
    if (j.alive) visit_joint(out, j);
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
    FieldReader io(in);
    visit_joint(io, j);
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
