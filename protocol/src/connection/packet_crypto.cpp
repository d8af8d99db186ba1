#include "packet_crypto.h"

#include "packet_aead.h"

#include <algorithm>
#include <array>

namespace keel::protocol::connection {
namespace {

std::array<uint8_t, aead::kNonceBytes> nonce_for(uint64_t seq) {
  std::array<uint8_t, aead::kNonceBytes> n{};
  for (int i = 0; i < 8; ++i) n[4 + i] = static_cast<uint8_t>(seq >> (8 * i));
  return n;
}

}  // namespace

void PacketCrypto::set_keys(const ConnectionKeys& keys) {
  if (!aead::init()) return;  // cannot happen on a supported platform
  keys_ = keys;
  authenticated_ = true;
}

void PacketCrypto::seal(uint64_t seq, const PacketHeader& header, std::span<const uint8_t> payload,
                        std::vector<uint8_t>& packet) const {
  packet.resize(kPacketHeaderBytes + payload.size() + (authenticated_ ? kAuthTagBytes : 0));
  write_header(header, std::span<uint8_t, kPacketHeaderBytes>(packet.data(), kPacketHeaderBytes));
  if (!authenticated_) {
    std::copy(payload.begin(), payload.end(), packet.begin() + kPacketHeaderBytes);
    return;
  }
  auto nonce = nonce_for(seq);
  aead::seal(packet.data() + kPacketHeaderBytes, payload.data(), payload.size(), packet.data(), kPacketHeaderBytes,
             nonce.data(), keys_.send.data());
}

DropReason PacketCrypto::open(const PacketHeader& header, std::span<const uint8_t> datagram,
                              std::vector<uint8_t>& plain, uint64_t& seq) const {
  seq = expand_sequence(header.sequence, newest_received_);
  if (replay_.is_replay(seq)) return DropReason::Replayed;
  auto body = datagram.subspan(kPacketHeaderBytes);
  if (!authenticated_) {
    if (body.size() > kMaxPayloadBytes) return DropReason::TooLarge;
    plain.assign(body.begin(), body.end());
    return DropReason::None;
  }
  if (body.size() < kAuthTagBytes) return DropReason::TooSmall;
  plain.resize(body.size() - kAuthTagBytes);
  auto nonce = nonce_for(seq);
  if (!aead::open(plain.data(), body.data(), body.size(), datagram.data(), kPacketHeaderBytes, nonce.data(),
                  keys_.receive.data())) {
    return DropReason::AuthFailed;
  }
  return DropReason::None;
}

uint64_t PacketCrypto::accept(uint64_t seq) {
  replay_.accept(seq);
  const uint64_t skipped = newest_received_ != 0 && seq > newest_received_ + 1 ? seq - newest_received_ - 1 : 0;
  newest_received_ = std::max(newest_received_, seq);
  return skipped;
}

}  // namespace keel::protocol::connection
