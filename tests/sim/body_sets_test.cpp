// The awake set and the sleeping islands (sim/src/island/body_sets.h): after every step
// they are exactly what the bodies' flags say, through sleeping, waking by contact, by
// the API and by characters, bodies added and removed, and a restore.
#include <keel/sim/character.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "island/body_sets.h"
#include "test_bodies.h"
#include "world_access.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;
using Sleeper = BodySets::Sleeper;

// The sets a world's flags describe, built the slow way.
void expect_sets_agree(const World& world) {
  const WorldImpl& w = WorldAccess::impl(world);
  const BodySets& sets = w.body_sets;
  ASSERT_TRUE(sets.valid());
  ASSERT_TRUE(sets.settled());
  std::vector<uint32_t> awake;
  std::vector<Sleeper> asleep;
  for (uint32_t i = 0; i < uint32_t(w.bodies.size()); ++i) {
    const Body& b = w.bodies[i];
    if (!b.alive || b.motion == MotionType::Static) continue;
    if (b.sleeping) {
      asleep.push_back({b.island, i});
    } else {
      awake.push_back(i);
    }
  }
  std::sort(asleep.begin(), asleep.end());
  EXPECT_EQ(std::vector<uint32_t>(sets.awake().begin(), sets.awake().end()), awake);
  EXPECT_EQ(std::vector<Sleeper>(sets.asleep().begin(), sets.asleep().end()), asleep);
}

size_t asleep_count(const World& world) { return WorldAccess::impl(world).body_sets.asleep().size(); }

TEST(BodySets, SettleMergesWokenAndFallenBodiesInOrder) {
  BodySets sets;
  sets.reset();
  for (uint32_t slot : {7u, 2u, 9u}) sets.add_awake(slot);
  sets.add_asleep(4, 5);
  sets.add_asleep(4, 4);
  sets.add_asleep(1, 1);
  sets.add_asleep(1, 3);
  sets.finish_rebuild();
  ASSERT_EQ(std::vector<uint32_t>(sets.awake().begin(), sets.awake().end()), (std::vector<uint32_t>{2, 7, 9}));
  ASSERT_EQ(sets.island(4).size(), 2u);
  EXPECT_EQ(sets.island(4)[0], (Sleeper{4, 4}));
  EXPECT_EQ(sets.island(4)[1], (Sleeper{4, 5}));
  EXPECT_TRUE(sets.island(2).empty());

  // Island 1 wakes; the flags say slots 4 and 5 still sleep.
  std::vector<bool> sleeping(10, false);
  sleeping[4] = sleeping[5] = true;
  sets.woke(3);
  sets.woke(1);
  EXPECT_FALSE(sets.settled());
  sets.settle([&](uint32_t slot) { return bool(sleeping[slot]); });
  EXPECT_EQ(std::vector<uint32_t>(sets.awake().begin(), sets.awake().end()), (std::vector<uint32_t>{1, 2, 3, 7, 9}));
  EXPECT_EQ(std::vector<Sleeper>(sets.asleep().begin(), sets.asleep().end()), (std::vector<Sleeper>{{4, 4}, {4, 5}}));

  // Slots 9, 1 and 2 fall asleep in island 1.
  for (uint32_t slot : {9u, 1u, 2u}) {
    sleeping[slot] = true;
    sets.fell_asleep(1, slot);
  }
  sets.settle([&](uint32_t slot) { return bool(sleeping[slot]); });
  EXPECT_EQ(std::vector<uint32_t>(sets.awake().begin(), sets.awake().end()), (std::vector<uint32_t>{3, 7}));
  EXPECT_EQ(std::vector<Sleeper>(sets.asleep().begin(), sets.asleep().end()),
            (std::vector<Sleeper>{{1, 1}, {1, 2}, {1, 9}, {4, 4}, {4, 5}}));
}

struct Towers {
  World world;
  std::vector<BodyId> boxes;  // tower by tower, bottom up
};

// Five towers of four boxes on a floor, 3 m apart: five islands once they sleep.
void build_towers(Towers& t) {
  ASSERT_TRUE(t.world.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(40, 0.5f, 40))));
  for (int tower = 0; tower < 5; ++tower) {
    for (int level = 0; level < 4; ++level) {
      const uint32_t id = 100 + uint32_t(tower * 10 + level);
      t.boxes.push_back(*t.world.add_body(
          box_body(id, MotionType::Dynamic, Vec3(3.0f * float(tower) - 6.0f, 0.5f + float(level), 0), Vec3(0.5f))));
    }
  }
}

void step_checked(World& world, int ticks) {
  for (int i = 0; i < ticks; ++i) {
    world.step();
    expect_sets_agree(world);
    if (testing::Test::HasFailure()) return;
  }
}

TEST(BodySets, FollowTheFlagsThroughSleepWakeEditsAndRestore) {
  Towers t;
  build_towers(t);
  step_checked(t.world, 120);
  ASSERT_EQ(asleep_count(t.world), 20u);  // every tower asleep
  EXPECT_TRUE(WorldAccess::impl(std::as_const(t.world)).body_sets.awake().empty());

  // The API wakes one tower (an impulse on its top box): that island only.
  t.world.apply_impulse(t.boxes[3], Vec3(0, 0, 0.5f), t.world.body_state(t.boxes[3]).position);
  step_checked(t.world, 1);
  EXPECT_EQ(asleep_count(t.world), 16u);

  // A ball dropped on the second tower wakes it by contact.
  ASSERT_TRUE(t.world.add_body(sphere_body(500, MotionType::Dynamic, Vec3(-3, 6, 0), 0.3f)));
  bool second_woke = false;
  for (int i = 0; i < 60 && !HasFailure(); ++i) {
    step_checked(t.world, 1);
    second_woke |= !t.world.body_state(t.boxes[4]).sleeping;
  }
  EXPECT_TRUE(second_woke);

  // A body removed from under the third tower's top box wakes what rested on it.
  ASSERT_TRUE(t.world.remove_body(t.boxes[10]));
  step_checked(t.world, 30);
  EXPECT_FALSE(t.world.body_state(t.boxes[11]).sleeping);

  // Teleporting a sleeper wakes its island and what it touched.
  t.world.set_transform(t.boxes[12], Transform{Vec3(6, 8, 0), identity_quat()});
  step_checked(t.world, 1);
  EXPECT_FALSE(t.world.body_state(t.boxes[13]).sleeping);

  // A restored copy rebuilds its sets from the flags and goes on in step with the original.
  const std::vector<uint8_t> state = t.world.save_state();
  World copy;
  ASSERT_TRUE(copy.restore_state(state));
  for (int i = 0; i < 150; ++i) {
    t.world.step();
    copy.step();
    expect_sets_agree(t.world);
    expect_sets_agree(copy);
    ASSERT_EQ(t.world.hash(), copy.hash()) << "tick " << i;
    if (HasFailure()) return;
  }
  EXPECT_GT(asleep_count(t.world), 0u);  // things went back to sleep on the way
  // Gravity switched wakes every island.
  ASSERT_TRUE(t.world.set_gravity(Vec3(0, -9.81f, 1)));
  step_checked(t.world, 1);
  EXPECT_EQ(asleep_count(t.world), 0u);
}

TEST(BodySets, ACharacterWakesItselfOutOfTheAsleepSet) {
  World world;
  ASSERT_TRUE(world.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20))));
  BodyDef def = test::capsule_body(2, MotionType::Dynamic, Vec3(0, 0.9f, 0), 0.3f, 0.6f);
  def.freeze_rotation = true;
  const BodyId body = *world.add_body(def);
  ASSERT_TRUE(add_character(world, body));
  // An idle character comes to rest and may sleep; asked to move, it wakes itself.
  step_checked(world, 120);
  CharacterInput in;
  in.move = Vec3(1, 0, 0);
  set_character_input(world, body, in);
  step_checked(world, 10);
  EXPECT_FALSE(world.body_state(body).sleeping);
  EXPECT_GT(world.body_state(body).position.x, 0.05f);
}

}  // namespace
}  // namespace keel::sim
