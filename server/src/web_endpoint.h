// keel-server's browser page (--web HOST:PORT, docs/browser.md): the page's files,
// compiled into the binary, and a development token endpoint that hands out a connect
// token for the WebSocket listener, on the I/O thread's io_context.
//
// The token endpoint gives a token to whoever asks, which is why --web binds loopback
// only unless --web-remote-tokens says otherwise (config.cpp): a real deployment's
// matchmaker issues tokens, to players it has authenticated. Even on loopback it is
// bounded: the HTTP server's limits (request head, deadline, connections at once), a
// token bucket for tokens, and a Host check so that a page from another site cannot read
// a token through DNS rebinding (docs/security.md, "Browser page").
#pragma once

#include "http.h"
#include "log.h"

#include <keel/base/expected.h>
#include <keel/protocol/token.h>
#include <keel/server/config.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace keel::server {

/// Tokens the endpoint mints per second, and the burst it allows.
inline constexpr double kWebTokensPerSecond = 10.0;
inline constexpr double kWebTokenBurst = 20.0;
/// Seconds a page's token stays valid for its handshake.
inline constexpr uint64_t kWebTokenTtlSeconds = 60;
/// The page's client ids: from kWebFirstClientId plus a random offset below
/// kWebClientIdSpan, counting up, wrapping within [first, first + 2 x span); all in 32 bits.
inline constexpr uint64_t kWebFirstClientId = uint64_t{1} << 31;
inline constexpr uint64_t kWebClientIdSpan = uint64_t{1} << 29;
/// HTTP connections the page endpoint serves at once.
inline constexpr uint32_t kWebMaxConnections = 32;

/// True when a Host header's value names a loopback host: "localhost" or a loopback
/// address literal, with or without a port. Pure, for the tests.
bool loopback_host(const std::string& host);

class WebEndpoint {
 public:
  /// The address tokens name for the WebSocket listener (known once it is bound).
  using WebSocketAddressFn = std::function<std::string()>;

  WebEndpoint(asio::io_context& io, const ServerOptions& options, const keel::protocol::TokenKey& key, Logger& log,
              WebSocketAddressFn websocket_address);

  /// Listens on --web; does nothing without it.
  keel::Status start();
  void stop();
  /// "host:port" it listens on (empty when off).
  const std::string& address() const { return address_; }
  uint64_t tokens_issued() const { return issued_.load(); }

 private:
  HttpResponse answer(const HttpRequest& request);
  HttpResponse token(const HttpRequest& request);
  keel::Status load_client_files();
  bool take_token_credit();

  asio::io_context& io_;
  const ServerOptions& options_;
  const keel::protocol::TokenKey& key_;
  Logger& log_;
  WebSocketAddressFn websocket_address_;
  std::unique_ptr<HttpServer> http_;
  std::string address_;
  // Token bucket and client ids: touched only on the I/O thread (the HTTP handler).
  double credit_ = kWebTokenBurst;
  std::chrono::steady_clock::time_point refilled_ = std::chrono::steady_clock::now();
  uint64_t next_client_id_ = 0;
  std::atomic<uint64_t> issued_{0};
  /// --web-client's files by URL path ("/client/NAME"), read once at start.
  struct ClientFile {
    std::string content_type;
    std::string bytes;
  };
  std::map<std::string, ClientFile> client_files_;
};

}  // namespace keel::server
