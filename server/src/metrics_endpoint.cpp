#include "metrics_endpoint.h"

#include "net.h"

#include <algorithm>

namespace keel::server {

// Descriptors the HTTP endpoint leaves for everything else: each match's recording (and
// a desync dump beside it), plus the Agones SDK's connections, the log file and the odd
// file a match opens. The connection cap comes down to keep them free, so a flood of
// scrapers can never stop a new match from opening its recording.
static uint64_t reserved_descriptors(const ServerOptions& o) { return 2ull * o.max_matches + 16; }

HttpLimits MetricsEndpoint::limits() const {
  HttpLimits limits;
  const uint64_t reserve = reserved_descriptors(options_);
  if (std::optional<uint64_t> free = free_descriptors()) {
    const uint64_t room = *free > reserve ? *free - reserve : 0;
    if (room < limits.max_connections) {
      // At least one, so /healthz still answers; the backoff covers the rest.
      limits.max_connections = static_cast<uint32_t>(std::max<uint64_t>(room, 1));
      log_.warn("http_connection_cap_lowered", {{"cap", limits.max_connections},
                                                {"free_descriptors", *free},
                                                {"reserved_for_matches", reserve},
                                                {"hint", "raise the open-files limit (ulimit -n)"}});
    }
  }
  return limits;
}

keel::Status MetricsEndpoint::start() {
  if (options_.metrics_bind.empty()) return {};
  Udp::endpoint at = *parse_endpoint(options_.metrics_bind);
  http_ = std::make_unique<HttpServer>(io_, [this](const std::string& path) { return answer(path); }, log_, limits());
  std::string err = http_->start(asio::ip::tcp::endpoint(at.address(), at.port()));
  if (!err.empty()) return keel::Error{"--metrics " + options_.metrics_bind + ": " + err};
  auto e = http_->local_endpoint();
  address_ = format_endpoint(Udp::endpoint(e.address(), e.port()));
  return {};
}

void MetricsEndpoint::stop() {
  if (http_) http_->stop();
}

HttpResponse MetricsEndpoint::answer(const std::string& path) const {
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8", metrics_.prometheus_text() + http_->prometheus_text()};
  }
  if (path == "/healthz") {
    std::string trouble = health_();
    if (!trouble.empty()) return {503, "text/plain", trouble + "\n"};
    return {200, "text/plain", "ok\n"};
  }
  return {404, "text/plain", "not found: try /metrics or /healthz\n"};
}

}  // namespace keel::server
