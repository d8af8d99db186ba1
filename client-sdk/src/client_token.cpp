// mint_token_for (keel/client/client.h): a token for a development server, minted with
// libsodium through keel::protocol. The wasm32 client (client-sdk/web/) leaves it out: a
// page gets its token from keel-server's /token endpoint (docs/browser.md).
#include <keel/client/client.h>

#include <chrono>

namespace keel::client {

keel::Expected<protocol::ConnectToken> mint_token_for(const protocol::TokenKey& key, uint64_t client_id,
                                                     uint64_t match_id, const std::string& server_address,
                                                     uint64_t ttl_seconds, uint32_t timeout_seconds) {
  protocol::MintParams p;
  p.client_id = client_id;
  p.match_id = match_id;
  p.server_addresses = {server_address};
  p.ttl_seconds = ttl_seconds;
  p.timeout_seconds = timeout_seconds;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return protocol::mint_token(key, p, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now).count()));
}

}  // namespace keel::client
