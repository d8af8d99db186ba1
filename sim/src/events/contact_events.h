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
/// which is what the approach speed is measured from). Returns how many contacts have a
/// manifold point (triggers included), for the step profile.
uint32_t update_contact_events(WorldImpl& world);

/// This tick's events when the contacts, poses and velocities are exactly those the last
/// events were built from (a still step after a still step): the pairs that touched
/// still touch, so Began becomes Stayed and Ended drops out (Enter / Stay / Exit
/// likewise); the touching and sensed sets and the per-body outputs stand as they are.
/// Events that are already a repeat are left as they are (a dormant world repeats them
/// every tick).
void repeat_contact_events(WorldImpl& world);

}  // namespace keel::sim
