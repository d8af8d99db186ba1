// Checks on a decoded world state before it replaces a live world. The decoder
// (state.cpp) already bounds every count by the bytes left and every slot index by its
// array; these checks cover what a well-formed but forged or damaged state could still
// carry: numbers outside the world's limits (keel/sim/limits.h), slot lists that disagree
// with each other, ids that repeat or name nothing, and joints whose description the
// world would refuse. Each failure names the section, the body (or slot) and the field.
#include <keel/sim/joint.h>
#include <keel/sim/limits.h>

#include "collision/narrowphase.h"
#include "joint/joint.h"
#include "state/state_check.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace keel::sim {

namespace {

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
bool within(float v, float limit) { return std::fabs(v) <= limit; }  // false for NaN
bool within(const Vec3& v, float limit) { return within(v.x, limit) && within(v.y, limit) && within(v.z, limit); }
bool in_range(float v, float lo, float hi) { return v >= lo && v <= hi; }  // false for NaN
bool finite(const Mat3& m) { return finite(m[0]) && finite(m[1]) && finite(m[2]); }
// Saved rotations were normalised by the world; a forged one far from unit length would
// scale every collider it turns.
bool unit(const Quat& q) {
  const float n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
  return std::fabs(n - 1.0f) <= 1e-3f;  // false for NaN
}

// Collects the first failure; later checks are skipped once one failed.
class Check {
 public:
  explicit Check(std::string& error) : error_(error) {}
  bool failed() const { return !error_.empty(); }
  void require(bool ok, const std::string& where, const char* field, const char* what) {
    if (ok || failed()) return;
    error_ = where + ": " + field + " " + what;
  }

 private:
  std::string& error_;
};

std::string body_where(const Body& b, size_t slot) {
  return "bodies: body " + std::to_string(b.id) + " (slot " + std::to_string(slot) + ")";
}

void check_body(Check& c, const Body& b, size_t slot) {
  const std::string at = body_where(b, slot);
  c.require(b.id != kAutoBodyId, at, "id", "is the reserved automatic id");
  // Pose and velocity: what a running world may reach (kMaxStateMagnitude, the bound the
  // step's end-of-tick check keeps), not the tighter limits a body enters with.
  c.require(within(b.origin.position, kMaxStateMagnitude), at, "position", "is not finite or beyond the state limit");
  c.require(unit(b.origin.rotation), at, "rotation", "is not a unit quaternion");
  c.require(within(b.center, kMaxStateMagnitude), at, "center of mass", "is not finite or beyond the state limit");
  c.require(within(b.local_center, 2 * kMaxWorldExtent), at, "local center of mass", "is not finite or out of range");
  c.require(within(b.linear_velocity, kMaxStateMagnitude), at, "linear_velocity",
            "is not finite or beyond the state limit");
  c.require(within(b.angular_velocity, kMaxStateMagnitude), at, "angular_velocity",
            "is not finite or beyond the state limit");
  if (b.motion == MotionType::Dynamic) {
    c.require(in_range(b.mass, kMinBodyMass, kMaxBodyMass), at, "mass", "is outside the dynamic body range");
    c.require(std::isfinite(b.inv_mass) && b.inv_mass > 0.0f, at, "inverse mass", "must be finite and > 0");
  } else {
    // The solver treats a body with no inverse mass as immovable: a static or kinematic
    // body that had one would be pushed around.
    c.require(b.mass == 0.0f && b.inv_mass == 0.0f, at, "mass", "must be 0 on a static or kinematic body");
    c.require(b.inv_inertia_local == Mat3(0.0f), at, "inverse inertia", "must be 0 on a static or kinematic body");
  }
  if (b.motion == MotionType::Static) {
    c.require(b.linear_velocity == Vec3(0.0f) && b.angular_velocity == Vec3(0.0f), at, "velocity",
              "must be 0 on a static body");
  }
  c.require(finite(b.inertia_local) && finite(b.inv_inertia_local), at, "inertia", "is not finite");
  c.require(in_range(b.linear_damping, 0.0f, kMaxDamping), at, "linear_damping", "is out of range");
  c.require(in_range(b.angular_damping, 0.0f, kMaxDamping), at, "angular_damping", "is out of range");
  c.require(within(b.gravity_scale, kMaxGravityScale), at, "gravity_scale", "is out of range");
  c.require(in_range(b.sleep_time, 0.0f, 3.0e38f), at, "sleep_time", "is not finite and >= 0");
  c.require(in_range(b.reach, 0.0f, 4 * kMaxWorldExtent), at, "reach", "is not finite, >= 0 and in range");
}

void check_shape(Check& c, const Shape& s, const Body& owner, size_t slot) {
  const std::string at = "colliders: slot " + std::to_string(slot) + " of body " + std::to_string(owner.id);
  c.require(within(s.local.position, kMaxWorldExtent), at, "center", "is not finite or outside the world");
  c.require(unit(s.local.rotation), at, "rotation", "is not a unit quaternion");
  const bool round = s.type == ShapeType::Sphere || s.type == ShapeType::Capsule;
  if (round) c.require(in_range(s.radius, kMinShapeSize, kMaxShapeSize), at, "radius", "is out of range");
  if (s.type == ShapeType::Capsule) {
    c.require(in_range(s.half_height, 0.0f, kMaxShapeSize), at, "half_height", "is out of range");
  }
  if (s.type == ShapeType::Box) {
    const Vec3& h = s.half_extents;
    const bool ok = in_range(h.x, kMinShapeSize, kMaxShapeSize) && in_range(h.y, kMinShapeSize, kMaxShapeSize) &&
                    in_range(h.z, kMinShapeSize, kMaxShapeSize);
    c.require(ok, at, "half_extents", "are out of range");
  }
  // The other shapes' unused size fields still enter the hash: finite at least.
  c.require(std::isfinite(s.radius) && std::isfinite(s.half_height) && finite(s.half_extents), at, "size fields",
            "are not finite");
  c.require(in_range(s.friction, 0.0f, kMaxFriction), at, "friction", "is out of range");
  c.require(in_range(s.static_friction, s.friction, kMaxFriction), at, "static_friction",
            "is out of range (from friction to the maximum)");
  c.require(in_range(s.restitution, 0.0f, kMaxRestitution), at, "restitution", "is out of range");
  c.require(in_range(s.density, 0.0f, kMaxDensity), at, "density", "is out of range");
  c.require(s.is_static == (owner.motion == MotionType::Static), at, "is_static",
            "disagrees with the body's motion type");
  c.require(!is_concave(s.type) || owner.motion == MotionType::Static, at, "shape",
            "is a mesh or heightfield on a body that is not static");
  const bool box_ok = within(s.fat.lower, 2 * kMaxStateMagnitude) && within(s.fat.upper, 2 * kMaxStateMagnitude) &&
                      s.fat.lower.x <= s.fat.upper.x && s.fat.lower.y <= s.fat.upper.y &&
                      s.fat.lower.z <= s.fat.upper.z;
  c.require(box_ok, at, "bounds", "are not finite, ordered and inside the world");
}

// A free list names each dead slot exactly once, so the next add reuses a slot nobody
// holds and no slot is handed out twice.
template <class Slots>
void check_free_list(Check& c, const Slots& slots, const std::vector<uint32_t>& list, const char* section) {
  std::vector<uint8_t> seen(slots.size(), 0);
  size_t dead = 0;
  for (const auto& s : slots) dead += s.alive ? 0 : 1;
  for (uint32_t v : list) {
    const bool ok = v < slots.size() && !slots[v].alive && !seen[v];
    c.require(ok, section, "free list", "names a live, missing or repeated slot");
    if (!ok) return;
    seen[v] = 1;
  }
  c.require(list.size() == dead, section, "free list", "leaves out a dead slot");
}

void check_bodies(Check& c, const WorldImpl& w) {
  std::vector<uint32_t> ids;
  size_t listed = 0;
  std::vector<uint8_t> owned(w.shapes.size(), 0);
  for (size_t i = 0; i < w.bodies.size() && !c.failed(); ++i) {
    const Body& b = w.bodies[i];
    if (!b.alive) continue;
    check_body(c, b, i);
    ids.push_back(b.id);
    for (uint32_t s : b.shapes) {
      // state.cpp checked that the slot is a live collider whose owner is this body.
      c.require(s < owned.size() && !owned[s], body_where(b, i), "colliders", "name a collider slot twice");
      if (c.failed()) return;
      owned[s] = 1;
      check_shape(c, w.shapes[s], b, s);
    }
    listed += b.shapes.size();
  }
  size_t alive_shapes = 0;
  for (const Shape& s : w.shapes) alive_shapes += s.alive ? 1 : 0;
  c.require(listed == alive_shapes, "colliders", "owner", "of a live collider does not list it");
  std::sort(ids.begin(), ids.end());
  c.require(std::adjacent_find(ids.begin(), ids.end()) == ids.end(), "bodies", "id", "is used by two bodies");
  check_free_list(c, w.bodies, w.free_bodies, "bodies");
  check_free_list(c, w.shapes, w.free_shapes, "colliders");
}

void check_contacts(Check& c, const WorldImpl& w) {
  for (const Contact& k : w.contacts.items()) {
    const std::string at = "contacts: pair " + std::to_string(k.shape_a) + "-" + std::to_string(k.shape_b);
    c.require(w.shapes[k.shape_a].body != w.shapes[k.shape_b].body, at, "colliders", "belong to the same body");
    for (int i = 0; i < k.count; ++i) {
      const ContactPoint& p = k.points[i];
      c.require(std::isfinite(p.normal_impulse) && finite(p.friction_impulse), at, "impulse", "is not finite");
    }
    if (c.failed()) return;
  }
}

// Touching and sensed pairs are (user id, user id) keys. They may name a body removed
// since the last step (its Ended or Exit event is still to come), so only their form is
// checked: two different ids, the lower first for a touching pair.
void check_pairs(Check& c, const std::vector<uint64_t>& keys, const char* section, bool ordered) {
  for (uint64_t key : keys) {
    const uint32_t a = uint32_t(key >> 32), b = uint32_t(key);
    const bool ok = a != b && (!ordered || a < b);
    c.require(ok, section, "pair", "names one body twice (or the higher id first)");
    if (!ok) return;
  }
}

bool joint_body_matches(const WorldImpl& w, uint32_t slot, uint32_t id) {
  if (slot == kNullIndex) return id == kWorldBodyId;
  return slot < w.bodies.size() && w.bodies[slot].alive && w.bodies[slot].id == id;
}

void check_joints(Check& c, const WorldImpl& w) {
  for (size_t i = 0; i < w.joints.items.size() && !c.failed(); ++i) {
    const Joint& j = w.joints.items[i];
    if (!j.alive) continue;
    const std::string at = "joints: slot " + std::to_string(i);
    c.require(joint_body_matches(w, j.body_a, j.def.body_a) && joint_body_matches(w, j.body_b, j.def.body_b), at,
              "body_a/body_b", "disagree with the bodies in their slots");
    if (Status st = validate_joint(j.def); !st) c.require(false, at, "description:", st.error().message.c_str());
    const bool impulses = finite(j.linear_impulse) && finite(j.angular_impulse) && finite(j.hold_impulse) &&
                          std::isfinite(j.spring_impulse) && std::isfinite(j.motor_impulse) &&
                          std::isfinite(j.lower_impulse) && std::isfinite(j.upper_impulse) &&
                          std::isfinite(j.cone_impulse) && std::isfinite(j.rigid_impulse);
    c.require(impulses, at, "impulses", "are not finite");
    c.require(std::isfinite(j.steer) && unit(j.hold_ref), at, "steer/hold_ref", "are not finite (or not unit)");
  }
  check_free_list(c, w.joints.items, w.joints.free, "joints");
}

}  // namespace

Status check_state(const WorldImpl& w) {
  std::string error;
  Check c(error);
  if (Status st = validate_settings(w.settings); !st) return Error{st.error().message};
  check_bodies(c, w);
  if (!c.failed()) check_contacts(c, w);
  if (!c.failed()) check_pairs(c, w.touching_pairs, "touching pairs", true);
  if (!c.failed()) check_pairs(c, w.sensed_pairs, "sensed pairs", false);
  if (!c.failed()) check_joints(c, w);
  if (c.failed()) return Error{error};
  return Status::ok();
}

}  // namespace keel::sim
