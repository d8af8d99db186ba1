// Joints keep the determinism contract: the same hashes at 1, 2 and 4 threads, and a
// world saved mid-run and restored continues bit for bit.
#include <keel/sim/builders.h>
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <algorithm>
#include <iterator>

namespace keel::sim {
namespace {

/// Four ragdolls falling on a row of boxes, a car driving and a pendulum chain.
World busy_world(uint32_t threads) {
  WorldSettings s;
  s.threads = threads;
  World w(s);
  EXPECT_TRUE(w.add_body(test::box_body(1, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(50.0f, 0.5f, 50.0f))));
  for (uint32_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(w.add_body(test::box_body(10 + i, MotionType::Dynamic, Vec3(float(i) - 2.5f, 0.3f, 0.0f), Vec3(0.3f))));
  }
  for (uint32_t r = 0; r < 4; ++r) {
    RagdollDef d;
    d.first_id = 100 + 20 * r;
    d.position = Vec3(float(r) - 1.5f, 1.5f + 0.5f * float(r), 0.1f * float(r));
    d.holding_torque = r % 2 == 0 ? 0.0f : 100.0f;
    EXPECT_TRUE(add_assembly(w, build_ragdoll(d)));
  }
  VehicleDef car;
  car.first_id = 300;
  car.position = Vec3(0.0f, 0.85f, 8.0f);
  EXPECT_TRUE(add_assembly(w, build_vehicle(car)));
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(w.add_body(test::sphere_body(400 + i, MotionType::Dynamic, Vec3(6.0f + 0.5f * float(i), 4.0f, 0.0f), 0.2f)));
    JointDef j;
    j.kind = JointKind::Ball;
    j.body_a = 400 + i;
    j.body_b = i == 0 ? kWorldBodyId : 400 + i - 1;
    j.frame_a.position = Vec3(-0.25f, 0.0f, 0.0f);
    j.frame_b.position = i == 0 ? Vec3(5.75f, 4.0f, 0.0f) : Vec3(0.25f, 0.0f, 0.0f);
    EXPECT_TRUE(add_joint(w, j));
  }
  return w;
}

void step_car(World& w, int tick) {
  VehicleDef car;
  car.first_id = 300;
  auto v = find_vehicle(w, car);
  ASSERT_TRUE(v);
  drive(w, *v, tick < 120 ? 1.0f : 0.0f, tick > 60 ? 0.5f : 0.0f, tick >= 120 ? 1.0f : 0.0f);
}

std::vector<uint64_t> run(uint32_t threads, int ticks) {
  World w = busy_world(threads);
  std::vector<uint64_t> out;
  for (int t = 0; t < ticks; ++t) {
    step_car(w, t);
    w.step();
    out.push_back(w.hash());
  }
  return out;
}

TEST(JointDeterminismTest, SameHashesAtOneTwoAndFourThreads) {
  const auto one = run(1, 180);
  EXPECT_EQ(one, run(2, 180));
  EXPECT_EQ(one, run(4, 180));
}

TEST(JointDeterminismTest, SaveAndRestoreMidRunContinuesBitIdentically) {
  World a = busy_world(1);
  for (int t = 0; t < 90; ++t) {
    step_car(a, t);
    a.step();
  }
  std::vector<uint8_t> saved = a.save_state();
  World b;
  ASSERT_TRUE(b.restore_state(saved));
  EXPECT_EQ(b.hash(), a.hash());
  EXPECT_EQ(b.save_state(), saved);
  for (int t = 90; t < 200; ++t) {
    step_car(a, t);
    step_car(b, t);
    a.step();
    b.step();
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << t;
  }
}

bool has_joint_tag(const std::vector<uint8_t>& bytes) {
  const uint8_t tag[4] = {'J', 'I', 'N', 'T'};  // little-endian 0x544e494a
  return std::search(bytes.begin(), bytes.end(), std::begin(tag), std::end(tag)) != bytes.end();
}

// Worlds that never had a joint keep the bytes (and goldens) of a build without joints.
TEST(JointDeterminismTest, WorldWithoutJointsWritesNoJointSection) {
  World w;
  ASSERT_TRUE(w.add_body(test::sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.5f)));
  ASSERT_TRUE(w.add_body(test::sphere_body(2, MotionType::Dynamic, Vec3(2.0f, 0.0f, 0.0f), 0.5f)));
  const auto before = w.save_state();
  EXPECT_FALSE(has_joint_tag(before));
  JointDef j;
  j.kind = JointKind::Distance;
  j.body_a = 1;
  j.body_b = 2;
  ASSERT_TRUE(add_joint(w, j));
  const auto with_joint = w.save_state();
  EXPECT_TRUE(has_joint_tag(with_joint));
  EXPECT_GT(with_joint.size(), before.size());
  // The state round-trips through restore, joint included.
  World r;
  ASSERT_TRUE(r.restore_state(with_joint));
  EXPECT_EQ(joints(r).size(), 1u);
  EXPECT_EQ(r.save_state(), with_joint);
  // A damaged joint section is refused, not stepped.
  std::vector<uint8_t> damaged = with_joint;
  damaged.resize(damaged.size() - 3);
  World bad;
  EXPECT_FALSE(bad.restore_state(damaged));
}

}  // namespace
}  // namespace keel::sim
