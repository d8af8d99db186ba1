// Continuous collision by speculative contacts (a pipeline stage before the broadphase).
//
// A dynamic body that is marked `bullet`, or that would move farther in one tick than
// its own thickness (kAutoCcdFraction times its thinnest collider's radius or smallest
// half extent), gets its contacts made as far ahead as it will
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

/// A body moving farther per tick than this multiple of its thinnest collider's radius or
/// smallest half extent (i.e. its own thickness) gets continuous collision without
/// `bullet`. Slower, it cannot pass through anything: it would still overlap a wall of any
/// thickness (or meet it within the 2 cm speculative distance) on some tick. A thrown
/// 0.15 m ball at 15 m/s (0.25 m per tick) stays below it, as do falling stacks.
inline constexpr float kAutoCcdFraction = 2.0f;

/// Sets every body's ccd_reach and ccd_sweep for the tick about to be stepped.
void update_ccd(WorldImpl& w, float dt);

/// Extra narrowphase margin for a pair of bodies (0 when neither sweeps).
float ccd_margin(const Body& a, const Body& b);

}  // namespace keel::sim
