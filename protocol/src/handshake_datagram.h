// What the client's and the server's halves of the handshake share (handshake.cpp,
// handshake_server.cpp): the datagram framing and the size of a sealed challenge. The
// server's half needs libsodium (the challenge key and its sealing) and is left out of a
// client-only build (the wasm32 client, client-sdk/web/).
#pragma once

#include <keel/protocol/packet.h>
#include <keel/protocol/token.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace keel::protocol::detail {

inline constexpr size_t kChallengePlainBytes = 8 + 8 + 4 + 32 + 32 + kUserDataBytes + 8 + 1 + kMaxAddressBytes;

/// A handshake packet: the header, the message's length and bytes, zeros up to `pad_to`.
std::vector<uint8_t> handshake_datagram(PacketType type, const std::vector<uint8_t>& message, size_t pad_to);

// The server's handshake datagrams (ConnectionChallenge, ConnectionDeny) are sealed with
// the token's server-to-client key, which only the token's holder and the server know, so
// nobody else can make a connecting client answer a challenge it did not get or give up
// on a deny it did not get:
//   header (type, sequence 0) | nonce tail, 8 random bytes | u16 length | sealed message
// sealed with ChaCha20-Poly1305 IETF over the header and the nonce tail. The nonce is
// {'K', 'H', type, 0} then the tail: connected packets' nonces start with four zero bytes,
// so no handshake nonce is ever a packet's, and a random tail needs no counter kept
// across sockets or restarts (a token sees a handful of these).
inline constexpr size_t kSealedNonceTailBytes = 8;
inline constexpr size_t kSealedPrefixBytes = kPacketHeaderBytes + kSealedNonceTailBytes;

/// The 12-byte nonce of a sealed handshake datagram of `type` with this tail.
std::array<uint8_t, 12> sealed_handshake_nonce(PacketType type, const uint8_t* tail);

}  // namespace keel::protocol::detail
