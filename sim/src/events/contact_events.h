// Contact events and per-body contact outputs.
//
// Events are per body pair (not per collider pair): a pair touches on a tick when any of
// its contacts has a manifold point. The set of pairs that touched last tick, keyed by
// user ids, is part of the saved state, so a restored world reports Began and Stayed
// exactly as the uninterrupted one. Everything is ordered by (lower id, higher id).
#pragma once

#include <cstdint>

namespace keel::sim {

struct WorldImpl;

/// Builds this tick's events and the bodies' supported / support_normal / block_normal
/// from the contacts the narrowphase just made (velocities are still the pre-solve ones,
/// which is what the approach speed is measured from).
void update_contact_events(WorldImpl& world);

}  // namespace keel::sim
