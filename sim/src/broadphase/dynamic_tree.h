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
#include <utility>
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
  /// Replaces a leaf's bounds and nothing else: the inner nodes above it are stale until
  /// rebuild(), which must come before the tree is read or changed again.
  void set_leaf_box(int32_t proxy, const AABB& box) { nodes_[proxy].box = box; }
  /// Rebuilds every inner node over the leaves' current bounds, top down: each node
  /// splits its leaves where a binned surface area heuristic puts the plane (the same
  /// cost the incremental insert minimises). Proxy ids stay. When most leaves have moved this costs a fraction of moving
  /// them one by one (each a walk down, a reinsert and rotations back up), and gives a
  /// balanced tree for the pair walk that follows.
  void rebuild();
  const AABB& fat_aabb(int32_t proxy) const { return nodes_[proxy].box; }
  uint32_t user_data(int32_t proxy) const { return nodes_[proxy].user_data; }
  void clear();
  /// Leaves in the tree.
  int32_t proxy_count() const { return proxy_count_; }

  /// Calls visit(user_data) for every leaf whose bounds overlap `box`. Only reads the
  /// tree and walks with the caller's `stack` (left empty), so queries may run on several
  /// threads at once, each with its own stack.
  template <class Visit>
  void query(const AABB& box, Visit&& visit, std::vector<int32_t>& stack) const {
    if (root_ == kNullNode) return;
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

  /// A pair of nodes whose overlapping leaf pairs are still to be found (first == second:
  /// the pairs within that node's subtree).
  using NodePair = std::pair<int32_t, int32_t>;

  /// Node pairs that together hold every overlapping pair of leaves in the tree, each
  /// exactly once: the walk pairs_under() does, begun breadth first and stopped at about
  /// `want` pairs, so the rest can be shared among threads.
  void split_self_pairs(size_t want, std::vector<NodePair>& out) const;

  /// Calls visit(user_a, user_b) for every pair of distinct leaves under `start` whose
  /// bounds overlap (the tree against itself: one walk over pairs of nodes finds what a
  /// query per leaf would, twice over, at a fraction of the node visits).
  /// `stack` is the caller's (each worker walks with its own; left empty).
  template <class Visit>
  void pairs_under(NodePair start, Visit&& visit, std::vector<NodePair>& stack) const {
    stack.clear();
    stack.push_back(start);
    while (!stack.empty()) {
      const NodePair p = stack.back();
      stack.pop_back();
      NodePair next[3];
      const int count = expand(p, next, visit);
      stack.insert(stack.end(), next, next + count);
    }
  }

  /// Walks the leaves whose bounds, grown by `inflate` on each side, the segment
  /// origin + t * delta (t in [0, max_t]) enters, calling visit(user_data, entry_t).
  /// visit returns the new max_t (return the one given to keep it), so a closest-hit
  /// query prunes everything behind its best hit. Used by raycasts (inflate 0) and
  /// shape casts (inflate = the cast shape's half size). `ray_stack` is the caller's
  /// (left empty), and not the one a box query() uses: a visitor may run one while this
  /// walk is live.
  template <class Visit>
  void ray_query(const Vec3& origin, const Vec3& delta, const Vec3& inflate, float max_t, Visit&& visit,
                 std::vector<int32_t>& ray_stack) const {
    if (root_ == kNullNode) return;
    ray_stack.clear();
    ray_stack.push_back(root_);
    while (!ray_stack.empty()) {
      int32_t id = ray_stack.back();
      ray_stack.pop_back();
      const Node& n = nodes_[id];
      float entry = 0.0f;
      if (!segment_enters(n.box, inflate, origin, delta, max_t, entry)) continue;
      if (n.is_leaf()) {
        max_t = visit(n.user_data, entry);
      } else {
        ray_stack.push_back(n.child1);
        ray_stack.push_back(n.child2);
      }
    }
  }

  /// Slab test: whether origin + t * delta, t in [0, max_t], meets `box` grown by
  /// `inflate`; `entry` is the first such t.
  static bool segment_enters(const AABB& box, const Vec3& inflate, const Vec3& origin, const Vec3& delta,
                             float max_t, float& entry) {
    float t0 = 0.0f, t1 = max_t;
    for (int i = 0; i < 3; ++i) {
      const float lo = box.lower[i] - inflate[i], hi = box.upper[i] + inflate[i];
      if (delta[i] == 0.0f) {
        if (origin[i] < lo || origin[i] > hi) return false;
        continue;
      }
      float ta = (lo - origin[i]) / delta[i], tb = (hi - origin[i]) / delta[i];
      if (ta > tb) std::swap(ta, tb);
      t0 = ta > t0 ? ta : t0;
      t1 = tb < t1 ? tb : t1;
      if (t0 > t1) return false;
    }
    entry = t0;
    return true;
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

  /// One step of the pair walk: a node with itself gives its two children with
  /// themselves and with each other; two overlapping nodes give the larger one's children
  /// against the other; two overlapping leaves are visited. Returns the pairs to walk.
  template <class Visit>
  int expand(NodePair p, NodePair (&next)[3], Visit&& visit) const {
    const Node& a = nodes_[p.first];
    if (p.first == p.second) {
      if (a.is_leaf()) return 0;
      next[0] = {a.child1, a.child1};
      next[1] = {a.child2, a.child2};
      next[2] = {a.child1, a.child2};
      return 3;
    }
    const Node& b = nodes_[p.second];
    if (!overlaps(a.box, b.box)) return 0;
    if (a.is_leaf() && b.is_leaf()) {
      visit(a.user_data, b.user_data);
      return 0;
    }
    if (b.is_leaf() || (!a.is_leaf() && a.height >= b.height)) {
      next[0] = {a.child1, p.second};
      next[1] = {a.child2, p.second};
    } else {
      next[0] = {p.first, b.child1};
      next[1] = {p.first, b.child2};
    }
    return 2;
  }

  int32_t allocate_node();
  void free_node(int32_t id);
  void insert_leaf(int32_t leaf);
  void remove_leaf(int32_t leaf);
  int32_t pick_sibling(const AABB& box) const;
  int32_t build_range(size_t begin, size_t end);
  int32_t balance(int32_t a);
  void refit_upwards(int32_t index);

  std::vector<Node> nodes_;
  int32_t root_ = kNullNode;
  int32_t free_list_ = kNullNode;
  int32_t proxy_count_ = 0;
  // rebuild()'s working lists, kept for the next one: the leaves (reordered by the
  // splits), the node slots inner nodes may take, and each leaf's centre and bounds (by
  // node id, packed apart from the nodes for the split scans).
  std::vector<int32_t> build_leaves_;
  std::vector<int32_t> build_slots_;
  std::vector<Vec3> build_centres_;
  std::vector<AABB> build_boxes_;
};

/// The stacks one thread walks the trees with during a step's pair search: kept by the
/// world per executor slot (memory/step_scratch.h), so a walk allocates nothing once they have
/// grown, and empty between walks.
struct TreeWalkStacks {
  std::vector<int32_t> box;                   // query()
  std::vector<DynamicTree::NodePair> pairs;  // pairs_under()
  bool empty() const { return box.empty() && pairs.empty(); }
};

}  // namespace keel::sim
