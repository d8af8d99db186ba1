// The solver's tick schedule (solver/schedule.h): the order of the stages, which decides
// the bits for the team and for every part alike.
#include "solver/schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace keel::sim {
namespace {

std::vector<std::string> names(uint32_t substeps, bool any_bounce) {
  std::vector<std::string> out;
  walk_schedule(substeps, any_bounce, [&](const ScheduleEntry& e) { out.push_back(e.name); });
  return out;
}

const std::vector<std::string> kOneSubstep = {"integrate_velocities", "joint_warm_start", "warm_start",
                                              "joint_solve",          "solve",            "integrate_positions",
                                              "joint_relax",          "relax"};

TEST(Schedule, TwoSubstepsWithBounceRunEveryStageInOrder) {
  std::vector<std::string> expected = {"fill", "pack"};
  for (int i = 0; i < 2; ++i) expected.insert(expected.end(), kOneSubstep.begin(), kOneSubstep.end());
  expected.insert(expected.end(), {"restitution", "store_impulses", "write_back"});
  EXPECT_EQ(names(2, true), expected);
}

TEST(Schedule, NoBounceLeavesOutOnlyRestitution) {
  const std::vector<std::string> with = names(4, true), without = names(4, false);
  ASSERT_EQ(with.size(), 2u + 4u * 8u + 3u);
  ASSERT_EQ(without.size(), with.size() - 1);
  std::vector<std::string> expected = with;
  expected.erase(expected.end() - 3);  // restitution
  EXPECT_EQ(without, expected);
}

// Joints come before the contacts of each pass, so the contacts have the last word; the
// velocities are integrated before the warm start and the positions between the biased
// solve and the relax pass.
TEST(Schedule, EachPassSolvesJointsBeforeContactsOfTheSameKind) {
  for (size_t i = 0; i + 1 < std::size(kSubstep); ++i) {
    if (kSubstep[i].items != StageItems::kJointColours) continue;
    EXPECT_EQ(kSubstep[i + 1].items, StageItems::kContactColours) << kSubstep[i].name;
  }
  EXPECT_EQ(kSubstep[0].stage, SolveStage::kIntegrateVelocities);
  EXPECT_EQ(kSubstep[5].stage, SolveStage::kIntegratePositions);
  EXPECT_EQ(kSubstep[4].stage, SolveStage::kSolve);
  EXPECT_EQ(kSubstep[7].stage, SolveStage::kRelax);
}

TEST(Schedule, ZeroSubstepsStillFillsAndWritesBack) {
  EXPECT_EQ(names(0, false), (std::vector<std::string>{"fill", "pack", "store_impulses", "write_back"}));
}

}  // namespace
}  // namespace keel::sim
