// The connect token's fields as token.cpp and token_crypto.cpp both read and write them.
#pragma once

#include <keel/protocol/address.h>
#include <keel/protocol/token.h>

#include <keel/base/byte_io.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace keel::protocol::detail {

inline bool valid_addresses(const std::vector<std::string>& addresses) {
  if (addresses.empty() || addresses.size() > kMaxTokenAddresses) return false;
  for (const auto& a : addresses) {
    if (a.empty() || a.size() > kMaxAddressBytes) return false;
    // A server compares the addresses byte for byte with the ones it answers to, which it
    // writes as parse_host_port reads them: a token naming anything else admits no one.
    auto hp = parse_host_port(a);
    if (!hp || hp->port == 0) return false;
  }
  return true;
}

// The fields below are each one list over the direction (keel/base/byte_io.h: a
// ByteWriter with a const token, or a FieldReader), so the token's writer (token.cpp,
// token_crypto.cpp) and its readers (the same, and handshake_server.cpp) cannot drift.

/// A u8 count of addresses, then each as a u8 length and its bytes. Reading, false (and a
/// failed reader) when the count or a length is 0 or past its bound.
template <class IO, class A>
bool visit_addresses(IO& io, A& addresses) {
  uint8_t n = uint8_t(addresses.size());
  io.u8(n);
  if constexpr (IO::kReading) {
    if (n == 0 || n > kMaxTokenAddresses) {
      io.fail("bad server address count");
      return false;
    }
    addresses.resize(n);
  }
  for (auto& a : addresses) {
    uint8_t len = uint8_t(a.size());
    io.u8(len);
    if constexpr (IO::kReading) {
      if (len == 0 || len > kMaxAddressBytes) {
        io.fail("bad server address length");
        return false;
      }
      a.resize(len);
    }
    io.bytes(a.data(), a.size());
  }
  return io.ok();
}

/// The private token's plaintext before its zero padding. The client's role byte comes
/// after the user data, in what was zero padding, so a token minted before roles existed
/// reads as a player's. Reading, false when the token is not one this build mints.
template <class IO, class T>
bool visit_private_token(IO& io, T& t) {
  io.u64(t.client_id);
  io.u64(t.match_id);
  io.u32(t.timeout_seconds);
  if (!visit_addresses(io, t.server_addresses)) return false;
  io.bytes(t.client_to_server_key);
  io.bytes(t.server_to_client_key);
  io.bytes(t.user_data);
  uint8_t role = static_cast<uint8_t>(t.role);
  io.u8(role);
  if constexpr (IO::kReading) {
    if (!io.ok() || role > static_cast<uint8_t>(ClientRole::Spectator)) return false;
    t.role = static_cast<ClientRole>(role);
  }
  return io.ok();
}

/// What reading a public token found wrong (each has its own message in parse_token).
enum class TokenFault { None, NotKeel, Addresses, Size };

/// The public token: protocol id and version, times, nonce, timeout, addresses, the two
/// keys, then the encrypted private part with a u16 length that must be kPrivateTokenBytes.
template <class IO, class T>
TokenFault visit_token(IO& io, T& t) {
  uint32_t id = kProtocolId;
  io.u32(id);
  io.u32(t.protocol_version);
  if constexpr (IO::kReading) {
    if (!io.ok() || id != kProtocolId || t.protocol_version != kProtocolVersion) return TokenFault::NotKeel;
  }
  io.u64(t.create_time);
  io.u64(t.expire_time);
  io.bytes(t.nonce);
  io.u32(t.timeout_seconds);
  if (!visit_addresses(io, t.server_addresses)) return TokenFault::Addresses;
  io.bytes(t.client_to_server_key);
  io.bytes(t.server_to_client_key);
  uint16_t n = static_cast<uint16_t>(t.private_data.size());
  io.u16(n);
  if constexpr (IO::kReading) {
    if (!io.ok() || n != kPrivateTokenBytes || io.reader().left() != n) return TokenFault::Size;
    t.private_data.resize(n);
  }
  io.bytes(t.private_data);
  return io.ok() ? TokenFault::None : TokenFault::Size;
}

}  // namespace keel::protocol::detail
