// The server's UDP edge, run on the I/O thread: it binds the sockets, receives every
// datagram, hands a connected session's datagrams to its match (through the Router) and
// runs the handshake for the rest. A completed handshake becomes an Admission, handed to
// the match scheduler; nothing here touches a match's state.
#pragma once

#include "handshake_limiter.h"
#include "log.h"
#include "match_host.h"
#include "metrics.h"
#include "net.h"
#include "router.h"
#include "websocket_listener.h"

#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>
#include <keel/server/config.h>
#include <keel/base/expected.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace keel::server {

class FrontDoor {
 public:
  /// Takes an admitted client; false when the scheduler's inbox is full (the client is
  /// then dropped with a count and retries its handshake).
  using AdmitFn = std::function<bool(Admission&&)>;
  /// The server's monotonic clock, in seconds (the handshake limiter's time).
  using ClockFn = std::function<double()>;

  FrontDoor(asio::io_context& io, const ServerOptions& options, const protocol::TokenKey& key, Logger& log,
            Metrics& metrics, Router& router, AdmitFn admit, ClockFn clock);

  /// Binds every --bind address and the --websocket listener (tick-thread start-up,
  /// before the I/O thread runs).
  keel::Status bind();
  /// Starts one receive loop per socket, and WebSocket accepts (before the I/O thread runs).
  void start_receiving();
  /// Closes every WebSocket connection once what is queued for it is sent (shutdown,
  /// after the last Disconnect was queued; waits at most `wait_seconds`).
  void close_websockets(double wait_seconds);
  /// The WebSocket listener's address as bound ("" without --websocket).
  std::string websocket_address() const { return websocket_address_; }
  /// From now on handshakes are dropped (NotAdmitting): the server is stopping.
  void stop_admitting() { admitting_.store(false); }

  /// Adds an address tokens may name (an Agones GameServer's); any thread.
  void accept_token_address(const std::string& address);
  std::vector<std::string> token_addresses() const;
  /// The bound addresses, "host:port" (the real port for port 0).
  const std::vector<std::string>& bound_addresses() const { return addresses_; }
  /// Valid after bind().
  const DatagramSender& sender() const { return *sender_; }

 private:
  void receive_next(uint32_t socket);
  void on_datagram(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes);
  void on_handshake(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes);
  void on_response(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes, uint64_t unix_now);
  bool add_token_address(const std::string& address);
  keel::Status listen_websocket();
  void count_websocket(WebSocketEvent event, uint64_t n);

  asio::io_context& io_;
  const ServerOptions& options_;
  const protocol::TokenKey& key_;
  Logger& log_;
  Metrics& metrics_;
  Router& router_;
  AdmitFn admit_;
  ClockFn clock_;
  std::atomic<bool> admitting_{true};

  std::vector<Udp::socket> sockets_;
  std::vector<std::unique_ptr<protocol::ServerHandshake>> handshakes_;  // one per socket
  HandshakeLimiter limiter_;                                             // I/O thread only
  std::vector<std::string> addresses_;
  std::unique_ptr<DatagramSender> sender_;
  mutable std::mutex token_addresses_mutex_;  // a copy of what the handshakes accept
  std::vector<std::string> token_addresses_;
  // After the UDP sockets: its socket number is sockets_.size() (DatagramSender, Router).
  std::unique_ptr<WebSocketListener> websocket_;
  std::string websocket_address_;
};

}  // namespace keel::server
