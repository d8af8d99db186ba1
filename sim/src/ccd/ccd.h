// Continuous collision by speculative contacts (a pipeline stage before the broadphase).
//
// A dynamic body that is marked `bullet`, or that would move farther in one tick than
// kAutoCcdFraction of its thinnest part, gets its contacts made as far ahead as it will
// travel this tick: its bounds are swept along its predicted displacement, and the
// narrowphase margin of its pairs grows by the displacement's length. The solver already
// treats a point with a gap as "close exactly the gap, no more", so the body stops at the
// surface it would otherwise have passed through, whatever the wall's thickness.
//
// Everything here is derived from the state at the start of the tick (velocities,
// gravity, shapes), so there is nothing to save: a restored world computes the same.
#pragma once

#include <keel/sim/math.h>

namespace keel::sim {

struct WorldImpl;
struct Body;

/// A body moving farther per tick than this fraction of its thinnest collider (sphere or
/// capsule radius, smallest box half extent) gets continuous collision without `bullet`.
inline constexpr float kAutoCcdFraction = 1.0f;

/// Sets every body's ccd_reach and ccd_sweep for the tick about to be stepped.
void update_ccd(WorldImpl& w, float dt);

/// Extra narrowphase margin for a pair of bodies (0 when neither sweeps).
float ccd_margin(const Body& a, const Body& b);

}  // namespace keel::sim
