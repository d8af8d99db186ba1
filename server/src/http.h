// A tiny HTTP/1.0-style endpoint on Asio TCP for /metrics and /healthz: one request per
// connection, the request head bounded to 8 KiB and 2 s, GET or HEAD only. It runs on the
// I/O thread; answering it never touches a match.
#pragma once

#include "net.h"

#include <functional>
#include <memory>
#include <string>

namespace keel::server {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;
  HttpServer(asio::io_context& io, Handler handler) : io_(io), acceptor_(io), handler_(std::move(handler)) {}
  /// Binds and starts accepting; an error message on failure.
  std::string start(const asio::ip::tcp::endpoint& at);
  asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void stop();

 private:
  void accept();

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  Handler handler_;
};

}  // namespace keel::server
