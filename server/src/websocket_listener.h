// keel-server's WebSocket edge (--websocket HOST:PORT), on the same I/O thread and Asio
// event loop as the UDP sockets. One binary WebSocket message carries exactly one Keel
// datagram (docs/protocol.md, "WebSocket"), which is handed to the front door as if it had
// arrived on one more socket: the connection's TCP peer address is its endpoint, so the
// handshake, the router, sessions and matches see a WebSocket client as any other.
//
// Everything here bounds what a peer can cost the I/O thread before a Keel packet is
// even read (docs/security.md, "WebSocket"): connections overall and per source address,
// the HTTP upgrade's time, a message's size (the largest Keel datagram), text frames,
// messages per second, idle connections, and the bytes queued towards a slow reader.
// Each refusal is counted in the server's metrics (keel_drops_total{reason="websocket_*"}).
//
// websocketpp (Debian's libwebsocketpp-dev 0.8.2) is C++17 code (C++20 refuses its
// template-id constructors) that still names asio::io_service: its one translation unit
// (websocket_listener.cpp) is compiled as C++17 without ASIO_NO_DEPRECATED
// (server/CMakeLists.txt). So this header uses the standard library and Asio only — no
// Keel header, which are C++20 — and the front door turns its events into metrics.
#pragma once

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE 1
#endif
#include <asio.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace keel::server {

/// What the listener reports (WebSocketListener::EventFn): each refusal, each datagram
/// sent, and the number of connections open whenever it changes.
enum class WebSocketEvent : uint8_t {
  Accepted,          ///< a connection passed the caps
  OpenNow,           ///< n = connections open now
  Sent,              ///< a datagram of n bytes was queued to its connection
  SendFailed,        ///< no open connection for the datagram's address
  Full,              ///< past max_connections (closed at accept)
  AddressFull,       ///< past max_per_address (closed at accept)
  UpgradeTimeout,    ///< the HTTP upgrade did not finish in time
  UpgradeFailed,     ///< not a valid WebSocket upgrade
  TooLarge,          ///< a message over max_message_bytes (closed)
  TextFrame,         ///< a text message (closed)
  BadFrame,          ///< a frame that breaks RFC 6455 (closed)
  RateLimited,       ///< a message over messages_per_second (dropped)
  Idle,              ///< silent for idle_timeout (closed)
  SendBacklog,       ///< a datagram not queued: the peer is not reading
};

struct WebSocketLimits {
  uint32_t max_connections = 1024;    ///< open at once, upgrading ones included
  uint32_t max_per_address = 16;      ///< open at once from one source IP address
  double handshake_timeout = 5.0;     ///< s from accept to a finished HTTP upgrade
  double idle_timeout = 15.0;         ///< s without a message before the connection closes
  double messages_per_second = 400;   ///< per connection; more are counted and dropped
  double message_burst = 400;
  size_t max_message_bytes = 0;       ///< the largest Keel datagram (kMaxPacketBytes)
  size_t max_send_backlog_bytes = 1u << 20;  ///< queued towards one peer; more is dropped
};

class WebSocketListener {
 public:
  /// A binary message from an upgraded connection: one datagram for the front door. The
  /// peer's TCP address and port are its endpoint.
  using DeliverFn = std::function<void(const asio::ip::udp::endpoint& peer, const uint8_t* data, size_t size)>;
  using EventFn = std::function<void(WebSocketEvent event, uint64_t n)>;

  /// `deliver` and `events` are called on the I/O thread (`events` with Sent too).
  WebSocketListener(asio::io_context& io, const WebSocketLimits& limits, DeliverFn deliver, EventFn events);
  ~WebSocketListener();
  WebSocketListener(const WebSocketListener&) = delete;
  WebSocketListener& operator=(const WebSocketListener&) = delete;

  /// Binds the TCP listener to `at` (tick-thread start-up, before the I/O thread runs);
  /// "" or what went wrong.
  std::string listen(const asio::ip::tcp::endpoint& at);
  /// The address as bound (the real port for port 0).
  asio::ip::tcp::endpoint bound_endpoint() const;
  /// Starts accepting (before the I/O thread runs).
  void start_accepting();
  /// Queues one datagram for the connection whose peer is `to`; any thread. Dropped and
  /// counted when no such connection is open or its send backlog is full.
  void send(const asio::ip::udp::endpoint& to, const uint8_t* data, size_t size);
  /// Stops accepting and closes every connection once what is queued for it is sent;
  /// waits up to `wait_seconds` for them to finish. Any thread but the I/O thread.
  void close_all(double wait_seconds);
  /// Connections open now (upgrading ones included).
  size_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace keel::server
