// World: the public API over WorldImpl, and the step's order (WorldImpl::step): one call
// per stage, each in a file of its name (docs/architecture.md, "One tick"):
//   ccd (ccd/ccd.cpp) -> bounds (broadphase/bounds_stage.cpp) -> contacts
//   (contact/contacts_stage.cpp) -> characters (character/controller.cpp) -> touching
//   (island/touching_stage.cpp) -> events (events/contact_events.cpp) beside the solve
//   (solver/solver.cpp, schedule.h) -> sleep (island/sleep.cpp) -> tick counter.
#include <keel/sim/world.h>

#include <keel/sim/det_math.h>
#include <keel/sim/joint.h>

#include "body/mass.h"
#include "body/validate.h"
#include "broadphase/bounds_stage.h"
#include "ccd/ccd.h"
#include "character/character.h"
#include "contact/contacts_stage.h"
#include "events/contact_events.h"
#include "island/sleep.h"
#include "island/touching_stage.h"
#include "world_impl.h"

#include "solver/solver.h"
#include "xpbd/xpbd.h"

#include <keel/sim/limits.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>

namespace keel::sim {

// ---------------------------------------------------------------------------------------
// WorldImpl: bodies, colliders and the step pipeline

Body* WorldImpl::get(BodyId id) {
  if (id.index >= bodies.size()) return nullptr;
  Body& b = bodies[id.index];
  return b.alive && b.generation == id.generation ? &b : nullptr;
}

const Body* WorldImpl::get(BodyId id) const { return const_cast<WorldImpl*>(this)->get(id); }

uint32_t WorldImpl::allocate_body_slot() {
  if (!free_bodies.empty()) {
    uint32_t slot = free_bodies.back();
    free_bodies.pop_back();
    return slot;
  }
  bodies.emplace_back();
  return uint32_t(bodies.size() - 1);
}

uint32_t WorldImpl::allocate_shape_slot() {
  if (!free_shapes.empty()) {
    uint32_t slot = free_shapes.back();
    free_shapes.pop_back();
    return slot;
  }
  shapes.emplace_back();
  return uint32_t(shapes.size() - 1);
}

void WorldImpl::create_shape(uint32_t body_slot, const ColliderDef& def, std::shared_ptr<const ConvexHull> hull) {
  uint32_t slot = allocate_shape_slot();
  Body& body = bodies[body_slot];
  Shape& s = shapes[slot];
  s = Shape{};
  s.alive = true;
  s.body = body_slot;
  s.type = def.shape;
  s.local = Transform{def.center, glm::normalize(def.rotation)};
  s.radius = def.radius;
  s.half_height = def.half_height;
  s.half_extents = def.half_extents;
  if (def.shape == ShapeType::Hull) s.hull = std::move(hull);  // built by validate_body
  if (def.shape == ShapeType::Mesh) s.mesh = build_mesh(def.points, def.indices);
  if (def.shape == ShapeType::Heightfield) {
    s.heightfield = build_heightfield(def.rows, def.columns, def.cell_size, def.heights);
  }
  s.friction = def.friction;
  s.static_friction = def.static_friction < 0.0f ? def.friction : def.static_friction;
  s.restitution = def.restitution;
  s.density = def.density;
  s.is_trigger = def.is_trigger;
  s.enabled = def.enabled;
  s.is_static = body.motion == MotionType::Static;
  s.aabb = compute_shape_aabb(s, body.origin);
  if (s.enabled) {
    s.fat = fatten(s.aabb);
    s.proxy = broadphase.add(slot, s.fat, s.is_static);
  }
  body.shapes.push_back(slot);
}

void WorldImpl::destroy_shape(uint32_t slot) {
  Shape& s = shapes[slot];
  if (s.proxy >= 0) broadphase.remove(s.proxy, s.is_static);
  broadphase.forget_moved(slot);
  contacts.remove_shape(slot);
  s = Shape{};
  free_shapes.push_back(slot);
}

void WorldImpl::rebuild_broadphase() {
  broadphase.clear();
  for (uint32_t i = 0; i < shapes.size(); ++i) {
    Shape& s = shapes[i];
    if (!s.alive) continue;
    s.aabb = compute_shape_aabb(s, bodies[s.body].origin);
    s.proxy = s.enabled ? broadphase.add(i, s.fat, s.is_static) : -1;
  }
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool any_body_can_move(const WorldImpl& w) {
  for (uint32_t slot : w.body_sets.awake()) {
    if (w.bodies[slot].can_move()) return true;
  }
  return false;
}

// Whether some body is neither static nor asleep (a still kinematic body counts: the
// solver still takes it).
bool any_body_awake(const WorldImpl& w) { return !w.body_sets.awake().empty(); }

// A step whose bodies and contact pairs (last tick's, the pass's work) are too few to
// share runs on this thread alone: the pass and the tree's chunks would be split into a
// few pieces each, and each hand-off to the other core costs more than its piece
// (docs/performance.md, "Small work on one thread"). Who computes never changes bits.
void share_only_large_steps(WorldImpl& w) {
  constexpr uint32_t kStepMinWork = 1000;
  static const uint32_t min_work = work_threshold("KEEL_STEP_MIN_WORK", kStepMinWork);
  w.executor.set_serial(uint64_t(w.contacts.items().size()) + w.bodies.size() < min_work);
}

// Times one stage of the step into its profile bucket.
template <class Fn>
void timed(double& bucket_ms, Fn&& stage) {
  const auto t0 = Clock::now();
  stage();
  bucket_ms = ms_since(t0);
}

}  // namespace

// The step as its stages, each timed into the profile bucket of its name.
void WorldImpl::step() {
  // Nothing awake and nothing edited since a still step: every stage below would find
  // nothing to do (no body to place, collide, solve or put to sleep), at a cost per body.
  if (dormant_step_due()) return step_dormant();
  const auto t0 = Clock::now();
  share_only_large_steps(*this);
  // The awake set, current: the stages below walk it instead of every body.
  current_body_sets(*this);
  // The step's working lists are the world's (memory/step_scratch.h).
  scratch.begin(executor);
  const float dt = 1.0f / float(settings.tick_rate);

  timed(profile.ccd_ms, [&] { update_ccd(*this, dt); });
  timed(profile.bounds_ms, [&] { refit_bounds(*this, scratch.escaped); });
  // A still step: no body can move and the API changed nothing since the last step. Then
  // no fat bound changed (so no contact ends), every contact is held as it is (neither
  // side can move), and nothing can wake an island: the contact passes would change
  // nothing, so a world asleep skips them and pays per body, not per contact.
  // A world with characters is never still: a sleeping character wakes itself when its
  // input or its script asks it to move, which only its tick stage can see.
  const bool any_moves = any_body_can_move(*this);
  const bool still = !shortcuts.edited && characters.items.empty() && !any_moves;
  const bool repeat_events = still && shortcuts.last_step_still;
  shortcuts.edited = false;
  timed(profile.contacts_ms, [&] { contacts_stage(*this, still, any_moves, scratch); });
  timed(profile.characters_ms, [&] {
    if (!still) update_characters(*this, dt, scratch.characters);
  });
  timed(profile.touching_ms, [&] { touching_stage(*this, still, repeat_events, scratch.contact_flags); });
  current_body_sets(*this);  // with every body the characters and the touching stage woke
  // The events run beside the solve's preparation: both only read the contacts and
  // bodies, and both are done before any body moves. (events_ms overlaps solve_ms.)
  uint32_t touching = shortcuts.last_touching;
  timed(profile.solve_ms, [&] {
    // XPBD (xpbd/) is the second solver: the events first, then its one-thread solve.
    if (settings.solver_kind == SolverKind::Xpbd) {
      timed(profile.events_ms, [&] { touching = events_stage(*this, repeat_events, scratch.events); });
      xpbd::solve_tick(*this, dt);
      return;
    }
    solve_soft_step(*this, dt, [&] {
      timed(profile.events_ms, [&] { touching = events_stage(*this, repeat_events, scratch.events); });
    });
  });
  shortcuts.last_step_still = still;
  shortcuts.last_touching = touching;
  timed(profile.sleep_ms, [&] { update_sleep(*this, dt, scratch.sleep); });
  scratch.end();
  ++tick;
  shortcuts.dormant = still && !any_body_awake(*this);

  profile.total_ms = ms_since(t0);
  profile.contact_pairs = uint32_t(contacts.items().size());
  profile.touching_pairs = touching;
}

void WorldImpl::step_dormant() {
  const auto t0 = Clock::now();
  repeat_contact_events(*this);
  shortcuts.last_step_still = true;
  ++tick;
  const double total_ms = ms_since(t0);
  const char* kernels = profile.kernels;
  profile = StepProfile{};  // every other stage is skipped: its bucket reads 0
  profile.kernels = kernels;
  profile.events_ms = total_ms;
  profile.total_ms = total_ms;
  profile.contact_pairs = uint32_t(contacts.items().size());
  profile.touching_pairs = shortcuts.last_touching;
}

// ---------------------------------------------------------------------------------------
// World: the public API

namespace {

// The farthest any collider extends from the body origin (for the sleep point speed).
float body_reach(const std::vector<ColliderDef>& colliders, const BuiltHulls& hulls) {
  float reach = 0.0f;
  for (size_t i = 0; i < colliders.size(); ++i) {
    const ColliderDef& c = colliders[i];
    float extent = 0.0f;
    switch (c.shape) {
      case ShapeType::Sphere: extent = c.radius; break;
      case ShapeType::Capsule: extent = c.half_height + c.radius; break;
      case ShapeType::Box: extent = glm::length(c.half_extents); break;
      case ShapeType::Hull:
        if (hulls[i]) {
          for (const Vec3& v : hulls[i]->vertices) extent = std::max(extent, glm::length(v));
        }
        break;
      default: break;  // meshes and heightfields are static: nothing to put to sleep
    }
    reach = std::max(reach, glm::length(c.center) + extent);
  }
  return reach;
}

}  // namespace

World::World(const WorldSettings& settings) : impl_(std::make_unique<WorldImpl>()) {
  impl_->settings = settings;
  impl_->executor.set_threads(settings.threads);
}
World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

World::ImplPtr::ImplPtr(std::unique_ptr<WorldImpl> p) : p_(std::move(p)) {}
World::ImplPtr::ImplPtr(ImplPtr&&) noexcept = default;
World::ImplPtr& World::ImplPtr::operator=(ImplPtr&&) noexcept = default;
World::ImplPtr& World::ImplPtr::operator=(std::unique_ptr<WorldImpl> p) {
  p_ = std::move(p);
  return *this;
}
World::ImplPtr::~ImplPtr() = default;

Expected<World> World::from_scene(const SceneDef& scene) {
  if (Status st = validate_settings(scene.settings); !st) return st.error();
  World world(scene.settings);
  for (const BodyDef& def : scene.bodies) {
    auto id = world.add_body(def);
    if (!id) return id.error();
  }
  for (size_t i = 0; i < scene.joints.size(); ++i) {
    auto joint = add_joint(world, scene.joints[i]);
    if (!joint) return Error{"joints[" + std::to_string(i) + "]: " + joint.error().message};
  }
  for (const CharacterDef& c : scene.characters) {
    if (Status st = add_character(world, world.find_body(c.body), c.settings); !st) {
      return Error{"character on body " + std::to_string(c.body) + ": " + st.error().message};
    }
  }
  return world;
}

const WorldSettings& World::settings() const { return impl_->settings; }

bool World::set_gravity(const Vec3& gravity) {
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(gravity[i]) || std::fabs(gravity[i]) > kMaxGravity) return false;
  }
  WorldImpl& w = impl_.keeping_slot_digests();  // settings, and bodies woken: moving bytes
  w.shortcuts.edited = true;
  w.settings.gravity = gravity;
  // Slot order: the same bodies wake in the same order everywhere.
  for (uint32_t i = 0; i < uint32_t(w.bodies.size()); ++i) {
    if (w.bodies[i].alive && w.bodies[i].motion == MotionType::Dynamic) wake_island_of(w, i);
  }
  return true;
}
void World::set_threads(uint32_t threads) {
  impl_->settings.threads = threads == 0 ? 1 : threads;
  impl_->executor.set_threads(impl_->settings.threads);
}
void World::use_worker_pool(std::shared_ptr<WorkerPool> pool) { impl_->executor.share_pool(std::move(pool)); }
std::shared_ptr<WorkerPool> World::worker_pool() const { return impl_->executor.shared_pool(); }

Expected<BodyId> World::add_body(const BodyDef& def) {
  WorldImpl& w = impl_.keeping_slot_digests();  // the slots it writes are dropped below
  BuiltHulls hulls;  // each hull collider's hull, built once for every stage below
  if (Status st = validate_body(def, &hulls); !st) return st.error();
  uint32_t user_id = def.id;
  if (user_id == kAutoBodyId) {
    while (w.id_to_slot.count(w.next_auto_id) != 0) ++w.next_auto_id;
    user_id = w.next_auto_id++;
  } else if (w.id_to_slot.count(user_id) != 0) {
    return Error{"body " + std::to_string(user_id) + ": id is already used by another body"};
  }

  w.shortcuts.edited = true;
  w.membership_stamp = WorldImpl::fresh_membership_stamp();
  w.body_sets.invalidate();
  uint32_t slot = w.allocate_body_slot();
  // A reused slot's contact outputs were another body's.
  if (slot < w.contact_outputs.size()) w.contact_outputs[slot] = ContactOutput{};
  Body& b = w.bodies[slot];
  uint32_t generation = b.generation + 1;
  b = Body{};
  b.alive = true;
  b.generation = generation;
  b.id = user_id;
  b.motion = def.motion;
  b.origin = Transform{def.position, glm::normalize(def.rotation)};
  b.linear_velocity = def.linear_velocity;
  b.angular_velocity = def.angular_velocity;
  b.linear_damping = def.linear_damping;
  b.angular_damping = def.angular_damping;
  b.gravity_scale = def.gravity_scale;
  b.freeze_rotation = def.freeze_rotation;
  b.can_sleep = def.can_sleep;
  b.bullet = def.bullet;
  b.layer = def.layer;
  b.collides_with = def.collides_with;
  b.kind = def.kind;

  if (def.motion == MotionType::Dynamic) {
    MassProperties mp = def.mass > 0.0f ? compute_mass_properties(def.colliders, def.mass, &hulls)
                                        : compute_mass_properties(def.colliders, &hulls);
    b.mass = mp.mass;
    b.inv_mass = 1.0f / mp.mass;
    b.local_center = mp.center;
    b.inertia_local = mp.inertia;
    float det = glm::determinant(mp.inertia);
    if (!def.freeze_rotation && det > 0.0f) b.inv_inertia_local = glm::inverse(mp.inertia);
  } else {
    b.linear_velocity = def.motion == MotionType::Static ? Vec3(0.0f) : def.linear_velocity;
    b.angular_velocity = def.motion == MotionType::Static ? Vec3(0.0f) : def.angular_velocity;
  }
  b.center = transform_point(b.origin, b.local_center);
  b.reach = body_reach(def.colliders, hulls);
  for (size_t i = 0; i < def.colliders.size(); ++i) w.create_shape(slot, def.colliders[i], hulls[i]);
  w.id_to_slot[user_id] = slot;
  w.digests.drop_body(slot);
  for (uint32_t s : b.shapes) w.digests.drop_shape(s);
  return BodyId{slot, generation};
}

bool World::remove_body(BodyId id) {
  WorldImpl& w = impl_.keeping_slot_digests();  // the slots it writes are dropped here
  Body* b = w.get(id);
  if (!b) return false;
  w.digests.drop_body(id.index);
  for (uint32_t s : b->shapes) w.digests.drop_shape(s);
  w.shortcuts.edited = true;
  w.membership_stamp = WorldImpl::fresh_membership_stamp();
  // Whatever rested on it falls on the next tick.
  wake_islands_touching(w, id.index);
  w.body_sets.invalidate();
  forget_character(w, id.index);
  remove_joints_of(w, id.index);
  for (uint32_t s : b->shapes) w.destroy_shape(s);
  w.id_to_slot.erase(b->id);
  uint32_t generation = b->generation;
  *b = Body{};
  b->generation = generation;
  w.free_bodies.push_back(id.index);
  return true;
}

BodyId World::find_body(uint32_t user_id) const {
  auto it = impl_->id_to_slot.find(user_id);
  if (it == impl_->id_to_slot.end()) return BodyId{};
  return BodyId{it->second, impl_->bodies[it->second].generation};
}

uint64_t WorldImpl::fresh_membership_stamp() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

uint64_t World::membership_stamp() const { return impl_->membership_stamp; }

bool World::is_valid(BodyId id) const { return impl_->get(id) != nullptr; }
uint32_t World::body_count() const { return uint32_t(impl_->id_to_slot.size()); }

std::vector<BodyId> World::bodies() const {
  std::vector<BodyId> out;
  out.reserve(impl_->id_to_slot.size());
  for (uint32_t i = 0; i < impl_->bodies.size(); ++i) {
    const Body& b = impl_->bodies[i];
    if (b.alive) out.push_back(BodyId{i, b.generation});
  }
  return out;
}

BodyState World::body_state(BodyId id) const {
  const Body* b = impl_->get(id);
  if (!b) return BodyState{};
  const auto& outputs = impl_->contact_outputs;
  const ContactOutput o = id.index < outputs.size() ? outputs[id.index] : ContactOutput{};
  return BodyState{b->id,       b->motion,           b->origin.position, b->origin.rotation, b->linear_velocity,
                   b->angular_velocity, b->sleeping, o.supported,        o.support_normal,   o.block_normal,
                   b->kind};
}

void World::set_body_kind(BodyId id, uint32_t kind) {
  WorldImpl& w = impl_.keeping_slot_digests();
  Body* b = w.get(id);
  if (!b) return;
  b->kind = kind;
  w.digests.drop_body(id.index);
}

void World::set_linear_velocity(BodyId id, const Vec3& v) {
  WorldImpl& world = impl_.keeping_slot_digests();  // moving bytes only
  Body* b = world.get(id);
  if (!b || b->motion == MotionType::Static) return;
  world.shortcuts.edited = true;
  wake_island_of(world, id.index);
  b->linear_velocity = v;
}

void World::set_angular_velocity(BodyId id, const Vec3& w) {
  WorldImpl& world = impl_.keeping_slot_digests();  // moving bytes only
  Body* b = world.get(id);
  if (!b || b->motion == MotionType::Static) return;
  world.shortcuts.edited = true;
  wake_island_of(world, id.index);
  b->angular_velocity = w;
}

void World::set_transform(BodyId id, const Transform& pose) {
  WorldImpl& w = impl_.keeping_slot_digests();  // moving bytes only: pose, fat bounds, woken islands
  Body* b = w.get(id);
  if (!b) return;
  w.shortcuts.edited = true;
  wake_island_of(w, id.index);
  wake_islands_touching(w, id.index);
  b->origin = Transform{pose.position, glm::normalize(pose.rotation)};
  b->center = transform_point(b->origin, b->local_center);
  for (uint32_t s : b->shapes) {
    Shape& shape = w.shapes[s];
    shape.aabb = compute_shape_aabb(shape, b->origin);
    if (shape.proxy < 0) continue;
    shape.fat = fatten(shape.aabb);
    w.broadphase.move(shape.proxy, s, shape.fat, shape.is_static);
  }
}

void World::move_kinematic(BodyId id, const Transform& target) {
  WorldImpl& w = impl_.keeping_slot_digests();  // moving bytes only: velocities
  Body* b = w.get(id);
  if (!b || b->motion != MotionType::Kinematic) return;
  w.shortcuts.edited = true;
  const float inv_dt = float(w.settings.tick_rate);
  const Quat rotation = glm::normalize(target.rotation);
  // The centre moves in a straight line; the solver integrates the centre's velocity.
  const Vec3 target_center = target.position + rotation * b->local_center;
  b->linear_velocity = (target_center - b->center) * inv_dt;
  // The turn that takes today's rotation to the target, as a rotation vector per tick
  // (own atan2 inside: no libm in the step).
  const Quat turn = rotation * glm::conjugate(b->origin.rotation);
  b->angular_velocity = dmath::to_rotation_vector(turn) * inv_dt;
}

void World::apply_impulse(BodyId id, const Vec3& impulse, const Vec3& world_point) {
  WorldImpl& w = impl_.keeping_slot_digests();  // moving bytes only: velocities, woken islands
  Body* b = w.get(id);
  if (!b || b->motion != MotionType::Dynamic) return;
  w.shortcuts.edited = true;
  wake_island_of(w, id.index);
  b->linear_velocity += b->inv_mass * impulse;
  Mat3 r = glm::mat3_cast(b->origin.rotation);
  Mat3 inv_i = r * b->inv_inertia_local * glm::transpose(r);
  b->angular_velocity += inv_i * glm::cross(world_point - b->center, impulse);
}

float World::mass(BodyId id) const {
  const Body* b = impl_->get(id);
  return b ? b->mass : 0.0f;
}

Mat3 World::local_inertia(BodyId id) const {
  const Body* b = impl_->get(id);
  return b ? b->inertia_local : Mat3(0.0f);
}

std::vector<ColliderDef> World::colliders(BodyId id) const {
  std::vector<ColliderDef> out;
  const Body* b = impl_->get(id);
  if (!b) return out;
  for (uint32_t slot : b->shapes) {
    const Shape& s = impl_->shapes[slot];
    ColliderDef c;
    c.shape = s.type;
    c.center = s.local.position;
    c.rotation = s.local.rotation;
    c.radius = s.radius;
    c.half_height = s.half_height;
    c.half_extents = s.half_extents;
    if (s.hull) c.points = s.hull->points;
    if (s.mesh) {
      c.points = s.mesh->vertices;
      c.indices = s.mesh->indices;
    }
    if (s.heightfield) {
      c.rows = s.heightfield->rows;
      c.columns = s.heightfield->columns;
      c.cell_size = s.heightfield->cell_size;
      c.heights = s.heightfield->heights;
    }
    c.friction = s.friction;
    c.static_friction = s.static_friction;
    c.restitution = s.restitution;
    c.density = s.density;
    c.is_trigger = s.is_trigger;
    c.enabled = s.enabled;
    out.push_back(c);
  }
  return out;
}

Vec3 World::local_center_of_mass(BodyId id) const {
  const Body* b = impl_->get(id);
  return b ? b->local_center : Vec3(0.0f);
}

void World::step() {
  // A dormant step changes nothing in the state but the tick, which the state hash
  // writes anew every time (state/world_hash.cpp): it keeps every kept digest. Any other
  // step moves bodies, sets characters' gravity scale and refits bounds but changes
  // nothing else in a body or collider slot: it keeps the slots' fixed digests and drops
  // the sections.
  WorldImpl& w = impl_.keeping_digests();
  if (w.dormant_step_due()) return w.step_dormant();
  w.digests.valid = false;
  w.step();
}
uint64_t World::tick() const { return impl_->tick; }
const StepProfile& World::profile() const { return impl_->profile; }
std::span<const ContactEvent> World::contact_events() const { return impl_->events; }
std::span<const TriggerEvent> World::trigger_events() const { return impl_->trigger_events; }

std::vector<ContactView> World::contacts() const {
  std::vector<ContactView> out;
  for (const Contact& c : impl_->contacts.items()) {
    if (c.count == 0) continue;
    ContactView v;
    v.body_a = impl_->bodies[c.body_a].id;
    v.body_b = impl_->bodies[c.body_b].id;
    v.normal = c.normal;
    v.sensor = c.sensor;
    v.count = c.count;
    for (int i = 0; i < c.count; ++i) {
      const ContactPoint& p = c.points[i];
      v.points[i] = ContactView::Point{p.point, p.depth, p.id, p.normal_impulse, p.friction_impulse};
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace keel::sim
