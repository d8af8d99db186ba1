// Continuous collision by speculative contacts (a pipeline stage before the broadphase).
//
// A body that moves farther in one tick than the 2 cm speculative distance (dynamic or
// kinematic), or a dynamic body marked `bullet`, gets its contacts made as far ahead as it
// will travel this tick: its bounds are swept along its predicted displacement, and the
// narrowphase margin of its pairs grows by the displacement's length (both bodies' when
// both move). The solver treats a point with a gap as "close exactly the gap, no more", so
// the body stops at the surface on the tick it arrives, whatever its speed and the wall's
// thickness: a box falling at 6 m/s (10 cm per tick) lands on the box below instead of
// sinking 7 cm into it and being pushed back out, which would launch the pair upwards and
// set a stack swaying.
//
// Everything here is derived from the state at the start of the tick (velocities,
// gravity, shapes), so there is nothing to save: a restored world computes the same.
#pragma once

#include <keel/sim/math.h>

namespace keel::sim {

struct WorldImpl;
struct Body;

/// Sets every body's ccd_reach and ccd_sweep for the tick about to be stepped.
void update_ccd(WorldImpl& w, float dt);

/// Extra narrowphase margin for a pair of bodies (0 when neither sweeps).
float ccd_margin(const Body& a, const Body& b);

}  // namespace keel::sim
