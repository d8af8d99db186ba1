// The message layer of a connection, above the packets: the reliable-ordered control
// channel (resent until a packet carrying it is acked, delivered once and in order) and
// the unreliable channels (sent once; a message larger than a fragment is split and
// reassembled, bounded and with a timeout, and lost whole if any fragment is lost).
// Delivered messages wait, bounded, until the owner takes them. Every buffer here is a
// slot that keeps its memory, so steady traffic allocates nothing.
#pragma once

#include "chunk_format.h"
#include "held_bytes.h"
#include "message_ring.h"

#include <keel/protocol/connection.h>
#include <keel/protocol/drop.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace keel::protocol::connection {

class Channels {
 public:
  Channels(const ConnectionConfig& config, HeldBytes& held, DropCounters& drops);

  /// Queues a message; false when it is too large for its channel or the control
  /// channel's window is full.
  bool send(Channel channel, std::span<const uint8_t> message);

  // --- building a packet ---
  /// Appends the control messages due for a (re)send that fit, noting their ids in
  /// `record`. `resend` is the seconds a sent message waits for its ack.
  void write_control(std::vector<uint8_t>& payload, SentPacket& record, double now, double resend);
  /// Appends queued unreliable chunks that fit, in order.
  void write_unreliable(std::vector<uint8_t>& payload);
  /// A packet carrying `record` arrived: its control messages need no resend.
  void on_acked(const SentPacket& record);

  // --- reading a packet ---
  DropReason on_control(uint16_t id, std::span<const uint8_t> bytes);
  DropReason on_unreliable(uint8_t channel, std::span<const uint8_t> bytes);
  DropReason on_fragment(uint8_t channel, uint16_t group, uint32_t index, uint32_t count,
                         std::span<const uint8_t> bytes, double now);
  /// Drops partial messages older than the reassembly timeout.
  void expire_reassemblies(double now);

  // --- delivery ---
  std::optional<std::vector<uint8_t>> take(Channel channel);
  bool take(Channel channel, std::vector<uint8_t>& into);

 private:
  struct ControlOut {
    bool live = false;
    uint16_t id = 0;
    std::vector<uint8_t> bytes;
    double last_sent = -1e9;
  };
  struct ControlIn {
    bool present = false;
    std::vector<uint8_t> bytes;
  };
  struct Reassembly {
    uint8_t channel = 0;
    uint16_t group = 0;
    uint32_t count = 0;
    uint32_t received = 0;
    size_t bytes = 0;
    double started = 0;
    std::vector<std::vector<uint8_t>> parts;  // at least `count`; the first `count` are used
  };
  struct ChunkRef {
    uint32_t offset = 0;
    uint32_t size = 0;
  };

  bool send_unreliable(uint8_t channel, std::span<const uint8_t> message);
  void queue_chunk(std::span<const uint8_t> header, std::span<const uint8_t> bytes);
  void deliver_control();
  DropReason deliver(uint8_t channel, std::span<const uint8_t> message);
  DropReason deliver_reassembled(size_t index);
  Reassembly* find_or_start_reassembly(uint8_t channel, uint16_t group, uint32_t count, double now);
  void retire_reassembly(size_t index);
  bool recently_completed(uint32_t key) const;
  void remember_completed(uint32_t key);
  size_t queue_limit(uint8_t channel) const;

  const ConnectionConfig& config_;
  HeldBytes& held_;
  DropCounters& drops_;
  BufferPool buffers_;

  // Control channel, out: a window of ids from the oldest unacked one.
  Window<ControlOut> control_out_;
  uint16_t control_out_base_ = 0;  // id of the window's first slot
  uint32_t control_out_span_ = 0;  // ids from the base to the next id
  // Control channel, in: ids ahead of the next expected one wait in their slots.
  Window<ControlIn> control_in_;
  uint16_t next_expected_id_ = 0;

  // Unreliable chunks waiting for a packet, in one buffer (emptied once all have gone).
  std::vector<uint8_t> unreliable_bytes_;
  std::vector<ChunkRef> unreliable_chunks_;
  size_t unreliable_sent_ = 0;
  uint16_t next_group_ = 0;

  std::vector<Reassembly> reassemblies_;  // oldest first
  std::vector<Reassembly> spare_reassemblies_;
  size_t reassembly_bytes_ = 0;
  static constexpr size_t kRecentGroups = 32;
  std::array<uint32_t, kRecentGroups> recent_groups_{};  // (channel << 16 | group) completed
  size_t recent_count_ = 0, recent_next_ = 0;

  std::array<MessageRing, static_cast<size_t>(Channel::kCount)> delivered_;
};

}  // namespace keel::protocol::connection
