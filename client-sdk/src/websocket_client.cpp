// websocketpp's client on a private io_context that only poll() runs (websocket_client.h).
#include "websocket_client.h"

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE 1
#endif
#include <websocketpp/client.hpp>
#include <websocketpp/config/asio_no_tls_client.hpp>

#include <deque>

namespace keel::client {
namespace {

// asio_client with logging compiled out; a frame that breaks the protocol ends the
// connection at once.
struct KeelClientConfig : public websocketpp::config::asio_client {
  typedef KeelClientConfig type;
  typedef websocketpp::config::asio_client base;
  typedef base::concurrency_type concurrency_type;
  typedef base::request_type request_type;
  typedef base::response_type response_type;
  typedef base::message_type message_type;
  typedef base::con_msg_manager_type con_msg_manager_type;
  typedef base::endpoint_msg_manager_type endpoint_msg_manager_type;
  typedef base::alog_type alog_type;
  typedef base::elog_type elog_type;
  typedef base::rng_type rng_type;
  struct transport_config : public base::transport_config {
    typedef type::concurrency_type concurrency_type;
    typedef type::alog_type alog_type;
    typedef type::elog_type elog_type;
    typedef type::request_type request_type;
    typedef type::response_type response_type;
    typedef websocketpp::transport::asio::basic_socket::endpoint socket_type;
  };
  typedef websocketpp::transport::asio::endpoint<transport_config> transport_type;
  static const websocketpp::log::level elog_level = websocketpp::log::elevel::none;
  static const websocketpp::log::level alog_level = websocketpp::log::alevel::none;
  static const bool drop_on_protocol_error = true;
};

using WsClient = websocketpp::client<KeelClientConfig>;

}  // namespace

struct WebSocketClient::Impl {
  asio::io_context io;
  WsClient client;
  websocketpp::connection_hdl hdl;
  std::deque<std::vector<uint8_t>> received;
};

WebSocketClient::WebSocketClient(size_t max_message_bytes) : impl_(std::make_unique<Impl>()) {
  WsClient& c = impl_->client;
  std::error_code ec;
  c.init_asio(&impl_->io, ec);
  c.set_user_agent("keel-client");
  // A message too long for a Keel datagram is counted here rather than closing the link;
  // the bound on what one message may hold stays small.
  c.set_max_message_size(max_message_bytes * 2);
  c.set_open_handshake_timeout(5000);
  c.set_close_handshake_timeout(1000);
  // Datagrams are small and late ones are worthless: no Nagle delay on the way out.
  c.set_tcp_post_init_handler([this](websocketpp::connection_hdl h) {
    std::error_code failed;
    if (WsClient::connection_ptr con = impl_->client.get_con_from_hdl(h, failed)) {
      asio::error_code ignored;
      con->get_raw_socket().set_option(asio::ip::tcp::no_delay(true), ignored);
    }
  });
  c.set_open_handler([this](websocketpp::connection_hdl) { open_ = true; });
  c.set_fail_handler([this](websocketpp::connection_hdl) { closed_ = true, open_ = false; });
  c.set_close_handler([this](websocketpp::connection_hdl) { closed_ = true, open_ = false; });
  c.set_message_handler([this, max_message_bytes](websocketpp::connection_hdl, WsClient::message_ptr msg) {
    if (msg->get_opcode() != websocketpp::frame::opcode::binary) {
      ++text_;
      return;
    }
    const std::string& p = msg->get_payload();
    if (p.size() > max_message_bytes) {
      ++oversized_;
      return;
    }
    impl_->received.emplace_back(p.begin(), p.end());
  });
}

WebSocketClient::~WebSocketClient() {
  if (open_) {
    std::error_code ec;
    impl_->client.close(impl_->hdl, websocketpp::close::status::going_away, "", ec);
    impl_->io.restart();
    impl_->io.poll();  // the close frame goes out if the socket takes it at once
  }
}

std::string WebSocketClient::connect(const std::string& uri) {
  std::error_code ec;
  WsClient::connection_ptr con = impl_->client.get_connection(uri, ec);
  if (ec) return ec.message();
  impl_->hdl = con->get_handle();
  impl_->client.connect(con);
  return "";
}

void WebSocketClient::poll() {
  // A bounded number of handlers per call: a server streaming without pause cannot keep
  // the caller's update inside poll(), and what one call can queue stays bounded.
  impl_->io.restart();
  for (int i = 0; i < 256 && impl_->io.poll_one() > 0; ++i) {
  }
}

bool WebSocketClient::send(const uint8_t* data, size_t size) {
  if (!open_) return false;
  std::error_code ec;
  impl_->client.send(impl_->hdl, data, size, websocketpp::frame::opcode::binary, ec);
  return !ec;
}

void WebSocketClient::take(std::vector<std::vector<uint8_t>>& out, size_t max) {
  auto& q = impl_->received;
  while (!q.empty() && max-- > 0) {
    out.push_back(std::move(q.front()));
    q.pop_front();
  }
}

}  // namespace keel::client
