// Decoding a PartialSnapshot payload against the receiver's per-body values.
#pragma once

#include <keel/protocol/interest.h>

#include <functional>

namespace keel::protocol {

/// The receiver's value of body `id` at `tick`, or nullptr when it does not hold it.
using BaselineLookup = std::function<const QuantBody*(uint32_t id, uint64_t tick)>;

/// Decodes a payload made by encode_partial. Every count, id order and value is
/// range-checked (OutOfRange / MalformedPayload); a delta whose baseline the lookup does
/// not hold makes the message Stale. `out` is unspecified unless None.
DropReason decode_partial(std::span<const uint8_t> payload, uint64_t tick, const SnapshotConfig& config,
                          const BaselineLookup& baseline, PartialUpdate& out);

}  // namespace keel::protocol
