#include "broadphase/broadphase.h"

#include "parallel/executor.h"
#include "world_impl.h"

#include <algorithm>
#include <cassert>

namespace keel::sim {

namespace {

Vec3 abs_rotate(const Mat3& r, const Vec3& e) {
  // Extent of a rotated box along each world axis: |R| * e.
  return Vec3(std::abs(r[0][0]) * e.x + std::abs(r[1][0]) * e.y + std::abs(r[2][0]) * e.z,
              std::abs(r[0][1]) * e.x + std::abs(r[1][1]) * e.y + std::abs(r[2][1]) * e.z,
              std::abs(r[0][2]) * e.x + std::abs(r[1][2]) * e.y + std::abs(r[2][2]) * e.z);
}

}  // namespace

AABB compute_shape_aabb(const Shape& shape, const Transform& body_origin) {
  Transform xf = compose(body_origin, shape.local);
  Vec3 extent(0.0f);
  switch (shape.type) {
    case ShapeType::Sphere:
      extent = Vec3(shape.radius);
      break;
    case ShapeType::Box:
      extent = abs_rotate(glm::mat3_cast(xf.rotation), shape.half_extents);
      break;
    case ShapeType::Capsule: {
      Vec3 axis = xf.rotation * Vec3(0.0f, shape.half_height, 0.0f);
      extent = glm::abs(axis) + Vec3(shape.radius);
      break;
    }
    case ShapeType::Hull: {
      if (!shape.hull) break;
      // The rotated box around the hull's local bounds.
      const Mat3 r = glm::mat3_cast(xf.rotation);
      const Vec3 mid = (shape.hull->bounds_lower + shape.hull->bounds_upper) * 0.5f;
      const Vec3 half = (shape.hull->bounds_upper - shape.hull->bounds_lower) * 0.5f;
      const Vec3 c = xf.position + r * mid;
      extent = abs_rotate(r, half) + Vec3(kSpeculativeDistance);
      return AABB{c - extent, c + extent};
    }
    case ShapeType::Mesh:
    case ShapeType::Heightfield: {
      // The whole surface is one leaf; its triangles are found through its own BVH/grid.
      const AABB local = shape.mesh ? shape.mesh->bounds : shape.heightfield ? shape.heightfield->bounds() : AABB{};
      const Mat3 r = glm::mat3_cast(xf.rotation);
      const Vec3 mid = transform_point(xf, (local.lower + local.upper) * 0.5f);
      extent = abs_rotate(r, (local.upper - local.lower) * 0.5f) + Vec3(kSpeculativeDistance);
      return AABB{mid - extent, mid + extent};
    }
    default: break;
  }
  extent += Vec3(kSpeculativeDistance);
  return AABB{xf.position - extent, xf.position + extent};
}

bool should_collide(const Shape& a, const Body& body_a, const Shape& b, const Body& body_b) {
  if (a.body == b.body) return false;
  // Bodies joined by a joint that does not say collide_connected never collide.
  for (uint32_t other : body_a.no_collide) {
    if (other == b.body) return false;
  }
  if (!a.enabled || !b.enabled) return false;
  if (a.is_trigger || b.is_trigger) {
    // A trigger senses what can move (dynamic and kinematic bodies, moving triggers),
    // never a static body: paired with the level it sits in it would report the floor
    // for as long as the level lasted.
    bool a_senses = a.is_trigger && body_b.motion != MotionType::Static;
    bool b_senses = b.is_trigger && body_a.motion != MotionType::Static;
    if (!a_senses && !b_senses) return false;
  } else if (body_a.motion != MotionType::Dynamic && body_b.motion != MotionType::Dynamic) {
    return false;
  }
  return (body_a.layer & body_b.collides_with) != 0 && (body_b.layer & body_a.collides_with) != 0;
}

int32_t BroadPhase::add(uint32_t shape, const AABB& fat, bool is_static) {
  int32_t proxy = (is_static ? static_tree_ : movable_tree_).create_proxy(fat, shape);
  moved_.push_back(shape);
  return proxy;
}

void BroadPhase::remove(int32_t proxy, bool is_static) {
  (is_static ? static_tree_ : movable_tree_).destroy_proxy(proxy);
}

void BroadPhase::move(int32_t proxy, uint32_t shape, const AABB& fat, bool is_static) {
  (is_static ? static_tree_ : movable_tree_).move_proxy(proxy, fat);
  moved_.push_back(shape);
}

void BroadPhase::set_bounds(int32_t proxy, uint32_t shape, const AABB& fat) {
  movable_tree_.set_leaf_box(proxy, fat);
  moved_.push_back(shape);
}

void BroadPhase::clear() {
  static_tree_.clear();
  movable_tree_.clear();
  moved_.clear();
}

void BroadPhase::forget_moved(uint32_t shape) {
  moved_.erase(std::remove(moved_.begin(), moved_.end(), shape), moved_.end());
}

void BroadPhase::mark_queries(const std::vector<Shape>& shapes) {
  queries_.assign(shapes.size(), 0);
  for (uint32_t s : moved_) {
    const Shape& shape = shapes[s];
    if (shape.alive && shape.proxy >= 0) queries_[s] = 1;
  }
}

void BroadPhase::index_known(std::span<const uint64_t> known, size_t shape_count) {
  known_from_.assign(shape_count + 1, 0);
  // known_from_[s]: the first known key whose lower slot is s or more.
  size_t k = 0;
  for (size_t s = 0; s <= shape_count; ++s) {
    while (k < known.size() && (known[k] >> 32) < s) ++k;
    known_from_[s] = uint32_t(k);
  }
}

bool BroadPhase::is_known(std::span<const uint64_t> known, uint64_t key) const {
  const size_t lower = size_t(key >> 32);
  const auto first = known.begin() + known_from_[lower];
  const auto last = known.begin() + known_from_[lower + 1];
  return std::binary_search(first, last, key);
}

template <class Find>
void BroadPhase::find_in_chunks(Executor& executor, size_t count, size_t per_chunk, Find&& find,
                                std::vector<uint64_t>& out) {
  const size_t chunks = (count + per_chunk - 1) / per_chunk;
  if (chunk_pairs_.size() < chunks) chunk_pairs_.resize(chunks);
  executor.parallel_for(chunks, 1, [&](size_t first, size_t last) {
    for (size_t chunk = first; chunk < last; ++chunk) {
      std::vector<uint64_t>& found = chunk_pairs_[chunk];
      found.clear();
      const size_t end = std::min(count, (chunk + 1) * per_chunk);
      for (size_t i = chunk * per_chunk; i < end; ++i) find(i, found);
    }
  });
  for (size_t chunk = 0; chunk < chunks; ++chunk) out.insert(out.end(), chunk_pairs_[chunk].begin(), chunk_pairs_[chunk].end());
}

void BroadPhase::collect_pairs(const std::vector<Shape>& shapes, const std::vector<Body>& bodies,
                               std::span<const uint64_t> known, Executor& executor,
                               std::span<TreeWalkStacks> walks, std::vector<uint64_t>& out) {
  assert(walks.size() == executor.slots());  // each thread indexes its own by slot
  out.clear();
  if (moved_.empty()) return;
  mark_queries(shapes);
  index_known(known, shapes.size());
  auto keep = [&](uint32_t s, uint32_t other, std::vector<uint64_t>& found) {
    // Known first: a collider that left its bounds mostly finds the pairs it had, and
    // the known keys are a small dense array where the filter reads two colliders and
    // two bodies.
    const uint64_t key = pair_key(s, other);
    if (is_known(known, key)) return;
    const Shape& shape = shapes[s];
    const Shape& o = shapes[other];
    if (should_collide(shape, bodies[shape.body], o, bodies[o.body])) found.push_back(key);
  };
  // When most of the movable tree moved (a falling pile leaves its bounds all on one
  // tick), the tree is walked against itself once instead of queried once per collider;
  // the moved colliders then query only the other tree. The walk's first pairs of nodes,
  // split breadth first, are shared among the workers.
  size_t moving = 0;
  for (uint32_t s : moved_) moving += queries_[s] && !shapes[s].is_static ? 1 : 0;
  const bool walk_pairs = moving >= kWalkPairsMin && 2 * moving >= size_t(movable_tree_.proxy_count());
  if (walk_pairs) {
    constexpr size_t kTasks = 256, kTasksPerChunk = 8;
    movable_tree_.split_self_pairs(kTasks, walk_tasks_);
    find_in_chunks(executor, walk_tasks_.size(), kTasksPerChunk, [&](size_t t, std::vector<uint64_t>& found) {
      movable_tree_.pairs_under(
          walk_tasks_[t], [&](uint32_t a, uint32_t b) {
            if (queries_[a] || queries_[b]) keep(a, b, found);
          },
          walks[executor.slot()].pairs);
    }, out);
  }
  constexpr size_t kChunk = 64;  // moved colliders per query chunk
  find_in_chunks(executor, moved_.size(), kChunk, [&](size_t m, std::vector<uint64_t>& found) {
    const uint32_t s = moved_[m];
    if (!queries_[s]) return;
    const Shape& shape = shapes[s];
    auto visit = [&](uint32_t other) {
      // Two moved colliders find each other twice (overlap and should_collide are
      // symmetric): the lower slot's query keeps the pair.
      if (other <= s && (other == s || queries_[other])) return;
      keep(s, other, found);
    };
    std::vector<int32_t>& stack = walks[executor.slot()].box;  // this thread's
    if (shape.is_static || !walk_pairs) movable_tree_.query(shape.fat, visit, stack);
    if (!shape.is_static) static_tree_.query(shape.fat, visit, stack);
  }, out);
  moved_.clear();
  // Keys are unique per pair, so this sort is a total order: the result never depends
  // on the trees' shapes, the order colliders moved in, or how the pairs were found.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace keel::sim
