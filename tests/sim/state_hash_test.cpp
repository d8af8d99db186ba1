// The state hash (keel/sim/state_hash.h) is a function of the canonical bytes alone: every
// World::hash() must equal the reference below computed from save_state(), whatever the
// world went through (falling, sleeping, dormant, woken, edited, restored), and a cached
// block digest must never outlive a change of state.
#include "test_bodies.h"

#include <keel/sim/character.h>
#include <keel/sim/joint.h>
#include <keel/sim/state_hash.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

// The definition, the slow obvious way: blocks of 4096 bytes cut back from the end, each
// hashed with XXH3-64, the digests' little-endian bytes hashed again.
uint64_t reference_hash(const std::vector<uint8_t>& bytes) {
  constexpr size_t kBlock = 4096;
  std::vector<size_t> starts;
  for (size_t end = bytes.size(); end > 0; end = end > kBlock ? end - kBlock : 0) {
    starts.insert(starts.begin(), end > kBlock ? end - kBlock : 0);
  }
  std::vector<uint8_t> digests;
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t end = i + 1 < starts.size() ? starts[i + 1] : bytes.size();
    const uint64_t d = XXH3_64bits(bytes.data() + starts[i], end - starts[i]);
    for (int b = 0; b < 8; ++b) digests.push_back(uint8_t(d >> (8 * b)));
  }
  return XXH3_64bits(digests.data(), digests.size());
}

// Ground, a 4x4x4 stack of boxes resting on it (well over a dozen blocks of state) and a
// few spheres that fall a little: asleep after a few seconds.
World stack_world(uint32_t threads = 1) {
  WorldSettings settings;
  settings.threads = threads;
  World w(settings);
  EXPECT_TRUE(w.add_body(box_body(1, MotionType::Static, {0, -0.5f, 0}, {50, 0.5f, 50})));
  uint32_t id = 2;
  for (int y = 0; y < 4; ++y) {
    for (int z = 0; z < 4; ++z) {
      for (int x = 0; x < 4; ++x) {
        EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, {x * 1.1f, 0.5f + y * 1.0f, z * 1.1f}, {0.5f, 0.5f, 0.5f})));
      }
    }
  }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(w.add_body(sphere_body(id++, MotionType::Dynamic, {10.0f + 2 * i, 1.0f, 0}, 0.5f)));
  return w;
}

bool all_asleep(const World& w) {
  for (BodyId b : w.bodies()) {
    const BodyState s = w.body_state(b);
    if (s.motion == MotionType::Dynamic && !s.sleeping) return false;
  }
  return true;
}

void expect_reference(const World& w, const std::string& when) {
  ASSERT_EQ(w.hash(), reference_hash(w.save_state())) << when << " at tick " << w.tick();
}

// Steps until every body sleeps (hashing every tick, so the world's digests are cached),
// then a few dormant ticks more; fails if the world never settles.
void settle(World& w) {
  for (int t = 0; t < 1200 && !all_asleep(w); ++t) {
    w.step();
    expect_reference(w, "settling");
  }
  ASSERT_TRUE(all_asleep(w));
  for (int t = 0; t < 5; ++t) {
    w.step();
    expect_reference(w, "dormant");
  }
}

TEST(StateHash, ReferenceOfBytesCutsBlocksFromTheEnd) {
  // Sizes around the block boundaries, and a block's worth of digests.
  for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{8192}, size_t{40000}}) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = uint8_t(i * 131 + 7);
    EXPECT_EQ(state_hash(bytes), reference_hash(bytes)) << n << " bytes";
  }
  EXPECT_EQ(state_hash({}), XXH3_64bits(nullptr, 0));
}

TEST(StateHash, EqualsTheReferenceEveryTickWhileFallingSleepingAndDormant) {
  World w = stack_world();
  expect_reference(w, "new world");
  uint64_t last = w.hash();
  for (int t = 0; t < 900; ++t) {
    w.step();
    const uint64_t h = w.hash();
    ASSERT_EQ(h, reference_hash(w.save_state())) << "tick " << w.tick();
    ASSERT_NE(h, last) << "the tick is state: every step changes the hash (tick " << w.tick() << ")";
    last = h;
  }
  EXPECT_TRUE(all_asleep(w)) << "the stack should be dormant by now, so the cached digests were exercised";
  EXPECT_GT(w.save_state().size(), 6 * kStateHashBlock);
}

TEST(StateHash, HashedEveryFewTicksEqualsTheReference) {
  // The digests cached at one hash must cover every step taken before the next.
  World w = stack_world();
  for (int t = 1; t <= 900; ++t) {
    w.step();
    if (t % 7 == 0) expect_reference(w, "every 7th tick");
    if (t == 450) {  // woken and edited between two hashes
      w.apply_impulse(w.find_body(5), {0, 300, 0}, w.body_state(w.find_body(5)).position);
    }
  }
}

// Each edit is made to a dormant world whose digests were just cached; the hash right
// after it (before any step) and along the steps after it must be the reference.
struct Edit {
  const char* name;
  std::function<void(World&)> apply;
};

TEST(StateHash, EveryWayOfChangingADormantWorldDropsItsDigests) {
  const std::vector<Edit> edits = {
      {"set_linear_velocity", [](World& w) { w.set_linear_velocity(w.find_body(9), {0.001f, 0, 0}); }},
      {"set_angular_velocity", [](World& w) { w.set_angular_velocity(w.find_body(9), {0, 0.001f, 0}); }},
      {"set_transform", [](World& w) {
         Transform t{w.body_state(w.find_body(60)).position + Vec3(0, 1e-4f, 0), identity_quat()};
         w.set_transform(w.find_body(60), t);
       }},
      {"move_kinematic of a static body (ignored)", [](World& w) { w.move_kinematic(w.find_body(1), Transform{}); }},
      {"apply_impulse", [](World& w) { w.apply_impulse(w.find_body(66), {0, 0, 1}, w.body_state(w.find_body(66)).position); }},
      {"add_body", [](World& w) { ASSERT_TRUE(w.add_body(sphere_body(500, MotionType::Dynamic, {-5, 3, -5}, 0.3f))); }},
      {"remove_body (a sleeping one)", [](World& w) { ASSERT_TRUE(w.remove_body(w.find_body(30))); }},
      {"remove_body (the last slot)", [](World& w) { ASSERT_TRUE(w.remove_body(w.find_body(69))); }},
      {"add_joint", [](World& w) {
         JointDef j;
         j.kind = JointKind::Ball;
         j.body_a = 66;
         j.frame_b.position = w.body_state(w.find_body(66)).position;
         ASSERT_TRUE(add_joint(w, j));
       }},
      {"add_character", [](World& w) {
         ASSERT_TRUE(w.add_body(test::capsule_body(600, MotionType::Dynamic, {-8, 1.2f, 4}, 0.4f, 0.5f)));
         ASSERT_TRUE(add_character(w, w.find_body(600)));
       }},
      {"set_threads (no change of state)", [](World& w) { w.set_threads(2); }},
  };
  for (const Edit& e : edits) {
    SCOPED_TRACE(e.name);
    World w = stack_world();
    settle(w);
    if (HasFatalFailure()) return;
    (void)w.hash();  // the digests of the dormant world, cached
    e.apply(w);
    if (HasFatalFailure()) return;
    expect_reference(w, std::string("right after ") + e.name);
    for (int t = 0; t < 120; ++t) {
      w.step();
      expect_reference(w, std::string("after ") + e.name);
    }
  }
}

TEST(StateHash, JointAndCharacterChangesDropTheDigests) {
  World w = stack_world();
  JointDef j;
  j.kind = JointKind::Hinge;
  j.body_a = 67;
  j.frame_b.position = w.body_state(w.find_body(67)).position;
  auto joint = add_joint(w, j);
  ASSERT_TRUE(joint);
  ASSERT_TRUE(w.add_body(test::capsule_body(600, MotionType::Dynamic, {-8, 1.0f, 4}, 0.4f, 0.5f)));
  ASSERT_TRUE(add_character(w, w.find_body(600)));
  for (int t = 0; t < 200; ++t) {
    w.step();
    expect_reference(w, "stepping");
  }
  set_joint_motor(w, *joint, JointMotor{true, 2.0f, 50.0f});
  expect_reference(w, "after set_joint_motor");
  set_character_input(w, w.find_body(600), CharacterInput{{1, 0, 0}, false});
  expect_reference(w, "after set_character_input");
  for (int t = 0; t < 60; ++t) {
    w.step();
    expect_reference(w, "moving");
  }
  ASSERT_TRUE(remove_joint(w, *joint));
  expect_reference(w, "after remove_joint");
  ASSERT_TRUE(remove_character(w, w.find_body(600)));
  expect_reference(w, "after remove_character");
  for (int t = 0; t < 60; ++t) {
    w.step();
    expect_reference(w, "after removals");
  }
}

TEST(StateHash, RestoreKeepsTheHashAndTheRunAfterIt) {
  World a = stack_world();
  World b = stack_world();
  settle(a);
  for (int t = 0; t < 100; ++t) b.step();  // mid-fall, digests of another state cached
  (void)b.hash();
  const std::vector<uint8_t> saved = a.save_state();
  const uint64_t at_save = a.hash();
  ASSERT_TRUE(b.restore_state(saved));
  EXPECT_EQ(b.hash(), at_save);
  ASSERT_TRUE(a.restore_state(saved));  // restoring a world onto its own state
  EXPECT_EQ(a.hash(), at_save);
  a.apply_impulse(a.find_body(20), {0, 200, 0}, a.body_state(a.find_body(20)).position);
  b.apply_impulse(b.find_body(20), {0, 200, 0}, b.body_state(b.find_body(20)).position);
  for (int t = 0; t < 240; ++t) {
    a.step();
    b.step();
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << a.tick();
    expect_reference(b, "restored");
  }
}

TEST(StateHash, ThreadCountsGiveTheSameHashes) {
  World one = stack_world(1);
  std::vector<World> others;
  for (uint32_t threads : {2u, 4u, 8u}) others.push_back(stack_world(threads));
  for (int t = 0; t < 400; ++t) {
    one.step();
    const uint64_t h = one.hash();
    for (World& o : others) {
      o.step();
      ASSERT_EQ(o.hash(), h) << "threads " << o.settings().threads << " tick " << t;
    }
  }
}

TEST(StateHash, OneByteOfABodyChangesTheHash) {
  World w = stack_world();
  settle(w);
  const std::vector<uint8_t> saved = w.save_state();
  const uint64_t original = w.hash();
  // Every byte of the first blocks (the header and the first bodies), then every 97th:
  // the hash of the bytes moves with each one.
  for (size_t at = 0; at < saved.size(); at += at < 2 * kStateHashBlock ? 1 : 97) {
    std::vector<uint8_t> changed = saved;
    changed[at] ^= 0x01;
    ASSERT_NE(state_hash(changed), original) << "byte " << at;
  }
  // A world restored from bytes whose one body field changed hashes as those bytes do.
  World v = stack_world();
  ASSERT_TRUE(v.restore_state(saved));
  const Vec3 vel = v.body_state(v.find_body(40)).linear_velocity;
  Vec3 nudged = vel;
  nudged.x = std::nextafter(vel.x, 1.0f);  // the smallest change: one bit of one float
  v.set_linear_velocity(v.find_body(40), nudged);
  EXPECT_NE(v.hash(), original);
  expect_reference(v, "one bit of a velocity");
  v.set_linear_velocity(v.find_body(40), vel);
  EXPECT_EQ(v.hash(), reference_hash(v.save_state()));
}

}  // namespace
}  // namespace keel::sim
