// Scene queries: ask a world what a ray, a moving shape or a shape at a pose would touch.
//
// Queries read the world as the last step (or the last API call) left it and never change
// it. They walk the broadphase trees, then test each candidate collider exactly. Results
// are deterministic: the closest hit wins, and equal distances go to the lower body user
// id, then to the lower collider index within that body; lists come sorted the same way.
// Every shape kind the sim has is supported (sphere, box, capsule). Non-finite input, a
// zero direction or a shape without size finds nothing. Queries on one world must not run
// concurrently with each other or with a step (they share the world's query scratch);
// queries on different worlds may.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/hull.h>
#include <keel/sim/math.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace keel::sim {

/// Which colliders a query may report.
struct QueryFilter {
  /// Layers to hit: a collider is a candidate when its body's `layer & mask` is non-zero.
  uint32_t mask = 0xffffffffu;
  /// When non-zero, also require the body to collide with this layer
  /// (`collides_with & query_layer`), so a query can ask "as a body on this layer".
  uint32_t query_layer = 0;
  bool hit_solids = true;     ///< colliders that make contacts
  bool hit_triggers = false;  ///< trigger colliders
  bool hit_static = true;     ///< colliders of static bodies
  bool hit_kinematic = true;  ///< colliders of kinematic bodies
  bool hit_dynamic = true;    ///< colliders of dynamic bodies
  BodyId exclude;             ///< a body to ignore (e.g. the one asking); invalid = none
};

/// A convex shape to cast or overlap with, centred on the pose it is given. A capsule's
/// segment runs along the pose's local +Y, `half_height` either side of the centre.
struct QueryShape {
  ShapeType type = ShapeType::Sphere;
  float radius = 0.5f;       ///< sphere, capsule
  float half_height = 0.0f;  ///< capsule
  Vec3 half_extents{0.5f};   ///< box
  std::shared_ptr<const ConvexHull> hull;  ///< hull (see build_hull)

  static QueryShape sphere(float r) { return QueryShape{ShapeType::Sphere, r, 0.0f, Vec3(0.0f), {}}; }
  static QueryShape capsule(float r, float hh) { return QueryShape{ShapeType::Capsule, r, hh, Vec3(0.0f), {}}; }
  static QueryShape box(const Vec3& he) { return QueryShape{ShapeType::Box, 0.0f, 0.0f, he, {}}; }
  static QueryShape convex(std::shared_ptr<const ConvexHull> h) {
    return QueryShape{ShapeType::Hull, 0.0f, 0.0f, Vec3(0.0f), std::move(h)};
  }
};

/// Where a ray or a cast shape first meets a collider.
struct QueryHit {
  BodyId body;                ///< the body hit
  uint32_t body_id = 0;       ///< its user id
  uint32_t collider = 0;      ///< index of the collider within the body (declaration order)
  float distance = 0.0f;      ///< along the (normalised) direction, in metres; 0 = already touching
  Vec3 point{0.0f};           ///< on the hit collider's surface, world space
  Vec3 normal{0, 1, 0};       ///< the hit surface's outward normal, world space, unit length
};

/// One body an overlap test found (each body at most once).
struct OverlapHit {
  BodyId body;
  uint32_t body_id = 0;
};

/// The closest collider a ray from `origin` along `direction` (any length > 0) meets
/// within `max_distance`. A ray that starts inside a collider hits it at distance 0 with
/// the normal facing back along the ray.
std::optional<QueryHit> raycast(const World& world, const Vec3& origin, const Vec3& direction,
                                float max_distance, const QueryFilter& filter = {});

/// Every collider the ray meets within `max_distance` (one hit per collider), closest first.
std::vector<QueryHit> raycast_all(const World& world, const Vec3& origin, const Vec3& direction,
                                  float max_distance, const QueryFilter& filter = {});

/// Moves `shape` from `start` along `direction` (rotation fixed) and returns the first
/// collider it touches within `max_distance`: the distance travelled (time of impact),
/// the contact point and the hit surface's normal. A shape that overlaps a collider at
/// `start` hits it at distance 0 (the normal then points out of that collider when the
/// two can be told apart, else back along the cast) unless the cast moves it out of that
/// overlap (or along it): a probe resting a millimetre into a wall, cast down, finds the
/// floor rather than the wall.
std::optional<QueryHit> shape_cast(const World& world, const QueryShape& shape, const Transform& start,
                                   const Vec3& direction, float max_distance, const QueryFilter& filter = {});

/// Every body one of whose colliders overlaps `shape` placed at `pose`, by user id.
std::vector<OverlapHit> overlap(const World& world, const QueryShape& shape, const Transform& pose,
                                const QueryFilter& filter = {});

/// A movable body placed where it once stood: the *_posed queries test its colliders with
/// its body frame at this pose (what BodyState::position and rotation give) instead of
/// where it is now.
struct PosedBody {
  uint32_t body_id = 0;  ///< the body's user id
  Vec3 position{0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
};

/// The queries above against the world as it was at some earlier moment (a match's lag
/// compensation): static bodies where they are; every movable (dynamic or kinematic) body
/// at its pose in `posed` when it is listed, and left out when it is not (it was not
/// there). Listed bodies no longer in the world, or static now, are skipped. The order of
/// `posed` never decides a result (ties go by user id as above). Cost: the static tree's
/// walk plus, for each listed body, a distance test of its reach sphere and then the exact
/// test of its colliders, so O(listed bodies) per query. A non-finite pose finds nothing.
std::optional<QueryHit> raycast_posed(const World& world, std::span<const PosedBody> posed, const Vec3& origin,
                                      const Vec3& direction, float max_distance, const QueryFilter& filter = {});
std::optional<QueryHit> shape_cast_posed(const World& world, std::span<const PosedBody> posed, const QueryShape& shape,
                                         const Transform& start, const Vec3& direction, float max_distance,
                                         const QueryFilter& filter = {});
std::vector<OverlapHit> overlap_posed(const World& world, std::span<const PosedBody> posed, const QueryShape& shape,
                                      const Transform& pose, const QueryFilter& filter = {});

}  // namespace keel::sim
