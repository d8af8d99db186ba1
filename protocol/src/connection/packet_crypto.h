// The bottom layer of a connection: sealing and opening connected packets. With keys set
// every packet is authenticated and encrypted (ChaCha20-Poly1305 IETF, the 64-bit packet
// counter as the nonce, the header as additional data); either way a packet whose
// counter was seen already, or is too old to tell, is dropped as replayed. Both calls
// write into buffers the caller reuses, so a steady stream of packets allocates nothing.
#pragma once

#include <keel/protocol/connection.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/packet.h>

#include <cstdint>
#include <span>
#include <vector>

namespace keel::protocol::connection {

class PacketCrypto {
 public:
  /// Turns on authentication; must be the same (swapped) keys on both ends.
  void set_keys(const ConnectionKeys& keys);

  /// `packet` becomes the header followed by the payload (encrypted and tagged when
  /// keyed). `seq` is the full 64-bit counter the header's 16 bits come from.
  void seal(uint64_t seq, const PacketHeader& header, std::span<const uint8_t> payload,
            std::vector<uint8_t>& packet) const;
  /// Checks the counter against replays and opens the payload into `plain`. `seq` gets
  /// the full counter. Nothing is remembered until accept(seq).
  DropReason open(const PacketHeader& header, std::span<const uint8_t> datagram, std::vector<uint8_t>& plain,
                  uint64_t& seq) const;
  /// The packet with counter `seq` was accepted: a second copy of it is a replay.
  /// Returns how many counters it skipped past the newest before it (a gap: packets
  /// lost, or yet to arrive out of order).
  uint64_t accept(uint64_t seq);

 private:
  bool authenticated_ = false;
  ConnectionKeys keys_;
  uint64_t newest_received_ = 0;
  ReplayWindow replay_;
};

}  // namespace keel::protocol::connection
