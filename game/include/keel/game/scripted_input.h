// Scripted input for any game: a frame of a layout's values picked from two integers by
// integer arithmetic only, so every machine picks the same frame. Keel's bots, keel-sim's
// recorded matches and the determinism goldens drive a game with these when they know
// nothing about it but its layout.
#pragma once

#include <keel/game/layout.h>

#include <cstdint>

namespace keel::game {

/// A well-mixed 32-bit value from (a, b).
uint32_t mix32(uint32_t a, uint32_t b);

/// The frame number `n` of player `player`: each field at a value within its declared
/// range — bools and buttons on now and then, an enum or int anywhere in range, sticks,
/// numbers and points at one of five levels (the ends, halfway and zero), angles and
/// directions anywhere. Always valid for the layout (sanitised).
Values scripted_values(const Layout& layout, uint32_t player, uint32_t n);

/// A frame whose every code is past its field's range: what a forged input looks like to
/// a step, which must sanitise it.
Values forged_values();

}  // namespace keel::game
