// libFuzzer: connect tokens and the server handshake — binary and base64 token parsing,
// private-token decryption, and requests/responses into a ServerHandshake with a fixed
// key (so a seed holding a valid request reaches the code past decryption).
#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kp = keel::protocol;

namespace {

kp::TokenKey fixed_key() {
  kp::TokenKey k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 7 + 1);
  return k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  kp::parse_token(bytes);
  kp::token_from_base64(std::string(reinterpret_cast<const char*>(data), size));
  if (size >= kp::kTokenNonceBytes) {
    kp::PrivateToken priv;
    std::span<const uint8_t, kp::kTokenNonceBytes> nonce(data, kp::kTokenNonceBytes);
    kp::open_private_token(fixed_key(), bytes.subspan(kp::kTokenNonceBytes), nonce, 0, priv);
  }
  static kp::ServerHandshake server(fixed_key(), "127.0.0.1:7777");
  std::vector<uint8_t> reply;
  server.on_request(bytes, "10.0.0.1:5000", 1000, reply);
  kp::AcceptedClient client;
  server.on_response(bytes, "10.0.0.1:5000", 1000, client);
  std::vector<uint8_t> response;
  kp::ConnectionKeys keys;
  keys.receive.fill(0x11);
  kp::answer_challenge(bytes, keys, response);
  kp::fb::DenyReason reason{};
  kp::read_deny(bytes, keys, reason);
  return 0;
}
