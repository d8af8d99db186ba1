// How a client's datagrams reach the server: a Transport. The client owns no threads
// and no clock (docs/architecture.md, "Conventions"): it asks its transport for whatever has arrived and hands it
// what to send, always with the current time, so tests can swap the real UDP socket for
// an in-process loopback and a link conditioner (link_conditioner.h) can sit in between.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace keel::client {

/// Counters every transport keeps (bytes are UDP payload bytes).
struct TransportStats {
  uint64_t datagrams_sent = 0;
  uint64_t datagrams_received = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t send_errors = 0;
  uint64_t foreign_datagrams = 0;  ///< from an address other than the server's (dropped)
  uint64_t oversized_datagrams = 0;  ///< longer than any Keel packet (dropped)
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Sends one datagram to the server. Never blocks; a failure is counted, not thrown.
  virtual void send(std::span<const uint8_t> datagram, double now) = 0;
  /// Appends every datagram that has arrived from the server (at most `max`).
  virtual void receive(std::vector<std::vector<uint8_t>>& out, double now, size_t max) = 0;
  virtual const TransportStats& stats() const = 0;
};

/// A non-blocking UDP socket (standalone Asio) that talks to one server address
/// ("host:port", IPv4 or IPv6 literal or a name resolved once). Datagrams from any other
/// source are dropped and counted. Returns nullptr and sets `error` when the address
/// cannot be resolved or the socket cannot be opened.
std::unique_ptr<Transport> open_udp_transport(const std::string& server_address, std::string& error);

/// A WebSocket connection (RFC 6455, plain ws://) to keel-server's --websocket listener,
/// one binary message per datagram (docs/protocol.md, "WebSocket"): "ws://host:port/path"
/// or "host:port" (path "/"). Non-blocking like the UDP transport: it connects and
/// upgrades in the background of send() and receive(), holding the first few datagrams
/// until the upgrade is done. A closed connection counts each send as a send error and is
/// replaced by a new one a second later (the session times out and reconnects over it).
/// Returns nullptr and sets `error` for a malformed address (wss:// included: TLS is a
/// reverse proxy's job).
std::unique_ptr<Transport> open_websocket_transport(const std::string& url_or_host_port, std::string& error);

/// The "ws://host:port/path" open_websocket_transport connects to for `url_or_host_port`;
/// "" and `error` set when it is malformed.
std::string websocket_uri(const std::string& url_or_host_port, std::string& error);

/// Splits "host:port" / "[v6]:port" (keel/protocol/address.h: an IPv6 address must be
/// bracketed). False when malformed or the port is not 1..65535.
bool split_host_port(const std::string& address, std::string& host, uint16_t& port);

}  // namespace keel::client
