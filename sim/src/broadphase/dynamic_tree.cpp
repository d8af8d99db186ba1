#include "broadphase/dynamic_tree.h"

#include <algorithm>
#include <cassert>
#include <limits>

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

void DynamicTree::rebuild() {
  build_leaves_.clear();
  build_slots_.clear();
  build_centres_.resize(nodes_.size());
  build_boxes_.resize(nodes_.size());
  for (int32_t i = 0; i < int32_t(nodes_.size()); ++i) {
    if (nodes_[i].height == 0) {
      build_leaves_.push_back(i);
      build_centres_[i] = (nodes_[i].box.lower + nodes_[i].box.upper) * 0.5f;
      build_boxes_[i] = nodes_[i].box;
    } else {
      build_slots_.push_back(i);  // an inner node or a free one: reused below
    }
  }
  // A tree of L leaves has L - 1 inner nodes; the slots hold at least that many (the old
  // tree's inner nodes), and the rest go back to the free list.
  const size_t leaves = build_leaves_.size();
  const size_t inner = leaves > 0 ? leaves - 1 : 0;
  free_list_ = kNullNode;
  for (size_t k = build_slots_.size(); k-- > inner;) free_node(build_slots_[k]);
  root_ = leaves == 0 ? kNullNode : build_range(0, leaves);
  if (root_ != kNullNode) nodes_[root_].parent_or_next = kNullNode;
}

// Where to split the leaves build_leaves_[begin, end): a binned surface area heuristic
// along the axis their centres spread most (the other axes cost twice as much again and,
// for the compact piles a broadphase sees, rarely give a better plane). The centres fall
// into kBins equal bins; every plane between bins is scored by the area of each side's
// bounds times its leaf count, and the cheapest wins. axis is -1 when the centres all
// coincide (the caller then splits at the middle of the list).
struct BinSplit {
  int axis = -1;
  int first_upper_bin = 0;
  float lo = 0.0f, scale = 0.0f;  // bin of a centre c: (c[axis] - lo) * scale, clamped
};

constexpr int kBins = 12;

int bin_of(const BinSplit& split, const Vec3& centre) {
  // Compared as a float first: a centre that is not finite must not reach the int cast.
  const float t = (centre[split.axis] - split.lo) * split.scale;
  if (!(t > 0.0f)) return 0;
  return t >= float(kBins - 1) ? kBins - 1 : int(t);
}

BinSplit choose_split(const std::vector<int32_t>& leaves, size_t begin, size_t end, const std::vector<Vec3>& centres,
                      const std::vector<AABB>& boxes) {
  Vec3 lo = centres[leaves[begin]], hi = lo;
  for (size_t i = begin + 1; i < end; ++i) {
    lo = glm::min(lo, centres[leaves[i]]);
    hi = glm::max(hi, centres[leaves[i]]);
  }
  const Vec3 spread = hi - lo;
  const int axis = spread.x >= spread.y && spread.x >= spread.z ? 0 : spread.y >= spread.z ? 1 : 2;
  BinSplit split;
  if (!(spread[axis] > 0.0f)) return split;
  split.axis = axis;
  split.lo = lo[axis];
  split.scale = float(kBins) / spread[axis];
  AABB bin_box[kBins];
  int bin_count[kBins] = {};
  for (size_t i = begin; i < end; ++i) {
    const int b = bin_of(split, centres[leaves[i]]);
    bin_box[b] = bin_count[b] == 0 ? boxes[leaves[i]] : merge(bin_box[b], boxes[leaves[i]]);
    ++bin_count[b];
  }
  // From above: the cost of bins [k, kBins) as one side.
  float upper_cost[kBins] = {};
  AABB acc;
  int count = 0;
  for (int k = kBins - 1; k > 0; --k) {
    if (bin_count[k] > 0) acc = count == 0 ? bin_box[k] : merge(acc, bin_box[k]);
    count += bin_count[k];
    upper_cost[k] = count == 0 ? 0.0f : surface_area(acc) * float(count);
  }
  // From below: the plane under bin k, with bins [0, k) as the other side.
  float best_cost = std::numeric_limits<float>::infinity();
  count = 0;
  for (int k = 1; k < kBins; ++k) {
    if (bin_count[k - 1] > 0) acc = count == 0 ? bin_box[k - 1] : merge(acc, bin_box[k - 1]);
    count += bin_count[k - 1];
    if (count == 0 || size_t(count) == end - begin) continue;  // one side empty
    const float cost = surface_area(acc) * float(count) + upper_cost[k];
    if (cost < best_cost) {
      best_cost = cost;
      split.first_upper_bin = k;
    }
  }
  if (split.first_upper_bin == 0) split.axis = -1;  // every centre in one bin (an infinite spread)
  return split;
}

// The subtree over build_leaves_[begin, end). Its inner nodes take the slots
// [begin, end - 1), the one splitting at `mid` slot mid - 1, so the two halves never
// claim the same slot.
int32_t DynamicTree::build_range(size_t begin, size_t end) {
  if (end - begin == 1) return build_leaves_[begin];
  const BinSplit split = choose_split(build_leaves_, begin, end, build_centres_, build_boxes_);
  const auto first = build_leaves_.begin() + long(begin), last = build_leaves_.begin() + long(end);
  size_t mid;
  if (split.axis >= 0) {
    // std::partition is not stable, but it is a pure function of its input: the tree's
    // shape never depends on threads (and nothing depends on the shape).
    mid = size_t(std::partition(first, last, [&](int32_t leaf) {
                   return bin_of(split, build_centres_[leaf]) < split.first_upper_bin;
                 }) - build_leaves_.begin());
  } else {
    mid = begin + (end - begin) / 2;  // every centre the same: any halves will do
  }
  const int32_t left = build_range(begin, mid);
  const int32_t right = build_range(mid, end);
  const int32_t id = build_slots_[mid - 1];
  Node& n = nodes_[id];
  n.child1 = left;
  n.child2 = right;
  n.box = merge(nodes_[left].box, nodes_[right].box);
  n.height = 1 + std::max(nodes_[left].height, nodes_[right].height);
  n.user_data = 0;
  nodes_[left].parent_or_next = id;
  nodes_[right].parent_or_next = id;
  return id;
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
