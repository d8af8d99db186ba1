#include "http.h"

#include "log.h"

#include <sys/resource.h>
#include <dirent.h>

#include <cctype>
#include <cerrno>
#include <cstdio>

namespace keel::server {

namespace {

// The value of the first header named `name` (lower case), trimmed and lower-cased; empty
// when absent. Only the head's bytes are read, and they are bounded by the caller.
std::string header_value(std::string_view head, std::string_view name) {
  size_t at = head.find('\n');
  while (at != std::string_view::npos && at + 1 < head.size()) {
    std::string_view line = head.substr(at + 1);
    const size_t end = line.find('\n');
    line = line.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the end of the head: what follows is no header
    const size_t colon = line.find(':');
    if (colon == name.size()) {
      bool same = true;
      for (size_t i = 0; i < colon && same; ++i) {
        same = std::tolower(static_cast<unsigned char>(line[i])) == name[i];
      }
      if (same) {
        std::string_view v = line.substr(colon + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
        std::string out(v);
        for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
      }
    }
    if (end == std::string_view::npos) break;
    at += 1 + end;
  }
  return {};
}

}  // namespace

HttpRequest parse_http_request(std::string_view head) {
  HttpRequest r;
  std::string_view line = head.substr(0, head.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // "METHOD SP TARGET SP HTTP/1.x": exactly two single spaces; anything else is malformed.
  const size_t a = line.find(' ');
  const size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
  if (b == std::string_view::npos) return {400, false, {}, {}};
  std::string_view method = line.substr(0, a), target = line.substr(a + 1, b - a - 1), version = line.substr(b + 1);
  const bool version_ok = version.size() == 8 && version.substr(0, 7) == "HTTP/1." &&
                          (version[7] == '0' || version[7] == '1');
  if (!version_ok || target.empty() || target[0] != '/') return {400, false, {}, {}};
  for (char c : target) {
    // Control bytes and spaces cannot be in a target (they would end up in log lines).
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return {400, false, {}, {}};
  }
  if (method != "GET" && method != "HEAD") return {405, false, {}, {}};
  r.head_only = method == "HEAD";
  r.path = std::string(target.substr(0, target.find('?')));
  r.host = header_value(head, "host");
  return r;
}

std::string format_http_response(const HttpResponse& r, bool head_only) {
  const char* reason = r.status == 200   ? "OK"
                       : r.status == 400 ? "Bad Request"
                       : r.status == 403 ? "Forbidden"
                       : r.status == 404 ? "Not Found"
                       : r.status == 405 ? "Method Not Allowed"
                       : r.status == 429 ? "Too Many Requests"
                       : r.status == 431 ? "Request Header Fields Too Large"
                       : r.status == 503 ? "Service Unavailable"
                                         : "Error";
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason + "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\nConnection: close\r\n" +
                    r.extra_headers + "\r\n";
  if (!head_only) out += r.body;
  return out;
}

namespace {

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(asio::ip::tcp::socket socket, const HttpServer::RequestHandler& handler, const HttpLimits& limits,
                 std::shared_ptr<HttpStats> stats)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        buffer_(limits.max_request_head),
        handler_(handler),
        deadline_(limits.deadline),
        stats_(std::move(stats)) {}
  // The count drops once the last callback holding the connection has run.
  ~HttpConnection() { stats_->open.fetch_sub(1, std::memory_order_relaxed); }

  void start() {
    auto self = shared_from_this();
    // One deadline for the whole exchange: a client that sends slowly or never reads its
    // answer loses the connection at the same time.
    timer_.expires_after(deadline_);
    timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec) self->finish();
    });
    asio::async_read_until(socket_, buffer_, "\r\n\r\n",
                           [self](const asio::error_code& ec, size_t) { self->on_head(ec); });
  }

 private:
  void on_head(const asio::error_code& ec) {
    if (ec) {
      // Too large, timed out or closed: answer what can be answered, then close.
      if (ec == asio::error::not_found) respond({431, "text/plain", "request head too large\n"}, false);
      else finish();
      return;
    }
    auto data = buffer_.data();
    std::string head(asio::buffers_begin(data), asio::buffers_end(data));
    HttpRequest req = parse_http_request(head);
    if (req.status == 405) respond({405, "text/plain", "only GET and HEAD\n"}, false);
    else if (req.status != 0) respond({req.status, "text/plain", "malformed request line\n"}, false);
    else respond(handler_(req), req.head_only);
  }

  void respond(const HttpResponse& r, bool head_only) {
    reply_ = format_http_response(r, head_only);
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(reply_), [self](const asio::error_code&, size_t) { self->finish(); });
  }

  void finish() {
    asio::error_code ignored;
    timer_.cancel();
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf buffer_;
  const HttpServer::RequestHandler& handler_;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<HttpStats> stats_;
  std::string reply_;
};

// Accept failures that mean "no descriptor or buffer to give you now": retrying at once
// fails again at once (the pending connection stays queued), so these pause the acceptor.
// Asio reports them in its own system category, which does not compare equal to std::errc,
// so the errno values are compared.
bool out_of_descriptors(const asio::error_code& ec) {
  if (ec.category() != asio::system_category()) return false;
  const int v = ec.value();
  return v == EMFILE || v == ENFILE || v == ENOBUFS || v == ENOMEM;
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, Handler handler, Logger& log, HttpLimits limits)
    : HttpServer(io, RequestHandler([h = std::move(handler)](const HttpRequest& r) { return h(r.path); }), log, limits) {}

HttpServer::HttpServer(asio::io_context& io, RequestHandler handler, Logger& log, HttpLimits limits)
    : io_(io), acceptor_(io), backoff_timer_(io), handler_(std::move(handler)), log_(log), limits_(limits) {}

std::string HttpServer::start(const asio::ip::tcp::endpoint& at) {
  asio::error_code ec;
  acceptor_.open(at.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  // Linux lets a [::] socket take IPv4 connections too (net.ipv6.bindv6only=0); the flag
  // said IPv6, so only IPv6 is served.
  if (!ec && at.protocol() == asio::ip::tcp::v6()) acceptor_.set_option(asio::ip::v6_only(true), ec);
  if (!ec) acceptor_.bind(at, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return ec.message();
  accept();
  return {};
}

void HttpServer::stop() {
  // The acceptor and the timer belong to the I/O thread; stop() may come from another
  // (the server's shutdown), so the closing runs there. If the I/O loop stops first, the
  // acceptor closes when the server is destroyed.
  asio::post(io_, [this] {
    asio::error_code ignored;
    acceptor_.close(ignored);
    backoff_timer_.cancel();
  });
}

void HttpServer::accept() {
  acceptor_.async_accept(
      [this](const asio::error_code& ec, asio::ip::tcp::socket socket) { on_accept(ec, std::move(socket)); });
}

void HttpServer::on_accept(const asio::error_code& ec, asio::ip::tcp::socket socket) {
  if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    if (out_of_descriptors(ec)) return back_off(ec);
    accept();  // the peer gave up before we took it (ECONNABORTED and the like)
    return;
  }
  if (stats_->open.load(std::memory_order_relaxed) >= limits_.max_connections) {
    // Over the cap: the descriptor goes back at once, so a flood of connections can hold
    // at most the cap's worth of descriptors.
    stats_->rejected.fetch_add(1, std::memory_order_relaxed);
    asio::error_code ignored;
    socket.close(ignored);
  } else {
    stats_->accepted.fetch_add(1, std::memory_order_relaxed);
    stats_->open.fetch_add(1, std::memory_order_relaxed);
    std::make_shared<HttpConnection>(std::move(socket), handler_, limits_, stats_)->start();
  }
  accept();
}

void HttpServer::back_off(const asio::error_code& ec) {
  const uint64_t total = stats_->accept_backoffs.fetch_add(1, std::memory_order_relaxed) + 1;
  const auto now = std::chrono::steady_clock::now();
  if (backoffs_logged_ == 0 || now - last_backoff_log_ >= limits_.log_interval) {
    log_.warn("http_accept_backoff",
              {{"error", ec.message()},
               {"pause_ms", limits_.accept_backoff.count()},
               {"backoffs", total},
               {"since_last_log", total - backoffs_logged_},
               {"open_connections", stats_->open.load()}});
    last_backoff_log_ = now;
    backoffs_logged_ = total;
  }
  backoff_timer_.expires_after(limits_.accept_backoff);
  backoff_timer_.async_wait([this](const asio::error_code& wait_ec) {
    if (!wait_ec && acceptor_.is_open()) accept();
  });
}

std::string HttpServer::prometheus_text() const {
  char buf[2048];  // the text below is about 950 bytes with the largest numbers
  std::snprintf(buf, sizeof buf,
                "# HELP keel_http_connections_total HTTP connections served.\n"
                "# TYPE keel_http_connections_total counter\nkeel_http_connections_total %llu\n"
                "# HELP keel_http_connections_rejected_total HTTP connections closed at once: over the cap.\n"
                "# TYPE keel_http_connections_rejected_total counter\nkeel_http_connections_rejected_total %llu\n"
                "# HELP keel_http_accept_backoffs_total Pauses of the HTTP acceptor for want of descriptors.\n"
                "# TYPE keel_http_accept_backoffs_total counter\nkeel_http_accept_backoffs_total %llu\n"
                "# HELP keel_http_connections_open HTTP connections open now.\n"
                "# TYPE keel_http_connections_open gauge\nkeel_http_connections_open %u\n"
                "# HELP keel_http_connection_cap HTTP connections served at once.\n"
                "# TYPE keel_http_connection_cap gauge\nkeel_http_connection_cap %u\n",
                static_cast<unsigned long long>(stats_->accepted.load()),
                static_cast<unsigned long long>(stats_->rejected.load()),
                static_cast<unsigned long long>(stats_->accept_backoffs.load()), stats_->open.load(),
                limits_.max_connections);
  return buf;
}

std::optional<uint64_t> free_descriptors() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return std::nullopt;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return std::nullopt;
  uint64_t open = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++open;
  }
  closedir(dir);
  open = open > 0 ? open - 1 : 0;  // the directory's own descriptor
  if (lim.rlim_cur == RLIM_INFINITY) return UINT64_MAX / 2;
  return lim.rlim_cur > open ? lim.rlim_cur - open : 0;
}

}  // namespace keel::server
