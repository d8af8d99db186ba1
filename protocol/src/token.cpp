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
  detail::visit_token(w, t);
  return out;
}

keel::Expected<ConnectToken> parse_token(std::span<const uint8_t> bytes) {
  keel::ByteReader r(bytes);
  keel::FieldReader io(r);
  ConnectToken t;
  switch (detail::visit_token(io, t)) {
    case detail::TokenFault::None: return t;
    case detail::TokenFault::NotKeel:
      return keel::Error{"connect token: not a Keel token of protocol version " + std::to_string(kProtocolVersion)};
    case detail::TokenFault::Addresses: return keel::Error{"connect token: bad server address list"};
    case detail::TokenFault::Size: break;
  }
  return keel::Error{"connect token: truncated or wrong size"};
}

}  // namespace keel::protocol
