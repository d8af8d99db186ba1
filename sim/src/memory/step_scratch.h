// Where a world's step keeps its working memory: every list a stage fills and empties
// within one tick lives here, owned by the world, reused from tick to tick (so a step in
// steady state allocates nothing) and never part of the state. Nothing is kept per thread
// of the process: a stage is handed the buffers it needs.
//
// Two kinds. A stage that runs on one thread at a time (the orchestration in world.cpp,
// the contact events, sleep, the character controller) gets its own lists in StepScratch.
// Work that runs on the executor's workers (tree walks, concave narrowphase pairs) takes
// the buffers of its executor slot in WorkerScratch: one per worker plus one for the
// calling thread (Executor::slot()), so two threads never share one.
//
// Scene queries run outside the step and keep theirs apart (QueryScratch in
// query/world_query.h). The soft-step solver's arrays are SolverScratch
// (solver/solver_scratch.h), here too.
//
// What the buffers hold between steps never reaches a result: every stage clears or
// overwrites what it reads first.
#pragma once

#include "broadphase/dynamic_tree.h"
#include "character/character.h"
#include "collision/concave_scratch.h"
#include "events/contact_events.h"
#include "island/sleep.h"
#include "parallel/executor.h"
#include "solver/solver_scratch.h"

#include <cassert>
#include <cstdint>
#include <span>
#include <vector>

namespace keel::sim {

/// Per executor slot: the buffers of the work that runs on the workers.
class WorkerScratch {
 public:
  /// Sizes the set for an executor (a slot per worker, one for the caller). Call on the
  /// stepping thread with no worker running: a changed thread count moves every buffer.
  void fit(const Executor& executor) {
    const size_t slots = executor.slots();
    if (walks_.size() != slots) walks_.resize(slots);
    if (concave_.size() != slots) concave_.resize(slots);
  }
  /// The running thread's buffers (any thread working for the executor fit() was given).
  TreeWalkStacks& walks(const Executor& executor) { return walks_[executor.slot()]; }
  ConcaveScratch& concave(const Executor& executor) { return concave_[executor.slot()]; }
  std::span<TreeWalkStacks> all_walks() { return walks_; }
  /// Whether every walk has left its stacks empty (as each does when it ends).
  bool idle() const {
    for (const TreeWalkStacks& w : walks_) {
      if (!w.empty()) return false;
    }
    return true;
  }

 private:
  std::vector<TreeWalkStacks> walks_;
  std::vector<ConcaveScratch> concave_;
};

/// The contact pass's per-tick arrays: per collider, whether its body can move this tick
/// and, if so, its shape placed in world space (hulls in `hulls`); per contact, whether
/// it had points as the pass began.
struct ContactPassScratch {
  std::vector<ShapeGeom> geoms;
  std::vector<uint8_t> moves;
  std::vector<WorldHull> hulls;
  std::vector<int32_t> hull_slot;
  std::vector<uint8_t> had;
};

/// A world's step scratch (see the top of this file).
struct StepScratch {
  std::vector<uint64_t> new_pairs;     // the broadphase's new pairs this tick
  std::vector<uint8_t> escaped;        // per collider: it left its fat bounds
  std::vector<uint8_t> contact_flags;  // per contact: the contact pass's kContact* flags
  ContactPassScratch pass;
  // collect_touching_contacts: per chunk of contacts, its touching ones and its dead count.
  std::vector<std::vector<uint32_t>> touching_found;
  std::vector<uint32_t> touching_dead;
  ContactEventScratch events;
  SleepScratch sleep;
  CharacterScratch characters;
  SolverScratch solver;
  WorkerScratch workers;

  /// Before a step's stages run.
  void begin(const Executor& executor) { workers.fit(executor); }
  /// After the step: every walk has ended, and the per-tick lists are emptied (their
  /// capacity stays for the next tick), so nothing of this tick can be read by the next.
  void end() {
    assert(workers.idle());
    new_pairs.clear();
    escaped.clear();
    contact_flags.clear();
    touching_dead.clear();
    events.touches.clear();
    events.next.clear();
    events.touch_of.clear();
    events.reuse_of.clear();
  }
};

}  // namespace keel::sim
