#include "http.h"

#include <sstream>

namespace keel::server {
namespace {

constexpr size_t kMaxRequestHead = 8192;

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(asio::ip::tcp::socket socket, const HttpServer::Handler& handler)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), buffer_(kMaxRequestHead), handler_(handler) {}

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::seconds(2));
    timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec) self->socket_.close();
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
    std::istream in(&buffer_);
    std::string method, target, version;
    in >> method >> target >> version;
    if (method != "GET" && method != "HEAD") {
      respond({405, "text/plain", "only GET and HEAD\n"}, false);
      return;
    }
    size_t q = target.find('?');
    if (q != std::string::npos) target.resize(q);
    respond(handler_(target), method == "HEAD");
  }

  void respond(const HttpResponse& r, bool head_only) {
    const char* reason = r.status == 200 ? "OK" : r.status == 404 ? "Not Found" : r.status == 503 ? "Service Unavailable"
                                                  : r.status == 405 ? "Method Not Allowed" : "Error";
    std::ostringstream out;
    out << "HTTP/1.1 " << r.status << " " << reason << "\r\nContent-Type: " << r.content_type
        << "\r\nContent-Length: " << r.body.size() << "\r\nConnection: close\r\n\r\n";
    if (!head_only) out << r.body;
    reply_ = out.str();
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
  const HttpServer::Handler& handler_;
  std::string reply_;
};

}  // namespace

std::string HttpServer::start(const asio::ip::tcp::endpoint& at) {
  asio::error_code ec;
  acceptor_.open(at.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(at, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return ec.message();
  accept();
  return {};
}

void HttpServer::stop() {
  asio::error_code ignored;
  acceptor_.close(ignored);
}

void HttpServer::accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<HttpConnection>(std::move(socket), handler_)->start();
    accept();
  });
}

}  // namespace keel::server
