// The world's internal data. Bodies and colliders live in slot arrays addressed by index;
// a free list (part of the saved state) decides which slot the next one takes, so two
// runs that add and remove the same bodies in the same order lay them out identically.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/world.h>

#include "broadphase/broadphase.h"
#include "collision/mesh.h"
#include "character/character.h"
#include "contact/contact.h"
#include "island/body_sets.h"
#include "joint/joint.h"
#include "memory/step_scratch.h"
#include "parallel/executor.h"
#include "query/world_query.h"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace keel::sim {

inline constexpr uint32_t kNullIndex = 0xffffffffu;

/// One rigid body. Poses are stored for the centre of mass (what the solver integrates)
/// and for the body origin (what users see); both are kept in step by sync_origin().
struct Body {
  bool alive = false;
  uint32_t generation = 0;
  uint32_t id = 0;  // user-facing id
  MotionType motion = MotionType::Dynamic;

  Transform origin;             // pose of the body frame
  Vec3 center{0.0f};            // centre of mass, world
  Vec3 local_center{0.0f};      // centre of mass, body frame
  Vec3 linear_velocity{0.0f};   // of the centre of mass
  Vec3 angular_velocity{0.0f};  // world frame

  float mass = 0.0f;
  float inv_mass = 0.0f;
  Mat3 inertia_local{0.0f};      // about the centre of mass, body frame
  Mat3 inv_inertia_local{0.0f};  // zero when rotation is frozen or the body is not dynamic

  float linear_damping = 0.0f;
  float angular_damping = 0.0f;
  float gravity_scale = 1.0f;
  float sleep_time = 0.0f;       // seconds at rest (see island/sleep.h)
  uint32_t island = 0xffffffffu;  // sleeping island id (lowest slot in it), none when awake
  float reach = 0.0f;            // farthest the colliders extend from the body origin
  uint32_t layer = 1;
  uint32_t collides_with = 0xffffffffu;
  uint32_t kind = 0;             // the game's label (BodyDef::kind): state, never read by a stage
  bool freeze_rotation = false;
  bool can_sleep = true;
  bool bullet = false;           // continuous collision every tick (see solver/ccd.h)
  bool sleeping = false;
  // Derived each step, never state: how far ahead (m) this body's contacts are made this
  // tick beyond kSpeculativeDistance (continuous collision), and the sweep of its bounds.
  float ccd_reach = 0.0f;
  Vec3 ccd_sweep{0.0f};
  std::vector<uint32_t> shapes;  // collider slots, in the order the body declared them
  // Derived from the joints (rebuilt on restore), never state: joint slots on this body,
  // and the body slots it must not collide with (joined without collide_connected).
  std::vector<uint32_t> joints;
  std::vector<uint32_t> no_collide;

  void sync_origin() { origin.position = center - origin.rotation * local_center; }
  /// Whether the body can move this tick: awake and dynamic, or kinematic with a velocity.
  bool can_move() const {
    if (motion == MotionType::Dynamic) return !sleeping;
    return motion == MotionType::Kinematic &&
           (linear_velocity != Vec3(0.0f) || angular_velocity != Vec3(0.0f));
  }
};

/// One collider part of a body, in the body's frame.
struct Shape {
  bool alive = false;
  uint32_t body = kNullIndex;
  ShapeType type = ShapeType::Sphere;
  Transform local;  // relative to the body origin
  float radius = 0.0f;
  float half_height = 0.0f;
  Vec3 half_extents{0.0f};
  std::shared_ptr<const ConvexHull> hull;  // hull colliders: immutable, shared by copies
  std::shared_ptr<const TriangleMesh> mesh;       // Mesh: immutable, shared
  std::shared_ptr<const HeightField> heightfield;  // Heightfield: immutable, shared
  float friction = 0.6f;         // kinetic
  float static_friction = 0.6f;  // resolved: never below friction
  float restitution = 0.0f;
  float density = 1000.0f;
  bool is_trigger = false;
  bool enabled = true;
  bool is_static = false;  // lives in the static tree
  int32_t proxy = -1;      // broadphase leaf, -1 when disabled
  AABB fat;                // the broadphase's enlarged bounds (saved: it decides pair lifetimes)
  AABB aabb;               // tight bounds (plus speculative distance) at the last refit; derived
};

/// A collider placed in world space at its body's pose (what the narrowphase, queries and
/// the character controller test against).
/// A collider's geometry with its body frame at `origin` (a query "as it was" places a
/// body where it once stood; everything else uses the body's own origin, below).
inline ShapeGeom placed_geom(const Shape& s, const Transform& origin) {
  const Transform xf = compose(origin, s.local);
  // Every field named once (no default-filled copy overwritten field by field).
  return ShapeGeom{.type = s.type,
                   .position = xf.position,
                   .rotation = glm::mat3_cast(xf.rotation),
                   .radius = s.radius,
                   .half_height = s.half_height,
                   .half_extents = s.half_extents,
                   .hull = s.hull.get(),
                   .mesh = s.mesh.get(),
                   .heightfield = s.heightfield.get(),
                   .placed_hull = nullptr};
}

inline ShapeGeom placed_geom(const Shape& s, const Body& b) { return placed_geom(s, b.origin); }

/// A body's contact outputs of the last step (derived, not state): kept apart from the
/// bodies, so clearing them every tick writes one small array rather than every body.
struct ContactOutput {
  bool supported = false;
  Vec3 support_normal{0.0f, 1.0f, 0.0f};
  Vec3 block_normal{0.0f, 1.0f, 0.0f};
};

/// What the state hash keeps of one body slot (state/world_hash.cpp): the digest of the
/// bytes only the API changes, the bytes a step moves, and the slot's digest from both.
struct BodyDigest {
  bool stale = true;  // to be made again from the slot's bytes
  bool alive = false;
  uint64_t fixed = 0;
  uint64_t digest = 0;  // little-endian
  uint8_t moving[77];   // hash_sections::kBodyMovingBytes
};
/// The same for a collider slot, whose moving bytes are its fat bounds.
struct ShapeDigest {
  bool stale = true;
  bool alive = false;
  uint64_t fixed = 0;
  uint64_t digest = 0;
  uint8_t moving[24];  // hash_sections::kShapeMovingBytes
};

/// The state hash's cache (state/world_hash.cpp): the state's section digests
/// (state/hash_sections.h) and the per-slot digests they are made from.
struct StateDigests {
  bool valid = false;          // every section but the head is current (only a dormant step since)
  bool records_valid = false;  // the slots' fixed digests are current (no API change since)
  std::vector<BodyDigest> bodies;
  std::vector<ShapeDigest> shapes;
  bool pairs_valid = false;
  uint64_t pairs_generation = 0;  // the contact set's generation the pairs' digest is of
  uint64_t sections[8] = {};      // hash_sections::Section order, little-endian
  std::vector<uint64_t> slot_digests;  // scratch: one section's slot digests
  std::vector<uint8_t> scratch;        // scratch: one slot's or section's bytes
  std::vector<uint8_t> head;           // scratch: a caller's prefix, then the world's header

  /// A change to a slot beyond its moving bytes (World::ImplPtr::keeping_slot_digests).
  void drop_body(uint32_t slot) {
    valid = false;
    if (slot < bodies.size()) bodies[slot].stale = true;
  }
  void drop_shape(uint32_t slot) {
    valid = false;
    if (slot < shapes.size()) shapes[slot].stale = true;
  }
};

/// The saved state: exactly what World::save_state writes and World::restore_state reads
/// (state/state.cpp, in this order), and nothing the world can derive. Two worlds with
/// equal states step identically; everything else in a WorldImpl is rebuilt from this
/// (WorldImpl::rebuild_caches) or is working memory. A few per-element fields inside
/// these arrays are derived too, each marked at its declaration: Body::ccd_reach,
/// ccd_sweep, joints, no_collide; Shape::proxy, aabb; a contact's manifold points and
/// bodies (recomputed from the poses and shapes); CharacterSet::warnings.
struct WorldState {
  WorldSettings settings;  // every field but `threads`, which never changes a result
  uint64_t tick = 0;
  uint32_t next_auto_id = 1u << 31;  // ids the world assigns start here

  std::vector<Body> bodies;
  std::vector<uint32_t> free_bodies;  // stack: back() is reused first
  std::vector<Shape> shapes;
  std::vector<uint32_t> free_shapes;
  ContactSet contacts;                   // pairs, point ids, impulses, sliding (in key order)
  std::vector<uint64_t> touching_pairs;  // body pairs (user ids) touching last tick
  std::vector<uint64_t> sensed_pairs;    // (trigger id, other id) overlapping last tick
  JointSet joints;
  CharacterSet characters;  // character controller components
};

/// Switches that only tests turn off, to measure what the default buys; never state, and
/// kept by a restore (they belong to the World object, as its thread count does).
struct SolverTestToggles {
  bool joint_warm_start = true;  // off: joints start each tick from zero impulse (what warm starting buys)
  bool solve_in_parts = true;    // off: every body is solved by one team (what the split into parts buys)
};

/// The step's shortcuts for a world at rest (see WorldImpl::step), derived, never state:
/// a new or restored world starts with these defaults and so takes no shortcut on its
/// first step. What each buys:
struct StepShortcuts {
  /// The API added, removed, moved or pushed a body (or a joint) since the last step.
  /// A step with nothing edited and no body able to move is "still": no fat bound can
  /// change, no contact end and no island wake, so it skips the contact passes and pays
  /// per body, not per contact.
  bool edited = true;
  /// The last step was still: a still step after it repeats the last events instead of
  /// building them again.
  bool last_step_still = false;
  /// The last step was still and left every body static or asleep: until the API edits
  /// something a step changes only the tick and repeats the events (WorldImpl::step_dormant),
  /// and the state hash patches the tick into its cached digests.
  bool dormant = false;
  /// The events are already a repeat (all Stayed / Stay): repeating them again rewrites nothing.
  bool events_repeated = false;
  /// The touching count of the last built events, for the profile of the steps that repeat them.
  uint32_t last_touching = 0;
};

/// A world inside: its state (the base), the caches derived from it, and the step's
/// context (the executor, working memory, profile). Only the state is saved; a restore
/// builds a new WorldImpl from the state bytes and rebuilds the caches from them alone.
struct WorldImpl : WorldState {
  // ----- Derived caches: rebuilt from the state (rebuild_caches), never saved -----
  std::map<uint32_t, uint32_t> id_to_slot;  // user id -> body slot (ordered: no hash order)
  BroadPhase broadphase;                    // trees over the colliders' fat bounds (Shape::fat is state)
  // Per touching pair (touching_pairs): neither body could move (lets the events reuse
  // last tick's records). Empty after a restore, which the events then read as unknown.
  std::vector<uint8_t> touching_held;
  // The contacts that have points, in key order, as the events, the solver and the
  // islands see them this tick. Most pairs of a busy world are neighbours within the
  // fattened bounds and have none; those stages walk this list.
  std::vector<uint32_t> touching_contacts;
  // The contact set's generation that list belongs to (kept through a tick's new pairs);
  // any other change to the set, a restore or a sleeping island's refreshed contacts
  // leave it behind, and the next contact pass reads every contact's count instead.
  uint64_t touching_generation = ~uint64_t(0);
  StepShortcuts shortcuts;
  // The awake bodies and the sleeping islands (island/body_sets.h): the stages walk the
  // awake set, not every body. Invalidated by any change that may add, remove or
  // re-flag a body other than the sleep stage's and a wake's; rebuilt from the flags.
  BodySets body_sets;
  // A stamp that changes whenever the set of live bodies may have changed (a body added
  // or removed, a state restored, a new world). Stamps are unique across every world of
  // the process, so equal stamps mean the same bodies: a host that describes the world to
  // clients skips its walk over every body on ticks with none.
  uint64_t membership_stamp = fresh_membership_stamp();
  static uint64_t fresh_membership_stamp();
  // The state hash's kept digests (state/world_hash.cpp): slot digests until the World is
  // reached for change other than by a step (World::ImplPtr), sections until anything
  // but a dormant step.
  mutable StateDigests digests;
  // Scene queries: how far movable colliders poke out of their fat bounds (see
  // query/world_query.cpp).
  mutable uint64_t query_slack_tick = ~uint64_t(0);
  mutable float query_slack = 0.0f;

  // ----- The last step's outputs (derived, never saved) -----
  StepProfile profile;
  std::vector<ContactOutput> contact_outputs;  // per body slot, from the last step's contacts
  std::vector<ContactEvent> events;
  std::vector<TriggerEvent> trigger_events;

  // ----- The step's context: never state, kept by a restore where it can be -----
  SolverTestToggles toggles;
  Executor executor;  // worker threads
  // Working memory (memory/step_scratch.h): the step's lists and each executor slot's
  // buffers, then the scene queries' (queries on one world never run at the same time,
  // nor beside its step, so one set serves them all).
  StepScratch scratch;
  mutable QueryScratch query_scratch;

  Body* get(BodyId id);
  const Body* get(BodyId id) const;
  uint32_t allocate_body_slot();
  uint32_t allocate_shape_slot();
  void create_shape(uint32_t body, const ColliderDef& def, std::shared_ptr<const ConvexHull> hull);
  void destroy_shape(uint32_t shape);
  void rebuild_broadphase();
  /// Rebuilds every cache from the state alone (a restore, after the state was read and
  /// checked): the id map, each contact's bodies, the joint links, the broadphase, and
  /// the manifolds of the contacts the next step will not recompute.
  void rebuild_caches();
  /// Recomputes one contact's manifold from the current poses (carrying impulses by id).
  void refresh_contact_from_poses(Contact& c, bool flatten_friction = true);

  void step();
  /// Whether the next step is a dormant one (see StepShortcuts::dormant).
  bool dormant_step_due() const { return shortcuts.dormant && !shortcuts.edited && characters.items.empty(); }
  /// A step of a dormant world (see StepShortcuts::dormant): the events repeat and the tick advances.
  void step_dormant();
};

}  // namespace keel::sim
