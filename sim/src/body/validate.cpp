// Validation of body descriptions: the sim refuses what it cannot step, with a message
// that names the body id and the field.
#include <keel/sim/defs.h>

#include <cmath>
#include <sstream>
#include <string>

namespace keel::sim {

const char* to_string(MotionType m) {
  switch (m) {
    case MotionType::Static: return "Static";
    case MotionType::Kinematic: return "Kinematic";
    case MotionType::Dynamic: return "Dynamic";
  }
  return "?";
}

const char* to_string(ShapeType s) {
  switch (s) {
    case ShapeType::Sphere: return "Sphere";
    case ShapeType::Box: return "Box";
    case ShapeType::Capsule: return "Capsule";
  }
  return "?";
}

namespace {

class Checker {
 public:
  explicit Checker(const BodyDef& def) : def_(def) {}

  bool failed() const { return !message_.empty(); }
  const std::string& message() const { return message_; }

  void finite(const std::string& field, float v) {
    if (!failed() && !std::isfinite(v)) fail(field, "must be a finite number", v);
  }
  void finite(const std::string& field, const Vec3& v) {
    finite(field + ".x", v.x);
    finite(field + ".y", v.y);
    finite(field + ".z", v.z);
  }
  void rotation(const std::string& field, const Quat& q) {
    finite(field + ".x", q.x);
    finite(field + ".y", q.y);
    finite(field + ".z", q.z);
    finite(field + ".w", q.w);
    float len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if (!failed() && len2 < 1e-12f) fail(field, "must be a non-zero quaternion", std::sqrt(len2));
  }
  void positive(const std::string& field, float v) {
    finite(field, v);
    if (!failed() && !(v > 0.0f)) fail(field, "must be > 0", v);
  }
  void non_negative(const std::string& field, float v) {
    finite(field, v);
    if (!failed() && v < 0.0f) fail(field, "must be >= 0", v);
  }
  void fail(const std::string& field, const std::string& what, float got) {
    std::ostringstream os;
    os << "body " << def_.id << ": " << field << " " << what << " (got " << got << ")";
    message_ = os.str();
  }
  void fail_plain(const std::string& text) {
    if (failed()) return;
    std::ostringstream os;
    os << "body " << def_.id << ": " << text;
    message_ = os.str();
  }

 private:
  const BodyDef& def_;
  std::string message_;
};

void check_collider(Checker& c, const ColliderDef& col, size_t index) {
  std::string f = "colliders[" + std::to_string(index) + "].";
  c.finite(f + "center", col.center);
  c.rotation(f + "rotation", col.rotation);
  switch (col.shape) {
    case ShapeType::Sphere:
      c.positive(f + "radius", col.radius);
      break;
    case ShapeType::Capsule:
      c.positive(f + "radius", col.radius);
      c.non_negative(f + "half_height", col.half_height);
      break;
    case ShapeType::Box:
      c.positive(f + "half_extents.x", col.half_extents.x);
      c.positive(f + "half_extents.y", col.half_extents.y);
      c.positive(f + "half_extents.z", col.half_extents.z);
      break;
    default:
      c.fail_plain(f + "shape is not a known shape");
  }
  c.non_negative(f + "friction", col.friction);
  c.non_negative(f + "restitution", col.restitution);
  c.non_negative(f + "density", col.density);
}

}  // namespace

Status validate_body(const BodyDef& def) {
  Checker c(def);
  if (def.motion != MotionType::Static && def.motion != MotionType::Kinematic &&
      def.motion != MotionType::Dynamic) {
    c.fail_plain("motion is not Static, Kinematic or Dynamic");
  }
  c.finite("position", def.position);
  c.rotation("rotation", def.rotation);
  c.finite("linear_velocity", def.linear_velocity);
  c.finite("angular_velocity", def.angular_velocity);
  c.non_negative("mass", def.mass);
  c.non_negative("linear_damping", def.linear_damping);
  c.non_negative("angular_damping", def.angular_damping);
  c.finite("gravity_scale", def.gravity_scale);
  for (size_t i = 0; i < def.colliders.size() && !c.failed(); ++i) check_collider(c, def.colliders[i], i);
  if (!c.failed() && def.motion == MotionType::Dynamic && def.mass == 0.0f) {
    bool has_density = false;
    for (const ColliderDef& col : def.colliders) has_density |= col.density > 0.0f;
    if (!has_density) {
      c.fail("mass", "must be > 0 on a dynamic body (or give a collider a density > 0)", def.mass);
    }
  }
  if (c.failed()) return Error{c.message()};
  return Status::ok();
}

}  // namespace keel::sim
