// What the client's and the server's halves of the handshake share (handshake.cpp,
// handshake_server.cpp): the datagram framing and the size of a sealed challenge. The
// server's half needs libsodium (the challenge key and its sealing) and is left out of a
// client-only build (the wasm32 client, client-sdk/web/).
#pragma once

#include <keel/protocol/packet.h>
#include <keel/protocol/token.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace keel::protocol::detail {

inline constexpr size_t kChallengePlainBytes = 8 + 8 + 4 + 32 + 32 + kUserDataBytes + 8 + 1 + kMaxAddressBytes;

/// A handshake packet: the header, the message's length and bytes, zeros up to `pad_to`.
std::vector<uint8_t> handshake_datagram(PacketType type, const std::vector<uint8_t>& message, size_t pad_to);

}  // namespace keel::protocol::detail
