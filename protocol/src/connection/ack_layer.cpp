#include "ack_layer.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace keel::protocol::connection {
namespace {

// A held ack is kept every kAckEvery packets carrying reliable data, which leaves 17 of
// the 33 ack bits for reordering; at most kMaxAcksDue are held between updates (128
// packets, twice a full block window).
constexpr uint32_t kAckEvery = 16;
constexpr size_t kMaxAcksDue = 8;

}  // namespace

uint64_t AckLayer::commit(double now, const AckFields* held, PacketHeader& header) {
  const uint64_t seq = send_sequence_++;
  header.sequence = static_cast<uint16_t>(seq);
  header.ack = held != nullptr ? held->ack : received_.ack();
  header.ack_bits = held != nullptr ? held->bits : received_.ack_bits();
  if (held == nullptr) ack_pending_ = 0;  // every packet carries the current acks
  draft_.time = now;
  // Swapped, not moved: the slot's old vectors come back to the draft with their memory.
  std::swap(*sent_.claim(header.sequence), draft_);
  if (unresolved_count_ == kMaxUnresolved) {  // the oldest is forgotten, not judged
    unresolved_head_ = (unresolved_head_ + 1) % kMaxUnresolved;
    --unresolved_count_;
  }
  unresolved_[(unresolved_head_ + unresolved_count_++) % kMaxUnresolved] = header.sequence;
  last_send_time_ = now;
  return seq;
}

void AckLayer::note_wants_ack() {
  if (++ack_pending_ < kAckEvery) return;
  // Held now, while the ack bits still cover all of these packets.
  if (acks_due_.size() < kMaxAcksDue) acks_due_.push_back({received_.ack(), received_.ack_bits()});
  ack_pending_ = 0;
}

void AckLayer::sample_rtt(double now, const SentPacket& p) {
  double sample = (now - p.time) * 1000.0;
  if (stats_.rtt_ms == 0) {
    stats_.rtt_ms = sample;
  } else {
    stats_.jitter_ms += 0.1 * (std::fabs(sample - stats_.rtt_ms) - stats_.jitter_ms);
    stats_.rtt_ms += 0.1 * (sample - stats_.rtt_ms);
  }
}

void AckLayer::note_received(uint64_t skipped) {
  // Same smoothing as the outgoing loss. A gap is counted as it opens; a packet arriving
  // into one (reordered) then counts as received, so reordering alone biases the figure
  // up only until the next packets. A gap larger than the replay window counts as that.
  constexpr double kWeight = 0.02;
  const uint64_t missing = std::min<uint64_t>(skipped, 256);
  for (uint64_t i = 0; i < missing; ++i) stats_.loss_in += kWeight * (1.0 - stats_.loss_in);
  stats_.loss_in += kWeight * (0.0 - stats_.loss_in);
}

void AckLayer::update_loss(double now) {
  // A packet is judged once it is old enough that its ack would have arrived.
  double horizon = std::max(0.25, 3.0 * stats_.rtt_ms / 1000.0);
  while (unresolved_count_ > 0) {
    const SentPacket* p = sent_.find(unresolved_[unresolved_head_]);
    if (p != nullptr && now - p->time < horizon) break;
    double lost = (p != nullptr && p->acked) ? 0.0 : 1.0;
    stats_.loss += 0.02 * (lost - stats_.loss);
    unresolved_head_ = (unresolved_head_ + 1) % kMaxUnresolved;
    --unresolved_count_;
  }
}

}  // namespace keel::protocol::connection
