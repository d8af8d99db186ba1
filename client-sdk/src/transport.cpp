// The UDP transport on standalone Asio. Non-blocking: receive() drains whatever the
// kernel holds and returns at once, so the game's update(now) never waits on the network.
#include <keel/client/transport.h>
#include <keel/protocol/packet.h>

#include <asio.hpp>

#include <keel/protocol/address.h>

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

}  // namespace

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
