// Per-client snapshot streams over the snapshot codec: which baseline to delta against
// (the server side) and which decoded snapshots to keep for that (the client side).
//
// The server delta-encodes each client's snapshot against the newest snapshot that client
// acknowledged (InputBatch.ack_snapshot_tick), extrapolating positions from the
// acknowledged one before it; with no usable acknowledgement it sends a full snapshot.
// Because baselines are only ever snapshots the client reported decoding, a lost or
// reordered packet never leaves the client unable to decode what comes next.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/snapshot_codec.h>

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace keel::protocol {

/// The 64-bit tick whose low 32 bits are `tick32`, nearest `reference`.
uint64_t expand_tick(uint32_t tick32, uint64_t reference);

class SnapshotSender {
 public:
  /// `history` ticks of sent snapshots are kept as possible baselines; an ack older
  /// than that falls back to a full snapshot. When nothing changed, a delta goes out at
  /// most every `idle_interval` ticks (the client's view does not change in between),
  /// and so does a full snapshot while none has been acknowledged.
  explicit SnapshotSender(const SnapshotConfig& config, size_t history = 128,
                          uint32_t idle_interval = 12);

  /// The client reported decoding the snapshot of `tick` (stale or unknown ticks ignored).
  void on_ack(uint64_t tick);
  /// A Snapshot message (messages.fbs) for `current`, or an empty vector when the idle
  /// rule skips this tick. `current.tick` must increase from call to call.
  std::vector<uint8_t> encode(const QuantSnapshot& current);
  uint64_t acked_tick() const { return acked_; }

 private:
  const QuantSnapshot* find(uint64_t tick) const;

  SnapshotConfig config_;
  size_t history_size_;
  uint32_t idle_interval_;
  std::deque<QuantSnapshot> history_;  // sent snapshots, oldest first
  uint64_t acked_ = 0;        // newest acked tick (0 = none)
  uint64_t acked_older_ = 0;  // the acked tick before it
  uint64_t last_sent_ = 0;
  uint64_t last_full_ = 0;
};

class SnapshotReceiver {
 public:
  explicit SnapshotReceiver(const SnapshotConfig& config, size_t history = 256);

  /// Decodes a checked Snapshot message. On None, latest() is the decoded snapshot.
  /// Stale: older than the newest decoded one, or its baselines are not held.
  DropReason receive(const fb::Snapshot& message);
  /// The newest decoded snapshot (tick 0 and no bodies before the first).
  const QuantSnapshot& latest() const { return latest_; }
  /// What to acknowledge: the newest decoded tick (0 = none yet).
  uint64_t ack_tick() const { return latest_.tick; }

 private:
  const QuantSnapshot* find(uint64_t tick) const;

  SnapshotConfig config_;
  size_t history_size_;
  std::deque<QuantSnapshot> history_;
  QuantSnapshot latest_;
};

}  // namespace keel::protocol
