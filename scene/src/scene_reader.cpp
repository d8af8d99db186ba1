#include "scene_reader.h"

#include "obj_reader.h"

#include <keel/scene/scene.h>
#include <keel/sim/builders.h>
#include <keel/sim/character.h>
#include <keel/sim/hull.h>
#include <keel/sim/joint.h>
#include <keel/sim/limits.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace keel::scene::detail {

// The file enums and the sim enums share their numbering, so a checked value converts
// with a cast. These asserts keep the two from drifting apart.
static_assert(static_cast<int>(fb::Motion::Static) == static_cast<int>(sim::MotionType::Static));
static_assert(static_cast<int>(fb::Motion::Kinematic) ==
              static_cast<int>(sim::MotionType::Kinematic));
static_assert(static_cast<int>(fb::Motion::Dynamic) == static_cast<int>(sim::MotionType::Dynamic));
static_assert(static_cast<int>(fb::Shape::Sphere) == static_cast<int>(sim::ShapeType::Sphere));
static_assert(static_cast<int>(fb::Shape::Box) == static_cast<int>(sim::ShapeType::Box));
static_assert(static_cast<int>(fb::Shape::Capsule) == static_cast<int>(sim::ShapeType::Capsule));
static_assert(static_cast<int>(fb::Shape::Hull) == static_cast<int>(sim::ShapeType::Hull));
static_assert(static_cast<int>(fb::Shape::Mesh) == static_cast<int>(sim::ShapeType::Mesh));
static_assert(static_cast<int>(fb::Shape::Heightfield) == static_cast<int>(sim::ShapeType::Heightfield));

std::string format_float(float value) {
  char buffer[64];
#if defined(__cpp_lib_to_chars)
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
#else
  // emscripten 3.1.6's libc++ (13) has no floating-point to_chars (the wasm32 build):
  // nine significant digits also name the float exactly, if not always in the fewest.
  const int n = std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(value));
  return std::string(buffer, n > 0 ? size_t(n) : 0);
#endif
}

namespace {

// A quaternion whose squared length is within this of 1 is kept bit for bit; anything
// further off is normalised. A float quaternion normalised in double precision lands
// within ~1.2e-7 of 1, so normalising is idempotent and binary round trips stay exact.
constexpr double kUnitQuatTolerance = 1e-6;
// Below this squared length (length 1e-6) a quaternion has no usable direction.
constexpr double kMinQuatLengthSquared = 1e-12;

constexpr uint32_t kMaxBodyId = sim::kAutoBodyId - 1;

const sim::Vec3 kDefaultGravity{0.0f, -9.81f, 0.0f};

/// A field's name, joined only when an error needs it (a million bodies would otherwise
/// build tens of millions of strings that are never read): prefix + name + suffix, e.g.
/// "colliders[0]." + "half_extents" + ".x".
struct Field {
  std::string_view prefix;
  std::string_view name;
  std::string_view suffix;

  Field(const char* field_name) : name(field_name) {}  // NOLINT: implicit for brevity
  Field(std::string_view p, std::string_view n, std::string_view s = {})
      : prefix(p), name(n), suffix(s) {}

  /// The same field's component: position -> position.x.
  Field component(std::string_view which) const { return Field(prefix, name, which); }
  std::string str() const { return std::string(prefix).append(name).append(suffix); }
};

/// Walks a fb::Scene once, filling a SceneDef and stopping at the first rule broken.
/// Every check returns false after recording the error, so callers read `if (!ok) return`.
class Reader {
 public:
  Reader(const std::string& source, const std::string* base_dir) : source_(source), base_dir_(base_dir) {}

  keel::Expected<sim::SceneDef> read(const fb::Scene& in) {
    sim::SceneDef out;
    if (!read_header(in, out) || !read_bodies(in, out) || !read_spawn_points(in, out) ||
        !read_assemblies(in, out) || !read_joints(in, out) || !read_characters(in, out)) {
      return keel::Error{error_};
    }
    return out;
  }

 private:
  bool fail(const Field& field, const std::string& what) {
    error_ = source_ + ": " + context() + field.str() + ": " + what;
    return false;
  }

  /// "body 12: " once the body's id is known, "bodies[3]: " before, "" at scene level.
  std::string context() const {
    if (body_id_) return "body " + std::to_string(*body_id_) + ": ";
    if (body_index_) return "bodies[" + std::to_string(*body_index_) + "]: ";
    return {};
  }

  void enter_scene_level() {
    body_index_.reset();
    body_id_.reset();
  }

  bool check_finite(const Field& field, float value) {
    if (std::isfinite(value)) return true;
    return fail(field, "must be a finite number (got " + format_float(value) + ")");
  }

  bool check_positive(const Field& field, float value) {
    if (!check_finite(field, value)) return false;
    if (value > 0.0f) return true;
    return fail(field, "must be > 0 (got " + format_float(value) + ")");
  }

  bool check_non_negative(const Field& field, float value) {
    if (!check_finite(field, value)) return false;
    if (value >= 0.0f) return true;
    return fail(field, "must be >= 0 (got " + format_float(value) + ")");
  }

  /// An absent vector takes `absent` (zero everywhere but gravity).
  bool read_vec3(const Field& field, const fb::Vec3* in, const sim::Vec3& absent, sim::Vec3& out) {
    if (in == nullptr) {
      out = absent;
      return true;
    }
    if (!check_finite(field.component(".x"), in->x()) ||
        !check_finite(field.component(".y"), in->y()) ||
        !check_finite(field.component(".z"), in->z())) {
      return false;
    }
    out = sim::Vec3(in->x(), in->y(), in->z());
    return true;
  }

  /// An absent rotation is the identity; a non-unit one is normalised (documented).
  bool read_quat(const Field& field, const fb::Quat* in, sim::Quat& out) {
    if (in == nullptr) {
      out = sim::identity_quat();
      return true;
    }
    if (!check_finite(field.component(".x"), in->x()) ||
        !check_finite(field.component(".y"), in->y()) ||
        !check_finite(field.component(".z"), in->z()) ||
        !check_finite(field.component(".w"), in->w())) {
      return false;
    }
    // Double precision: the squares of finite floats cannot overflow, and the result is
    // the same on every IEEE machine (only +, *, / and sqrt).
    const double x = in->x(), y = in->y(), z = in->z(), w = in->w();
    const double length_squared = x * x + y * y + z * z + w * w;
    if (!(length_squared >= kMinQuatLengthSquared)) {
      return fail(field, "quaternion has length ~0 and cannot be normalised (x=" +
                             format_float(in->x()) + " y=" + format_float(in->y()) +
                             " z=" + format_float(in->z()) + " w=" + format_float(in->w()) + ")");
    }
    if (std::fabs(length_squared - 1.0) <= kUnitQuatTolerance) {
      out = sim::make_quat(in->x(), in->y(), in->z(), in->w());
      return true;
    }
    const double length = std::sqrt(length_squared);
    out = sim::make_quat(static_cast<float>(x / length), static_cast<float>(y / length),
                         static_cast<float>(z / length), static_cast<float>(w / length));
    return true;
  }

  bool read_header(const fb::Scene& in, sim::SceneDef& out) {
    enter_scene_level();
    if (in.name() != nullptr) {
      if (in.name()->size() > SceneLimits::kMaxNameBytes) {
        return fail("name", "is " + std::to_string(in.name()->size()) + " bytes long, at most " +
                                std::to_string(SceneLimits::kMaxNameBytes) + " allowed");
      }
      out.name = in.name()->str();
    }
    if (!is_supported_tick_rate(in.tick_rate())) {
      return fail("tick_rate",
                  "must be 30, 60 or 120 (got " + std::to_string(in.tick_rate()) + ")");
    }
    out.settings.tick_rate = in.tick_rate();
    if (!read_vec3("gravity", in.gravity(), kDefaultGravity, out.settings.gravity)) return false;
    if (!read_solver(in.solver(), out.settings)) return false;
    // The sim's ranges (gravity, solver constants), so a scene that loads is one
    // World::from_scene accepts. Its message names the field ("settings: gravity.y ...").
    const keel::Status status = sim::validate_settings(out.settings);
    if (status) return true;
    error_ = source_ + ": " + status.error().message;
    return false;
  }

  /// Absent solver fields (or an absent solver table) keep WorldSettings' defaults: the
  /// schema gives them no default of its own, so the sim's tuning lives in one place.
  bool read_solver(const fb::Solver* in, sim::WorldSettings& out) {
    if (in == nullptr) return true;
    const uint32_t substeps = in->substeps().value_or(out.substeps);
    if (substeps < 1 || substeps > SceneLimits::kMaxSubsteps) {
      return fail("solver.substeps", "must be 1 to " + std::to_string(SceneLimits::kMaxSubsteps) +
                                         " (got " + std::to_string(substeps) + ")");
    }
    const float hertz = in->contact_hertz().value_or(out.contact_hertz);
    const float damping = in->contact_damping_ratio().value_or(out.contact_damping_ratio);
    const float push = in->contact_push_max_speed().value_or(out.contact_push_max_speed);
    const float bounce = in->restitution_threshold().value_or(out.restitution_threshold);
    if (!check_positive("solver.contact_hertz", hertz) ||
        !check_non_negative("solver.contact_damping_ratio", damping) ||
        !check_non_negative("solver.contact_push_max_speed", push) ||
        !check_non_negative("solver.restitution_threshold", bounce)) {
      return false;
    }
    out.substeps = substeps;
    out.contact_hertz = hertz;
    out.contact_damping_ratio = damping;
    out.contact_push_max_speed = push;
    out.restitution_threshold = bounce;
    const auto kind = static_cast<uint8_t>(in->kind());
    if (kind > static_cast<uint8_t>(sim::SolverKind::Xpbd)) {
      return fail("solver.kind", "is unknown (" + std::to_string(kind) + "); the solvers are soft_step and xpbd");
    }
    out.solver_kind = static_cast<sim::SolverKind>(kind);
    const float compliance = in->contact_compliance().value_or(out.contact_compliance);
    if (!check_non_negative("solver.contact_compliance", compliance)) return false;
    out.contact_compliance = compliance;
    return true;
  }

  /// Checks the counts before allocating anything, so a huge file fails fast.
  bool check_body_counts(const fb::Scene& in) {
    const auto* bodies = in.bodies();
    if (bodies == nullptr) return true;
    if (bodies->size() > SceneLimits::kMaxBodies) {
      return fail("bodies", "the scene has " + std::to_string(bodies->size()) +
                                " bodies, at most " + std::to_string(SceneLimits::kMaxBodies) +
                                " allowed");
    }
    size_t total = 0;
    for (const fb::Body* body : *bodies) {
      if (body != nullptr && body->colliders() != nullptr) total += body->colliders()->size();
    }
    if (total > SceneLimits::kMaxTotalColliders) {
      return fail("bodies", "the scene has " + std::to_string(total) + " colliders, at most " +
                                std::to_string(SceneLimits::kMaxTotalColliders) + " allowed");
    }
    return true;
  }

  bool read_bodies(const fb::Scene& in, sim::SceneDef& out) {
    enter_scene_level();
    if (!check_body_counts(in) || in.bodies() == nullptr) return error_.empty();
    const auto& bodies = *in.bodies();
    out.bodies.resize(bodies.size());
    std::unordered_map<uint32_t, size_t> index_of_id;  // lookups only; never iterated
    index_of_id.reserve(bodies.size());
    for (uint32_t i = 0; i < bodies.size(); ++i) {
      if (!read_body(bodies.Get(i), i, out.bodies[i])) return false;
      auto [it, inserted] = index_of_id.emplace(out.bodies[i].id, i);
      if (!inserted) {
        return fail("id", "duplicate: bodies[" + std::to_string(it->second) + "] and bodies[" +
                              std::to_string(i) + "] both have id " +
                              std::to_string(out.bodies[i].id));
      }
    }
    enter_scene_level();
    return true;
  }

  bool read_body(const fb::Body* in, size_t index, sim::BodyDef& out) {
    body_index_ = index;
    body_id_.reset();
    if (in == nullptr) return fail("body", "is null");
    if (!in->id().has_value()) {
      return fail(
          "id", "missing (every body needs a unique id, 1 to " + std::to_string(kMaxBodyId) + ")");
    }
    const uint32_t id = in->id().value();
    if (id == 0 || id > kMaxBodyId) {
      return fail(
          "id", "must be 1 to " + std::to_string(kMaxBodyId) + " (got " + std::to_string(id) + ")");
    }
    out.id = id;
    body_id_ = id;
    return read_body_motion(*in, out) && read_body_properties(*in, out) &&
           read_colliders(*in, out) && check_mass_source(out) && check_with_sim(out);
  }

  bool read_body_motion(const fb::Body& in, sim::BodyDef& out) {
    const auto motion = static_cast<uint8_t>(in.motion());
    if (motion > static_cast<uint8_t>(fb::Motion::MAX)) {
      return fail("motion", "unknown motion type " + std::to_string(motion) +
                                " (Static, Kinematic or Dynamic)");
    }
    out.motion = static_cast<sim::MotionType>(motion);
    if (!check_finite("mass", in.mass())) return false;
    if (in.mass() < 0.0f) {
      return fail("mass", "must be >= 0 (got " + format_float(in.mass()) +
                              "; 0 means computed from the colliders' density)");
    }
    out.mass = in.mass();
    return read_vec3("position", in.position(), sim::Vec3(0.0f), out.position) &&
           read_quat("rotation", in.rotation(), out.rotation) &&
           read_vec3("linear_velocity", in.linear_velocity(), sim::Vec3(0.0f),
                     out.linear_velocity) &&
           read_vec3("angular_velocity", in.angular_velocity(), sim::Vec3(0.0f),
                     out.angular_velocity);
  }

  bool read_body_properties(const fb::Body& in, sim::BodyDef& out) {
    if (!check_non_negative("linear_damping", in.linear_damping()) ||
        !check_non_negative("angular_damping", in.angular_damping()) ||
        !check_finite("gravity_scale", in.gravity_scale())) {
      return false;
    }
    out.linear_damping = in.linear_damping();
    out.angular_damping = in.angular_damping();
    out.gravity_scale = in.gravity_scale();
    out.freeze_rotation = in.freeze_rotation();
    out.can_sleep = in.can_sleep();
    out.bullet = in.bullet();
    out.kind = in.kind();
    out.layer = in.layer();
    out.collides_with = in.collides_with();
    return true;
  }

  bool read_colliders(const fb::Body& in, sim::BodyDef& out) {
    if (in.colliders() == nullptr) return true;
    const auto& colliders = *in.colliders();
    if (colliders.size() > SceneLimits::kMaxCollidersPerBody) {
      return fail("colliders", "the body has " + std::to_string(colliders.size()) +
                                   " colliders, at most " +
                                   std::to_string(SceneLimits::kMaxCollidersPerBody) + " allowed");
    }
    out.colliders.resize(colliders.size());
    for (uint32_t i = 0; i < colliders.size(); ++i) {
      if (!read_collider(colliders.Get(i), "colliders[" + std::to_string(i) + "].",
                         out.colliders[i])) {
        return false;
      }
    }
    return true;
  }

  bool read_collider(const fb::Collider* in, const std::string& at, sim::ColliderDef& out) {
    if (in == nullptr) return fail(Field(at, "", ""), "is null");
    return read_collider_shape(*in, at, out) && read_collider_geometry(*in, at, out) &&
           read_collider_material(*in, at, out);
  }

  bool read_collider_shape(const fb::Collider& in, const std::string& at, sim::ColliderDef& out) {
    const fb::Shape shape = in.shape();
    const auto raw = static_cast<uint8_t>(shape);
    if (raw > static_cast<uint8_t>(fb::Shape::MAX)) {
      return fail(Field(at, "shape"), "unknown shape " + std::to_string(raw) +
                                          " (Sphere, Box, Capsule, Hull, Mesh or Heightfield)");
    }
    out.shape = static_cast<sim::ShapeType>(raw);
    // Geometry fields only describe their own shapes; on any other shape they would be
    // silently ignored, which hides a mistake.
    const bool hull = shape == fb::Shape::Hull, mesh = shape == fb::Shape::Mesh,
               field = shape == fb::Shape::Heightfield;
    if (!hull && !mesh && in.points() != nullptr && in.points()->size() > 0) {
      return fail(Field(at, "points"), "only Hull and Mesh shapes use points");
    }
    if (!mesh && in.indices() != nullptr && in.indices()->size() > 0) {
      return fail(Field(at, "indices"), "only Mesh shapes use indices");
    }
    if (!mesh && in.mesh_file() != nullptr) return fail(Field(at, "mesh_file"), "only Mesh shapes use mesh_file");
    if (!field && (in.rows() != 0 || in.columns() != 0 || (in.heights() != nullptr && in.heights()->size() > 0))) {
      return fail(Field(at, in.rows() != 0 ? "rows" : in.columns() != 0 ? "columns" : "heights"),
                  "only Heightfield shapes use rows, columns and heights");
    }
    if ((hull && !read_points(in, at, out)) || (mesh && !read_mesh(in, at, out)) ||
        (field && !read_heightfield(in, at, out))) {
      return false;
    }
    return read_vec3(Field(at, "center"), in.center(), sim::Vec3(0.0f), out.center) &&
           read_quat(Field(at, "rotation"), in.rotation(), out.rotation);
  }

  /// A hull's cloud: present, within the sim's point limit, every coordinate finite. Whether
  /// the points span a volume is the sim's check (check_with_sim names the same field).
  bool read_points(const fb::Collider& in, const std::string& at, sim::ColliderDef& out) {
    const auto* points = in.points();
    const size_t n = points == nullptr ? 0 : points->size();
    if (n < 4 || n > sim::kMaxHullInputPoints) {
      return fail(Field(at, "points"), "a Hull needs 4 to " + std::to_string(sim::kMaxHullInputPoints) +
                                           " points (got " + std::to_string(n) + ")");
    }
    out.points.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      const fb::Vec3* p = points->Get(i);
      if (!std::isfinite(p->x()) || !std::isfinite(p->y()) || !std::isfinite(p->z())) {
        const std::string name = "points[" + std::to_string(i) + "]";
        return fail(Field(at, name), "must be finite (got " + format_float(p->x()) + ", " + format_float(p->y()) +
                                         ", " + format_float(p->z()) + ")");
      }
      out.points[i] = sim::Vec3(p->x(), p->y(), p->z());
    }
    return true;
  }

  /// Mesh data: inline points + indices, or an OBJ file next to the scene file (never
  /// both). The sim's own checks (indices in range, no degenerate triangle, limits) run
  /// in check_with_sim; the OBJ reader names its file and line.
  bool read_mesh(const fb::Collider& in, const std::string& at, sim::ColliderDef& out) {
    const bool inline_data = (in.points() != nullptr && in.points()->size() > 0) ||
                             (in.indices() != nullptr && in.indices()->size() > 0);
    if (in.mesh_file() != nullptr) {
      if (inline_data) return fail(Field(at, "mesh_file"), "give points and indices or mesh_file, not both");
      return read_mesh_file(in.mesh_file()->str(), at, out);
    }
    if (in.points() == nullptr || in.indices() == nullptr) {
      return fail(Field(at, in.points() == nullptr ? "points" : "indices"),
                  "a Mesh needs points and indices (or mesh_file)");
    }
    if (in.points()->size() > sim::kMaxMeshVertices || in.indices()->size() > size_t(sim::kMaxMeshTriangles) * 3) {
      return fail(Field(at, "points"), "the mesh is larger than " + std::to_string(sim::kMaxMeshVertices) +
                                           " vertices / " + std::to_string(sim::kMaxMeshTriangles) + " triangles");
    }
    out.points.reserve(in.points()->size());
    for (const fb::Vec3* p : *in.points()) out.points.emplace_back(p->x(), p->y(), p->z());
    out.indices.assign(in.indices()->begin(), in.indices()->end());
    return true;
  }

  bool read_mesh_file(const std::string& name, const std::string& at, sim::ColliderDef& out) {
    const Field field(at, "mesh_file");
    if (base_dir_ == nullptr) {
      return fail(field, "mesh_file is only read from scene files on disk (this scene came from memory or the network)");
    }
    const std::filesystem::path rel(name);
    if (name.empty() || rel.is_absolute()) return fail(field, "'" + name + "' must be a relative path");
    for (const auto& part : rel) {
      if (part == "..") return fail(field, "'" + name + "' may not leave the scene's folder (no '..')");
    }
    const std::filesystem::path full = std::filesystem::path(*base_dir_) / rel;
    if (keel::Status st = read_obj_file(full.string(), full.string(), out.points, out.indices); !st) {
      return fail(field, st.error().message);
    }
    return true;
  }

  bool read_heightfield(const fb::Collider& in, const std::string& at, sim::ColliderDef& out) {
    if (in.heights() == nullptr) return fail(Field(at, "heights"), "a Heightfield needs heights");
    if (in.heights()->size() > sim::kMaxHeightfieldSamples) {
      return fail(Field(at, "heights"), "more than " + std::to_string(sim::kMaxHeightfieldSamples) + " samples");
    }
    out.rows = in.rows();
    out.columns = in.columns();
    out.cell_size = in.cell_size();
    out.heights.assign(in.heights()->begin(), in.heights()->end());
    return true;  // sizes, finiteness and the grid shape: check_with_sim
  }

  /// Every size must be finite; the ones the shape uses must also be positive.
  bool read_collider_geometry(const fb::Collider& in, const std::string& at,
                              sim::ColliderDef& out) {
    const bool round = out.shape == sim::ShapeType::Sphere || out.shape == sim::ShapeType::Capsule;
    const Field radius(at, "radius");
    if (round ? !check_positive(radius, in.radius()) : !check_finite(radius, in.radius())) {
      return false;
    }
    if (!check_non_negative(Field(at, "half_height"), in.half_height())) return false;
    const Field half_extents(at, "half_extents");
    if (!read_vec3(half_extents, in.half_extents(), sim::Vec3(0.0f), out.half_extents)) {
      return false;
    }
    if (out.shape == sim::ShapeType::Box &&
        (!check_positive(half_extents.component(".x"), out.half_extents.x) ||
         !check_positive(half_extents.component(".y"), out.half_extents.y) ||
         !check_positive(half_extents.component(".z"), out.half_extents.z))) {
      return false;
    }
    out.radius = in.radius();
    out.half_height = in.half_height();
    return true;
  }

  bool read_collider_material(const fb::Collider& in, const std::string& at,
                              sim::ColliderDef& out) {
    if (!check_non_negative(Field(at, "friction"), in.friction()) ||
        !check_non_negative(Field(at, "restitution"), in.restitution()) ||
        !check_non_negative(Field(at, "density"), in.density())) {
      return false;
    }
    out.friction = in.friction();
    // Negative: the same as friction. The sim checks a set one against friction.
    out.static_friction = in.static_friction() < 0.0f ? -1.0f : in.static_friction();
    out.restitution = in.restitution();
    out.density = in.density();
    out.is_trigger = in.is_trigger();
    out.enabled = in.enabled();
    return true;
  }

  /// A dynamic body needs a mass: given, or from a collider's density. Every collider
  /// counts, triggers and disabled ones included, as in the sim's mass computation
  /// (sim/src/body/mass.cpp); sizes were checked above, so every collider has volume.
  bool check_mass_source(const sim::BodyDef& body) {
    if (body.motion != sim::MotionType::Dynamic || body.mass > 0.0f) return true;
    for (const sim::ColliderDef& collider : body.colliders) {
      if (collider.density > 0.0f) return true;
    }
    return fail("mass",
                "a dynamic body needs mass > 0 or a collider with density > 0 "
                "(mass 0 means computed from density)");
  }

  /// The sim's own rules, so a scene that loads is a scene the world accepts.
  bool check_with_sim(const sim::BodyDef& body) {
    const keel::Status status = sim::validate_body(body);
    if (status) return true;
    error_ = source_ + ": " + status.error().message;
    return false;
  }

  bool read_spawn_points(const fb::Scene& in, sim::SceneDef& out) {
    enter_scene_level();
    if (in.spawn_points() == nullptr) return true;
    const auto& points = *in.spawn_points();
    if (points.size() > SceneLimits::kMaxSpawnPoints) {
      return fail("spawn_points", "the scene has " + std::to_string(points.size()) +
                                      " spawn points, at most " +
                                      std::to_string(SceneLimits::kMaxSpawnPoints) + " allowed");
    }
    out.spawn_points.resize(points.size());
    for (uint32_t i = 0; i < points.size(); ++i) {
      const std::string at = "spawn_points[" + std::to_string(i) + "]";
      const fb::Transform* point = points.Get(i);
      if (point == nullptr) return fail(Field(at, ""), "is null");
      if (!read_vec3(Field(at, ".position"), point->position(), sim::Vec3(0.0f),
                     out.spawn_points[i].position) ||
          !read_quat(Field(at, ".rotation"), point->rotation(), out.spawn_points[i].rotation)) {
        return false;
      }
      // Rules spawn characters here: a spawn point outside the world would be a body the
      // world refuses the moment a player joins.
      const sim::Vec3& p = out.spawn_points[i].position;
      for (int k = 0; k < 3; ++k) {
        if (std::fabs(p[k]) > sim::kMaxWorldExtent) {
          return fail(Field(at, ".position", k == 0 ? ".x" : k == 1 ? ".y" : ".z"),
                      "must be within +-100000 (got " + format_float(p[k]) + ")");
        }
      }
    }
    return true;
  }

  /// Characters name dynamic bodies of the scene, each at most once; their settings pass
  /// the sim's own check, so a scene that loads is one the world accepts.
  bool read_characters(const fb::Scene& in, sim::SceneDef& out) {
    enter_scene_level();
    if (in.characters() == nullptr) return true;
    const auto& chars = *in.characters();
    if (chars.size() > SceneLimits::kMaxCharacters) {
      return fail("characters", "the scene has " + std::to_string(chars.size()) + " characters, at most " +
                                    std::to_string(SceneLimits::kMaxCharacters) + " allowed");
    }
    std::unordered_map<uint32_t, size_t> body_of;  // id -> index, for lookups only
    for (size_t i = 0; i < out.bodies.size(); ++i) body_of.emplace(out.bodies[i].id, i);
    std::unordered_map<uint32_t, bool> is_character;
    size_t total_steps = 0;
    out.characters.resize(chars.size());
    for (uint32_t i = 0; i < chars.size(); ++i) {
      const std::string at = "characters[" + std::to_string(i) + "]";
      const fb::Character* c = chars.Get(i);
      if (c == nullptr) return fail(Field(at, ""), "is null");
      if (!c->body().has_value()) return fail(Field(at, ".body"), "is required");
      const uint32_t body = *c->body();
      auto found = body_of.find(body);
      if (found == body_of.end()) return fail(Field(at, ".body"), "names no body of the scene (" + std::to_string(body) + ")");
      if (out.bodies[found->second].motion != sim::MotionType::Dynamic) {
        return fail(Field(at, ".body"), "body " + std::to_string(body) + " is not dynamic");
      }
      if (!is_character.emplace(body, true).second) {
        return fail(Field(at, ".body"), "body " + std::to_string(body) + " already is a character");
      }
      sim::CharacterDef& def = out.characters[i];
      def.body = body;
      if (!read_character_settings(at, *c, def.settings, total_steps)) return false;
    }
    return true;
  }

  bool read_character_settings(const std::string& at, const fb::Character& c, sim::CharacterSettings& s,
                               size_t& total_steps) {
    s.slope_limit = c.slope_limit();
    s.step_height = c.step_height();
    s.push_force = c.push_force();
    s.jump_speed = c.jump_speed();
    s.air_acceleration = c.air_acceleration();
    if (c.script() != nullptr) {
      const auto& steps = *c.script();
      total_steps += steps.size();
      if (steps.size() > SceneLimits::kMaxScriptSteps || total_steps > SceneLimits::kMaxTotalScriptSteps) {
        return fail(Field(at, ".script"), "has too many steps (at most " + std::to_string(SceneLimits::kMaxScriptSteps) +
                                              " per character, " + std::to_string(SceneLimits::kMaxTotalScriptSteps) +
                                              " in the scene)");
      }
      s.script.resize(steps.size());
      for (uint32_t k = 0; k < steps.size(); ++k) {
        const fb::CharacterStep* st = steps.Get(k);
        const std::string step_at = at + ".script[" + std::to_string(k) + "]";
        if (st == nullptr) return fail(Field(step_at, ""), "is null");
        s.script[k].ticks = st->ticks();
        s.script[k].jump = st->jump();
        if (!read_vec3(Field(step_at, ".move"), st->move(), sim::Vec3(0.0f), s.script[k].move)) return false;
      }
    }
    const keel::Status status = sim::validate_character_settings(s);
    if (status) return true;
    error_ = source_ + ": " + at + ": " + status.error().message;
    return false;
  }

  // ---- joints, ragdolls, vehicles ----------------------------------------------------

  /// A sim-side error for an entry of a list. The sim's messages start with the field
  /// they are about, so this reads "FILE: joints[3].limit: lower must be <= upper ...".
  bool fail_at(const std::string& at, const keel::Status& status) {
    error_ = source_ + ": " + at + "." + status.error().message;
    return false;
  }

  bool read_transform(const std::string& at, const char* name, const fb::Transform* in, sim::Transform& out) {
    out = sim::Transform{};
    if (in == nullptr) return true;
    const std::string base = at + name;  // the field's components are appended to this
    return read_vec3(Field(base, ".position"), in->position(), sim::Vec3(0.0f), out.position) &&
           read_quat(Field(base, ".rotation"), in->rotation(), out.rotation);
  }

  bool read_limit(const std::string& at, const char* name, const fb::JointLimit* in, sim::JointLimit& out) {
    out = sim::JointLimit{};
    if (in == nullptr) return true;
    out = sim::JointLimit{true, in->lower(), in->upper()};
    if (!check_finite(Field(at, name, ".lower"), out.lower) || !check_finite(Field(at, name, ".upper"), out.upper)) {
      return false;
    }
    if (out.lower > out.upper) {
      return fail(Field(at, name), "lower must be <= upper (got " + format_float(out.lower) + " > " +
                                       format_float(out.upper) + ")");
    }
    return true;
  }

  bool read_spring(const std::string& at, const char* name, const fb::JointSpring* in, sim::JointSpring& out) {
    out = sim::JointSpring{};
    if (in == nullptr) return true;
    out = sim::JointSpring{true, in->hertz(), in->damping_ratio(), in->target()};
    return check_non_negative(Field(at, name, ".hertz"), out.hertz) &&
           check_non_negative(Field(at, name, ".damping_ratio"), out.damping_ratio) &&
           check_finite(Field(at, name, ".target"), out.target);
  }

  bool read_joint(const std::string& at, const fb::Joint& in, const std::unordered_map<uint32_t, size_t>& body_of,
                  sim::JointDef& out) {
    if (static_cast<uint8_t>(in.kind()) > static_cast<uint8_t>(fb::JointKind::MAX)) {
      return fail(Field(at, ".kind"), "is unknown (" + std::to_string(static_cast<int>(in.kind())) + ")");
    }
    out.kind = static_cast<sim::JointKind>(in.kind());
    out.body_a = in.body_a();
    out.body_b = in.body_b();
    if (out.body_a == 0) return fail(Field(at, ".body_a"), "is required (the id of a body of the scene)");
    if (body_of.count(out.body_a) == 0) {
      return fail(Field(at, ".body_a"), "names no body of the scene (" + std::to_string(out.body_a) + ")");
    }
    if (out.body_b != sim::kWorldBodyId && body_of.count(out.body_b) == 0) {
      return fail(Field(at, ".body_b"), "names no body of the scene (" + std::to_string(out.body_b) + ")");
    }
    if (out.body_a == out.body_b) {
      return fail(Field(at, ".body_b"), "joins body " + std::to_string(out.body_a) + " to itself");
    }
    if (!read_transform(at, ".frame_a", in.frame_a(), out.frame_a) ||
        !read_transform(at, ".frame_b", in.frame_b(), out.frame_b) ||
        !read_limit(at, ".limit", in.limit(), out.limit) ||
        !read_limit(at, ".steer_limit", in.steer_limit(), out.steer_limit) ||
        !read_spring(at, ".spring", in.spring(), out.spring) ||
        !read_spring(at, ".steer_spring", in.steer_spring(), out.steer_spring)) {
      return false;
    }
    if (in.motor() != nullptr) {
      out.motor = sim::JointMotor{true, in.motor()->speed(), in.motor()->max_force()};
      if (!check_finite(Field(at, ".motor.speed"), out.motor.speed) ||
          !check_non_negative(Field(at, ".motor.max_force"), out.motor.max_force)) {
        return false;
      }
    }
    out.length = in.length();
    out.cone_angle = in.cone_angle();
    out.holding_torque = in.holding_torque();
    out.break_force = in.break_force();
    out.collide_connected = in.collide_connected();
    if (!check_finite(Field(at, ".length"), out.length) || !check_non_negative(Field(at, ".cone_angle"), out.cone_angle) ||
        !check_non_negative(Field(at, ".holding_torque"), out.holding_torque) ||
        !check_non_negative(Field(at, ".break_force"), out.break_force)) {
      return false;
    }
    const keel::Status status = sim::validate_joint(out);
    return status ? true : fail_at(at, status);
  }

  /// Joints name bodies of the scene (those of ragdolls and vehicles included).
  bool read_joints(const fb::Scene& in, sim::SceneDef& out) {
    enter_scene_level();
    if (in.joints() == nullptr) return true;
    const auto& list = *in.joints();
    if (list.size() > SceneLimits::kMaxJoints) {
      return fail("joints", "the scene has " + std::to_string(list.size()) + " joints, at most " +
                                std::to_string(SceneLimits::kMaxJoints) + " allowed");
    }
    std::unordered_map<uint32_t, size_t> body_of;  // lookups only; never iterated
    body_of.reserve(out.bodies.size());
    for (size_t i = 0; i < out.bodies.size(); ++i) body_of.emplace(out.bodies[i].id, i);
    std::vector<sim::JointDef> joints(list.size());
    for (uint32_t i = 0; i < list.size(); ++i) {
      const std::string at = "joints[" + std::to_string(i) + "]";
      if (list.Get(i) == nullptr) return fail(Field(at, ""), "is null");
      if (!read_joint(at, *list.Get(i), body_of, joints[i])) return false;
    }
    // The scene's own joints come first, then those the ragdolls and vehicles brought.
    joints.insert(joints.end(), out.joints.begin(), out.joints.end());
    out.joints = std::move(joints);
    return true;
  }

  /// Adds an assembly's bodies, refusing ids the scene already uses.
  bool append_assembly(const std::string& at, const sim::Assembly& a, std::unordered_map<uint32_t, size_t>& body_of,
                       sim::SceneDef& out) {
    if (out.bodies.size() + a.bodies.size() > SceneLimits::kMaxBodies) {
      return fail(Field(at, ""), "the scene would have more than " + std::to_string(SceneLimits::kMaxBodies) + " bodies");
    }
    for (const sim::BodyDef& b : a.bodies) {
      if (!body_of.emplace(b.id, out.bodies.size()).second) {
        return fail(Field(at, ".first_id"), "its body id " + std::to_string(b.id) + " is already used");
      }
      out.bodies.push_back(b);
    }
    out.joints.insert(out.joints.end(), a.joints.begin(), a.joints.end());
    return true;
  }

  bool read_ragdoll(const std::string& at, const fb::Ragdoll& in, sim::RagdollDef& d) {
    d.first_id = in.first_id();
    d.height = in.height();
    d.mass = in.mass();
    d.holding_torque = in.holding_torque();
    d.friction = in.friction();
    if (!read_vec3(Field(at, ".position"), in.position(), sim::Vec3(0.0f), d.position) ||
        !read_quat(Field(at, ".rotation"), in.rotation(), d.rotation) ||
        !read_vec3(Field(at, ".linear_velocity"), in.linear_velocity(), sim::Vec3(0.0f), d.linear_velocity) ||
        !check_positive(Field(at, ".height"), d.height) || !check_positive(Field(at, ".mass"), d.mass) ||
        !check_non_negative(Field(at, ".holding_torque"), d.holding_torque) ||
        !check_non_negative(Field(at, ".friction"), d.friction)) {
      return false;
    }
    if (d.first_id == 0) return fail(Field(at, ".first_id"), "is required (>= 1)");
    const keel::Status status = sim::validate_ragdoll(d);
    return status ? true : fail_at(at, status);
  }

  bool read_vehicle(const std::string& at, const fb::Vehicle& in, sim::VehicleDef& d) {
    d.first_id = in.first_id();
    if (!read_vec3(Field(at, ".position"), in.position(), d.position, d.position) ||
        !read_quat(Field(at, ".rotation"), in.rotation(), d.rotation) ||
        !read_vec3(Field(at, ".half_extents"), in.half_extents(), d.half_extents, d.half_extents)) {
      return false;
    }
    d.mass = in.mass();
    d.wheel_radius = in.wheel_radius();
    d.wheel_mass = in.wheel_mass();
    d.wheel_friction = in.wheel_friction();
    d.suspension_hertz = in.suspension_hertz();
    d.suspension_damping_ratio = in.suspension_damping_ratio();
    d.suspension_travel = in.suspension_travel();
    d.max_steer = in.max_steer();
    d.drive_torque = in.drive_torque();
    d.brake_torque = in.brake_torque();
    d.max_wheel_speed = in.max_wheel_speed();
    if (d.first_id == 0) return fail(Field(at, ".first_id"), "is required (>= 1)");
    const keel::Status status = sim::validate_vehicle(d);
    return status ? true : fail_at(at, status);
  }

  bool read_assemblies(const fb::Scene& in, sim::SceneDef& out) {
    enter_scene_level();
    const size_t ragdolls = in.ragdolls() ? in.ragdolls()->size() : 0;
    const size_t vehicles = in.vehicles() ? in.vehicles()->size() : 0;
    if (ragdolls + vehicles == 0) return true;
    if (ragdolls > SceneLimits::kMaxAssemblies || vehicles > SceneLimits::kMaxAssemblies) {
      return fail(ragdolls > vehicles ? "ragdolls" : "vehicles",
                  "at most " + std::to_string(SceneLimits::kMaxAssemblies) + " allowed");
    }
    std::unordered_map<uint32_t, size_t> body_of;  // lookups only; never iterated
    for (size_t i = 0; i < out.bodies.size(); ++i) body_of.emplace(out.bodies[i].id, i);
    for (uint32_t i = 0; i < ragdolls; ++i) {
      const std::string at = "ragdolls[" + std::to_string(i) + "]";
      if (in.ragdolls()->Get(i) == nullptr) return fail(Field(at, ""), "is null");
      sim::RagdollDef d;
      if (!read_ragdoll(at, *in.ragdolls()->Get(i), d) || !append_assembly(at, sim::build_ragdoll(d), body_of, out)) {
        return false;
      }
    }
    for (uint32_t i = 0; i < vehicles; ++i) {
      const std::string at = "vehicles[" + std::to_string(i) + "]";
      if (in.vehicles()->Get(i) == nullptr) return fail(Field(at, ""), "is null");
      sim::VehicleDef d;
      if (!read_vehicle(at, *in.vehicles()->Get(i), d) || !append_assembly(at, sim::build_vehicle(d), body_of, out)) {
        return false;
      }
    }
    return true;
  }

  const std::string& source_;
  const std::string* base_dir_;  // where mesh_file names are looked up; null: files not allowed
  std::optional<size_t> body_index_;  // set while reading a body
  std::optional<uint32_t> body_id_;   // set once that body's id has been read
  std::string error_;
};

}  // namespace

keel::Expected<sim::SceneDef> read_scene(const fb::Scene& scene, const std::string& source,
                                        const std::string* base_dir) {
  return Reader(source, base_dir).read(scene);
}

}  // namespace keel::scene::detail
