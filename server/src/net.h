// Addresses and datagram sending. Address text is "a.b.c.d:port" for IPv4 and
// "[v6]:port" for IPv6 — the form connect tokens list and the handshake compares byte
// for byte, so formatting is canonical (asio's to_string of the address).
#pragma once

#define ASIO_STANDALONE 1
#include <asio.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace keel::server {

using Udp = asio::ip::udp;

/// Parses "host:port" / "[v6]:port" (numeric addresses only: a server binds what it is
/// told, without DNS). Nullopt on anything else, port 0 allowed (ephemeral).
std::optional<Udp::endpoint> parse_endpoint(const std::string& text);
std::string format_endpoint(const Udp::endpoint& e);
/// True for 127.0.0.0/8, ::1 and IPv4-mapped loopback.
bool is_loopback(const asio::ip::address& a);

class Metrics;
class WebSocketListener;

/// Sends datagrams on the server's sockets from any thread. A datagram goes straight to
/// the kernel (sendto, non-blocking): the kernel serialises concurrent sends on one
/// socket, and a full buffer drops the datagram (counted) instead of blocking a tick.
/// Socket number `fds.size()`, when there is a WebSocket listener, is that listener: its
/// datagrams are queued for the I/O thread, one binary message each.
class DatagramSender {
 public:
  DatagramSender(std::vector<int> fds, Metrics& metrics, WebSocketListener* websocket = nullptr)
      : fds_(std::move(fds)), metrics_(metrics), websocket_(websocket) {}
  void send(uint32_t socket, const Udp::endpoint& to, std::span<const uint8_t> bytes) const;

 private:
  std::vector<int> fds_;
  Metrics& metrics_;
  WebSocketListener* websocket_;
};

}  // namespace keel::server
