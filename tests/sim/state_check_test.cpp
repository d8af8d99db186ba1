// World::restore_state on edited states: each edit a forged or damaged state could carry
// is refused with a message that names the section, the body and the field, and the
// world that was asked to restore is left as it was.
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

#define EXPECT_CONTAINS(text, part)                                     \
  do {                                                                  \
    const std::string got_ = (text);                                    \
    EXPECT_NE(got_.find(part), std::string::npos) << "message: " << got_; \
  } while (0)

// Offsets in the canonical layout (state.cpp): magic 8, version 4, settings 36 (tick
// rate at 12, gravity at 16), tick 8, next id 4, body count 4; then slot 0: alive (64),
// generation, and the body: id (69), motion (73), position (74), rotation (86),
// centre (102), local centre (114), velocities (126, 138), mass (150), inverse mass (154).
constexpr size_t kGravityY = 20, kSlot0Alive = 64, kBody0Id = 69, kBody0Motion = 73, kBody0Position = 74,
                 kBody0Mass = 150;

void put_f32(std::vector<uint8_t>& bytes, size_t at, float v) { std::memcpy(&bytes[at], &v, 4); }
void put_u32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const std::vector<uint8_t>& bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(bytes[at + i]) << (8 * i);
  return v;
}

// A dynamic sphere in slot 0 (id 1001), a dynamic box (1002) and a static floor (1003).
World small_world() {
  World w;
  EXPECT_TRUE(w.add_body(sphere_body(1001, MotionType::Dynamic, Vec3(0, 2, 0), 0.5f)));
  EXPECT_TRUE(w.add_body(box_body(1002, MotionType::Dynamic, Vec3(3, 2, 0), Vec3(0.5f))));
  EXPECT_TRUE(w.add_body(box_body(1003, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20))));
  return w;
}

// Restores `bytes` into a world holding small_world(); returns the error ("" when
// accepted) and checks that a refused state left that world untouched.
std::string restore_error(const std::vector<uint8_t>& bytes) {
  World w = small_world();
  const uint64_t before = w.hash();
  Status st = w.restore_state(bytes);
  if (st) return "";
  EXPECT_EQ(w.hash(), before) << "a refused state must leave the world as it was";
  return st.error().message;
}

TEST(StateCheck, TheOffsetsThisTestEditsAreWhereItThinks) {
  std::vector<uint8_t> s = small_world().save_state();
  EXPECT_EQ(s[kSlot0Alive], 1);
  EXPECT_EQ(get_u32(s, kBody0Id), 1001u);
  EXPECT_EQ(s[kBody0Motion], uint8_t(MotionType::Dynamic));
  float y = 0, mass = 0;
  std::memcpy(&y, &s[kBody0Position + 4], 4);
  std::memcpy(&mass, &s[kBody0Mass], 4);
  EXPECT_EQ(y, 2.0f);
  EXPECT_GT(mass, 100.0f);  // a 0.5 m sphere of water: 524 kg
  EXPECT_EQ(restore_error(s), "");
}

TEST(StateCheck, NumbersOutsideTheLimitsAreRefusedByField) {
  const std::vector<uint8_t> good = small_world().save_state();
  std::vector<uint8_t> s = good;
  put_f32(s, kGravityY, 1e30f);
  EXPECT_CONTAINS(restore_error(s), "settings: gravity.y must be within +-1000 (got 1e+30)");
  s = good;
  put_f32(s, kBody0Position, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(restore_error(s),
            "world state is damaged: bodies: body 1001 (slot 0): position is not finite or beyond the state limit");
  s = good;
  put_f32(s, kBody0Position + 4, 1e30f);
  EXPECT_CONTAINS(restore_error(s), "body 1001 (slot 0): position is not finite or beyond the state limit");
  s = good;
  put_f32(s, kBody0Mass, 1e30f);
  EXPECT_EQ(restore_error(s),
            "world state is damaged: bodies: body 1001 (slot 0): mass is outside the dynamic body range");
  s = good;
  put_f32(s, kBody0Position + 12, 3.0f);  // rotation.x: the quaternion is no longer unit
  EXPECT_CONTAINS(restore_error(s), "body 1001 (slot 0): rotation is not a unit quaternion");
  s = good;
  s[kBody0Motion] = uint8_t(MotionType::Static);  // a static body with a mass
  EXPECT_CONTAINS(restore_error(s), "body 1001 (slot 0): mass must be 0 on a static or kinematic body");
}

TEST(StateCheck, InconsistentSlotsAndIdsAreRefused) {
  const std::vector<uint8_t> good = small_world().save_state();
  std::vector<uint8_t> s = good;
  // Body 1002's id (the only other place it appears: nothing touches yet) becomes 1001.
  size_t at = kBody0Id + 4;
  while (at + 4 <= s.size() && get_u32(s, at) != 1002u) ++at;
  ASSERT_LT(at + 4, s.size());
  put_u32(s, at, 1001u);
  EXPECT_EQ(restore_error(s), "world state is damaged: bodies: id is used by two bodies");
}

TEST(StateCheck, BytesOutsideTheirCanonicalEncodingAreRefused) {
  const std::vector<uint8_t> good = small_world().save_state();
  std::vector<uint8_t> s = good;
  s[kSlot0Alive] = 2;  // read as alive, would save as 1: a different hash for the same world
  EXPECT_EQ(restore_error(s), "world state is damaged: byte 64 is not in canonical form (a flag byte other than 0 "
                              "or 1, or a resting contact that disagrees with its bodies' poses)");
}

TEST(StateCheck, EveryPrefixOfAStateIsRefused) {
  World w = small_world();
  for (int t = 0; t < 90; ++t) w.step();  // contacts and touching pairs in the state too
  const std::vector<uint8_t> good = w.save_state();
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> prefix(good.begin(), good.begin() + long(n));
    World r;
    ASSERT_FALSE(r.restore_state(prefix)) << n << " of " << good.size() << " bytes";
  }
}

}  // namespace
}  // namespace keel::sim

namespace keel::sim {
namespace {

TEST(StateCheck, AStateClaimingMoreSlotsThanItsSizeAllowsIsRefusedBeforeAllocating) {
  // An empty world's state ends with its seven empty lists (bodies, their free list,
  // colliders, theirs, contacts, touching and sensed pairs), the collider count at 68.
  World empty;
  std::vector<uint8_t> bytes = empty.save_state();
  ASSERT_EQ(bytes.size(), 60u + 7 * 4);
  ASSERT_EQ(get_u32(bytes, 60), 0u);
  // Three million dead colliders: one byte each in the state (3 MB), about 180 bytes
  // each in memory (over 500 MB), far beyond what a 3 MB state may claim.
  constexpr uint32_t kDead = 3'000'000;
  bytes.resize(68);
  bytes.resize(72 + kDead + 5 * 4, 0);
  put_u32(bytes, 68, kDead);
  World w;
  const uint64_t before = w.hash();
  auto st = w.restore_state(bytes);
  ASSERT_FALSE(st);
  EXPECT_CONTAINS(st.error().message, "collider slots would need");
  EXPECT_EQ(w.hash(), before);
  // The same number of dead colliders in a world small enough is only refused later, for
  // what it is (slots missing from the free list), not for its size.
  bytes.resize(68);
  bytes.resize(72 + 1000 + 5 * 4, 0);
  put_u32(bytes, 68, 1000);
  st = w.restore_state(bytes);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message.find("would need"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace keel::sim
