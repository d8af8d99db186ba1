// The state hash (keel/sim/state_hash.h) is a function of the canonical bytes alone: every
// World::hash() must equal the reference below computed from save_state(), whatever the
// world went through (falling, sleeping, dormant, partly asleep, woken, edited,
// restored), and a kept digest must never outlive a change of state.
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

// The definition (docs/determinism.md, "The state hash"), the slow obvious way, for a
// world's bytes: read field by field, each section's bytes gathered, then hashed.
struct Walk {
  const std::vector<uint8_t>& b;
  size_t at = 0;
  std::vector<uint8_t> take(size_t n) {
    EXPECT_LE(at + n, b.size());
    std::vector<uint8_t> out(b.begin() + ptrdiff_t(at), b.begin() + ptrdiff_t(at + n));
    at += n;
    return out;
  }
  uint32_t u32() {
    const std::vector<uint8_t> v = take(4);
    return uint32_t(v[0]) | uint32_t(v[1]) << 8 | uint32_t(v[2]) << 16 | uint32_t(v[3]) << 24;
  }
};

void append_le(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

uint64_t xxh3(const std::vector<uint8_t>& v) { return XXH3_64bits(v.data(), v.size()); }

// A live slot's digest: the bytes in `moving` ([begin, end) pairs) hashed with the hash
// of the other bytes as the seed.
uint64_t live_slot(const std::vector<uint8_t>& slot, std::vector<std::pair<size_t, size_t>> moving) {
  std::vector<uint8_t> fixed, moved;
  for (size_t i = 0; i < slot.size(); ++i) {
    bool in = false;
    for (auto [begin, end] : moving) in = in || (i >= begin && i < end);
    (in ? moved : fixed).push_back(slot[i]);
  }
  return XXH3_64bits_withSeed(moved.data(), moved.size(), xxh3(fixed));
}

uint64_t reference_hash(const std::vector<uint8_t>& bytes) {
  Walk w{bytes};
  std::vector<uint8_t> sections;
  append_le(sections, xxh3(w.take(60)));  // magic, version, settings, tick, next id
  std::vector<uint8_t> digests;
  for (uint32_t n = w.u32(), i = 0; i < n; ++i) {  // body slots
    std::vector<uint8_t> slot = w.take(5);
    if (slot[0] != 0) {
      const std::vector<uint8_t> fields = w.take(200 + 4);
      slot.insert(slot.end(), fields.begin(), fields.end());
      const uint32_t colliders = uint32_t(fields[200]) | uint32_t(fields[201]) << 8;  // (under 65,536 here)
      const std::vector<uint8_t> list = w.take(4 * colliders);
      slot.insert(slot.end(), list.begin(), list.end());
      // origin and centre; velocities; gravity scale, sleep time and island; sleeping
      append_le(digests, live_slot(slot, {{10, 50}, {62, 86}, {174, 186}, {204, 205}}));
    } else {
      append_le(digests, xxh3(slot));
    }
  }
  append_le(sections, xxh3(digests));
  const auto free_list = [&] {
    const size_t from = w.at;
    const uint32_t n = w.u32();
    w.take(4 * n);
    append_le(sections, XXH3_64bits(bytes.data() + from, w.at - from));
  };
  free_list();
  digests.clear();
  for (uint32_t n = w.u32(), i = 0; i < n; ++i) {  // collider slots: these tests use only spheres, boxes, capsules
    std::vector<uint8_t> slot = w.take(1);
    if (slot[0] != 0) {
      const std::vector<uint8_t> fields = w.take(96);
      EXPECT_LE(fields[4], 2) << "a collider type with geometry data";
      slot.insert(slot.end(), fields.begin(), fields.end());
      append_le(digests, live_slot(slot, {{73, 97}}));  // the fat bounds
    } else {
      append_le(digests, xxh3(slot));
    }
  }
  append_le(sections, xxh3(digests));
  free_list();
  std::vector<uint8_t> pairs, points;
  for (uint32_t n = w.u32(), i = 0; i < n; ++i) {
    const std::vector<uint8_t> a = w.take(4), b = w.take(4), count = w.take(1);
    pairs.insert(pairs.end(), b.begin(), b.end());  // the u64 shape_a << 32 | shape_b, little-endian
    pairs.insert(pairs.end(), a.begin(), a.end());
    if (count[0] == 0) continue;
    std::vector<uint8_t> record = a;
    record.insert(record.end(), b.begin(), b.end());
    record.push_back(count[0]);
    const std::vector<uint8_t> rest = w.take(20 * count[0] + 1);
    record.insert(record.end(), rest.begin(), rest.end());
    points.insert(points.end(), record.begin(), record.end());
  }
  append_le(sections, xxh3(pairs));
  append_le(sections, xxh3(points));
  append_le(sections, xxh3(w.take(bytes.size() - w.at)));  // everything after the contacts
  return xxh3(sections);
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

// The world's hash, the hash of its bytes and the reference: all three equal.
void expect_reference(const World& w, const std::string& when) {
  const std::vector<uint8_t> bytes = w.save_state();
  const uint64_t reference = reference_hash(bytes);
  ASSERT_EQ(state_hash(bytes), reference) << when << " at tick " << w.tick() << " (from the bytes)";
  ASSERT_EQ(w.hash(), reference) << when << " at tick " << w.tick() << " (from the world)";
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

TEST(StateHash, BytesThatAreNotAStateHashAsAWhole) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{59}, size_t{4097}, size_t{40000}}) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = uint8_t(i * 131 + 7);
    EXPECT_EQ(state_hash(bytes), XXH3_64bits(bytes.data(), bytes.size())) << n << " bytes";
  }
  // A magic with too few bytes after it, and a state cut short, are not states either.
  World w = stack_world();
  std::vector<uint8_t> cut = w.save_state();
  cut.resize(cut.size() / 2);
  EXPECT_EQ(state_hash(cut), XXH3_64bits(cut.data(), cut.size()));
  cut.resize(20);
  EXPECT_EQ(state_hash(cut), XXH3_64bits(cut.data(), cut.size()));
}

TEST(StateHash, BytesAheadOfTheWorldAreItsHead) {
  // What a match hashes: its own bytes, then the world's. Without a magic of their own
  // they are hashed with the world's header; with one (here a forged "state" that does
  // not read as one) the bytes' rule, the first magic that reads as a state, still holds.
  World w = stack_world();
  for (int t = 0; t < 30; ++t) w.step();
  const std::vector<uint8_t> world = w.save_state();
  const std::vector<uint8_t> own = {1, 2, 3, 4, 5};
  std::vector<uint8_t> forged = {9, 'K', 'E', 'E', 'L', 'S', 'T', 'A', 'T', 0, 0};
  for (const std::vector<uint8_t>& prefix : {own, forged, std::vector<uint8_t>{'K', 'E', 'E'}}) {
    std::vector<uint8_t> all = prefix;
    all.insert(all.end(), world.begin(), world.end());
    EXPECT_EQ(w.hash_after(prefix), state_hash(all)) << prefix.size() << " bytes ahead";
    EXPECT_NE(w.hash_after(prefix), w.hash());
  }
  EXPECT_EQ(w.hash_after({}), w.hash());
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
  EXPECT_GT(w.save_state().size(), size_t{16384});
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
  // Every byte of the header and the first bodies, then every 97th: the hash of the bytes
  // moves with each one (a count or a magic changed so that the bytes no longer read as a
  // state too: they then hash as a whole).
  for (size_t at = 0; at < saved.size(); at += at < 8192 ? 1 : 97) {
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

// A world partly asleep: the stack sleeps while one sphere rolls on, so most bodies keep
// their digests and a few are hashed anew each tick; then the stack is woken by a hit.
TEST(StateHash, APartlySleepingWorldEqualsTheReferenceEveryTick) {
  World w = stack_world();
  settle(w);
  if (HasFatalFailure()) return;
  const BodyId rolling = w.find_body(67);  // the last sphere, at x = 16
  w.set_linear_velocity(rolling, {0, 0, 2.0f});
  size_t partly = 0;
  for (int t = 0; t < 90; ++t) {
    w.step();
    expect_reference(w, "one sphere rolling");
    size_t asleep = 0;
    for (BodyId b : w.bodies()) asleep += w.body_state(b).sleeping ? 1 : 0;
    if (asleep > 60 && !w.body_state(rolling).sleeping) ++partly;
  }
  EXPECT_GT(partly, size_t{60}) << "most ticks should have the stack asleep and the sphere awake";
  // A body of the stack woken, the rest asleep around it; then the sphere thrown in.
  w.apply_impulse(w.find_body(2), {0, 0, -40}, w.body_state(w.find_body(2)).position);
  for (int t = 0; t < 90; ++t) {
    w.step();
    expect_reference(w, "a corner woken");
  }
}

// Per-slot digests: a field only the API changes, on one body of a world whose digests
// are all kept (dormant), must reach the hash; so must a second change after a hash, and
// the change undone must give the first hash back.
TEST(StateHash, OneBodysFixedFieldReachesTheHash) {
  World w = stack_world();
  settle(w);
  if (HasFatalFailure()) return;
  const uint64_t before = w.hash();
  w.set_body_kind(w.find_body(33), 7);
  const uint64_t kind7 = w.hash();
  EXPECT_NE(kind7, before);
  expect_reference(w, "kind 7");
  w.step();
  expect_reference(w, "kind 7, stepped");
  w.set_body_kind(w.find_body(33), 8);
  EXPECT_NE(w.hash(), kind7);
  expect_reference(w, "kind 8");
  w.set_body_kind(w.find_body(33), 0);
  expect_reference(w, "kind 0");
  World again = stack_world();
  settle(again);
  if (HasFatalFailure()) return;
  again.step();  // as many steps as w took
  EXPECT_EQ(w.hash(), again.hash()) << "the same state, reached two ways";
}

}  // namespace
}  // namespace keel::sim
