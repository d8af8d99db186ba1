// Islands and sleeping.
//
// A body rests while no point of it moves faster than kSleepSpeed: its centre's speed
// plus its spin times its reach (the farthest its colliders extend from its origin). One
// bound on the point speed, not a linear and an angular threshold apart, because a tall
// box tipping slowly over an edge turns about that edge: each half alone reads as rest
// and it would fall asleep leaning.
//
// An island is a set of dynamic bodies joined by touching contacts. It sleeps whole,
// once every member has rested kSleepDelay seconds, and only while something outside
// it holds it (a static or kinematic body): a lamp hanging in the air or a stack resting
// on nothing never sleeps. It wakes whole, on the tick something could push it: an awake
// dynamic body or a moving kinematic body touching any member, a body it rests on
// removed or moved, or the API changing a member's motion. A static body never wakes
// what rests on it. Sleepers keep their contacts and warm-start impulses, so a stack
// wakes carrying its load.
//
// Island ids are the lowest body slot in the island when it fell asleep, so islands are
// numbered by IDs alone. Sleep flags, timers and island ids are part of the saved state.
#pragma once

#include <cstdint>
#include <vector>

namespace keel::sim {

struct WorldImpl;
class BodySets;

/// The world's awake and asleep sets (island/body_sets.h), rebuilt from the bodies' flags
/// when they were invalidated; `settled`: with every wake and sleep since applied (a step
/// reads them so; a wake between steps need not).
BodySets& current_body_sets(WorldImpl& world, bool settled = true);

inline constexpr float kSleepSpeed = 0.05f;  // m/s at any point of the body
inline constexpr float kSleepDelay = 0.5f;   // s of rest before an island may sleep

/// Wakes every sleeping island that an awake dynamic body or a moving kinematic body
/// touches; returns whether it woke any. Runs after the narrowphase, before the solve.
/// With the contact pass's flags (when no body can have started moving since the pass),
/// held contacts are skipped until something wakes: neither of their sides can move, so
/// before that they wake nothing.
bool wake_touched_islands(WorldImpl& world, const std::vector<uint8_t>* pass_flags);

/// Updates rest timers, builds islands of awake dynamic bodies and puts to sleep the
/// islands that have rested long enough and are held. Runs after the solve.
/// update_sleep's island lists, kept by the world between steps (memory/step_scratch.h).
struct SleepScratch {
  std::vector<uint32_t> parent;      // per body slot: union-find parent
  std::vector<uint8_t> held;         // per island root: held by something that stays put
  std::vector<float> least_rest;     // per island root: its members' least rest time
};

void update_sleep(WorldImpl& world, float dt, SleepScratch& scratch);

/// Wakes the island a body belongs to (no-op for an awake or non-dynamic body).
void wake_island_of(WorldImpl& world, uint32_t body_slot);

/// Wakes every island touching a body (for a body that is removed or teleported).
void wake_islands_touching(WorldImpl& world, uint32_t body_slot);

}  // namespace keel::sim
