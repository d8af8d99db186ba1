// A dynamic AABB tree: leaves hold fattened bounds of collider proxies, inner nodes the
// union of their children. Insertion picks the sibling that grows the tree's surface
// area least and the path back to the root is rebalanced by rotations, so queries stay
// logarithmic as bodies move.
//
// Determinism: the tree's shape depends on the order of inserts, moves and removes,
// which is deterministic, but nothing downstream depends on the shape: the broadphase
// sorts the pairs it finds by collider index before using them. A restored world
// rebuilds its trees from scratch and still finds the same pairs.
#pragma once

#include <keel/sim/math.h>

#include <cstdint>
#include <vector>

namespace keel::sim {

inline constexpr int32_t kNullNode = -1;

class DynamicTree {
 public:
  /// Inserts a leaf and returns its proxy id.
  int32_t create_proxy(const AABB& box, uint32_t user_data);
  void destroy_proxy(int32_t proxy);
  /// Replaces a leaf's bounds (remove + reinsert).
  void move_proxy(int32_t proxy, const AABB& box);
  const AABB& fat_aabb(int32_t proxy) const { return nodes_[proxy].box; }
  uint32_t user_data(int32_t proxy) const { return nodes_[proxy].user_data; }
  void clear();

  /// Calls visit(user_data) for every leaf whose bounds overlap `box`. Only reads the
  /// tree (its walk stack is per thread), so queries may run on several threads at once.
  template <class Visit>
  void query(const AABB& box, Visit&& visit) const {
    if (root_ == kNullNode) return;
    static thread_local std::vector<int32_t> stack;
    stack.clear();
    stack.push_back(root_);
    while (!stack.empty()) {
      int32_t id = stack.back();
      stack.pop_back();
      const Node& n = nodes_[id];
      if (!overlaps(n.box, box)) continue;
      if (n.is_leaf()) {
        visit(n.user_data);
      } else {
        stack.push_back(n.child1);
        stack.push_back(n.child2);
      }
    }
  }

  int32_t height() const { return root_ == kNullNode ? 0 : nodes_[root_].height; }

 private:
  struct Node {
    AABB box;
    int32_t parent_or_next = kNullNode;  // parent in the tree, next free node when free
    int32_t child1 = kNullNode;
    int32_t child2 = kNullNode;
    int32_t height = -1;  // leaf = 0, free = -1
    uint32_t user_data = 0;
    bool is_leaf() const { return child1 == kNullNode; }
  };

  int32_t allocate_node();
  void free_node(int32_t id);
  void insert_leaf(int32_t leaf);
  void remove_leaf(int32_t leaf);
  int32_t pick_sibling(const AABB& box) const;
  int32_t balance(int32_t a);
  void refit_upwards(int32_t index);

  std::vector<Node> nodes_;
  int32_t root_ = kNullNode;
  int32_t free_list_ = kNullNode;
};

}  // namespace keel::sim
