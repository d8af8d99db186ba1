// The authenticated attacks keel-attack sends and tests/server/block_flood_test.cpp
// sends too, built once: a datagram sealed with a client's keys (so it passes
// authentication and reaches the session), the packets of a zstd bomb, and a fragment
// that claims a huge block.
#pragma once

#include <keel/protocol/connection.h>
#include <keel/protocol/packet.h>

#include <sodium.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace keel::attack {

namespace kp = keel::protocol;

// A Connected datagram sealed as a client's Connection seals packet `seq`.
inline std::vector<uint8_t> seal(const kp::ConnectionKeys& keys, uint64_t seq, std::span<const uint8_t> payload) {
  std::vector<uint8_t> d(kp::kPacketHeaderBytes + payload.size() + kp::kAuthTagBytes);
  kp::PacketHeader h;
  h.sequence = static_cast<uint16_t>(seq);
  kp::write_header(h, std::span<uint8_t, kp::kPacketHeaderBytes>(d.data(), kp::kPacketHeaderBytes));
  std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> nonce{};
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<uint8_t>(seq >> (8 * i));
  unsigned long long clen = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(d.data() + kp::kPacketHeaderBytes, &clen, payload.data(),
                                            payload.size(), d.data(), kp::kPacketHeaderBytes, nullptr,
                                            nonce.data(), keys.send.data());
  return d;
}

// The chunks of the packets a real Connection sends for a block of 64 MiB of zeros.
inline std::vector<std::vector<uint8_t>> bomb_payloads() {
  kp::Connection maker;  // no keys: header + plain chunks
  if (!maker.send_block(std::vector<uint8_t>(64u << 20, 0))) return {};
  std::vector<std::vector<uint8_t>> out;
  for (double t : {0.0, 0.1}) {  // the block's byte budget fills with time
    for (auto& d : maker.update(t)) {
      if (d.size() > kp::kPacketHeaderBytes + 20) out.emplace_back(d.begin() + kp::kPacketHeaderBytes, d.end());
    }
  }
  return out;
}

// One fragment (index 0) claiming a 60 MiB compressed, 64 MiB uncompressed block.
inline std::vector<uint8_t> claim_payload(uint16_t id) {
  std::vector<uint8_t> p;
  auto u16 = [&](uint16_t v) { p.push_back(uint8_t(v)), p.push_back(uint8_t(v >> 8)); };
  auto u32 = [&](uint32_t v) { u16(uint16_t(v)), u16(uint16_t(v >> 16)); };
  const uint32_t csize = 60u << 20;
  p.push_back(4);  // BlockFragment
  u16(id);
  u16(0);
  u16(static_cast<uint16_t>((csize + 1099) / 1100));
  u32(csize);
  u32(64u << 20);
  u16(1100);
  p.resize(p.size() + 1100, 0x5a);
  return p;
}

}  // namespace keel::attack
