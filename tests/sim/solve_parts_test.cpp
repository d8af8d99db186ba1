// The solve split into parts that one thread each runs whole: which islands make a part,
// which go to the team, and that a world solved in parts computes exactly the bits of the
// same world solved colour by colour as one team, at any thread count.
#include "solver/solve_parts.h"
#include "test_bodies.h"
#include "world_access.h"

#include <keel/sim/det_math.h>
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

/// Links chaining `bodies` one to the next.
void chain(const std::vector<uint32_t>& bodies, std::vector<SolveLink>& links) {
  for (size_t i = 1; i < bodies.size(); ++i) links.push_back({bodies[i - 1], bodies[i]});
}

uint32_t part_begin(const SolveParts& p, uint32_t part) { return part == 0 ? 1 : p.body_end[part - 1]; }

// 20 islands of 10 bodies (9 links each: weight 19), their bodies interleaved: island k
// holds bodies k + 1, k + 21, ... Parts take islands in the order of their lowest body
// and close at weight 128 or more: islands 0-6 (133), 7-13, 14-19. Nothing is heavy
// enough for the team.
TEST(SolveParts, SmallIslandsAreGatheredIntoPartsInTheOrderOfTheirLowestBody) {
  const uint32_t body_count = 1 + 200;
  std::vector<SolveLink> links;
  for (uint32_t k = 0; k < 20; ++k) {
    std::vector<uint32_t> island;
    for (uint32_t j = 0; j < 10; ++j) island.push_back(k + 1 + 20 * j);
    chain(island, links);
  }
  SolveParts p;
  split_solve(body_count, links, {}, p);
  ASSERT_EQ(p.parts, 3u);
  ASSERT_EQ(p.body_end.size(), 4u);
  EXPECT_EQ(p.body_end[0], 1u + 70u);
  EXPECT_EQ(p.body_end[1], 1u + 140u);
  EXPECT_EQ(p.body_end[2], 1u + 200u);
  EXPECT_EQ(p.body_end[3], p.body_end[2]) << "no team";
  for (uint32_t i = 1; i < body_count; ++i) {
    const uint32_t island = (i - 1) % 20;
    const uint32_t part = island / 7;
    EXPECT_EQ(p.part_of[i], part) << "body " << i;
    EXPECT_GE(p.new_index[i], part_begin(p, part)) << "body " << i;
    EXPECT_LT(p.new_index[i], p.body_end[part]) << "body " << i;
  }
  // Old order within a part: body 1 (island 0) first, body 2 (island 1) next.
  EXPECT_EQ(p.new_index[1], 1u);
  EXPECT_EQ(p.new_index[2], 2u);
  EXPECT_EQ(p.new_index[8], 71u);  // island 7 opens part 1
  EXPECT_EQ(p.new_index[0], 0u);   // the stand-in stays
}

// A 200-body chain (weight 399 of a total of 432: above 128) goes to the team; ten
// two-body islands and a jointed pair (weight 3 each) make one part: a part solves its
// own joints. The team's bodies come last.
TEST(SolveParts, HeavyIslandsGoToTheTeamAndJointedOnesJoinParts) {
  std::vector<SolveLink> links, joints;
  std::vector<uint32_t> big;
  for (uint32_t i = 1; i <= 200; ++i) big.push_back(i);
  chain(big, links);
  for (uint32_t k = 0; k < 10; ++k) links.push_back({201 + 2 * k, 202 + 2 * k});
  joints.push_back({221, 222});
  SolveParts p;
  split_solve(223, links, joints, p);
  ASSERT_EQ(p.parts, 1u);
  EXPECT_EQ(p.body_end[0], 1u + 22u);
  EXPECT_EQ(p.body_end[1], 223u);
  for (uint32_t i = 1; i <= 200; ++i) EXPECT_EQ(p.part_of[i], 1u) << "chain body " << i;
  for (uint32_t i = 201; i <= 220; ++i) {
    EXPECT_EQ(p.part_of[i], 0u) << "small island body " << i;
    EXPECT_EQ(p.new_index[i], i - 200) << "small island body " << i;
  }
  EXPECT_EQ(p.part_of[221], 0u);
  EXPECT_EQ(p.part_of[222], 0u);
  EXPECT_EQ(p.new_index[222], 22u);
  EXPECT_EQ(p.new_index[1], 23u);    // the team after the part, old order kept
  EXPECT_EQ(p.new_index[200], 222u);
}

// The team threshold grows with the world: 20 chains of 100 bodies (weight 199 each, of
// 3,980: the threshold is 248) each make a part of their own. Each chain also touches the
// stand-in at both ends; were the stand-in a body that joins, the chains would be one
// island of weight 4,020, far above the threshold, and all of it would go to the team.
TEST(SolveParts, TheStandInJoinsNothingAndBigWorldsKeepBigIslandsInParts) {
  std::vector<SolveLink> links;
  for (uint32_t k = 0; k < 20; ++k) {
    std::vector<uint32_t> c;
    for (uint32_t j = 0; j < 100; ++j) c.push_back(1 + 100 * k + j);
    chain(c, links);
    links.push_back({0, c.front()});
    links.push_back({c.back(), 0});
  }
  SolveParts p;
  split_solve(2001, links, {}, p);
  ASSERT_EQ(p.parts, 20u);
  EXPECT_EQ(p.body_end[20], p.body_end[19]) << "no team";
  for (uint32_t i = 1; i <= 2000; ++i) ASSERT_EQ(p.part_of[i], (i - 1) / 100) << "body " << i;
}

TEST(SolveParts, NoPartsPutsEveryBodyInTheTeamInItsOrder) {
  SolveParts p;
  solve_as_one_team(5, p);
  EXPECT_EQ(p.parts, 0u);
  ASSERT_EQ(p.body_end.size(), 1u);
  EXPECT_EQ(p.body_end[0], 5u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(p.new_index[i], i);
}

// A world with every kind of part: thirty three-box columns (small islands), a wall of
// 60 touching boxes (one heavy island: the team), a pendulum jointed to the world that
// swings into a column (a jointed island: a part, which solves its joint), a kinematic
// platform carrying two boxes (its island goes to a part, kinematic body and all) and a
// bouncing ball (the restitution pass).
World mixed_world() {
  World w;
  const Vec3 half(0.5f);
  uint32_t id = 1;
  EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(60, 0.5f, 60))));
  for (int c = 0; c < 30; ++c) {
    const float x = -30.0f + 2.0f * float(c % 10), z = -20.0f + 2.0f * float(c / 10);
    for (int k = 0; k < 3; ++k) {
      const Quat turn = dmath::axis_angle(Vec3(0, 1, 0), 0.1f * float(c + k));
      EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, Vec3(x, 0.5f + 1.02f * float(k), z), half, turn)));
    }
  }
  for (int row = 0; row < 5; ++row) {
    for (int col = 0; col < 12; ++col) {
      const Vec3 at(float(col) - 6.0f, 0.5f + float(row), 10.0f);
      EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, at, Vec3(0.499f))));
    }
  }
  const uint32_t bob = id++;
  const Vec3 bob_at(-30.0f + 2.0f, 2.0f, -14.0f);  // column 1 of the front row stands at z = -20
  EXPECT_TRUE(w.add_body(sphere_body(bob, MotionType::Dynamic, bob_at, 0.4f)));
  JointDef j;
  j.kind = JointKind::Ball;
  j.body_a = bob;
  j.body_b = kWorldBodyId;
  const Vec3 pivot(-28.0f, 2.0f, -20.0f + 2.0f);
  j.frame_a = Transform{pivot - bob_at, identity_quat()};
  j.frame_b = Transform{pivot, identity_quat()};
  EXPECT_TRUE(add_joint(w, j));
  const uint32_t platform = id++;
  BodyDef plat = box_body(platform, MotionType::Kinematic, Vec3(20, 0.25f, 0), Vec3(2, 0.25f, 2));
  plat.linear_velocity = Vec3(1, 0, 0);
  EXPECT_TRUE(w.add_body(plat));
  EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, Vec3(19.2f, 1.0f, 0), half)));
  EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, Vec3(20.8f, 1.0f, 0), half)));
  BodyDef ball = sphere_body(id++, MotionType::Dynamic, Vec3(10, 3, -10), 0.3f);
  ball.colliders[0].restitution = 0.8f;
  EXPECT_TRUE(w.add_body(ball));
  return w;
}

// Every tick's hash, solved in parts or as one team, on 1 and 2 threads: all four runs
// must agree bit for bit on every tick, and the parts run must really have had parts and
// a team. Parts and team walk the one schedule (solver/schedule.h); what this checks is
// the split itself: each part colours its own contacts and joints (lay_out_part,
// colour_joints) and must come to the colours, and so the order, of the whole world's.
TEST(SolveParts, SolvingInPartsComputesTheSameBitsAsOneTeam) {
  constexpr int kTicks = 150;
  std::vector<uint64_t> reference;
  for (bool in_parts : {false, true}) {
    for (uint32_t threads : {1u, 2u}) {
      World w = mixed_world();
      w.set_threads(threads);
      WorldAccess::impl(w).toggles.solve_in_parts = in_parts;
      uint32_t most_parts = 0, most_team = 0;
      for (int t = 1; t <= kTicks; ++t) {
        w.step();
        most_parts = std::max(most_parts, w.profile().solve_parts);
        most_team = std::max(most_team, w.profile().team_bodies);
        if (reference.size() < size_t(kTicks)) {
          reference.push_back(w.hash());
        } else {
          ASSERT_EQ(w.hash(), reference[size_t(t - 1)])
              << (in_parts ? "in parts" : "one team") << ", threads " << threads << ", tick " << t;
        }
      }
      if (in_parts) {
        EXPECT_GE(most_parts, 2u);
        EXPECT_EQ(most_team, 60u) << "the wall alone: the pendulum's island is a part";
      } else {
        EXPECT_EQ(most_parts, 0u);
      }
    }
  }
}

}  // namespace
}  // namespace keel::sim
