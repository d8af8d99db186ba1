// The broadphase's new pairs, checked against every pair tested by brute force: a pair is
// new when at least one side moved, the fat bounds overlap, should_collide accepts it and
// it is not known yet. Many colliders move at once (a falling pile), some only one side,
// some not at all; statics, a trigger, a layer mask, a jointed pair and a disabled
// collider are mixed in; on one and on two threads.
#include "broadphase/broadphase.h"
#include "broadphase/dynamic_tree.h"
#include "parallel/executor.h"
#include "world_impl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace keel::sim {
namespace {

struct Layout {
  std::vector<Shape> shapes;
  std::vector<Body> bodies;
};

// One collider per body, in a 3D grid a little tighter than the boxes' reach, so each
// overlaps a few neighbours; every seventh is static, every tenth moves nothing.
Layout make_layout(uint32_t count, std::mt19937& rng) {
  Layout l;
  std::uniform_real_distribution<float> jitter(-0.15f, 0.15f);
  for (uint32_t i = 0; i < count; ++i) {
    Body b;
    b.alive = true;
    b.id = i + 1;
    b.motion = i % 7 == 3 ? MotionType::Static : MotionType::Dynamic;
    if (i == 40) b.layer = 2, b.collides_with = 2;  // meets only layer-2 bodies: none
    l.bodies.push_back(b);
    Shape s;
    s.alive = true;
    s.body = i;
    s.is_static = b.motion == MotionType::Static;
    s.is_trigger = i == 17;
    s.enabled = i != 23;
    const Vec3 c(float(i % 8) * 0.9f + jitter(rng), float((i / 8) % 8) * 0.9f + jitter(rng),
                 float(i / 64) * 0.9f + jitter(rng));
    s.fat = AABB{c - Vec3(0.55f), c + Vec3(0.55f)};
    l.shapes.push_back(s);
  }
  // A joint between bodies 0 and 1 (neighbours in the grid) that does not collide.
  l.bodies[0].no_collide.push_back(1);
  l.bodies[1].no_collide.push_back(0);
  return l;
}

std::vector<uint64_t> brute_force(const Layout& l, const std::vector<uint8_t>& moved,
                                  const std::vector<uint64_t>& known) {
  std::vector<uint64_t> out;
  for (uint32_t a = 0; a < l.shapes.size(); ++a) {
    for (uint32_t b = a + 1; b < l.shapes.size(); ++b) {
      const Shape& sa = l.shapes[a];
      const Shape& sb = l.shapes[b];
      if (!moved[a] && !moved[b]) continue;
      if (!sa.enabled || !sb.enabled) continue;  // disabled colliders have no proxy
      if (sa.is_static && sb.is_static) continue;
      if (!overlaps(sa.fat, sb.fat)) continue;
      if (!should_collide(sa, l.bodies[sa.body], sb, l.bodies[sb.body])) continue;
      const uint64_t key = pair_key(a, b);
      if (!std::binary_search(known.begin(), known.end(), key)) out.push_back(key);
    }
  }
  return out;
}

TEST(BroadPhase, NewPairsAreEveryOverlapOfAMovedColliderLessTheKnownOnes) {
  for (uint32_t threads : {1u, 2u}) {
    std::mt19937 rng(7);
    Layout l = make_layout(320, rng);
    Executor executor(threads);
    std::vector<TreeWalkStacks> walks(executor.slots());  // a world keeps these in its StepScratch
    BroadPhase bp;
    for (uint32_t i = 0; i < l.shapes.size(); ++i) {
      Shape& s = l.shapes[i];
      s.proxy = s.enabled ? bp.add(i, s.fat, s.is_static) : -1;
    }
    // Every collider was just added, so every overlap is new.
    std::vector<uint8_t> moved(l.shapes.size(), 1);
    std::vector<uint64_t> known;
    std::vector<uint64_t> pairs;
    bp.collect_pairs(l.shapes, l.bodies, known, executor, walks, pairs);
    std::vector<uint64_t> expected = brute_force(l, moved, known);
    ASSERT_GT(expected.size(), 1000u) << "the layout should be busy";
    EXPECT_EQ(pairs, expected) << threads << " threads, all added";
    known = pairs;

    // Rounds of motion: most movable colliders shift at once, or only a few, and some
    // pairs are forgotten (as the contact set drops pairs whose fat bounds part).
    std::uniform_real_distribution<float> step(-0.4f, 0.4f);
    for (int round = 0; round < 6; ++round) {
      std::fill(moved.begin(), moved.end(), 0);
      // (As the world does: when most of the movable tree moves, it is rebuilt.)
      const uint32_t every = round % 2 == 0 ? 1 : 9;
      std::vector<uint32_t> moving;
      for (uint32_t i = 0; i < l.shapes.size(); ++i) {
        const Shape& s = l.shapes[i];
        if (s.is_static || !s.enabled || i % every != 0 || i % 10 == 5) continue;
        moving.push_back(i);
      }
      const bool rebuild = bp.rebuild_pays(moving.size());
      EXPECT_EQ(rebuild, every == 1) << "round " << round;
      for (uint32_t i : moving) {
        Shape& s = l.shapes[i];
        const Vec3 d(step(rng), step(rng), step(rng));
        s.fat = AABB{s.fat.lower + d, s.fat.upper + d};
        if (rebuild) {
          bp.set_bounds(s.proxy, i, s.fat);
        } else {
          bp.move(s.proxy, i, s.fat, false);
        }
        moved[i] = 1;
      }
      if (rebuild) bp.rebuild_movable();
      std::vector<uint64_t> kept;
      for (size_t k = 0; k < known.size(); ++k) {
        if (k % 3 != 0) kept.push_back(known[k]);
      }
      known = kept;
      bp.collect_pairs(l.shapes, l.bodies, known, executor, walks, pairs);
      expected = brute_force(l, moved, known);
      ASSERT_FALSE(expected.empty());
      EXPECT_EQ(pairs, expected) << threads << " threads, round " << round;
      std::vector<uint64_t> merged;
      std::merge(known.begin(), known.end(), pairs.begin(), pairs.end(), std::back_inserter(merged));
      known = merged;
    }
  }
}

// A rebuilt tree: every inner node bounds its children and knows its height, parents
// point back, and queries find exactly the overlapping leaves; proxies made and destroyed
// afterwards (reusing the freed inner slots) keep it so.
void check_tree(const DynamicTree& tree, const std::vector<AABB>& boxes, const std::vector<int32_t>& proxies,
                std::mt19937& rng, const char* when) {
  std::vector<int32_t> stack;  // the walks' stacks are the caller's
  std::vector<DynamicTree::NodePair> pair_stack;
  int32_t live = 0;
  for (size_t i = 0; i < proxies.size(); ++i) {
    if (proxies[i] < 0) continue;
    ++live;
    EXPECT_EQ(tree.user_data(proxies[i]), uint32_t(i)) << when;
    EXPECT_EQ(tree.fat_aabb(proxies[i]).lower, boxes[i].lower) << when;
  }
  EXPECT_EQ(tree.proxy_count(), live) << when;
  std::uniform_real_distribution<float> at(-1.0f, 8.0f), size(0.2f, 3.0f);
  for (int q = 0; q < 200; ++q) {
    const Vec3 lo(at(rng), at(rng), at(rng));
    const AABB box{lo, lo + Vec3(size(rng), size(rng), size(rng))};
    std::vector<uint32_t> found, expected;
    tree.query(box, [&](uint32_t user) { found.push_back(user); }, stack);
    for (size_t i = 0; i < proxies.size(); ++i) {
      if (proxies[i] >= 0 && overlaps(boxes[i], box)) expected.push_back(uint32_t(i));
    }
    std::sort(found.begin(), found.end());
    ASSERT_EQ(found, expected) << when << ", query " << q;
  }
  // Every leaf pair the walk finds overlaps, and it finds each overlapping pair once.
  std::vector<DynamicTree::NodePair> tasks;
  tree.split_self_pairs(16, tasks);
  std::vector<uint64_t> walked, pairs;
  for (const auto& t : tasks) tree.pairs_under(t, [&](uint32_t a, uint32_t b) { walked.push_back(pair_key(std::min(a, b), std::max(a, b))); }, pair_stack);
  for (uint32_t a = 0; a < proxies.size(); ++a) {
    for (uint32_t b = a + 1; b < proxies.size(); ++b) {
      if (proxies[a] >= 0 && proxies[b] >= 0 && overlaps(boxes[a], boxes[b])) pairs.push_back(pair_key(a, b));
    }
  }
  std::sort(walked.begin(), walked.end());
  EXPECT_EQ(walked, pairs) << when;
}

TEST(DynamicTree, RebuiltOverMovedLeavesAnswersLikeBruteForce) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> at(0.0f, 7.0f), half(0.1f, 0.6f), shift(-1.0f, 1.0f);
  DynamicTree tree;
  std::vector<AABB> boxes;
  std::vector<int32_t> proxies;
  for (uint32_t i = 0; i < 300; ++i) {
    const Vec3 c(at(rng), at(rng), at(rng) * 0.3f);  // flatter in z: the splits must pick axes
    boxes.push_back(AABB{c - Vec3(half(rng)), c + Vec3(half(rng))});
    proxies.push_back(tree.create_proxy(boxes.back(), i));
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < boxes.size(); ++i) {
      if (proxies[i] < 0 || i % 4 == size_t(round)) continue;  // most leaves move, some stay
      const Vec3 d(shift(rng), shift(rng), shift(rng));
      boxes[i] = AABB{boxes[i].lower + d, boxes[i].upper + d};
      tree.set_leaf_box(proxies[i], boxes[i]);
    }
    tree.rebuild();
    check_tree(tree, boxes, proxies, rng, "after a rebuild");
    // Then ordinary edits: some leaves go, new ones come, some move one by one.
    for (size_t i = size_t(round); i < boxes.size(); i += 7) {
      if (proxies[i] < 0) continue;
      tree.destroy_proxy(proxies[i]);
      proxies[i] = -1;
    }
    for (int k = 0; k < 20; ++k) {
      const Vec3 c(at(rng), at(rng), at(rng));
      boxes.push_back(AABB{c - Vec3(0.3f), c + Vec3(0.3f)});
      proxies.push_back(tree.create_proxy(boxes.back(), uint32_t(boxes.size() - 1)));
    }
    for (size_t i = 1; i < boxes.size(); i += 11) {
      if (proxies[i] < 0) continue;
      boxes[i] = AABB{boxes[i].lower + Vec3(0.5f), boxes[i].upper + Vec3(0.5f)};
      tree.move_proxy(proxies[i], boxes[i]);
    }
    check_tree(tree, boxes, proxies, rng, "after edits");
  }
  // A tree of one leaf and an empty one rebuild too.
  DynamicTree one;
  one.create_proxy(AABB{Vec3(0.0f), Vec3(1.0f)}, 0);
  one.rebuild();
  int hits = 0;
  std::vector<int32_t> stack;
  one.query(AABB{Vec3(0.5f), Vec3(2.0f)}, [&](uint32_t) { ++hits; }, stack);
  EXPECT_EQ(hits, 1);
  DynamicTree none;
  none.rebuild();
  none.query(AABB{Vec3(0.0f), Vec3(1.0f)}, [&](uint32_t) { ++hits; }, stack);
  EXPECT_EQ(hits, 1);
}

// Bounds that are not finite (a body that blew up) must not break a rebuild: with an
// infinite leaf the finite ones are still found and the infinite one overlaps everything;
// NaN bounds (which no query can meet, and which poison the nodes above them) are rebuilt
// around without harm, and once they are finite again every query is answered again.
TEST(DynamicTree, RebuildsAroundBoundsThatAreNotFinite) {
  std::vector<int32_t> stack;
  DynamicTree tree;
  std::vector<AABB> boxes;
  std::vector<int32_t> proxies;
  for (uint32_t i = 0; i < 100; ++i) {
    const Vec3 c(float(i % 10), float(i / 10), 0.0f);
    boxes.push_back(AABB{c - Vec3(0.4f), c + Vec3(0.4f)});
    proxies.push_back(tree.create_proxy(boxes.back(), i));
  }
  auto check = [&](const char* when, bool with_infinite) {
    for (uint32_t i = 0; i < 100; ++i) {
      if (with_infinite && i == 3) continue;
      std::vector<uint32_t> found;
      tree.query(boxes[i], [&](uint32_t user) { found.push_back(user); }, stack);
      EXPECT_NE(std::find(found.begin(), found.end(), i), found.end()) << when << ": leaf " << i;
      if (with_infinite) {
        EXPECT_NE(std::find(found.begin(), found.end(), 3u), found.end()) << when << ": from " << i;
      }
    }
  };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  tree.set_leaf_box(proxies[3], AABB{Vec3(-inf), Vec3(inf)});
  tree.rebuild();
  check("an infinite leaf", true);
  tree.set_leaf_box(proxies[7], AABB{Vec3(nan), Vec3(nan)});
  tree.set_leaf_box(proxies[0], AABB{Vec3(nan, 0.0f, 0.0f), Vec3(inf, 1.0f, 1.0f)});
  tree.rebuild();
  EXPECT_EQ(tree.proxy_count(), 100);
  tree.set_leaf_box(proxies[3], boxes[3]);
  tree.set_leaf_box(proxies[7], boxes[7]);
  tree.set_leaf_box(proxies[0], boxes[0]);
  tree.rebuild();
  check("finite again", false);
}

}  // namespace
}  // namespace keel::sim
