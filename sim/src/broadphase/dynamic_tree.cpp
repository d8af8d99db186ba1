#include "broadphase/dynamic_tree.h"

#include <algorithm>
#include <cassert>

namespace keel::sim {

int32_t DynamicTree::allocate_node() {
  if (free_list_ == kNullNode) {
    nodes_.emplace_back();
    return static_cast<int32_t>(nodes_.size() - 1);
  }
  int32_t id = free_list_;
  free_list_ = nodes_[id].parent_or_next;
  nodes_[id] = Node{};
  return id;
}

void DynamicTree::free_node(int32_t id) {
  nodes_[id].parent_or_next = free_list_;
  nodes_[id].height = -1;
  free_list_ = id;
}

void DynamicTree::clear() {
  nodes_.clear();
  root_ = kNullNode;
  free_list_ = kNullNode;
  proxy_count_ = 0;
}

int32_t DynamicTree::create_proxy(const AABB& box, uint32_t user_data) {
  int32_t id = allocate_node();
  nodes_[id].box = box;
  nodes_[id].user_data = user_data;
  nodes_[id].height = 0;
  insert_leaf(id);
  ++proxy_count_;
  return id;
}

void DynamicTree::destroy_proxy(int32_t proxy) {
  remove_leaf(proxy);
  free_node(proxy);
  --proxy_count_;
}

void DynamicTree::move_proxy(int32_t proxy, const AABB& box) {
  remove_leaf(proxy);
  nodes_[proxy].box = box;
  insert_leaf(proxy);
}

void DynamicTree::split_self_pairs(size_t want, std::vector<NodePair>& out) const {
  out.clear();
  if (root_ == kNullNode) return;
  out.push_back({root_, root_});
  // Breadth first: each round replaces every pair that has children with them (leaf
  // pairs, already visitable, stay as they are), until there are enough.
  std::vector<NodePair> next_round;
  auto none = [](uint32_t, uint32_t) {};
  while (out.size() < want) {
    next_round.clear();
    bool grew = false;
    for (const NodePair& p : out) {
      const Node& a = nodes_[p.first];
      const Node& b = nodes_[p.second];
      if (a.is_leaf() && b.is_leaf()) {
        if (p.first != p.second) next_round.push_back(p);  // a leaf with itself holds no pair
        continue;
      }
      NodePair kids[3];
      const int count = expand(p, kids, none);
      next_round.insert(next_round.end(), kids, kids + count);
      grew = true;
    }
    out.swap(next_round);
    if (!grew) break;
  }
}

// Walks down from the root choosing, at each inner node, whether making the new leaf a
// sibling here or descending into a child costs less surface area (the classic
// branch-and-bound-free heuristic: cheap and good enough for moving bodies).
int32_t DynamicTree::pick_sibling(const AABB& box) const {
  int32_t index = root_;
  while (!nodes_[index].is_leaf()) {
    const Node& n = nodes_[index];
    float area = surface_area(n.box);
    float combined_area = surface_area(merge(n.box, box));
    float cost = 2.0f * combined_area;
    float inheritance = 2.0f * (combined_area - area);

    auto descend_cost = [&](int32_t child) {
      const Node& c = nodes_[child];
      float merged = surface_area(merge(box, c.box));
      if (c.is_leaf()) return merged + inheritance;
      return merged - surface_area(c.box) + inheritance;
    };
    float cost1 = descend_cost(n.child1);
    float cost2 = descend_cost(n.child2);
    if (cost < cost1 && cost < cost2) break;
    index = cost1 <= cost2 ? n.child1 : n.child2;  // ties go to child1: deterministic
  }
  return index;
}

void DynamicTree::insert_leaf(int32_t leaf) {
  if (root_ == kNullNode) {
    root_ = leaf;
    nodes_[leaf].parent_or_next = kNullNode;
    return;
  }
  int32_t sibling = pick_sibling(nodes_[leaf].box);
  int32_t old_parent = nodes_[sibling].parent_or_next;
  int32_t new_parent = allocate_node();
  Node& np = nodes_[new_parent];
  np.parent_or_next = old_parent;
  np.box = merge(nodes_[leaf].box, nodes_[sibling].box);
  np.height = nodes_[sibling].height + 1;
  np.child1 = sibling;
  np.child2 = leaf;
  nodes_[sibling].parent_or_next = new_parent;
  nodes_[leaf].parent_or_next = new_parent;
  if (old_parent == kNullNode) {
    root_ = new_parent;
  } else if (nodes_[old_parent].child1 == sibling) {
    nodes_[old_parent].child1 = new_parent;
  } else {
    nodes_[old_parent].child2 = new_parent;
  }
  refit_upwards(new_parent);
}

void DynamicTree::remove_leaf(int32_t leaf) {
  if (leaf == root_) {
    root_ = kNullNode;
    return;
  }
  int32_t parent = nodes_[leaf].parent_or_next;
  int32_t grand = nodes_[parent].parent_or_next;
  int32_t sibling = nodes_[parent].child1 == leaf ? nodes_[parent].child2 : nodes_[parent].child1;
  if (grand == kNullNode) {
    root_ = sibling;
    nodes_[sibling].parent_or_next = kNullNode;
    free_node(parent);
    return;
  }
  if (nodes_[grand].child1 == parent) {
    nodes_[grand].child1 = sibling;
  } else {
    nodes_[grand].child2 = sibling;
  }
  nodes_[sibling].parent_or_next = grand;
  free_node(parent);
  refit_upwards(grand);
}

void DynamicTree::refit_upwards(int32_t index) {
  while (index != kNullNode) {
    index = balance(index);
    Node& n = nodes_[index];
    n.height = 1 + std::max(nodes_[n.child1].height, nodes_[n.child2].height);
    n.box = merge(nodes_[n.child1].box, nodes_[n.child2].box);
    index = n.parent_or_next;
  }
}

// AVL-style rotation: if one child is two levels taller than the other, promote the
// taller child and hand one of its children down. Returns the root of the subtree.
int32_t DynamicTree::balance(int32_t ia) {
  Node& a = nodes_[ia];
  if (a.is_leaf() || a.height < 2) return ia;
  int32_t ib = a.child1;
  int32_t ic = a.child2;
  int32_t diff = nodes_[ic].height - nodes_[ib].height;
  if (diff >= -1 && diff <= 1) return ia;

  // Rotate the taller child `up` above `ia`; `other` is the shorter child.
  bool c_taller = diff > 1;
  int32_t up = c_taller ? ic : ib;
  int32_t other = c_taller ? ib : ic;
  Node& u = nodes_[up];
  int32_t f = u.child1;
  int32_t g = u.child2;

  u.child1 = ia;
  u.parent_or_next = a.parent_or_next;
  a.parent_or_next = up;
  if (u.parent_or_next == kNullNode) {
    root_ = up;
  } else if (nodes_[u.parent_or_next].child1 == ia) {
    nodes_[u.parent_or_next].child1 = up;
  } else {
    nodes_[u.parent_or_next].child2 = up;
  }

  // Keep the taller grandchild up with `up`, hand the shorter one to `ia`.
  int32_t keep = nodes_[f].height > nodes_[g].height ? f : g;
  int32_t give = keep == f ? g : f;
  u.child2 = keep;
  if (c_taller) {
    a.child2 = give;
  } else {
    a.child1 = give;
  }
  nodes_[give].parent_or_next = ia;
  a.box = merge(nodes_[other].box, nodes_[give].box);
  a.height = 1 + std::max(nodes_[other].height, nodes_[give].height);
  u.box = merge(a.box, nodes_[keep].box);
  u.height = 1 + std::max(a.height, nodes_[keep].height);
  return up;
}

}  // namespace keel::sim
