// One quantised body's bits, shared by the whole-world snapshot codec and the partial
// snapshots of interest management (interest_codec.cpp): the same full form, and a delta
// against one baseline value (no extrapolation: a partial snapshot's baselines are per body
// and of different ages).
#pragma once

#include <keel/protocol/bitstream.h>
#include <keel/protocol/snapshot_codec.h>

namespace keel::protocol::body_bits {

/// Tiered code for small non-negative numbers: 0 + 2 bits, 10 + 4, 110 + 8, 111 + 32.
void write_tiered(BitWriter& w, uint32_t v);
uint32_t read_tiered(BitReader& r);

void write_full(BitWriter& w, const QuantBody& b, const SnapshotConfig& c);
/// False when the value could not come from quantize (out of range, not a unit rotation).
bool read_full(BitReader& r, QuantBody& b, const SnapshotConfig& c);
/// at_rest:1, same_largest:1, then the residuals of the snapshot codec's delta against `base`.
void write_delta(BitWriter& w, const QuantBody& cur, const QuantBody& base, const SnapshotConfig& c);
bool read_delta(BitReader& r, const QuantBody& base, QuantBody& out, const SnapshotConfig& c);

/// What write_full and write_delta would write, in bits, without writing: the interest
/// sender sizes every candidate body of every client with these, each snapshot.
size_t full_bits(const SnapshotConfig& c);
size_t delta_bits(const QuantBody& cur, const QuantBody& base, const SnapshotConfig& c);
/// The fewest bits any write_delta can take (every residual zero, the same largest).
size_t min_delta_bits(const SnapshotConfig& c);

}  // namespace keel::protocol::body_bits
