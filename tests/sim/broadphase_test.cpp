// The broadphase's new pairs, checked against every pair tested by brute force: a pair is
// new when at least one side moved, the fat bounds overlap, should_collide accepts it and
// it is not known yet. Many colliders move at once (a falling pile), some only one side,
// some not at all; statics, a trigger, a layer mask, a jointed pair and a disabled
// collider are mixed in; on one and on two threads.
#include "broadphase/broadphase.h"
#include "parallel/executor.h"
#include "world_impl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
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
    BroadPhase bp;
    for (uint32_t i = 0; i < l.shapes.size(); ++i) {
      Shape& s = l.shapes[i];
      s.proxy = s.enabled ? bp.add(i, s.fat, s.is_static) : -1;
    }
    // Every collider was just added, so every overlap is new.
    std::vector<uint8_t> moved(l.shapes.size(), 1);
    std::vector<uint64_t> known;
    std::vector<uint64_t> pairs;
    bp.collect_pairs(l.shapes, l.bodies, known, executor, pairs);
    std::vector<uint64_t> expected = brute_force(l, moved, known);
    ASSERT_GT(expected.size(), 1000u) << "the layout should be busy";
    EXPECT_EQ(pairs, expected) << threads << " threads, all added";
    known = pairs;

    // Rounds of motion: most movable colliders shift at once, or only a few, and some
    // pairs are forgotten (as the contact set drops pairs whose fat bounds part).
    std::uniform_real_distribution<float> step(-0.4f, 0.4f);
    for (int round = 0; round < 6; ++round) {
      std::fill(moved.begin(), moved.end(), 0);
      const uint32_t every = round % 2 == 0 ? 1 : 9;
      for (uint32_t i = 0; i < l.shapes.size(); ++i) {
        Shape& s = l.shapes[i];
        if (s.is_static || !s.enabled || i % every != 0 || i % 10 == 5) continue;
        const Vec3 d(step(rng), step(rng), step(rng));
        s.fat = AABB{s.fat.lower + d, s.fat.upper + d};
        bp.move(s.proxy, i, s.fat, false);
        moved[i] = 1;
      }
      std::vector<uint64_t> kept;
      for (size_t k = 0; k < known.size(); ++k) {
        if (k % 3 != 0) kept.push_back(known[k]);
      }
      known = kept;
      bp.collect_pairs(l.shapes, l.bodies, known, executor, pairs);
      expected = brute_force(l, moved, known);
      ASSERT_FALSE(expected.empty());
      EXPECT_EQ(pairs, expected) << threads << " threads, round " << round;
      std::vector<uint64_t> merged;
      std::merge(known.begin(), known.end(), pairs.begin(), pairs.end(), std::back_inserter(merged));
      known = merged;
    }
  }
}

}  // namespace
}  // namespace keel::sim
