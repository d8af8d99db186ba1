// The operator's HTTP endpoint (--metrics): /metrics (Prometheus text) and /healthz, on
// the I/O thread's io_context.
#pragma once

#include "http.h"
#include "log.h"
#include "metrics.h"

#include <keel/server/config.h>
#include <keel/base/expected.h>

#include <functional>
#include <memory>
#include <string>

namespace keel::server {

class MetricsEndpoint {
 public:
  /// "stopping" or "ticks late" when unhealthy, empty when healthy.
  using HealthFn = std::function<std::string()>;

  MetricsEndpoint(asio::io_context& io, const ServerOptions& options, Logger& log, const Metrics& metrics,
                  HealthFn health)
      : io_(io), options_(options), log_(log), metrics_(metrics), health_(std::move(health)) {}

  /// Listens on --metrics; does nothing without it.
  keel::Status start();
  void stop();
  /// "host:port" it listens on (empty when off).
  const std::string& address() const { return address_; }

 private:
  HttpLimits limits() const;
  HttpResponse answer(const std::string& path) const;

  asio::io_context& io_;
  const ServerOptions& options_;
  Logger& log_;
  const Metrics& metrics_;
  HealthFn health_;
  std::unique_ptr<HttpServer> http_;
  std::string address_;
};

}  // namespace keel::server
