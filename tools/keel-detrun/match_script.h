// The scripted multi-player match whose recording is a golden (tests/golden/*.match.golden).
//
// A fixed script in code, not a random session: players join, leave and rejoin and send
// the game's scripted frames (keel/game/scripted_input.h) — for the sandbox they walk,
// turn, jump and throw balls; one frame is forged (every code out of range) so that input
// sanitising is part of the chain, and one frame names a player who is not in the match. The script only matters when a golden is written: checks read
// the inputs back from the golden file, so a golden stays valid if this script changes.
#pragma once

#include <keel/game/match.h>

#include <cstdint>
#include <map>

namespace keel::det {

/// The script's inputs for ticks 0 .. ticks-1, keyed by the tick at which Match::step
/// applies them. Built from integer arithmetic only, so it is the same on every machine.
std::map<uint64_t, game::TickInputs> scripted_match_inputs(uint64_t ticks, const game::Layout& layout);

}  // namespace keel::det
