// Scene queries: broadphase traversal, filtering, exact tests and deterministic ordering.
#include "query/world_query.h"

#include <keel/sim/query.h>

#include "collision/geometry.h"
#include "world_access.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace keel::sim {

namespace {

uint32_t collider_index(const Body& b, uint32_t shape_slot) {
  for (uint32_t i = 0; i < b.shapes.size(); ++i) {
    if (b.shapes[i] == shape_slot) return i;
  }
  return 0;
}

// How far any movable collider may reach outside its fat bound. The broadphase refits at
// the start of a step and the solve moves bodies after it, so between steps a fast body's
// collider can poke out of its leaf; the movable tree is searched that much wider. Cached
// per tick (poses change only in step() and set_transform(), which re-fattens its leaves).
float movable_slack(const WorldImpl& w) {
  if (w.query_slack_tick == w.tick) return w.query_slack;
  float slack = 0.0f;
  for (const Shape& s : w.shapes) {
    if (!s.alive || s.proxy < 0 || s.is_static) continue;
    const AABB now = compute_shape_aabb(s, w.bodies[s.body].origin);
    const Vec3 out = glm::max(s.fat.lower - now.lower, now.upper - s.fat.upper);
    slack = std::max(slack, std::max(out.x, std::max(out.y, out.z)));
  }
  w.query_slack_tick = w.tick;
  w.query_slack = slack;
  return slack;
}

// Both trees are walked (static first), the movable one widened by the slack; the order
// candidates arrive in never decides a result, only the total order of hit_before does.
template <class Visit>
void for_each_tree(const WorldImpl& w, Visit&& visit) {
  visit(w.broadphase.static_tree(), 0.0f);
  visit(w.broadphase.movable_tree(), movable_slack(w));
}

// Calls f(world-space triangle) for every triangle of a concave collider whose bounds
// meet `box` (world space), in ascending triangle index.
template <class F>
void for_each_triangle(const Shape& s, const Transform& origin, const AABB& box, std::vector<uint32_t>& tris, F&& f) {
  const ShapeGeom g = placed_geom(s, origin);
  AABB local{Vec3(std::numeric_limits<float>::max()), Vec3(-std::numeric_limits<float>::max())};
  for (int i = 0; i < 8; ++i) {
    const Vec3 corner((i & 1) ? box.upper.x : box.lower.x, (i & 2) ? box.upper.y : box.lower.y,
                      (i & 4) ? box.upper.z : box.lower.z);
    const Vec3 l = np::to_local(g, corner);
    local = AABB{glm::min(local.lower, l), glm::max(local.upper, l)};
  }
  auto visit = [&](const auto& source) {
    source.query(local, tris);
    for (uint32_t t : tris) {
      Triangle tri = source.triangle(t);
      for (Vec3& v : tri.v) v = np::to_world(g, v);
      tri.normal = np::dir_to_world(g.rotation, tri.normal);
      f(tri);
    }
  };
  if (s.mesh) visit(*s.mesh);
  if (s.heightfield) visit(*s.heightfield);
}

// A cast against a concave collider: the earliest hit over its triangles facing the
// cast (a triangle is one-sided for queries too). A ray is tested exactly.
bool cast_concave(const WorldImpl& w, const Shape& s, const Transform& origin, const query::Core& core,
                  const Vec3& delta, query::CastHit& out) {
  const Vec3 h = core_half_size(core);
  const Vec3 c0 = query::core_center(core), c1 = c0 + delta;
  const AABB box{glm::min(c0, c1) - h, glm::max(c0, c1) + h};
  const bool ray = core.type == ShapeType::Sphere && core.radius == 0.0f;
  bool hit = false;
  for_each_triangle(s, origin, box, w.query_scratch.tris, [&](const Triangle& tri) {
    if (!(glm::dot(tri.normal, delta) < 0.0f)) return;
    query::CastHit ch;
    if (ray) {
      const float t = ray_triangle(tri, core.p0, delta, 1.0f);
      if (t < 0.0f) return;
      ch.fraction = t;
      ch.point = core.p0 + delta * t;
      ch.normal = tri.normal;
    } else if (!query::cast(core, delta, query::triangle_core(tri.v[0], tri.v[1], tri.v[2]), ch)) {
      return;
    }
    if (!hit || ch.fraction < out.fraction) out = ch;  // ties: the lower triangle
    hit = true;
  });
  return hit;
}

bool overlaps_concave(const WorldImpl& w, const Shape& s, const Transform& origin, const query::Core& core) {
  const Vec3 c = query::core_center(core), h = core_half_size(core);
  bool any = false;
  for_each_triangle(s, origin, AABB{c - h, c + h}, w.query_scratch.tris, [&](const Triangle& tri) {
    any = any || query::shapes_overlap(core, query::triangle_core(tri.v[0], tri.v[1], tri.v[2]));
  });
  return any;
}

}  // namespace

query::Core query_core(const QueryShape& shape, const Transform& pose) {
  ShapeGeom g;
  g.type = shape.type;
  g.position = pose.position;
  g.rotation = glm::mat3_cast(pose.rotation);
  g.radius = shape.radius;
  g.half_height = shape.half_height;
  g.half_extents = shape.half_extents;
  g.hull = shape.hull.get();
  return query::core_of(g);
}

Vec3 core_half_size(const query::Core& c) {
  Vec3 h = glm::abs(c.p1 - c.p0) * 0.5f;
  if (c.type == ShapeType::Box) {
    for (int i = 0; i < 3; ++i) {
      h += glm::abs(c.axes[i]) * c.half_extents[i];
    }
  }
  if (c.type == ShapeType::Hull && c.hull) {
    // A sphere around the centroid (p0) holding every vertex: cheap and rotation-free.
    float r2 = 0.0f;
    for (const Vec3& v : c.hull->vertices) r2 = std::max(r2, np::length_sq(v - c.hull->centroid));
    h += Vec3(std::sqrt(r2));
  }
  return h + Vec3(c.radius);
}

bool passes(const WorldImpl& w, uint32_t shape_slot, const QueryFilter& filter) {
  const Shape& s = w.shapes[shape_slot];
  if (!s.alive || !s.enabled) return false;
  const Body& b = w.bodies[s.body];
  if (filter.exclude.valid() && filter.exclude.index == s.body && filter.exclude.generation == b.generation) {
    return false;
  }
  if ((b.layer & filter.mask) == 0) return false;
  if (filter.query_layer != 0 && (b.collides_with & filter.query_layer) == 0) return false;
  const bool motion_ok = b.motion == MotionType::Static      ? filter.hit_static
                         : b.motion == MotionType::Kinematic ? filter.hit_kinematic
                                                             : filter.hit_dynamic;
  if (!motion_ok) return false;
  return s.is_trigger ? filter.hit_triggers : filter.hit_solids;
}

bool hit_before(const QueryHit& a, const QueryHit& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.body_id != b.body_id) return a.body_id < b.body_id;
  return a.collider < b.collider;
}

std::optional<QueryHit> cast_core(const WorldImpl& w, const query::Core& core, const Vec3& dir,
                                  float max_distance, const QueryFilter& filter, std::vector<QueryHit>* all_hits) {
  std::optional<QueryHit> best;
  const Vec3 delta = dir * max_distance;
  const Vec3 origin = query::core_center(core);
  const Vec3 inflate = core_half_size(core);
  auto visit = [&](uint32_t slot, float) -> float {
    if (!passes(w, slot, filter)) return best ? best->distance / max_distance : 1.0f;
    const Shape& s = w.shapes[slot];
    const Body& b = w.bodies[s.body];
    query::CastHit ch;
    const bool did_hit = is_concave(s.type) ? cast_concave(w, s, b.origin, core, delta, ch)
                                            : query::cast(core, delta, query::core_of(placed_geom(s, b)), ch);
    if (did_hit) {
      QueryHit h{BodyId{s.body, b.generation}, b.id, collider_index(b, slot), ch.fraction * max_distance, ch.point,
                 ch.normal};
      if (all_hits) all_hits->push_back(h);
      if (!best || hit_before(h, *best)) best = h;
    }
    // Closest-hit queries prune what lies behind the best hit; lists keep everything.
    return best && !all_hits ? best->distance / max_distance : 1.0f;
  };
  for_each_tree(w, [&](const DynamicTree& t, float slack) {
    t.ray_query(origin, delta, inflate + Vec3(slack), 1.0f, visit, w.query_scratch.ray_stack);
  });
  return best;
}

std::vector<OverlapHit> overlap_core(const WorldImpl& w, const query::Core& core, const QueryFilter& filter) {
  std::vector<OverlapHit> out;
  const Vec3 c = query::core_center(core);
  const Vec3 h = core_half_size(core);
  auto visit = [&](uint32_t slot) {
    if (!passes(w, slot, filter)) return;
    const Shape& s = w.shapes[slot];
    const Body& b = w.bodies[s.body];
    const bool hit = is_concave(s.type) ? overlaps_concave(w, s, b.origin, core)
                                        : query::shapes_overlap(core, query::core_of(placed_geom(s, b)));
    if (hit) {
      out.push_back(OverlapHit{BodyId{s.body, b.generation}, b.id});
    }
  };
  for_each_tree(w, [&](const DynamicTree& t, float slack) {
    t.query(AABB{c - h - Vec3(slack), c + h + Vec3(slack)}, visit, w.query_scratch.box_stack);
  });
  std::sort(out.begin(), out.end(), [](const OverlapHit& a, const OverlapHit& b) { return a.body_id < b.body_id; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const OverlapHit& a, const OverlapHit& b) { return a.body_id == b.body_id; }),
            out.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// Queries against posed bodies (the world as it was): the static tree as it is, then every
// listed movable body at its given pose, by brute force over the list.

namespace {

// The movable bodies of `posed` the query may meet, with the pose to test each at: listed
// ones that are still in the world and not static (static bodies are in the static tree,
// tested where they are). A body's reach sphere around its posed origin culls it first.
template <class Near, class Test>
void for_each_posed(const WorldImpl& w, std::span<const PosedBody> posed, Near&& near, Test&& test) {
  for (const PosedBody& p : posed) {
    auto it = w.id_to_slot.find(p.body_id);
    if (it == w.id_to_slot.end()) continue;  // gone since: nothing left to test
    const Body& b = w.bodies[it->second];
    if (!b.alive || b.motion == MotionType::Static) continue;
    if (!near(p.position, b.reach)) continue;
    const Transform at{p.position, p.rotation};
    for (uint32_t slot : b.shapes) test(slot, b, at);
  }
}

// Whether a sphere of `radius` at `center` comes within `reach` of the segment a..a+delta.
bool segment_near(const Vec3& a, const Vec3& delta, float radius, const Vec3& center, float reach) {
  const float len2 = glm::dot(delta, delta);
  float t = len2 > 0.0f ? glm::dot(center - a, delta) / len2 : 0.0f;
  t = std::clamp(t, 0.0f, 1.0f);
  const Vec3 d = a + delta * t - center;
  const float r = radius + reach + 1.0e-3f;  // a millimetre for rounding
  return glm::dot(d, d) <= r * r;
}

std::optional<QueryHit> cast_core_posed(const WorldImpl& w, std::span<const PosedBody> posed, const query::Core& core,
                                        const Vec3& dir, float max_distance, const QueryFilter& filter) {
  std::optional<QueryHit> best;
  const Vec3 delta = dir * max_distance;
  const Vec3 origin = query::core_center(core);
  const Vec3 inflate = core_half_size(core);
  auto test = [&](uint32_t slot, const Body& b, const Transform& at) {
    const Shape& s = w.shapes[slot];
    query::CastHit ch;
    const bool did_hit = is_concave(s.type) ? cast_concave(w, s, at, core, delta, ch)
                                            : query::cast(core, delta, query::core_of(placed_geom(s, at)), ch);
    if (!did_hit) return;
    QueryHit h{BodyId{s.body, b.generation}, b.id, collider_index(b, slot), ch.fraction * max_distance, ch.point,
               ch.normal};
    if (!best || hit_before(h, *best)) best = h;
  };
  auto visit = [&](uint32_t slot, float) -> float {
    if (passes(w, slot, filter)) test(slot, w.bodies[w.shapes[slot].body], w.bodies[w.shapes[slot].body].origin);
    return best ? best->distance / max_distance : 1.0f;
  };
  w.broadphase.static_tree().ray_query(origin, delta, inflate, 1.0f, visit, w.query_scratch.ray_stack);
  const float radius = std::sqrt(glm::dot(inflate, inflate));
  for_each_posed(
      w, posed, [&](const Vec3& c, float reach) { return segment_near(origin, delta, radius, c, reach); },
      [&](uint32_t slot, const Body& b, const Transform& at) {
        if (passes(w, slot, filter)) test(slot, b, at);
      });
  return best;
}

std::vector<OverlapHit> overlap_core_posed(const WorldImpl& w, std::span<const PosedBody> posed, const query::Core& core,
                                           const QueryFilter& filter) {
  std::vector<OverlapHit> out;
  const Vec3 c = query::core_center(core);
  const Vec3 h = core_half_size(core);
  auto test = [&](uint32_t slot, const Body& b, const Transform& at) {
    const Shape& s = w.shapes[slot];
    const bool hit = is_concave(s.type) ? overlaps_concave(w, s, at, core)
                                        : query::shapes_overlap(core, query::core_of(placed_geom(s, at)));
    if (hit) out.push_back(OverlapHit{BodyId{s.body, b.generation}, b.id});
  };
  w.broadphase.static_tree().query(
      AABB{c - h, c + h},
      [&](uint32_t slot) {
        if (passes(w, slot, filter)) test(slot, w.bodies[w.shapes[slot].body], w.bodies[w.shapes[slot].body].origin);
      },
      w.query_scratch.box_stack);
  const float radius = std::sqrt(glm::dot(h, h));
  for_each_posed(
      w, posed, [&](const Vec3& p, float reach) { return segment_near(c, Vec3(0.0f), radius, p, reach); },
      [&](uint32_t slot, const Body& b, const Transform& at) {
        if (passes(w, slot, filter)) test(slot, b, at);
      });
  std::sort(out.begin(), out.end(), [](const OverlapHit& a, const OverlapHit& b) { return a.body_id < b.body_id; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const OverlapHit& a, const OverlapHit& b) { return a.body_id == b.body_id; }),
            out.end());
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API (keel/sim/query.h)

namespace {

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// Queries take game input (aim directions, poses): anything non-finite or a shape without
// size is answered with "nothing" rather than fed to the tree walk and GJK.
bool usable(const QueryShape& shape, const Transform& pose) {
  const Quat& q = pose.rotation;
  if (!finite(pose.position) || !std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z) ||
      !std::isfinite(q.w) || !(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w > 1.0e-12f)) {
    return false;
  }
  switch (shape.type) {
    case ShapeType::Sphere: return std::isfinite(shape.radius) && shape.radius > 0.0f;
    case ShapeType::Capsule:
      return std::isfinite(shape.radius) && shape.radius > 0.0f && std::isfinite(shape.half_height) &&
             shape.half_height >= 0.0f;
    case ShapeType::Box:
      return finite(shape.half_extents) && shape.half_extents.x > 0.0f && shape.half_extents.y > 0.0f &&
             shape.half_extents.z > 0.0f;
    case ShapeType::Hull: return shape.hull != nullptr && !shape.hull->vertices.empty();
    default:
      return false;  // a query shape is convex
  }
  return false;
}

Transform normalized(const Transform& pose) { return Transform{pose.position, glm::normalize(pose.rotation)}; }

bool unit_direction(const Vec3& direction, float max_distance, Vec3& dir) {
  const float len2 = glm::dot(direction, direction);
  if (!(len2 > 0.0f) || !std::isfinite(len2) || !(max_distance >= 0.0f) || !std::isfinite(max_distance)) {
    return false;
  }
  dir = direction / std::sqrt(len2);
  return true;
}

}  // namespace

std::optional<QueryHit> raycast(const World& world, const Vec3& origin, const Vec3& direction, float max_distance,
                                const QueryFilter& filter) {
  Vec3 dir;
  if (!finite(origin) || !unit_direction(direction, max_distance, dir)) return std::nullopt;
  return cast_core(WorldAccess::impl(world), query::point_core(origin, 0.0f), dir, max_distance, filter);
}

std::vector<QueryHit> raycast_all(const World& world, const Vec3& origin, const Vec3& direction, float max_distance,
                                  const QueryFilter& filter) {
  std::vector<QueryHit> hits;
  Vec3 dir;
  if (!finite(origin) || !unit_direction(direction, max_distance, dir)) return hits;
  cast_core(WorldAccess::impl(world), query::point_core(origin, 0.0f), dir, max_distance, filter, &hits);
  std::sort(hits.begin(), hits.end(), hit_before);
  return hits;
}

std::optional<QueryHit> shape_cast(const World& world, const QueryShape& shape, const Transform& start,
                                   const Vec3& direction, float max_distance, const QueryFilter& filter) {
  Vec3 dir;
  if (!usable(shape, start) || !unit_direction(direction, max_distance, dir)) return std::nullopt;
  return cast_core(WorldAccess::impl(world), query_core(shape, normalized(start)), dir, max_distance, filter);
}

std::vector<OverlapHit> overlap(const World& world, const QueryShape& shape, const Transform& pose,
                                const QueryFilter& filter) {
  if (!usable(shape, pose)) return {};
  return overlap_core(WorldAccess::impl(world), query_core(shape, normalized(pose)), filter);
}

// Poses come from the caller (a match's history, restored from bytes): non-finite ones
// are never fed to the tests. Non-finite query input finds nothing, as above.
namespace {
bool posed_usable(std::span<const PosedBody> posed) {
  for (const PosedBody& p : posed) {
    if (!usable(QueryShape::sphere(1.0f), Transform{p.position, p.rotation})) return false;
  }
  return true;
}
}  // namespace

std::optional<QueryHit> raycast_posed(const World& world, std::span<const PosedBody> posed, const Vec3& origin,
                                      const Vec3& direction, float max_distance, const QueryFilter& filter) {
  Vec3 dir;
  if (!finite(origin) || !unit_direction(direction, max_distance, dir) || !posed_usable(posed)) return std::nullopt;
  return cast_core_posed(WorldAccess::impl(world), posed, query::point_core(origin, 0.0f), dir, max_distance, filter);
}

std::optional<QueryHit> shape_cast_posed(const World& world, std::span<const PosedBody> posed, const QueryShape& shape,
                                         const Transform& start, const Vec3& direction, float max_distance,
                                         const QueryFilter& filter) {
  Vec3 dir;
  if (!usable(shape, start) || !unit_direction(direction, max_distance, dir) || !posed_usable(posed)) {
    return std::nullopt;
  }
  return cast_core_posed(WorldAccess::impl(world), posed, query_core(shape, normalized(start)), dir, max_distance,
                         filter);
}

std::vector<OverlapHit> overlap_posed(const World& world, std::span<const PosedBody> posed, const QueryShape& shape,
                                      const Transform& pose, const QueryFilter& filter) {
  if (!usable(shape, pose) || !posed_usable(posed)) return {};
  return overlap_core_posed(WorldAccess::impl(world), posed, query_core(shape, normalized(pose)), filter);
}

}  // namespace keel::sim
