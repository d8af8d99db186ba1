// The UDP transport on standalone Asio. Non-blocking: receive() drains whatever the
// kernel holds and returns at once, so the game's update(now) never waits on the network.
#include <keel/client/transport.h>
#include <keel/protocol/packet.h>

#include <asio.hpp>

#include <keel/protocol/address.h>

#include "websocket_client.h"

#include <deque>

namespace keel::client {
namespace {

class UdpTransport final : public Transport {
 public:
  UdpTransport() : socket_(io_) {}

  bool open(const std::string& address, std::string& error) {
    std::string host;
    uint16_t port = 0;
    if (!split_host_port(address, host, port)) {
      error = "bad server address '" + address + "' (expected HOST:PORT)";
      return false;
    }
    asio::error_code ec;
    asio::ip::udp::resolver resolver(io_);
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      error = "cannot resolve '" + host + "': " + ec.message();
      return false;
    }
    server_ = *results.begin();
    socket_.open(server_.protocol(), ec);
    if (!ec) socket_.non_blocking(true, ec);
    if (ec) {
      error = "cannot open a UDP socket: " + ec.message();
      return false;
    }
    // Room for a burst of snapshots and block fragments between two updates.
    socket_.set_option(asio::socket_base::receive_buffer_size(1 << 20), ec);
    return true;
  }

  void send(std::span<const uint8_t> datagram, double /*now*/) override {
    asio::error_code ec;
    socket_.send_to(asio::buffer(datagram.data(), datagram.size()), server_, 0, ec);
    if (ec) {
      ++stats_.send_errors;
      return;
    }
    ++stats_.datagrams_sent;
    stats_.bytes_sent += datagram.size();
  }

  void receive(std::vector<std::vector<uint8_t>>& out, double /*now*/, size_t max) override {
    for (size_t n = 0; n < max; ++n) {
      asio::ip::udp::endpoint from;
      asio::error_code ec;
      size_t len = socket_.receive_from(asio::buffer(buffer_), from, 0, ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) return;
      if (ec) continue;  // e.g. ICMP port unreachable surfacing as connection_refused
      if (from != server_) {
        ++stats_.foreign_datagrams;
        continue;
      }
      if (len > protocol::kMaxPacketBytes) {
        ++stats_.oversized_datagrams;
        continue;
      }
      ++stats_.datagrams_received;
      stats_.bytes_received += len;
      out.emplace_back(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(len));
    }
  }

  const TransportStats& stats() const override { return stats_; }

 private:
  asio::io_context io_;
  asio::ip::udp::socket socket_;
  asio::ip::udp::endpoint server_;
  // One byte more than the largest packet, so an oversized datagram is seen as such.
  std::array<uint8_t, protocol::kMaxPacketBytes + 1> buffer_{};
  TransportStats stats_;
};

// The WebSocket transport: one binary message per datagram, over websocketpp's client,
// run by poll() from send() and receive(), so it is as non-blocking as the UDP socket.
// Datagrams sent before the upgrade finished wait (a few, bounded): the first ones are
// the handshake's, which would otherwise only go out at its next resend.
class WebSocketTransport final : public Transport {
 public:
  bool open(const std::string& uri, std::string& error) {
    uri_ = uri;
    ws_ = std::make_unique<WebSocketClient>(protocol::kMaxPacketBytes);
    error = ws_->connect(uri);
    if (!error.empty()) error = "cannot connect to '" + uri + "': " + error;
    return error.empty();
  }

  void send(std::span<const uint8_t> datagram, double now) override {
    poll(now);
    if (!ws_->is_open()) {
      if (ws_->is_closed() || waiting_.size() >= kMaxWaiting) {
        ++stats_.send_errors;
        return;
      }
      waiting_.emplace_back(datagram.begin(), datagram.end());
      return;
    }
    send_now(datagram);
  }

  void receive(std::vector<std::vector<uint8_t>>& out, double now, size_t max) override {
    poll(now);
    const size_t before = out.size();
    ws_->take(out, max);
    for (size_t i = before; i < out.size(); ++i) {
      ++stats_.datagrams_received;
      stats_.bytes_received += out[i].size();
    }
  }

  const TransportStats& stats() const override { return stats_; }

 private:
  static constexpr size_t kMaxWaiting = 64;
  static constexpr double kReopenDelay = 1.0;  ///< s between a closed connection and a new one

  // Runs the connection; a closed one is replaced after kReopenDelay, so a client that
  // reconnects (a time-out, auto_reconnect) finds a connection to handshake over.
  void poll(double now) {
    ws_->poll();
    if (ws_->is_open()) flush_waiting();
    if (!ws_->is_closed()) return;
    if (closed_at_ < 0) closed_at_ = now;
    if (now - closed_at_ < kReopenDelay) return;
    keep_counts();
    std::string ignored;
    waiting_.clear();
    closed_at_ = -1;
    open(uri_, ignored);
  }
  void keep_counts() {
    oversized_before_ += ws_->oversized_messages();
    text_before_ += ws_->text_messages();
  }
  void send_now(std::span<const uint8_t> datagram) {
    if (!ws_->send(datagram.data(), datagram.size())) {
      ++stats_.send_errors;
      return;
    }
    ++stats_.datagrams_sent;
    stats_.bytes_sent += datagram.size();
  }
  void flush_waiting() {
    while (!waiting_.empty()) {
      send_now(waiting_.front());
      waiting_.pop_front();
    }
    stats_.oversized_datagrams = oversized_before_ + ws_->oversized_messages();
    stats_.foreign_datagrams = text_before_ + ws_->text_messages();  // text: not Keel datagrams
  }

  std::string uri_;
  std::unique_ptr<WebSocketClient> ws_;
  std::deque<std::vector<uint8_t>> waiting_;
  double closed_at_ = -1;
  uint64_t oversized_before_ = 0, text_before_ = 0;
  TransportStats stats_;
};

}  // namespace

std::string websocket_uri(const std::string& url_or_host_port, std::string& error) {
  std::string rest = url_or_host_port;
  if (rest.rfind("wss://", 0) == 0) {
    error = "'" + url_or_host_port + "': the SDK speaks plain ws:// (terminate TLS in a proxy, docs/operations.md)";
    return "";
  }
  if (rest.rfind("ws://", 0) == 0) rest = rest.substr(5);
  const size_t slash = rest.find('/');
  std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string host_port = rest.substr(0, slash);
  std::string host;
  uint16_t port = 0;
  if (!split_host_port(host_port, host, port)) {
    error = "bad WebSocket address '" + url_or_host_port + "' (expected ws://HOST:PORT/PATH or HOST:PORT)";
    return "";
  }
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      error = "bad WebSocket path in '" + url_or_host_port + "'";
      return "";
    }
  }
  return "ws://" + host_port + path;
}

std::unique_ptr<Transport> open_websocket_transport(const std::string& url_or_host_port, std::string& error) {
  std::string uri = websocket_uri(url_or_host_port, error);
  if (uri.empty()) return nullptr;
  auto t = std::make_unique<WebSocketTransport>();
  if (!t->open(uri, error)) return nullptr;
  return t;
}

bool split_host_port(const std::string& address, std::string& host, uint16_t& port) {
  // The one parser keel-server and keel-token use too; a server to reach needs a port.
  auto hp = protocol::parse_host_port(address);
  if (!hp || hp->port == 0) return false;
  host = hp->host;
  port = hp->port;
  return true;
}

std::unique_ptr<Transport> open_udp_transport(const std::string& server_address, std::string& error) {
  auto t = std::make_unique<UdpTransport>();
  if (!t->open(server_address, error)) return nullptr;
  return t;
}

}  // namespace keel::client
