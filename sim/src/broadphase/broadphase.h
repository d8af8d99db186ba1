// Broadphase: which collider pairs are close enough to need a contact.
//
// Colliders of static bodies live in one tree, colliders of bodies that move in another,
// so the thousands of static-static overlaps of a level are never visited. Each leaf
// holds a fattened bound; a collider whose tight bound leaves its fat bound is re-fattened
// and "moved", and only moved colliders are queried for new pairs. A pair, once made,
// lives as long as the two fat bounds overlap (ContactSet drops it after that).
#pragma once

#include "broadphase/dynamic_tree.h"

#include <cstdint>
#include <span>
#include <vector>

namespace keel::sim {

struct Shape;
struct Body;
class Executor;

/// Pair key: lower collider slot in the high 32 bits, so sorting keys sorts pairs by ID.
inline uint64_t pair_key(uint32_t a, uint32_t b) {
  return a < b ? (uint64_t(a) << 32) | b : (uint64_t(b) << 32) | a;
}

/// Margin added around a collider's tight bounds when its fat bounds are rebuilt (m).
inline constexpr float kAabbMargin = 0.1f;
/// Contacts are made this far before surfaces touch (speculative contacts, m).
inline constexpr float kSpeculativeDistance = 0.02f;

/// Tight bounds of a collider placed at a body pose, grown by the speculative distance.
AABB compute_shape_aabb(const Shape& shape, const Transform& body_origin);

/// Whether two colliders may ever touch: different bodies, both enabled, layer and mask
/// accepted both ways, and at least one dynamic body (or, for a trigger, a body that can
/// move on the other side).
bool should_collide(const Shape& a, const Body& body_a, const Shape& b, const Body& body_b);

class BroadPhase {
 public:
  /// Adds a collider's proxy with the given fat bounds; it counts as moved.
  int32_t add(uint32_t shape, const AABB& fat, bool is_static);
  void remove(int32_t proxy, bool is_static);
  /// Replaces a proxy's fat bounds; it counts as moved.
  void move(int32_t proxy, uint32_t shape, const AABB& fat, bool is_static);
  /// Whether `count` movable colliders leaving their bounds at once are better served by
  /// set_bounds for each and one rebuild_movable than by move for each.
  bool rebuild_pays(size_t count) const {
    return count >= kRebuildMin && 2 * count >= size_t(movable_tree_.proxy_count());
  }
  /// Replaces a movable proxy's fat bounds without placing it in the tree again; it counts
  /// as moved. rebuild_movable() must follow before the trees are read.
  void set_bounds(int32_t proxy, uint32_t shape, const AABB& fat);
  /// Rebuilds the movable tree over its proxies' bounds (DynamicTree::rebuild).
  void rebuild_movable() { movable_tree_.rebuild(); }
  void clear();

  /// Pairs (as sorted, unique pair keys) between a moved collider and any other
  /// collider whose fat bounds overlap it and that should_collide accepts. Clears the
  /// moved set. The queries run on the executor's threads (they only read the trees),
  /// each chunk of moved colliders into its own list; the lists are joined and sorted, so
  /// the result is the same whoever ran which chunk. Pairs in `known` (sorted pair keys:
  /// the contacts there already are) are left out there, on the workers: a collider that
  /// left its fat bounds mostly finds the neighbours it had, and skipping them keeps the
  /// serial sort and merge small.
  /// `walks` holds one set of walk stacks per executor slot (Executor::slots()).
  void collect_pairs(const std::vector<Shape>& shapes, const std::vector<Body>& bodies,
                     std::span<const uint64_t> known, Executor& executor, std::span<TreeWalkStacks> walks,
                     std::vector<uint64_t>& out);

  /// The trees, for scene queries (read only).
  const DynamicTree& static_tree() const { return static_tree_; }
  const DynamicTree& movable_tree() const { return movable_tree_; }

  /// Forgets a shape in the moved set (it was removed before the pairs were collected).
  void forget_moved(uint32_t shape);

 private:
  /// Flags, per collider slot, the moved colliders that will query (alive, with a proxy).
  void mark_queries(const std::vector<Shape>& shapes);
  /// Indexes the known keys by lower slot, so a lookup searches one collider's few pairs.
  void index_known(std::span<const uint64_t> known, size_t shape_count);
  bool is_known(std::span<const uint64_t> known, uint64_t key) const;
  /// Runs find(i, list) for i in [0, count) on the workers, in fixed chunks of
  /// `per_chunk`, each chunk into its own list; appends the lists to `out` in chunk order.
  template <class Find>
  void find_in_chunks(Executor& executor, size_t count, size_t per_chunk, Find&& find, std::vector<uint64_t>& out);
  /// Moved colliders from which walking the movable tree against itself beats querying.
  static constexpr size_t kWalkPairsMin = 64;
  /// Movable colliders leaving their bounds at once from which a rebuild beats moving
  /// them one by one (when they are also half the movable tree).
  static constexpr size_t kRebuildMin = 64;

  DynamicTree static_tree_;
  DynamicTree movable_tree_;
  std::vector<uint32_t> moved_;  // collider slots
  std::vector<std::vector<uint64_t>> chunk_pairs_;  // per chunk of find_in_chunks, reused
  std::vector<uint8_t> queries_;       // per collider slot: it queries this time
  std::vector<uint32_t> known_from_;   // per collider slot: its first known key
  std::vector<DynamicTree::NodePair> walk_tasks_;  // the tree-against-itself walk, split
};

}  // namespace keel::sim
