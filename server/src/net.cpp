#include "net.h"

#include "metrics.h"

#include <sys/socket.h>

#include <charconv>

namespace keel::server {

std::optional<Udp::endpoint> parse_endpoint(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return std::nullopt;
  }
  asio::error_code aec;
  asio::ip::address addr = asio::ip::make_address(host, aec);
  if (aec) return std::nullopt;
  return Udp::endpoint(addr, static_cast<uint16_t>(value));
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
