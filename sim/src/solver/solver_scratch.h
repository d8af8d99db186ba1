// The soft-step solver's working arrays: a world's (StepScratch::solver), reused from
// tick to tick so that a solve in steady state allocates nothing, and never part of the
// state. Every array is cleared or overwritten by the tick's preparation before it is
// read, so nothing of one tick reaches the next. The team's stage plan lives here too:
// its counters are the world's, so two worlds stepped on one thread, or one world
// stepped from different threads, never share them.
#pragma once

#include "joint/joint.h"
#include "parallel/stage_plan.h"
#include "solver/batch_layout.h"
#include "solver/contact_batches.h"
#include "solver/integrate.h"
#include "solver/solve_parts.h"
#include "solver/solver.h"

#include <cstdint>
#include <vector>

namespace keel::sim {

struct SolverScratch {
  StagePlan plan;                      // the team's stages and their counters
  std::vector<uint32_t> solver_index;  // per body slot; 0 = the static stand-in
  std::vector<uint32_t> body_slot;     // per solver body (index 0 unused)
  std::vector<SolverBody> bodies;
  std::vector<BodyMotion> motion;
  BatchBuffer batches;
  std::vector<BatchGroup> groups;     // the team's colours, one stage each
  BatchLayout layout;                 // manifolds, colours and batches, part by part
  std::vector<JointWork> joint_work;  // joints with a side that can move: part by part, by colour within
  std::vector<BatchGroup> joint_groups;  // the team's joint colours, one stage each
  std::vector<uint32_t> joint_color_bits;  // per solver body: the joint colours it is in
  std::vector<uint8_t> joint_color;        // per joint work: its colour
  std::vector<JointWork> joint_scratch;
  std::vector<uint32_t> joint_begin;  // per part (the team last) and one past: its run in joint_work
  std::vector<SolveLink> joint_links;
  SolveParts parts;
  std::vector<uint32_t> scratch_slots;
  std::vector<uint8_t> scratch_flags;
};

}  // namespace keel::sim
