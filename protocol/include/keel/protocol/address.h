// keel::protocol host:port text: the one parser every Keel program uses for the
// addresses on its command line, in connect tokens and in configuration files, so that
// keel-server, keel-bot, keel-token and the client SDK accept and refuse the same texts.
//
// Accepted forms: "HOST:PORT" where HOST holds no ':' (an IPv4 address or a name), and
// "[IPV6]:PORT". An IPv6 address without brackets ("::1:7777") is refused: its last
// colon could be the address's or the port's. PORT is 0..65535 in decimal digits only;
// whether 0 is allowed (a bind that picks a free port) is the caller's rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace keel::protocol {

struct HostPort {
  std::string host;  ///< without brackets
  uint16_t port = 0;
  bool bracketed = false;  ///< written as "[host]:port" (an IPv6 literal)
};

/// Parses `text`; nullopt when it is not one of the accepted forms.
std::optional<HostPort> parse_host_port(std::string_view text);

/// "host:port", with brackets around a host that contains ':' (IPv6).
std::string format_host_port(std::string_view host, uint16_t port);

}  // namespace keel::protocol
