// The contacts stage: the broadphase tree updates and its new pairs, and every contact's
// manifold from the current poses (the narrowphase), carrying impulses by feature id.
#pragma once

#include "memory/step_scratch.h"

namespace keel::sim {

struct WorldImpl;

/// Pairs and contacts for this tick. `still`: no body can move and the API changed
/// nothing since the last step (world.cpp); `any_moves`: some body can move this tick.
/// Leaves the contact pass's kContact* flags in `scratch.contact_flags` (not on a still
/// step) for the touching stage.
void contacts_stage(WorldImpl& world, bool still, bool any_moves, StepScratch& scratch);

}  // namespace keel::sim
