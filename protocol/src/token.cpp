// The connect token's bytes: its binary layout (serialize_token, parse_token) and the
// development key. Nothing here needs libsodium; the sealing, the keys and the base64 text
// form are token_crypto.cpp's, which a client-only build leaves out.
#include <keel/protocol/token.h>

#include "token_fields.h"

#include <keel/base/byte_io.h>

namespace keel::protocol {

using namespace detail;

TokenKey development_token_key() {
  // Public on purpose: "keel-development-key" padded with zeros. Anyone can mint tokens
  // for it, which is why a server using it binds loopback only (docs/security.md).
  TokenKey key{};
  const char text[] = "keel-development-key";
  for (size_t i = 0; i + 1 < sizeof(text); ++i) key[i] = static_cast<uint8_t>(text[i]);
  return key;
}

std::vector<uint8_t> serialize_token(const ConnectToken& t) {
  std::vector<uint8_t> out;
  keel::ByteWriter w(out);
  w.u32(kProtocolId);
  w.u32(t.protocol_version);
  w.u64(t.create_time);
  w.u64(t.expire_time);
  w.bytes(t.nonce);
  w.u32(t.timeout_seconds);
  write_addresses(w, t.server_addresses);
  w.bytes(t.client_to_server_key);
  w.bytes(t.server_to_client_key);
  w.u16(static_cast<uint16_t>(t.private_data.size()));
  w.bytes(t.private_data);
  return out;
}

keel::Expected<ConnectToken> parse_token(std::span<const uint8_t> bytes) {
  keel::ByteReader r(bytes);
  ConnectToken t;
  uint32_t id = r.u32();
  t.protocol_version = r.u32();
  if (!r.ok() || id != kProtocolId || t.protocol_version != kProtocolVersion) {
    return keel::Error{"connect token: not a Keel token of protocol version " +
                      std::to_string(kProtocolVersion)};
  }
  t.create_time = r.u64();
  t.expire_time = r.u64();
  read_array(r, t.nonce);
  t.timeout_seconds = r.u32();
  if (!read_addresses(r, t.server_addresses)) {
    return keel::Error{"connect token: bad server address list"};
  }
  read_array(r, t.client_to_server_key);
  read_array(r, t.server_to_client_key);
  uint16_t n = r.u16();
  auto priv = r.bytes(n);
  if (!r.ok() || n != kPrivateTokenBytes || r.left() != 0) {
    return keel::Error{"connect token: truncated or wrong size"};
  }
  t.private_data.assign(priv.begin(), priv.end());
  return t;
}

}  // namespace keel::protocol
