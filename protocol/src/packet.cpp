#include <keel/protocol/packet.h>

#include <cstring>

namespace keel::protocol {
namespace {

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t get_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

uint64_t expand_sequence(uint16_t seq16, uint64_t reference) {
  // Candidate in the reference's 65536-block, then the neighbouring blocks: pick the
  // one nearest the reference (ties cannot happen with a half-window of 32768).
  uint64_t base = reference & ~uint64_t{0xffff};
  uint64_t candidate = base | seq16;
  if (candidate > reference && candidate - reference > 32768 && candidate >= 65536) {
    candidate -= 65536;
  } else if (candidate < reference && reference - candidate > 32768) {
    candidate += 65536;
  }
  return candidate;
}

void write_header(const PacketHeader& header, std::span<uint8_t, kPacketHeaderBytes> out) {
  out[0] = static_cast<uint8_t>(header.type);
  put_u32(&out[1], kProtocolId);
  put_u16(&out[5], header.sequence);
  put_u16(&out[7], header.ack);
  put_u32(&out[9], header.ack_bits);
}

DropReason read_header(std::span<const uint8_t> datagram, PacketHeader& header) {
  if (datagram.size() < kPacketHeaderBytes) return DropReason::TooSmall;
  if (datagram.size() > kMaxPacketBytes) return DropReason::TooLarge;
  uint8_t type = datagram[0];
  if (get_u32(&datagram[1]) != kProtocolId) return DropReason::WrongProtocolId;
  if (type == 0 || type >= static_cast<uint8_t>(PacketType::kCount)) {
    return DropReason::UnknownPacketType;
  }
  header.type = static_cast<PacketType>(type);
  header.sequence = get_u16(&datagram[5]);
  header.ack = get_u16(&datagram[7]);
  header.ack_bits = get_u32(&datagram[9]);
  return DropReason::None;
}

bool ReceivedPackets::record(uint16_t seq) {
  if (seen_.find(seq) != nullptr) return false;
  if (!any_) {
    newest_ = seq;
    any_ = true;
  } else if (sequence_greater_than(seq, newest_)) {
    // Skipped sequences must not read as received because of a stale slot.
    seen_.clear_range(newest_, seq);
    newest_ = seq;
  } else if (static_cast<uint16_t>(newest_ - seq) >= 1024) {
    return false;  // too old to track; acking it is not needed
  }
  seen_.insert(seq)->yes = true;
  return true;
}

uint32_t ReceivedPackets::ack_bits() const {
  uint32_t bits = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    uint16_t s = static_cast<uint16_t>(newest_ - 1 - i);
    if (seen_.find(s) != nullptr) bits |= 1u << i;
  }
  return bits;
}

void acked_sequences(uint16_t ack, uint32_t ack_bits, std::vector<uint16_t>& out) {
  out.push_back(ack);
  for (uint32_t i = 0; i < 32; ++i) {
    if (ack_bits & (1u << i)) out.push_back(static_cast<uint16_t>(ack - 1 - i));
  }
}

bool ReplayWindow::is_replay(uint64_t seq) const {
  if (!any_) return false;
  if (seq + kWindow <= newest_) return true;  // older than the window: cannot tell, refuse
  return slots_[seq % kWindow] == seq + 1;
}

void ReplayWindow::accept(uint64_t seq) {
  if (!any_ || seq > newest_) {
    newest_ = seq;
    any_ = true;
  }
  slots_[seq % kWindow] = seq + 1;
}

}  // namespace keel::protocol
