// keel-bullet-bench — steps a Keel scene in Bullet 3.24, the peer that Keel's speed is
// compared with (docs/performance.md).
//
//   keel-bullet-bench SCENE.json [--ticks N] [--sleep on|off] [--substeps K] [--floor-y Y]
//
// The scene is read with keel::scene::load_scene_file, exactly as keel-sim reads it, and
// rebuilt as a Bullet world: btDbvtBroadphase, btSequentialImpulseConstraintSolver (10
// iterations, Bullet's default), boxes, spheres, capsules and btConvexHullShapes (from the
// vertices Keel's build_hull keeps, centred on the hull's centroid; Bullet's default 0.04 m
// collision margin, its inertia from the hull's bounding box), a btCompoundShape for a body
// with several colliders or an offset collider, fixed steps of 1/tick_rate with K substeps
// (default 1). Each step is timed with std::chrono::steady_clock and the same timing line
// as `keel-sim run --timing` is printed; then the same statistics from the thread's CPU
// clock, and how far bodies moved and how many ended up below the floor.
//
// Matching Keel's contact rules where Bullet differs (see docs/performance.md):
// - Bullet combines friction and restitution of two bodies by product; every Bullet body
//   gets sqrt of its scene value, so two parts with friction 0.6 touch with 0.6 (in general
//   the geometric mean). A body takes the friction and restitution of its first collider.
// - Damping: Bullet's damping is a fraction per second (clamped to [0, 1]); the scene's 1/s
//   coefficient is passed as is, which agrees to first order for small values.
// - Trigger and disabled colliders are left out (Bullet has no per-child trigger).
#include <keel/scene/scene.h>
#include <keel/sim/defs.h>
#include <keel/sim/hull.h>

#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionShapes/btHeightfieldTerrainShape.h>

#include <CLI/CLI.hpp>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

namespace {

using keel::sim::BodyDef;
using keel::sim::ColliderDef;
using keel::sim::JointDef;
using keel::sim::JointKind;
using keel::sim::MotionType;
using keel::sim::SceneDef;
using keel::sim::ShapeType;

#if defined(BT_USE_DOUBLE_PRECISION)
constexpr const char* kPrecision = "float64";
#else
constexpr const char* kPrecision = "float32";
#endif

struct Options {
  std::string scene;
  uint64_t ticks = 600;
  std::string sleep = "on";
  int substeps = 1;
  double floor_y = 0.0;
};

btVector3 to_bt(const keel::sim::Vec3& v) { return btVector3(v.x, v.y, v.z); }
btQuaternion to_bt(const keel::sim::Quat& q) { return btQuaternion(q.x, q.y, q.z, q.w); }

bool is_identity(const ColliderDef& c) {
  return c.center.x == 0.0f && c.center.y == 0.0f && c.center.z == 0.0f && c.rotation.w == 1.0f &&
         c.rotation.x == 0.0f && c.rotation.y == 0.0f && c.rotation.z == 0.0f;
}

double volume(const ColliderDef& c) {
  constexpr double kPi = std::numbers::pi;
  const double r = c.radius;
  switch (c.shape) {
    case ShapeType::Sphere: return 4.0 / 3.0 * kPi * r * r * r;
    case ShapeType::Box: return 8.0 * c.half_extents.x * c.half_extents.y * c.half_extents.z;
    case ShapeType::Capsule: return kPi * r * r * (2.0 * c.half_height) + 4.0 / 3.0 * kPi * r * r * r;
    case ShapeType::Hull: {
      auto hull = keel::sim::build_hull(c.points);
      return hull ? double{(*hull)->volume} : 0.0;
    }
    default: return 0.0;  // meshes and heightfields: static only
  }
}

/// A hull collider's kept vertices relative to its centroid (empty if it does not build).
std::vector<keel::sim::Vec3> centred_hull(const ColliderDef& c, keel::sim::Vec3& centroid) {
  std::vector<keel::sim::Vec3> out;
  centroid = keel::sim::Vec3(0.0f);
  auto hull = keel::sim::build_hull(c.points);
  if (!hull) return out;
  centroid = (*hull)->centroid;
  for (const keel::sim::Vec3& v : (*hull)->vertices) out.push_back(v - centroid);
  return out;
}

/// One collider as a Bullet shape and its placement in the body frame.
struct Part {
  const ColliderDef* def;
  btCollisionShape* shape;
  btTransform local;
  double mass;
};

/// A dynamic body's bookkeeping for the end-of-run report.
struct Tracked {
  btRigidBody* body;
  btTransform com_to_origin;  // body frame (centre of mass) -> the scene's body origin
  btVector3 start_origin;
  std::vector<Part> parts;  // with `local` relative to the scene's body origin
};

class BulletScene {
 public:
  BulletScene(const SceneDef& scene, bool sleep_on)
      : dispatcher_(&config_), world_(&dispatcher_, &broadphase_, &solver_, &config_) {
    world_.setGravity(to_bt(scene.settings.gravity));
    for (const BodyDef& def : scene.bodies) add_body(def, scene.settings.gravity, sleep_on);
    for (const JointDef& j : scene.joints) add_joint(j);
  }

  ~BulletScene() {
    for (auto& c : constraints_) world_.removeConstraint(c.get());
    for (auto& body : bodies_) world_.removeRigidBody(body.get());
  }

  /// Joints Bullet has no counterpart for here (Slider, Distance, Wheel) or whose holding
  /// torque it cannot express; reported so a comparison says what it left out.
  size_t skipped_joints() const { return skipped_joints_; }
  size_t unheld_joints() const { return unheld_joints_; }

  BulletScene(const BulletScene&) = delete;
  BulletScene& operator=(const BulletScene&) = delete;

  void step(btScalar dt, int substeps) {
    move_kinematic(dt);
    world_.stepSimulation(dt, substeps, dt / static_cast<btScalar>(substeps));
  }

  const std::vector<Tracked>& dynamic_bodies() const { return tracked_; }

  /// Contact points in all manifolds after the last step (how much work the scene is).
  size_t contact_points() {
    size_t n = 0;
    for (int i = 0; i < dispatcher_.getNumManifolds(); ++i) {
      n += static_cast<size_t>(dispatcher_.getManifoldByIndexInternal(i)->getNumContacts());
    }
    return n;
  }

 private:
  btCollisionShape* make_shape(const ColliderDef& c) {
    std::unique_ptr<btCollisionShape> shape;
    switch (c.shape) {
      case ShapeType::Sphere: shape = std::make_unique<btSphereShape>(c.radius); break;
      case ShapeType::Box: shape = std::make_unique<btBoxShape>(to_bt(c.half_extents)); break;
      case ShapeType::Capsule:  // along local Y; Bullet's height is the segment length
        shape = std::make_unique<btCapsuleShape>(c.radius, 2.0f * c.half_height);
        break;
      case ShapeType::Hull: {
        keel::sim::Vec3 centroid;
        auto hull = std::make_unique<btConvexHullShape>();
        for (const keel::sim::Vec3& v : centred_hull(c, centroid)) hull->addPoint(to_bt(v), false);
        hull->recalcLocalAabb();
        shape = std::move(hull);
        break;
      }
      case ShapeType::Mesh: shape = make_mesh(c); break;
      case ShapeType::Heightfield: shape = make_heightfield(c); break;
      default: break;
    }
    shapes_.push_back(std::move(shape));
    return shapes_.back().get();
  }

  // The same triangles as Keel's mesh, in a btBvhTriangleMeshShape (Bullet's own BVH).
  std::unique_ptr<btCollisionShape> make_mesh(const ColliderDef& c) {
    auto data = std::make_unique<MeshData>();
    for (const keel::sim::Vec3& p : c.points) data->vertices.insert(data->vertices.end(), {p.x, p.y, p.z});
    data->indices.assign(c.indices.begin(), c.indices.end());
    data->array = std::make_unique<btTriangleIndexVertexArray>(
        static_cast<int>(c.indices.size() / 3), data->indices.data(), 3 * static_cast<int>(sizeof(int)),
        static_cast<int>(c.points.size()), data->vertices.data(), 3 * static_cast<int>(sizeof(btScalar)));
    auto shape = std::make_unique<btBvhTriangleMeshShape>(data->array.get(), true);
    meshes_.push_back(std::move(data));
    return shape;
  }

  // Bullet centres a heightfield on its bounds; Keel's grid starts at its local origin, so
  // the terrain sits in a compound, shifted by half its extent.
  std::unique_ptr<btCollisionShape> make_heightfield(const ColliderDef& c) {
    auto data = std::make_unique<MeshData>();
    data->heights.assign(c.heights.begin(), c.heights.end());
    const auto [lo, hi] = std::minmax_element(c.heights.begin(), c.heights.end());
    auto terrain = std::make_unique<btHeightfieldTerrainShape>(
        static_cast<int>(c.columns), static_cast<int>(c.rows), data->heights.data(), btScalar(1), *lo, *hi, 1,
        PHY_FLOAT, false);
    terrain->setLocalScaling(btVector3(c.cell_size, 1, c.cell_size));
    auto compound = std::make_unique<btCompoundShape>();
    const btVector3 mid(0.5f * c.cell_size * float(c.columns - 1), 0.5f * (*lo + *hi),
                        0.5f * c.cell_size * float(c.rows - 1));
    compound->addChildShape(btTransform(btQuaternion::getIdentity(), mid), terrain.get());
    shapes_.push_back(std::move(terrain));
    meshes_.push_back(std::move(data));
    return compound;
  }

  void add_body(const BodyDef& def, const keel::sim::Vec3& gravity, bool sleep_on) {
    std::vector<Part> parts;
    for (const ColliderDef& c : def.colliders) {
      if (!c.enabled || c.is_trigger) continue;
      btTransform local(to_bt(c.rotation), to_bt(c.center));
      if (c.shape == ShapeType::Hull) {  // the Bullet shape is centred on the hull's centroid
        keel::sim::Vec3 centroid;
        centred_hull(c, centroid);
        local = local * btTransform(btQuaternion::getIdentity(), to_bt(centroid));
      }
      parts.push_back({&c, make_shape(c), local, c.density * volume(c)});
    }
    if (parts.empty()) return;
    const bool dynamic = def.motion == MotionType::Dynamic;
    double total = 0.0;
    for (const Part& p : parts) total += p.mass;
    const double mass = !dynamic ? 0.0 : (def.mass > 0.0f ? double{def.mass} : total);
    if (dynamic && total > 0.0) {  // an explicit mass is shared in proportion to volume x density
      for (Part& p : parts) p.mass *= mass / total;
    }

    // The Bullet body's frame must be its centre of mass with principal inertia axes.
    btCollisionShape* shape = nullptr;
    btTransform principal = btTransform::getIdentity();
    btVector3 inertia(0, 0, 0);
    if (parts.size() == 1 && is_identity(*parts[0].def)) {
      shape = parts[0].shape;
      principal = parts[0].local;  // a hull's centroid offset; identity otherwise
      if (dynamic) shape->calculateLocalInertia(static_cast<btScalar>(mass), inertia);
    } else {
      auto probe = std::make_unique<btCompoundShape>();
      std::vector<btScalar> masses;
      for (const Part& p : parts) {
        probe->addChildShape(p.local, p.shape);
        masses.push_back(static_cast<btScalar>(p.mass));
      }
      if (dynamic) probe->calculatePrincipalAxisTransform(masses.data(), principal, inertia);
      auto compound = std::make_unique<btCompoundShape>();
      for (const Part& p : parts) compound->addChildShape(principal.inverse() * p.local, p.shape);
      shape = compound.get();
      shapes_.push_back(std::move(compound));
    }
    if (def.freeze_rotation) inertia.setZero();

    const btTransform origin(to_bt(def.rotation), to_bt(def.position));
    auto state = std::make_unique<btDefaultMotionState>(origin * principal);
    btRigidBody::btRigidBodyConstructionInfo info(static_cast<btScalar>(mass), state.get(), shape, inertia);
    const ColliderDef& first = *parts[0].def;
    info.m_friction = std::sqrt(static_cast<btScalar>(first.friction));
    info.m_restitution = std::sqrt(static_cast<btScalar>(first.restitution));
    info.m_linearDamping = std::min<btScalar>(def.linear_damping, 1);
    info.m_angularDamping = std::min<btScalar>(def.angular_damping, 1);
    auto body = std::make_unique<btRigidBody>(info);
    if (def.motion == MotionType::Kinematic) {
      body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
      body->setActivationState(DISABLE_DEACTIVATION);
      kinematic_.push_back({body.get(), to_bt(def.linear_velocity), to_bt(def.angular_velocity)});
    }
    if (dynamic) {
      body->setLinearVelocity(to_bt(def.linear_velocity));
      body->setAngularVelocity(to_bt(def.angular_velocity));
      if (def.freeze_rotation) body->setAngularFactor(0);
      if (!sleep_on || !def.can_sleep) body->setActivationState(DISABLE_DEACTIVATION);
      if (def.gravity_scale != 1.0f) body->setFlags(body->getFlags() | BT_DISABLE_WORLD_GRAVITY);
    }
    world_.addRigidBody(body.get(), static_cast<int>(def.layer), static_cast<int>(def.collides_with));
    if (dynamic && def.gravity_scale != 1.0f) body->setGravity(to_bt(gravity * def.gravity_scale));
    if (dynamic) {
      tracked_.push_back({body.get(), principal.inverse(), origin.getOrigin(), parts});
    }
    bodies_by_id_[def.id] = Jointable{body.get(), principal.inverse()};
    states_.push_back(std::move(state));
    bodies_.push_back(std::move(body));
  }

  /// A Keel joint as a Bullet constraint. Keel's body B (the reference) is Bullet's body A,
  /// so Bullet's angles are those of Keel's A in B, as Keel measures them. Ball joints
  /// become btConeTwistConstraint (twist about frame X, as in Keel: a circular cone of
  /// `cone_angle` and a symmetric twist span); hinges become btHingeConstraint (whose
  /// axis is the frame's Z: the frames are turned so that Z lies on Keel's X); welds
  /// btFixedConstraint. Bodies joined do not collide, as in Keel.
  void add_joint(const JointDef& j) {
    auto a = bodies_by_id_.find(j.body_a);
    if (a == bodies_by_id_.end()) return;
    btRigidBody* keel_a = a->second.body;
    btRigidBody* keel_b = &btTypedConstraint::getFixedBody();
    btTransform frame_b = btTransform(to_bt(j.frame_b.rotation), to_bt(j.frame_b.position));
    if (j.body_b != keel::sim::kWorldBodyId) {
      auto b = bodies_by_id_.find(j.body_b);
      if (b == bodies_by_id_.end()) return;
      keel_b = b->second.body;
      frame_b = b->second.com_to_origin * frame_b;
    }
    const btTransform frame_a = a->second.com_to_origin * btTransform(to_bt(j.frame_a.rotation), to_bt(j.frame_a.position));
    if (j.holding_torque > 0.0f) ++unheld_joints_;
    std::unique_ptr<btTypedConstraint> c;
    switch (j.kind) {
      case JointKind::Ball: {
        auto cone = std::make_unique<btConeTwistConstraint>(*keel_b, *keel_a, frame_b, frame_a);
        const btScalar swing = j.cone_angle > 0.0f ? j.cone_angle : btScalar(SIMD_PI);
        const btScalar twist = j.limit.enabled ? std::max(std::abs(j.limit.lower), std::abs(j.limit.upper)) : SIMD_PI;
        cone->setLimit(swing, swing, twist);
        c = std::move(cone);
        break;
      }
      case JointKind::Hinge: {
        // Bullet's hinge turns about the frame's Z; Keel's about its X.
        const btTransform z_to_x(btQuaternion(btVector3(0, 1, 0), SIMD_HALF_PI));
        auto hinge = std::make_unique<btHingeConstraint>(*keel_b, *keel_a, frame_b * z_to_x, frame_a * z_to_x);
        if (j.limit.enabled) hinge->setLimit(j.limit.lower, j.limit.upper);
        c = std::move(hinge);
        break;
      }
      case JointKind::Fixed: c = std::make_unique<btFixedConstraint>(*keel_b, *keel_a, frame_b, frame_a); break;
      default: ++skipped_joints_; return;
    }
    world_.addConstraint(c.get(), !j.collide_connected);
    constraints_.push_back(std::move(c));
  }

  void move_kinematic(btScalar dt) {
    for (Kinematic& k : kinematic_) {
      btTransform next;
      btTransformUtil::integrateTransform(k.body->getWorldTransform(), k.linear, k.angular, dt, next);
      k.body->getMotionState()->setWorldTransform(next);
      k.body->setLinearVelocity(k.linear);
      k.body->setAngularVelocity(k.angular);
    }
  }

  struct Kinematic {
    btRigidBody* body;
    btVector3 linear;
    btVector3 angular;
  };

  btDefaultCollisionConfiguration config_;
  btCollisionDispatcher dispatcher_;
  btDbvtBroadphase broadphase_;
  btSequentialImpulseConstraintSolver solver_;
  btDiscreteDynamicsWorld world_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  struct MeshData {
    std::vector<btScalar> vertices;
    std::vector<int> indices;
    std::vector<float> heights;
    std::unique_ptr<btTriangleIndexVertexArray> array;
  };
  std::vector<std::unique_ptr<MeshData>> meshes_;  // storage Bullet's shapes point into
  std::vector<std::unique_ptr<btDefaultMotionState>> states_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<Kinematic> kinematic_;
  std::vector<Tracked> tracked_;
  struct Jointable {
    btRigidBody* body;
    btTransform com_to_origin;  // the scene's body frame -> Bullet's centre-of-mass frame
  };
  std::map<uint32_t, Jointable> bodies_by_id_;
  std::vector<std::unique_ptr<btTypedConstraint>> constraints_;
  size_t skipped_joints_ = 0;
  size_t unheld_joints_ = 0;
};

/// Lowest world-space y of a collider's exact geometry (not Bullet's margin-padded AABB).
double lowest_y(const Part& part, const btTransform& body_origin) {
  const btTransform t = body_origin * part.local;
  const btMatrix3x3& r = t.getBasis();
  const double cy = t.getOrigin().y();
  const ColliderDef& c = *part.def;
  switch (c.shape) {
    case ShapeType::Sphere: return cy - c.radius;
    case ShapeType::Box:
      return cy - (std::fabs(r[1][0]) * c.half_extents.x + std::fabs(r[1][1]) * c.half_extents.y +
                   std::fabs(r[1][2]) * c.half_extents.z);
    case ShapeType::Capsule: return cy - std::fabs(r[1][1]) * c.half_height - c.radius;
    case ShapeType::Hull: {
      keel::sim::Vec3 centroid;
      double low = cy;
      for (const keel::sim::Vec3& v : centred_hull(c, centroid)) low = std::min<double>(low, (t * to_bt(v)).y());
      return low;
    }
    default: return cy;
  }
}

double percentile(const std::vector<double>& sorted, double p) {  // as keel-sim computes it
  if (sorted.empty()) return 0.0;
  const size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

struct Summary {
  double mean = 0.0, p50 = 0.0, p95 = 0.0, max = 0.0;
};

Summary summarise(const std::vector<double>& values) {
  Summary out;
  if (values.empty()) return out;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0.0;
  for (double v : values) sum += v;
  out.mean = sum / static_cast<double>(values.size());
  out.p50 = percentile(sorted, 0.5);
  out.p95 = percentile(sorted, 0.95);
  out.max = sorted.back();
  return out;
}

/// CPU time consumed by this thread, in milliseconds.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

int run(const Options& o) {
  keel::Expected<SceneDef> loaded = keel::scene::load_scene_file(o.scene);
  if (!loaded) {
    std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
    return 1;
  }
  const SceneDef& scene = *loaded;
  const bool sleep_on = o.sleep == "on";
  BulletScene world(scene, sleep_on);
  const btScalar dt = btScalar(1) / static_cast<btScalar>(scene.settings.tick_rate);
  std::printf("bullet 3.24 precision=%s scene=%s bodies=%zu tick_rate=%u ticks=%llu sleep=%s substeps=%d\n",
              kPrecision, scene.name.c_str(), scene.bodies.size(), scene.settings.tick_rate,
              static_cast<unsigned long long>(o.ticks), o.sleep.c_str(), o.substeps);
  if (!scene.joints.empty()) {
    std::printf("joints=%zu skipped=%zu without_holding_torque=%zu\n", scene.joints.size(), world.skipped_joints(),
                world.unheld_joints());
  }
  std::fflush(stdout);

  const bool progress = isatty(STDERR_FILENO) != 0;
  std::vector<double> ms, cpu_ms;
  ms.reserve(o.ticks);
  cpu_ms.reserve(o.ticks);
  for (uint64_t tick = 1; tick <= o.ticks; ++tick) {
    const double c0 = thread_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    world.step(dt, o.substeps);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu_ms.push_back(thread_cpu_ms() - c0);
    if (progress && (tick % 30 == 0 || tick == o.ticks)) {
      std::fprintf(stderr, "\rtick %llu/%llu", static_cast<unsigned long long>(tick),
                   static_cast<unsigned long long>(o.ticks));
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");

  const Summary wall = summarise(ms), cpu = summarise(cpu_ms);
  std::printf("timing ticks=%zu threads=1 step_ms_mean=%.4f step_ms_p50=%.4f step_ms_p95=%.4f step_ms_max=%.4f\n",
              ms.size(), wall.mean, wall.p50, wall.p95, wall.max);
  // The same from the thread's CPU clock: time the step actually ran, without the time the
  // thread waited for a CPU on a busy machine.
  std::printf("cpu ticks=%zu step_cpu_ms_mean=%.4f step_cpu_ms_p50=%.4f step_cpu_ms_p95=%.4f step_cpu_ms_max=%.4f\n",
              cpu_ms.size(), cpu.mean, cpu.p50, cpu.p95, cpu.max);

  // Where the bodies went: the largest distance of a body's origin from where it started,
  // the lowest point of any body, and how many bodies reach more than 5 cm below the floor
  // top (sunk in or fell through) or have their centre of mass below it (fell through).
  double max_disp = 0.0, min_y = 1e300;
  size_t below = 0, centre_below = 0, awake = 0;
  for (const Tracked& t : world.dynamic_bodies()) {
    const btTransform origin = t.body->getWorldTransform() * t.com_to_origin;
    max_disp = std::max(max_disp, double{(origin.getOrigin() - t.start_origin).length()});
    double low = 1e300;
    for (const Part& p : t.parts) low = std::min(low, lowest_y(p, origin));
    min_y = std::min(min_y, low);
    if (low < o.floor_y - 0.05) ++below;
    if (t.body->getWorldTransform().getOrigin().y() < o.floor_y) ++centre_below;  // centre of mass
    if (t.body->isActive()) ++awake;
  }
  std::printf("bodies dynamic=%zu awake=%zu contact_points=%zu max_displacement_m=%.4f min_y_m=%.4f "
              "below_floor=%zu centre_below_floor=%zu\n",
              world.dynamic_bodies().size(), awake, world.contact_points(), max_disp,
              world.dynamic_bodies().empty() ? 0.0 : min_y, below, centre_below);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"keel-bullet-bench: step a Keel scene in Bullet 3.24 and time every step"};
  Options o;
  app.add_option("scene", o.scene, "scene file (JSON or FlatBuffers binary)")->required()->check(CLI::ExistingFile);
  app.add_option("--ticks", o.ticks, "ticks to step (default 600)")->check(CLI::Range(uint64_t(1), uint64_t(1) << 32));
  app.add_option("--sleep", o.sleep, "let resting bodies sleep (on, Bullet's default) or keep all awake")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--substeps", o.substeps, "Bullet steps per tick (default 1)")->check(CLI::Range(1, 64));
  app.add_option("--floor-y", o.floor_y, "height of the floor's top for the below-floor count (default 0)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run(o);
}
