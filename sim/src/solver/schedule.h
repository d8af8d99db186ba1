// The solver's tick schedule: the one list of stages a solve goes through, walked both by
// the team (each stage cut into blocks the threads share) and by a part solved whole on
// one thread (each stage over the part's own range).
//
// Why one list: the order of the stages decides the bits. A part and the team must put
// every body through the same stages in the same order, or a body's result would depend
// on whether its island was solved alone or by the team. Written once, the two cannot
// drift apart.
//
// Each stage names what it runs over: bodies, contact batches, the contact colours (the
// team walks them colour by colour; a part walks its batches in order, which are laid out
// colour by colour) or the joint colours (likewise).
#pragma once

#include <cstdint>

namespace keel::sim {

enum class SolveStage : uint32_t {
  kFill,                 // solver bodies from the world bodies
  kPack,                 // contact batches from the contacts
  kIntegrateVelocities,  // gravity and damping (integrate.cpp)
  kJointWarmStart,
  kWarmStart,            // last tick's impulses applied again
  kJointSolve,
  kSolve,                // biased: overlap pushed out by the soft spring
  kIntegratePositions,   // (integrate.cpp)
  kJointRelax,
  kRelax,                // unbiased: the push-out velocity taken away again
  kRestitution,          // bounces, once per tick (left out when nothing bounces)
  kStore,                // impulses kept for next tick's warm start
  kWriteBack,            // poses and velocities back to the world bodies
};

/// What a stage's items are.
enum class StageItems : uint8_t { kBodies, kBatches, kContactColours, kJointColours };

struct ScheduleEntry {
  SolveStage stage;
  StageItems items;
  const char* name;
};

/// Once per tick, before the substeps.
inline constexpr ScheduleEntry kTickStart[] = {
    {SolveStage::kFill, StageItems::kBodies, "fill"},
    {SolveStage::kPack, StageItems::kBatches, "pack"},
};

/// Once per substep. Joints come before the contacts of each pass, so contacts have the
/// last word.
inline constexpr ScheduleEntry kSubstep[] = {
    {SolveStage::kIntegrateVelocities, StageItems::kBodies, "integrate_velocities"},
    {SolveStage::kJointWarmStart, StageItems::kJointColours, "joint_warm_start"},
    {SolveStage::kWarmStart, StageItems::kContactColours, "warm_start"},
    {SolveStage::kJointSolve, StageItems::kJointColours, "joint_solve"},
    {SolveStage::kSolve, StageItems::kContactColours, "solve"},
    {SolveStage::kIntegratePositions, StageItems::kBodies, "integrate_positions"},
    {SolveStage::kJointRelax, StageItems::kJointColours, "joint_relax"},
    {SolveStage::kRelax, StageItems::kContactColours, "relax"},
};

/// Once per tick, after the substeps.
inline constexpr ScheduleEntry kTickEnd[] = {
    {SolveStage::kRestitution, StageItems::kContactColours, "restitution"},
    {SolveStage::kStore, StageItems::kBatches, "store_impulses"},
    {SolveStage::kWriteBack, StageItems::kBodies, "write_back"},
};

/// Calls fn(entry) for every stage of a tick, in order. With no restitution anywhere the
/// bounce pass changes nothing and is left out.
template <class Fn>
void walk_schedule(uint32_t substeps, bool any_bounce, Fn&& fn) {
  for (const ScheduleEntry& e : kTickStart) fn(e);
  for (uint32_t i = 0; i < substeps; ++i) {
    for (const ScheduleEntry& e : kSubstep) fn(e);
  }
  for (const ScheduleEntry& e : kTickEnd) {
    if (e.stage != SolveStage::kRestitution || any_bounce) fn(e);
  }
}

}  // namespace keel::sim
