// Contact events and per-body contact outputs.
//
// Events are per body pair (not per collider pair): a pair touches on a tick when any of
// its contacts has a manifold point. The set of pairs that touched last tick, keyed by
// user ids, is part of the saved state, so a restored world reports Began and Stayed
// exactly as the uninterrupted one. Everything is ordered by (lower id, higher id).
#pragma once

#include <keel/sim/world.h>

#include <cstdint>
#include <vector>

namespace keel::sim {

struct WorldImpl;

/// One touching body pair of this tick.
struct ContactTouch {
  uint64_t key;      // lower user id << 32 | higher user id
  uint32_t contact;  // the first contact (in pair-key order) of this body pair
  bool held;         // neither body can move: the contact and velocities are as last tick
};

/// The event stage's working lists, kept by the world between steps
/// (memory/step_scratch.h). It may run on a worker (beside the solve's preparation),
/// so it is handed these rather than finding its thread's own.
struct ContactEventScratch {
  std::vector<ContactTouch> touches;       // this tick's touching pairs, by key
  std::vector<ContactEvent> next;          // this tick's events, as they are built
  std::vector<uint32_t> touch_of;          // per event: its place in `touches`, or none
  std::vector<uint32_t> reuse_of;          // per event: last tick's event to copy, or none
  std::vector<uint64_t> sensed;            // this tick's (trigger id, other id) pairs
};

/// Builds this tick's events and the bodies' supported / support_normal / block_normal
/// from the contacts the narrowphase just made (velocities are still the pre-solve ones,
/// which is what the approach speed is measured from). Returns how many contacts have a
/// manifold point (triggers included), for the step profile.
uint32_t update_contact_events(WorldImpl& world, ContactEventScratch& scratch);

/// This tick's events when the contacts, poses and velocities are exactly those the last
/// events were built from (a still step after a still step): the pairs that touched
/// still touch, so Began becomes Stayed and Ended drops out (Enter / Stay / Exit
/// likewise); the touching and sensed sets and the per-body outputs stand as they are.
/// Events that are already a repeat are left as they are (a dormant world repeats them
/// every tick).
void repeat_contact_events(WorldImpl& world);

/// The events stage: update_contact_events, or on a still step after a still step (the
/// contacts, poses and velocities are those the last events were built from)
/// repeat_contact_events. Returns the touching count for the step profile.
uint32_t events_stage(WorldImpl& world, bool repeat_events, ContactEventScratch& scratch);

}  // namespace keel::sim
