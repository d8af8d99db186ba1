#include "net.h"

#include "metrics.h"
#include "websocket_listener.h"

#include <keel/protocol/address.h>

#include <sys/socket.h>

#include <charconv>

namespace keel::server {

std::optional<Udp::endpoint> parse_endpoint(const std::string& text) {
  auto hp = protocol::parse_host_port(text);
  if (!hp) return std::nullopt;
  asio::error_code ec;
  asio::ip::address addr = asio::ip::make_address(hp->host, ec);
  // An IPv6 literal must come bracketed and an IPv4 one bare, as format_endpoint writes them.
  if (ec || addr.is_v6() != hp->bracketed) return std::nullopt;
  return Udp::endpoint(addr, hp->port);
}

std::string format_endpoint(const Udp::endpoint& e) {
  // append() rather than "[" + ...: gcc 12 warns falsely (-Wrestrict) on the latter.
  std::string out;
  if (e.address().is_v6()) out.append("[").append(e.address().to_string()).append("]");
  else out.append(e.address().to_string());
  return out.append(":").append(std::to_string(e.port()));
}

bool is_loopback(const asio::ip::address& a) {
  if (a.is_loopback()) return true;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
  }
  return false;
}

void DatagramSender::send(uint32_t socket, const Udp::endpoint& to, std::span<const uint8_t> bytes) const {
  if (socket == fds_.size() && websocket_) return websocket_->send(to, bytes.data(), bytes.size());
  if (socket >= fds_.size()) return;
  ssize_t n = ::sendto(fds_[socket], bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                       to.data(), static_cast<socklen_t>(to.size()));
  if (n < 0) {
    metrics_.drop(ServerDrop::SendFailed);
    return;
  }
  metrics_.packets_out.fetch_add(1, std::memory_order_relaxed);
  metrics_.bytes_out.fetch_add(bytes.size(), std::memory_order_relaxed);
}

}  // namespace keel::server
