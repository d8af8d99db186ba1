// Bit-level pieces of a set of field values (keel/game/layout.h) shared by the input batch
// codec (client -> server), the input frame run (server -> predicting clients) and game
// event payloads: values in full, values as a change against others, with every decoded
// code range-checked against its layout.
//
// In full: each component's code in Field::code_bits(c) bits, in layout order.
// As a change: `same:1`, or `0` then per field `changed:1` and, when changed,
//   Bool        nothing (a change flips it)
//   Buttons     the new mask in full
//   Enum        the new index in full
//   Angle       the difference taken the short way round, exp-Golomb
//   Int, Fixed, Stick, Direction3, Point3   each component's difference, exp-Golomb
// so a held stick costs one bit a frame and a smooth turn a few.
#pragma once

#include <keel/game/layout.h>
#include <keel/protocol/bitstream.h>

namespace keel::protocol::detail {

void write_full(BitWriter& w, const game::Layout& layout, const game::Values& v);
/// False for codes outside their ranges (the stream stays ok: the caller tells a value out
/// of range, OutOfRange, from bits that ran out, !r.ok() and MalformedPayload).
bool read_full(BitReader& r, const game::Layout& layout, game::Values& v);

void write_change(BitWriter& w, const game::Layout& layout, const game::Values& before, const game::Values& v);
/// Reads a write_change record against `before` into `v`; false for a value that leaves
/// its range or bits that ran out (as read_full).
bool read_change(BitReader& r, const game::Layout& layout, const game::Values& before, game::Values& v);

}  // namespace keel::protocol::detail
