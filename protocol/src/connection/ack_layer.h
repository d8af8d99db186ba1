// The reliability layer of a connection: packet sequence numbers, the acks every packet
// carries (the newest sequence received and 32 bits for the ones before it), what each
// sent packet carried until it is acked, and the round-trip time, jitter and loss
// estimated from the acks. The layers above learn through on_acked which of their
// packets arrived; nothing is resent here.
#pragma once

#include "chunk_format.h"

#include <keel/protocol/connection.h>
#include <keel/protocol/packet.h>

#include <cstdint>
#include <array>
#include <span>
#include <vector>

namespace keel::protocol::connection {

/// A packet header's ack fields.
struct AckFields {
  uint16_t ack = 0;
  uint32_t bits = 0;
};

class AckLayer {
 public:
  explicit AckLayer(ConnectionStats& stats) : stats_(stats) {}

  /// The record of the packet being built: emptied, to be filled by the layers above.
  SentPacket& draft() {
    draft_.reset();
    return draft_;
  }
  /// Gives the packet being built its sequence and ack fields (the held ones when
  /// `held` is set, else the current ones) and keeps its record. Returns its full
  /// 64-bit counter.
  uint64_t commit(double now, const AckFields* held, PacketHeader& header);
  /// Seconds since anything was sent.
  double idle_send_seconds(double now) const { return now - last_send_time_; }

  /// Reads a received header's acks: `on_acked` sees each sent packet acked for the
  /// first time.
  template <class OnAcked>
  void read_acks(const PacketHeader& header, double now, OnAcked&& on_acked) {
    acked_.clear();
    acked_sequences(header.ack, header.ack_bits, acked_);
    for (uint16_t s : acked_) {
      SentPacket* p = sent_.find(s);
      if (p == nullptr || p->acked) continue;
      p->acked = true;
      sample_rtt(now, *p);
      on_acked(*p);
    }
  }
  /// The received packet `sequence` is acked from now on.
  void record_received(uint16_t sequence) { received_.record(sequence); }
  /// The packet just recorded carried reliable data: the next update acks it even with
  /// nothing else to send, and every kAckEvery of them the acks as they stand are held
  /// for a bare packet of their own.
  void note_wants_ack();
  /// Whether reliable data arrived since the last packet carrying the current acks.
  bool ack_owed() const { return ack_pending_ > 0; }
  /// The held acks; cleared by clear_held_acks().
  std::span<const AckFields> held_acks() const { return acks_due_; }
  void clear_held_acks() { acks_due_.clear(); }
  /// Judges sent packets old enough that their ack would have come: the loss estimate.
  void update_loss(double now);
  /// A packet arrived `skipped` counters past the newest before it: the incoming loss.
  void note_received(uint64_t skipped);

 private:
  void sample_rtt(double now, const SentPacket& p);

  ConnectionStats& stats_;
  // Next 64-bit packet counter. It starts at 1: a peer that has received nothing yet
  // sends ack 0 with no ack bits, which must not read as an ack of our first packet
  // (that packet, carrying ConnectionAccept, would then never be resent if lost).
  uint64_t send_sequence_ = 1;
  double last_send_time_ = -1e9;
  ReceivedPackets received_;
  SequenceBuffer<SentPacket> sent_;
  SentPacket draft_;
  // Sent sequences not yet counted as acked or lost, oldest first (a ring).
  static constexpr size_t kMaxUnresolved = 1024;
  std::array<uint16_t, kMaxUnresolved> unresolved_{};
  size_t unresolved_head_ = 0, unresolved_count_ = 0;
  std::vector<uint16_t> acked_;      // read_acks' scratch
  // Packets carrying reliable data received since we last sent the current acks.
  uint32_t ack_pending_ = 0;
  std::vector<AckFields> acks_due_;
};

}  // namespace keel::protocol::connection
