// The packet header and the sequence / ack bookkeeping of the packet layer.
//
// Every Keel datagram starts with the same 13-byte header (little-endian):
//
//   offset size field
//   0      1    packet type (PacketType)
//   1      4    protocol id (kProtocolId: the magic and kProtocolVersion)
//   5      2    sequence      (low 16 bits of the sender's 64-bit packet counter)
//   7      2    ack           (the newest sequence the sender has received from us)
//   9      4    ack bits      (bit i set: sequence ack-1-i was received as well)
//   13     ...  payload (at most kMaxPayloadBytes), then for connected packets a 16-byte tag
//
// Sequences wrap at 65536; comparisons use sequence_greater_than, which treats the
// nearer way round the circle as the truth. The full 64-bit counter is reconstructed
// on receipt (it is the AEAD nonce, so it must never repeat under one key).
// docs/protocol.md is the reference.
#pragma once

#include <keel/protocol/drop.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace keel::protocol {

/// Bumped on every wire change that the schema-evolution rules cannot absorb.
// 2: game-defined input layouts; 3: view stamps on inputs, partial snapshots (interest
// management) and a client's own budget in ClientHello: a version 2 client would take
// no bodies from a version 3 server, so it is refused at the handshake instead.
inline constexpr uint32_t kProtocolVersion = 4;  // 4: the server's handshake datagrams are sealed
/// "KL" + version: a packet of another protocol or version fails the header check.
inline constexpr uint32_t kProtocolId = 0x4b4c0000u | kProtocolVersion;
inline constexpr size_t kPacketHeaderBytes = 13;
/// Payload bytes per datagram: with IP/UDP headers and the tag it stays under 1280.
inline constexpr size_t kMaxPayloadBytes = 1200;
inline constexpr size_t kAuthTagBytes = 16;
inline constexpr size_t kMaxPacketBytes = kPacketHeaderBytes + kMaxPayloadBytes + kAuthTagBytes;

enum class PacketType : uint8_t {
  ConnectionRequest = 1,
  ConnectionChallenge = 2,
  ConnectionResponse = 3,
  ConnectionDeny = 4,
  Connected = 5,  ///< authenticated payload of an established connection
  kCount
};

struct PacketHeader {
  PacketType type = PacketType::Connected;
  uint16_t sequence = 0;
  uint16_t ack = 0;
  uint32_t ack_bits = 0;
};

/// True when sequence a is newer than b, allowing for wrap-around at 65536.
constexpr bool sequence_greater_than(uint16_t a, uint16_t b) {
  return ((a > b) && (a - b <= 32768)) || ((a < b) && (b - a > 32768));
}
constexpr bool sequence_less_than(uint16_t a, uint16_t b) { return sequence_greater_than(b, a); }

/// The 64-bit counter whose low 16 bits are `seq16`, nearest to `reference`.
uint64_t expand_sequence(uint16_t seq16, uint64_t reference);

/// Writes the 13-byte header into out[0..13).
void write_header(const PacketHeader& header, std::span<uint8_t, kPacketHeaderBytes> out);
/// Reads and checks a header: length, protocol id, known type.
DropReason read_header(std::span<const uint8_t> datagram, PacketHeader& header);

/// A ring of 1024 entries indexed by 16-bit sequence (1024 divides 65536, so a sequence
/// always maps to the same slot). An entry is valid only while its stored sequence
/// matches: inserting a newer sequence evicts whatever older one shared the slot.
template <class T, size_t N = 1024>
class SequenceBuffer {
  static_assert(65536 % N == 0, "N must divide 65536");

 public:
  T* insert(uint16_t seq) {
    size_t i = seq % N;
    sequences_[i] = seq;
    valid_[i] = true;
    entries_[i] = T{};
    return &entries_[i];
  }
  /// Like insert, but the entry keeps what it held (its memory, for reuse): the caller
  /// overwrites it.
  T* claim(uint16_t seq) {
    size_t i = seq % N;
    sequences_[i] = seq;
    valid_[i] = true;
    return &entries_[i];
  }
  T* find(uint16_t seq) {
    size_t i = seq % N;
    return valid_[i] && sequences_[i] == seq ? &entries_[i] : nullptr;
  }
  const T* find(uint16_t seq) const {
    size_t i = seq % N;
    return valid_[i] && sequences_[i] == seq ? &entries_[i] : nullptr;
  }
  void remove(uint16_t seq) {
    size_t i = seq % N;
    if (sequences_[i] == seq) valid_[i] = false;
  }
  /// Invalidates entries in (from, to) exclusive — sequences skipped over by a jump, so
  /// a stale entry from 1024 sequences ago is not mistaken for a fresh one.
  void clear_range(uint16_t from, uint16_t to) {
    for (uint16_t s = static_cast<uint16_t>(from + 1); s != to; ++s) {
      valid_[s % N] = false;
      if (static_cast<uint16_t>(s - from) > N) break;
    }
  }

 private:
  std::array<T, N> entries_{};
  std::array<uint16_t, N> sequences_{};
  std::array<bool, N> valid_{};
};

/// What we have received from the peer, summarised as (ack, ack_bits) for our headers.
class ReceivedPackets {
 public:
  /// Records a received sequence. Returns false for a duplicate.
  bool record(uint16_t seq);
  bool any() const { return any_; }
  uint16_t ack() const { return newest_; }
  uint32_t ack_bits() const;

 private:
  struct Seen {
    bool yes = false;
  };
  SequenceBuffer<Seen> seen_;
  uint16_t newest_ = 0;
  bool any_ = false;
};

/// The acks carried by a header, expanded to the sequences they confirm (newest first).
/// `out` receives at most 33 sequences.
void acked_sequences(uint16_t ack, uint32_t ack_bits, std::vector<uint16_t>& out);

/// Rejects authenticated packets whose 64-bit sequence was seen before or is older than
/// the window (kWindow sequences behind the newest). Call accept() only after the
/// packet authenticated, so a forged packet cannot advance the window.
class ReplayWindow {
 public:
  static constexpr uint64_t kWindow = 256;
  bool is_replay(uint64_t seq) const;
  void accept(uint64_t seq);
  uint64_t newest() const { return newest_; }

 private:
  uint64_t newest_ = 0;
  bool any_ = false;
  std::array<uint64_t, kWindow> slots_{};  // slot = seq % kWindow holds seq + 1 (0 = empty)
};

}  // namespace keel::protocol
