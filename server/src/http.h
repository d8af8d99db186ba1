// A tiny HTTP/1.0-style endpoint on Asio TCP for /metrics and /healthz: one request per
// connection, GET or HEAD only. It runs on the I/O thread; answering it never touches a
// match. Every connection is bounded: the request head to 8 KiB, the whole exchange to
// 2 s, the connections open at once to a cap (64, lowered when the descriptor limit is
// tight so that matches can always open their recordings); over the cap a connection is
// closed at once and counted. When accept fails for want of descriptors (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) the acceptor pauses for a backoff period instead of retrying at once,
// which would spin the I/O thread.
#pragma once

#include "net.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace keel::server {

class Logger;

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int s, std::string type, std::string text, std::string extra = {})
      : status(s), content_type(std::move(type)), body(std::move(text)), extra_headers(std::move(extra)) {}
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  /// Header lines added after the standard ones, each "Name: value\r\n".
  std::string extra_headers;
};

/// A parsed request line. `status` is 0 when the request is one to answer with the
/// handler, else the error status to answer with (400 malformed, 405 not GET or HEAD).
struct HttpRequest {
  int status = 0;
  bool head_only = false;  ///< HEAD: the answer carries no body
  std::string path;        ///< the target without its query string
  /// The Host header's value (lower-cased, port included), empty when absent. A page
  /// endpoint checks it against DNS rebinding (docs/security.md, "Browser page").
  std::string host;
};

/// Parses a request head (the bytes up to and including the blank line; anything after
/// the request line is ignored). Pure, so it can be fuzzed without a socket.
HttpRequest parse_http_request(std::string_view head);

/// The status line and headers of an answer, then the body unless `head_only`.
std::string format_http_response(const HttpResponse& r, bool head_only);

struct HttpLimits {
  uint32_t max_connections = 64;  ///< open at once; more are closed at once and counted
  size_t max_request_head = 8192;
  std::chrono::milliseconds deadline{2000};        ///< per connection, read and write
  std::chrono::milliseconds accept_backoff{250};   ///< pause after accept ran out of fds
  std::chrono::milliseconds log_interval{10000};   ///< at most one backoff log line per
};

/// Counters for /metrics; written by the I/O thread, read by any thread.
struct HttpStats {
  std::atomic<uint64_t> accepted{0};        ///< connections served (under the cap)
  std::atomic<uint64_t> rejected{0};        ///< closed at once: over the cap
  std::atomic<uint64_t> accept_backoffs{0};  ///< accept failed for want of descriptors
  std::atomic<uint32_t> open{0};            ///< connections open now
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;
  using RequestHandler = std::function<HttpResponse(const HttpRequest& request)>;
  HttpServer(asio::io_context& io, Handler handler, Logger& log, HttpLimits limits = {});
  HttpServer(asio::io_context& io, RequestHandler handler, Logger& log, HttpLimits limits = {});
  /// Binds and starts accepting; an error message on failure. An IPv6 address binds IPv6
  /// only ([::] does not answer IPv4): the endpoint serves exactly the address asked for.
  std::string start(const asio::ip::tcp::endpoint& at);
  asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void stop();
  const HttpStats& stats() const { return *stats_; }
  const HttpLimits& limits() const { return limits_; }
  /// The counters in Prometheus text format (keel_http_*).
  std::string prometheus_text() const;

 private:
  void accept();
  void on_accept(const asio::error_code& ec, asio::ip::tcp::socket socket);
  void back_off(const asio::error_code& ec);

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer backoff_timer_;
  RequestHandler handler_;
  Logger& log_;
  HttpLimits limits_;
  // Shared with the connections, which may outlive a stopped server by a callback.
  std::shared_ptr<HttpStats> stats_ = std::make_shared<HttpStats>();
  std::chrono::steady_clock::time_point last_backoff_log_{};
  uint64_t backoffs_logged_ = 0;
};

/// Descriptors the process may still open: the soft RLIMIT_NOFILE less those open now
/// (counted in /proc/self/fd). Nullopt when either cannot be read.
std::optional<uint64_t> free_descriptors();

}  // namespace keel::server
