#include <keel/protocol/address.h>

#include <charconv>

namespace keel::protocol {

std::optional<HostPort> parse_host_port(std::string_view text) {
  HostPort out;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return std::nullopt;
    out.host = std::string(text.substr(1, close - 1));
    out.bracketed = true;
    port = text.substr(close + 2);
    if (out.host.find_first_of("[]") != std::string::npos) return std::nullopt;
  } else {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) return std::nullopt;
    out.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (out.host.find_first_of("[]") != std::string::npos) return std::nullopt;
  }
  if (out.host.empty() || port.empty() || port.size() > 5) return std::nullopt;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535) return std::nullopt;
  out.port = static_cast<uint16_t>(value);
  return out;
}

std::string format_host_port(std::string_view host, uint16_t port) {
  std::string out;
  if (host.find(':') != std::string_view::npos) out.append("[").append(host).append("]");
  else out.append(host);
  out.append(":").append(std::to_string(port));
  return out;
}

}  // namespace keel::protocol
