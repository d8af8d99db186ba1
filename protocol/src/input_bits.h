// Bit-level pieces of a quantised input shared by the input batch codec (client -> server)
// and the input frame run (server -> predicting clients): a frame in full, a frame as a
// change against another, and the range checks every decoded frame passes.
#pragma once

#include <keel/protocol/bitstream.h>
#include <keel/protocol/input_codec.h>

namespace keel::protocol::detail {

inline constexpr int kMoveSteps = 127;

/// move_x:8 move_z:8 yaw:16 buttons:8 (two's complement).
void write_full(BitWriter& w, const QuantInput& f);
void read_full(BitReader& r, QuantInput& f);

/// `same:1`, or `0` then three change groups:
///   move_changed:1 [dx dz]  yaw_changed:1 [dyaw]  buttons_changed:1 [buttons:8]
/// dx, dz, dyaw (the short way round) as exp-Golomb codes.
void write_change(BitWriter& w, const QuantInput& before, const QuantInput& f);
/// Reads a write_change record against `before` into `f`; false for a difference that
/// leaves the value range (the stream is then marked bad).
bool read_change(BitReader& r, const QuantInput& before, QuantInput& f);

/// The checks the server relies on: a move vector of length <= 1 (one step of rounding
/// slack), no -128 (not a quantised value), only known buttons.
bool valid(const QuantInput& f);

}  // namespace keel::protocol::detail
