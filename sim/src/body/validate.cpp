// Validation of body descriptions: the sim refuses what it cannot step, with a message
// that names the body id and the field.
#include <keel/sim/defs.h>
#include <keel/sim/hull.h>

#include "body/validate.h"
#include "collision/mesh.h"
#include "collision/narrowphase.h"

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
    case ShapeType::Hull: return "Hull";
    case ShapeType::Mesh: return "Mesh";
    case ShapeType::Heightfield: return "Heightfield";
  }
  return "?";
}

namespace {

// Field names are only assembled when a check fails: validating a million-body scene
// must not build millions of strings.
class Checker {
 public:
  explicit Checker(const BodyDef& def) : def_(def) {}

  bool failed() const { return !message_.empty(); }
  const std::string& message() const { return message_; }
  /// Following field names belong to collider `index` (-1: to the body itself).
  void scope(long index) { collider_ = index; }

  void finite(const char* field, float v, const char* component = "") {
    if (!failed() && !std::isfinite(v)) fail(field, component, "must be a finite number", v);
  }
  void finite(const char* field, const Vec3& v) {
    finite(field, v.x, ".x");
    finite(field, v.y, ".y");
    finite(field, v.z, ".z");
  }
  void rotation(const char* field, const Quat& q) {
    finite(field, q.x, ".x");
    finite(field, q.y, ".y");
    finite(field, q.z, ".z");
    finite(field, q.w, ".w");
    float len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if (!failed() && len2 < 1e-12f) fail(field, "", "must be a non-zero quaternion", std::sqrt(len2));
  }
  void positive(const char* field, float v, const char* component = "") {
    finite(field, v, component);
    if (!failed() && !(v > 0.0f)) fail(field, component, "must be > 0", v);
  }
  void non_negative(const char* field, float v) {
    finite(field, v);
    if (!failed() && v < 0.0f) fail(field, "", "must be >= 0", v);
  }
  void fail(const char* field, const char* component, const char* what, float got) {
    std::ostringstream os;
    os << "body " << def_.id << ": ";
    prefix(os);
    os << field << component << " " << what << " (got " << got << ")";
    message_ = os.str();
  }
  void fail_plain(const std::string& text) {
    if (failed()) return;
    std::ostringstream os;
    os << "body " << def_.id << ": ";
    prefix(os);
    os << text;
    message_ = os.str();
  }

 private:
  void prefix(std::ostream& os) const {
    if (collider_ >= 0) os << "colliders[" << collider_ << "].";
  }

  const BodyDef& def_;
  long collider_ = -1;
  std::string message_;
};

void check_collider(Checker& c, const ColliderDef& col, size_t index, MotionType motion,
                    std::shared_ptr<const ConvexHull>* built) {
  c.scope(long(index));
  c.finite("center", col.center);
  c.rotation("rotation", col.rotation);
  switch (col.shape) {
    case ShapeType::Sphere:
      c.positive("radius", col.radius);
      break;
    case ShapeType::Capsule:
      c.positive("radius", col.radius);
      c.non_negative("half_height", col.half_height);
      break;
    case ShapeType::Box:
      c.positive("half_extents", col.half_extents.x, ".x");
      c.positive("half_extents", col.half_extents.y, ".y");
      c.positive("half_extents", col.half_extents.z, ".z");
      break;
    case ShapeType::Hull:
      if (auto hull = build_hull(col.points); !hull) c.fail_plain("points: " + hull.error().message);
      else if (built) *built = std::move(*hull);
      break;
    case ShapeType::Mesh:
      if (Status st = check_mesh_data(col.points, col.indices); !st) c.fail_plain(st.error().message);
      break;
    case ShapeType::Heightfield:
      if (Status st = check_heightfield_data(col.rows, col.columns, col.cell_size, col.heights); !st) {
        c.fail_plain(st.error().message);
      }
      break;
    default:
      c.fail_plain("shape is not a known shape");
  }
  if (is_concave(col.shape) && motion != MotionType::Static) {
    // Concave shapes have no volume or inertia, and the narrowphase never pairs two of
    // them: they are level geometry. A moving platform is built from convex parts.
    c.fail_plain(std::string("shape ") + to_string(col.shape) + " is only allowed on a Static body (this body is " +
                 to_string(motion) + ")");
  }
  c.non_negative("friction", col.friction);
  c.non_negative("restitution", col.restitution);
  c.non_negative("density", col.density);
  c.scope(-1);
}

}  // namespace

Status validate_body(const BodyDef& def) { return validate_body(def, nullptr); }

Status validate_body(const BodyDef& def, BuiltHulls* built) {
  if (built) built->assign(def.colliders.size(), nullptr);
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
  for (size_t i = 0; i < def.colliders.size() && !c.failed(); ++i) {
    if (c.failed()) break;
    check_collider(c, def.colliders[i], i, def.motion, built ? &(*built)[i] : nullptr);
  }
  if (!c.failed() && def.motion == MotionType::Dynamic && def.mass == 0.0f) {
    bool has_density = false;
    for (const ColliderDef& col : def.colliders) has_density |= col.density > 0.0f;
    if (!has_density) {
      c.fail("mass", "", "must be > 0 on a dynamic body (or give a collider a density > 0)", def.mass);
    }
  }
  if (c.failed()) return Error{c.message()};
  return Status::ok();
}

}  // namespace keel::sim
