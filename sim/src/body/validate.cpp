// Validation of body descriptions: the sim refuses what it cannot step, with a message
// that names the body id and the field.
#include <keel/sim/defs.h>
#include <keel/sim/hull.h>
#include <keel/sim/limits.h>

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
  /// Finite and |v| <= limit (keel/sim/limits.h): keeps every product the step forms finite.
  void within(const char* field, float v, float limit, const char* component = "") {
    finite(field, v, component);
    if (!failed() && !(std::fabs(v) <= limit)) fail_limit(field, component, "must be within +-", limit, v);
  }
  void within(const char* field, const Vec3& v, float limit) {
    within(field, v.x, limit, ".x");
    within(field, v.y, limit, ".y");
    within(field, v.z, limit, ".z");
  }
  /// A size: min <= v <= max.
  void size(const char* field, float v, float min, float max, const char* component = "") {
    positive(field, v, component);
    if (!failed() && v < min) fail_limit(field, component, "must be at least ", min, v);
    if (!failed() && v > max) fail_limit(field, component, "must be at most ", max, v);
  }
  /// 0 <= v <= max.
  void up_to(const char* field, float v, float max) {
    non_negative(field, v);
    if (!failed() && v > max) fail_limit(field, "", "must be at most ", max, v);
  }
  void fail_limit(const char* field, const char* component, const char* what, float limit, float got) {
    std::ostringstream os;
    os << what << limit;  // `what` ends with its own space, or with "+-"
    fail(field, component, os.str().c_str(), got);
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

// A hull is a moving part: its points are bounded like a box's half extents, so that its
// size (and the mass and inertia that follow from it) stays in range.
void check_hull_points(Checker& c, const std::vector<Vec3>& points) {
  for (size_t i = 0; i < points.size() && !c.failed(); ++i) {
    for (int k = 0; k < 3; ++k) {
      if (std::isfinite(points[i][k]) && std::fabs(points[i][k]) <= kMaxShapeSize) continue;
      std::ostringstream os;
      os << "points[" << i << "]." << "xyz"[k] << " must be within +-" << kMaxShapeSize << " (got " << points[i][k]
         << ")";
      c.fail_plain(os.str());
      return;
    }
  }
}

void check_collider(Checker& c, const ColliderDef& col, size_t index, MotionType motion,
                    std::shared_ptr<const ConvexHull>* built) {
  c.scope(long(index));
  c.within("center", col.center, kMaxWorldExtent);
  c.rotation("rotation", col.rotation);
  switch (col.shape) {
    case ShapeType::Sphere:
      c.size("radius", col.radius, kMinShapeSize, kMaxShapeSize);
      break;
    case ShapeType::Capsule:
      c.size("radius", col.radius, kMinShapeSize, kMaxShapeSize);
      c.up_to("half_height", col.half_height, kMaxShapeSize);
      break;
    case ShapeType::Box:
      c.size("half_extents", col.half_extents.x, kMinShapeSize, kMaxShapeSize, ".x");
      c.size("half_extents", col.half_extents.y, kMinShapeSize, kMaxShapeSize, ".y");
      c.size("half_extents", col.half_extents.z, kMinShapeSize, kMaxShapeSize, ".z");
      break;
    case ShapeType::Hull:
      check_hull_points(c, col.points);
      if (c.failed()) break;
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
  c.up_to("friction", col.friction, kMaxFriction);
  // Negative static friction means "the same as friction"; a set one may not be lower
  // (a contact that holds at rest less than it drags while sliding is no material).
  if (col.static_friction >= 0.0f) {
    c.up_to("static_friction", col.static_friction, kMaxFriction);
    if (!c.failed() && col.static_friction < col.friction) {
      c.fail("static_friction", "", "must be at least the collider's friction, or negative for the same", col.static_friction);
    }
  }
  c.up_to("restitution", col.restitution, kMaxRestitution);
  c.up_to("density", col.density, kMaxDensity);
  c.scope(-1);
}

// A dynamic body's mass, given or computed from its colliders' densities and volumes,
// within [kMinBodyMass, kMaxBodyMass]: the inverse mass and every momentum stay finite.
void check_mass(Checker& c, const BodyDef& def, const BuiltHulls* built) {
  if (def.motion != MotionType::Dynamic) return;
  if (def.mass > 0.0f) {
    if (def.mass < kMinBodyMass) c.fail_limit("mass", "", "must be at least ", kMinBodyMass, def.mass);
    if (def.mass > kMaxBodyMass) c.fail_limit("mass", "", "must be at most ", kMaxBodyMass, def.mass);
    return;
  }
  double total = 0.0;  // double: a sum of large parts must not overflow before the check
  for (size_t i = 0; i < def.colliders.size(); ++i) {
    const ConvexHull* hull = built && i < built->size() ? (*built)[i].get() : nullptr;
    total += double(def.colliders[i].density) * double(shape_volume(def.colliders[i], hull));
  }
  if (total > 0.0 && total < double(kMinBodyMass)) {
    c.fail_limit("mass", "", "computed from the colliders' densities must be at least ", kMinBodyMass, float(total));
  } else if (total > double(kMaxBodyMass)) {
    c.fail_limit("mass", "", "computed from the colliders' densities must be at most ", kMaxBodyMass,
                 float(std::min(total, 3.0e38)));
  }
}

}  // namespace

Status validate_body(const BodyDef& def) {
  BuiltHulls hulls;  // the mass check reuses each hull the collider check built
  return validate_body(def, &hulls);
}

Status validate_body(const BodyDef& def, BuiltHulls* built) {
  if (built) built->assign(def.colliders.size(), nullptr);
  Checker c(def);
  if (def.motion != MotionType::Static && def.motion != MotionType::Kinematic &&
      def.motion != MotionType::Dynamic) {
    c.fail_plain("motion is not Static, Kinematic or Dynamic");
  }
  c.within("position", def.position, kMaxWorldExtent);
  c.rotation("rotation", def.rotation);
  c.within("linear_velocity", def.linear_velocity, kMaxLinearVelocity);
  c.within("angular_velocity", def.angular_velocity, kMaxAngularVelocity);
  c.non_negative("mass", def.mass);
  c.up_to("linear_damping", def.linear_damping, kMaxDamping);
  c.up_to("angular_damping", def.angular_damping, kMaxDamping);
  c.within("gravity_scale", def.gravity_scale, kMaxGravityScale);
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
  if (!c.failed()) check_mass(c, def, built);
  if (c.failed()) return Error{c.message()};
  return Status::ok();
}

namespace {

// "settings: <field> <what> (got <value>)", or empty when `ok`.
std::string settings_error(bool ok, const char* field, const std::string& what, double got) {
  if (ok) return {};
  std::ostringstream os;
  os << "settings: " << field << " " << what << " (got " << got << ")";
  return os.str();
}

std::string range_text(const char* lower, float upper) {
  std::ostringstream os;
  os << "must be in " << lower << upper << "]";
  return os.str();
}

}  // namespace

const char* to_string(SolverKind k) { return k == SolverKind::Xpbd ? "xpbd" : "soft_step"; }

Status validate_settings(const WorldSettings& s) {
  std::string e = settings_error(s.tick_rate >= 1 && s.tick_rate <= 1000, "tick_rate", "must be 1 to 1000", s.tick_rate);
  if (e.empty()) e = settings_error(s.substeps >= 1 && s.substeps <= 64, "substeps", "must be 1 to 64", s.substeps);
  const char* axis[3] = {"gravity.x", "gravity.y", "gravity.z"};
  for (int k = 0; k < 3 && e.empty(); ++k) {
    std::ostringstream what;
    what << "must be within +-" << kMaxGravity;
    e = settings_error(std::fabs(s.gravity[k]) <= kMaxGravity, axis[k], what.str(), s.gravity[k]);
  }
  // Every comparison is false for NaN, so a NaN fails each check.
  auto in = [](float v, float lo_open, float hi) { return v > lo_open && v <= hi; };
  if (e.empty()) {
    e = settings_error(in(s.contact_hertz, 0.0f, kMaxSpringHertz), "contact_hertz",
                       range_text("(0, ", kMaxSpringHertz), s.contact_hertz);
  }
  if (e.empty()) {
    e = settings_error(s.contact_damping_ratio >= 0.0f && s.contact_damping_ratio <= kMaxDampingRatio,
                       "contact_damping_ratio", range_text("[0, ", kMaxDampingRatio), s.contact_damping_ratio);
  }
  if (e.empty()) {
    e = settings_error(s.contact_push_max_speed >= 0.0f && s.contact_push_max_speed <= kMaxLinearVelocity,
                       "contact_push_max_speed", range_text("[0, ", kMaxLinearVelocity), s.contact_push_max_speed);
  }
  if (e.empty()) {
    e = settings_error(s.restitution_threshold >= 0.0f && s.restitution_threshold <= kMaxLinearVelocity,
                       "restitution_threshold", range_text("[0, ", kMaxLinearVelocity), s.restitution_threshold);
  }
  if (e.empty()) {
    e = settings_error(s.solver_kind == SolverKind::SoftStep || s.solver_kind == SolverKind::Xpbd, "solver_kind",
                       "must be soft_step (0) or xpbd (1)", int(s.solver_kind));
  }
  if (e.empty()) {
    e = settings_error(s.contact_compliance >= 0.0f && s.contact_compliance <= kMaxContactCompliance,
                       "contact_compliance", range_text("[0, ", kMaxContactCompliance), s.contact_compliance);
  }
  if (!e.empty()) return Error{e};
  return Status::ok();
}

}  // namespace keel::sim
