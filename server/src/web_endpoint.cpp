#include "web_endpoint.h"

#include "net.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>

namespace keel::server {

// The page's files (server/web/), compiled in by cmake/embed_text.cmake.
namespace web_assets {
std::string_view page_html();
std::string_view keel_web_js();
std::string_view keel_draw_js();
std::string_view three_js();  // replay/tool/viewer/vendor/three-bundle.min.js (the global KEEL_THREE)
}  // namespace web_assets

namespace kp = keel::protocol;

bool loopback_host(const std::string& host) {
  std::string name = host;
  if (!name.empty() && name.front() == '[') {
    const size_t close = name.find(']');
    if (close == std::string::npos) return false;
    name = name.substr(1, close - 1);
  } else if (const size_t colon = name.rfind(':'); colon != std::string::npos) {
    name = name.substr(0, colon);
  }
  if (name == "localhost") return true;
  asio::error_code ec;
  asio::ip::address a = asio::ip::make_address(name, ec);
  return !ec && is_loopback(a);
}

WebEndpoint::WebEndpoint(asio::io_context& io, const ServerOptions& options, const kp::TokenKey& key, Logger& log,
                         WebSocketAddressFn websocket_address)
    : io_(io), options_(options), key_(key), log_(log), websocket_address_(std::move(websocket_address)) {
  // A client id is the player's id, so it must fit 32 bits (the scheduler denies larger
  // ones). The page's ids start far above the small ones bots and tests pick, at a
  // random offset so that two servers' pages do not hand out the same ids.
  next_client_id_ = kWebFirstClientId + (std::random_device{}() % kWebClientIdSpan);
}

// The wasm32 client's files (docs/browser.md, "The wasm32 client"), each read whole at start
// and bounded: the module is about 1 MB, libsodium's JavaScript about 0.3 MB.
constexpr size_t kWebClientFileMaxBytes = size_t{16} << 20;
struct ClientFileSpec {
  const char* name;
  const char* content_type;
};
constexpr std::array<ClientFileSpec, 6> kWebClientFiles = {{
    {"keel_web_client.mjs", "text/javascript; charset=utf-8"},
    {"keel_web_client.js", "text/javascript; charset=utf-8"},
    {"keel_web_client.wasm", "application/wasm"},
    {"libsodium-wrappers.mjs", "text/javascript; charset=utf-8"},
    {"libsodium.mjs", "text/javascript; charset=utf-8"},
    {"fzstd.mjs", "text/javascript; charset=utf-8"},
}};

keel::Status WebEndpoint::load_client_files() {
  for (const ClientFileSpec& spec : kWebClientFiles) {
    const std::string path = options_.web_client_dir + "/" + spec.name;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return keel::Error{"--web-client " + options_.web_client_dir + ": no " + spec.name +
                         " (scripts/build-web-client.sh writes the folder)"};
    }
    std::string bytes;
    std::array<char, 65536> chunk{};
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
      bytes.append(chunk.data(), static_cast<size_t>(in.gcount()));
      if (bytes.size() > kWebClientFileMaxBytes) {
        return keel::Error{"--web-client: " + path + " is larger than 16 MiB"};
      }
    }
    client_files_[std::string("/client/") + spec.name] = {spec.content_type, std::move(bytes)};
  }
  return {};
}

keel::Status WebEndpoint::start() {
  if (options_.web_bind.empty()) return {};
  if (!options_.web_client_dir.empty()) {
    if (keel::Status loaded = load_client_files(); !loaded) return loaded;
  }
  Udp::endpoint at = *parse_endpoint(options_.web_bind);
  HttpLimits limits;
  limits.max_connections = kWebMaxConnections;
  http_ = std::make_unique<HttpServer>(
      io_, HttpServer::RequestHandler([this](const HttpRequest& r) { return answer(r); }), log_, limits);
  std::string err = http_->start(asio::ip::tcp::endpoint(at.address(), at.port()));
  if (!err.empty()) return keel::Error{"--web " + options_.web_bind + ": " + err};
  auto e = http_->local_endpoint();
  address_ = format_endpoint(Udp::endpoint(e.address(), e.port()));
  if (options_.web_remote_tokens && !is_loopback(at.address())) {
    log_.warn("web_remote_tokens", {{"why", "--web-remote-tokens: anyone who reaches " + address_ + " gets a connect token"}});
  }
  return {};
}

void WebEndpoint::stop() {
  if (http_) http_->stop();
}

HttpResponse WebEndpoint::answer(const HttpRequest& request) {
  if (request.path == "/" || request.path == "/index.html") {
    return {200, "text/html; charset=utf-8", std::string(web_assets::page_html()), "Cache-Control: no-cache\r\n"};
  }
  if (request.path == "/keel_web.js") {
    return {200, "text/javascript; charset=utf-8", std::string(web_assets::keel_web_js()), "Cache-Control: no-cache\r\n"};
  }
  if (request.path == "/keel_draw.js") {
    return {200, "text/javascript; charset=utf-8", std::string(web_assets::keel_draw_js()), "Cache-Control: no-cache\r\n"};
  }
  if (request.path == "/three.js") {
    return {200, "text/javascript; charset=utf-8", std::string(web_assets::three_js()), "Cache-Control: no-cache\r\n"};
  }
  if (request.path == "/token") return token(request);
  // Whether the wasm32 client is served, always answered: the page asks before importing
  // it, so that a server without --web-client costs it no failed request.
  if (request.path == "/client/index.json") {
    return {200, "application/json", std::string("{\"wasm_client\": ") + (client_files_.empty() ? "false" : "true") + "}\n",
            "Cache-Control: no-cache\r\n"};
  }
  if (auto file = client_files_.find(request.path); file != client_files_.end()) {
    return {200, file->second.content_type, file->second.bytes, "Cache-Control: no-cache\r\n"};
  }
  return {404, "text/plain", "not found: try / or /token\n"};
}

bool WebEndpoint::take_token_credit() {
  const auto now = std::chrono::steady_clock::now();
  credit_ = std::min(kWebTokenBurst, credit_ + std::chrono::duration<double>(now - refilled_).count() * kWebTokensPerSecond);
  refilled_ = now;
  if (credit_ < 1.0) return false;
  credit_ -= 1.0;
  return true;
}

HttpResponse WebEndpoint::token(const HttpRequest& request) {
  // A page of another site whose name was made to resolve to 127.0.0.1 sends its own
  // name as Host: refusing it keeps that page from reading a token (DNS rebinding).
  if (!options_.web_remote_tokens && !loopback_host(request.host)) {
    return {403, "text/plain", "token endpoint: Host must be localhost or a loopback address\n"};
  }
  // A HEAD would mint a token only to drop it, spending the bucket for nothing.
  if (request.head_only) return {405, "text/plain", "token endpoint: GET only\n"};
  if (!take_token_credit()) return {429, "text/plain", "token endpoint: too many tokens asked for; retry in a second\n"};
  const std::string address = websocket_address_();
  if (address.empty()) return {503, "text/plain", "token endpoint: no WebSocket address to name\n"};
  kp::MintParams p;
  p.client_id = next_client_id_;
  // Wraps inside the page's range: never 0, never past 32 bits.
  next_client_id_ = next_client_id_ + 1 < kWebFirstClientId + 2 * kWebClientIdSpan ? next_client_id_ + 1 : kWebFirstClientId;
  p.match_id = options_.match_id;
  p.server_addresses = {address};
  p.ttl_seconds = kWebTokenTtlSeconds;
  const auto now = static_cast<uint64_t>(std::time(nullptr));
  auto minted = kp::mint_token(key_, p, now);
  if (!minted) return {503, "text/plain", "token endpoint: " + minted.error().message + "\n"};
  issued_.fetch_add(1, std::memory_order_relaxed);
  nlohmann::json body = {{"token", kp::token_to_base64(*minted)},
                         {"websocket", "ws://" + address + "/"},
                         {"client_id", p.client_id},
                         {"match_id", p.match_id},
                         {"expire_time", minted->expire_time}};
  return {200, "application/json", body.dump() + "\n", "Cache-Control: no-store\r\n"};
}

}  // namespace keel::server
