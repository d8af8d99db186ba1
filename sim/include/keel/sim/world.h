// keel::sim::World — a deterministic rigid-body world stepped at a fixed tick.
//
// Same inputs, same bits: the world's full state serialises to canonical bytes
// (save_state), restores from them (restore_state), and hashes them (hash: the state
// hash of keel/sim/state_hash.h, sections of XXH3-64 digests).
// Restoring at tick T and stepping k ticks gives the same hash as the uninterrupted run
// at T+k. See docs/determinism.md.
#pragma once

#include <keel/sim/defs.h>
#include <keel/base/expected.h>
#include <keel/sim/math.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace keel::sim {

/// A generational handle to a body: `index` is the body's slot, `generation` changes
/// each time the slot is reused, so a stale handle is detected rather than aliased.
struct BodyId {
  uint32_t index = 0xffffffffu;
  uint32_t generation = 0;

  bool valid() const { return index != 0xffffffffu; }
  friend bool operator==(const BodyId&, const BodyId&) = default;
};

/// A body's pose and motion as game code reads it.
struct BodyState {
  uint32_t id = 0;  ///< the user-facing id (BodyDef::id)
  MotionType motion = MotionType::Dynamic;
  Vec3 position{0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  Vec3 linear_velocity{0.0f};
  Vec3 angular_velocity{0.0f};
  bool sleeping = false;
  // Written each tick by the step (world up when nothing touched the body):
  bool supported = false;       ///< a non-trigger contact touched it this tick
  Vec3 support_normal{0, 1, 0};  ///< the most upward contact normal acting on it
  Vec3 block_normal{0, 1, 0};    ///< the most horizontal contact normal acting on it
  uint32_t kind = 0;             ///< the game's label (BodyDef::kind), 0 = none
};

/// A body entering, staying in or leaving a trigger collider. A pair of triggers gives one
/// event per trigger. A trigger senses dynamic and kinematic bodies, never static ones.
struct TriggerEvent {
  enum class Kind : uint8_t { Enter = 0, Stay = 1, Exit = 2 };
  Kind kind = Kind::Enter;
  uint32_t trigger = 0;  ///< user id of the body wearing the trigger collider
  uint32_t other = 0;    ///< user id of the body it senses
};

/// A change in whether two bodies touch, reported after the step that saw it.
struct ContactEvent {
  enum class Kind : uint8_t { Began = 0, Stayed = 1, Ended = 2 };
  Kind kind = Kind::Began;
  uint32_t body_a = 0;     ///< user id, always the lower of the two
  uint32_t body_b = 0;     ///< user id
  Vec3 point{0.0f};        ///< first contact point (Began, Stayed)
  Vec3 normal{0.0f};       ///< from body_a to body_b (Began, Stayed)
  float approach_speed = 0.0f;  ///< closing speed along the normal before the solve (Began, Stayed)
};

/// Time spent in each stage of the last step, in milliseconds. Some work runs beside
/// other work and is counted with it: the broadphase tree updates and new-pair search
/// run beside the contact pass (narrowphase), the contact events beside the solve's
/// preparation (solve).
struct StepProfile {
  // One bucket per stage of World::step, named as the stage (docs/sim.md, "The step").
  double ccd_ms = 0;            ///< continuous-collision sweeps of fast bodies
  double bounds_ms = 0;         ///< collider bounds refit
  double contacts_ms = 0;       ///< the tree and new pairs beside the contact pass, then the new contacts
  double characters_ms = 0;     ///< character controllers' tick
  double touching_ms = 0;       ///< waking touched islands, the touching list
  double events_ms = 0;         ///< contact and trigger events (beside the solve's preparation)
  double solve_ms = 0;          ///< the solver's schedule, events_ms overlapping it
  double sleep_ms = 0;          ///< islands put to sleep
  double total_ms = 0;
  uint32_t contact_pairs = 0;   ///< pairs whose bounds overlap
  uint32_t touching_pairs = 0;  ///< pairs with at least one manifold point
  uint32_t solve_parts = 0;     ///< parts of the solve each run whole by one thread
  uint32_t team_bodies = 0;     ///< bodies solved colour by colour by all threads together
  const char* kernels = "";     ///< the contact kernels' instruction set: "avx" or "sse2" (same bits)
};

/// One touching contact as the solver holds it (read-only view, for dumps and tools).
struct ContactView {
  uint32_t body_a = 0;  ///< user id of the body wearing the lower collider slot
  uint32_t body_b = 0;
  Vec3 normal{0.0f};    ///< from body_a to body_b
  bool sensor = false;  ///< a trigger pair (never solved)
  struct Point {
    Vec3 point{0.0f};
    float depth = 0.0f;
    uint32_t feature = 0;
    float normal_impulse = 0.0f;
    Vec3 friction_impulse{0.0f};  ///< world vector
  };
  int count = 0;
  Point points[4];
};

/// A body whose pose or velocity a step left unusable (World::first_non_finite_body).
struct BodyFault {
  uint32_t body = 0;       ///< user id
  const char* field = "";  ///< "position.x", "rotation.w", "linear_velocity.y", "angular_velocity.z", ...
  float value = 0.0f;      ///< the offending component (NaN, an infinity, or beyond the limit)
};

struct WorldImpl;
struct WorldAccess;
class WorkerPool;

class World {
 public:
  explicit World(const WorldSettings& settings = {});
  ~World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  /// Builds a world from a scene description; fails on the first invalid body.
  static Expected<World> from_scene(const SceneDef& scene);

  const WorldSettings& settings() const;
  /// Changes the world's gravity (m/s^2) from the next step on and wakes every dynamic
  /// body, so resting bodies feel the change. The gravity is part of the state (saved,
  /// hashed, restored). Returns false and changes nothing for a component that is not
  /// finite or beyond kMaxGravity (keel/sim/limits.h).
  bool set_gravity(const Vec3& gravity);
  /// Changes the worker thread count; never changes results. The world steps on threads
  /// of its own from then on (leaving a pool handed in by use_worker_pool).
  void set_threads(uint32_t threads);
  /// Steps on `pool`'s threads, which the host may share between many worlds stepped at
  /// the same time (keel/sim/worker_pool.h); null: on threads of the world's own again, as
  /// many as settings().threads. Kept by restore_state. Never changes results. Call
  /// between steps.
  void use_worker_pool(std::shared_ptr<WorkerPool> pool);
  /// The pool handed in by use_worker_pool, or null while the world uses its own threads.
  std::shared_ptr<WorkerPool> worker_pool() const;

  /// Adds a body. Fails (with a message naming the body id and the field) on a
  /// duplicate id, a dynamic body with no mass, or invalid collider geometry.
  Expected<BodyId> add_body(const BodyDef& def);
  /// Removes a body and its contacts. Returns false for a stale or invalid handle.
  bool remove_body(BodyId id);
  /// Looks a body up by its user id; returns an invalid handle when absent.
  BodyId find_body(uint32_t user_id) const;
  bool is_valid(BodyId id) const;
  uint32_t body_count() const;
  /// Handles of every live body, in slot order (the world's deterministic order).
  std::vector<BodyId> bodies() const;
  /// Changes whenever the set of live bodies may have changed (add_body, remove_body,
  /// restore_state); unique across all worlds of the process, so a caller that saw a
  /// stamp before knows the same bodies are there. Never 0, never state.
  uint64_t membership_stamp() const;

  BodyState body_state(BodyId id) const;
  /// Relabels a body (BodyDef::kind); ignored for an invalid handle.
  void set_body_kind(BodyId id, uint32_t kind);
  void set_linear_velocity(BodyId id, const Vec3& v);
  void set_angular_velocity(BodyId id, const Vec3& w);
  /// Sets a body's pose directly (teleport). For kinematic bodies prefer velocities.
  void set_transform(BodyId id, const Transform& pose);
  /// Drives a kinematic body to `target` (the body origin's pose) by the end of the next
  /// tick: sets the linear and angular velocities that take it there in one tick (the
  /// shorter way round), so what it touches is carried rather than teleported. The
  /// velocities stay until changed: call it every tick to follow a path. Ignored for
  /// other motion types.
  void move_kinematic(BodyId id, const Transform& target);
  /// Applies an impulse (N·s) at a world point.
  void apply_impulse(BodyId id, const Vec3& impulse, const Vec3& world_point);
  float mass(BodyId id) const;
  /// Inertia tensor about the centre of mass in the body's frame.
  Mat3 local_inertia(BodyId id) const;
  /// Centre of mass in the body's frame.
  Vec3 local_center_of_mass(BodyId id) const;
  /// The body's colliders in declaration order (rotations normalised), whoever created it:
  /// a viewer draws bodies that game rules spawned from this. Empty for an invalid handle.
  std::vector<ColliderDef> colliders(BodyId id) const;

  /// Advances the world by one tick (1 / tick_rate seconds).
  void step();
  /// The first body, in slot order, whose position, rotation, linear or angular velocity
  /// has a component that is not finite or is beyond kMaxStateMagnitude
  /// (keel/sim/limits.h); nullopt when there is none. Read-only (the state and its hash
  /// are untouched) and cheap: a few compares per body, and sleeping bodies are skipped
  /// (their state does not change while they sleep). A host calls it after each step to
  /// stop a world that went wrong before its numbers reach anyone.
  std::optional<BodyFault> first_non_finite_body() const;
  /// Ticks stepped since the world was created (or since the state it was restored from).
  uint64_t tick() const;
  const StepProfile& profile() const;
  /// Contact events of the last step, ordered by (body_a, body_b). Began on the first
  /// tick a pair touches, Stayed on each later tick it still does, Ended on the first
  /// tick it does not (also when one of the bodies was removed: the event names it).
  std::span<const ContactEvent> contact_events() const;
  /// Every contact with at least one point, in the solver's (pair-key) order.
  std::vector<ContactView> contacts() const;
  /// Trigger events of the last step, ordered by (trigger, other).
  std::span<const TriggerEvent> trigger_events() const;

  /// The complete state as canonical bytes: little-endian, field by field, no padding,
  /// independent of capacities and memory layout.
  std::vector<uint8_t> save_state() const;
  /// Appends the canonical state to `out` (lets a caller frame it without a copy).
  void append_state(std::vector<uint8_t>& out) const;
  /// Replaces this world's entire state with one produced by save_state().
  Status restore_state(std::span<const uint8_t> bytes);
  /// The state hash (keel/sim/state_hash.h) of the canonical state: state_hash(save_state()).
  uint64_t hash() const;
  /// state_hash of `prefix` followed by the canonical state, without the copy: what a
  /// caller that frames the world's state after its own bytes (Match) reports. Bodies and
  /// colliders that did not change since the last call are not hashed again (while the
  /// world is dormant, only the tick changes).
  uint64_t hash_after(std::span<const uint8_t> prefix) const;

 private:
  friend struct WorldAccess;  // queries and the character API (sim/src/world_access.h)
  /// The world's data. Reaching it through a non-const World marks the cached state
  /// digests stale, so every method that can change the state drops them without
  /// having to remember to; const methods never change the state.
  class ImplPtr {
   public:
    explicit ImplPtr(std::unique_ptr<WorldImpl> p);
    ImplPtr(ImplPtr&&) noexcept;
    ImplPtr& operator=(ImplPtr&&) noexcept;
    ImplPtr& operator=(std::unique_ptr<WorldImpl> p);
    ~ImplPtr();
    WorldImpl* operator->() {
      mark_changed();
      return p_.get();
    }
    const WorldImpl* operator->() const { return p_.get(); }
    WorldImpl& operator*() {
      mark_changed();
      return *p_;
    }
    const WorldImpl& operator*() const { return *p_; }
    /// Mutable access that keeps the digests: only for a step (World::step), which
    /// drops what it may change itself.
    WorldImpl& keeping_digests() { return *p_; }
    /// Mutable access that keeps the body and collider slots' digests: for a change that
    /// writes only what the hash reads anew every time (a slot's moving bytes, settings,
    /// contacts, joints, characters) or that drops the slots it writes itself
    /// (StateDigests::drop_body, drop_shape).
    WorldImpl& keeping_slot_digests();

   private:
    void mark_changed();
    std::unique_ptr<WorldImpl> p_;
  };
  ImplPtr impl_;
};

}  // namespace keel::sim
