// The WebSocket listener on websocketpp's Asio transport, sharing the server's
// io_context (websocket_listener.h). Everything here runs on the I/O thread except
// send() and close_all(), which post to it.
#include "websocket_listener.h"

#include <websocketpp/config/asio_no_tls.hpp>
#include <websocketpp/server.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

namespace keel::server {
namespace {

// config::asio with logging compiled out, and a protocol violation (a bad frame, a
// message over the size limit) ending the connection at once: a misbehaving peer gets no
// close frame, and the reason stays in the connection's error code for the count.
struct KeelServerConfig : public websocketpp::config::asio {
  typedef KeelServerConfig type;
  typedef websocketpp::config::asio base;
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
  // An upgrade request needs no body; a Keel datagram fits a small read buffer.
  static const size_t max_http_body_size = 0;
  static const size_t connection_read_buffer_size = 4096;
};

using WsServer = websocketpp::server<KeelServerConfig>;
using Hdl = websocketpp::connection_hdl;
using Tcp = asio::ip::tcp;
namespace ws_close = websocketpp::close::status;

double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

using Udp = asio::ip::udp;

int milliseconds(double seconds) { return static_cast<int>(seconds * 1000.0 + 0.5); }

}  // namespace

struct WebSocketListener::Impl {
  struct Peer {
    Udp::endpoint endpoint;  // the TCP peer's address and port: the front door's key
    bool upgraded = false;
    bool counted = false;    // its end is already counted (a refusal of ours)
    double last_heard = 0;
    double tokens = 0;
    double bucket_time = 0;
  };

  Impl(asio::io_context& io_context, const WebSocketLimits& l, DeliverFn d, EventFn e)
      : io(io_context), limits(l), deliver(std::move(d)), events(std::move(e)), sweep_timer(io_context) {}

  asio::io_context& io;
  WebSocketLimits limits;
  DeliverFn deliver;
  EventFn events;
  WsServer server;
  asio::steady_timer sweep_timer;
  Tcp::endpoint bound;
  bool stopping = false;
  std::map<Hdl, Peer, std::owner_less<Hdl>> peers;
  std::map<Udp::endpoint, Hdl> upgraded_by_endpoint;
  std::map<asio::ip::address, uint32_t> per_address;
  std::atomic<size_t> open{0};

  void install_handlers();
  void on_tcp_accepted(Hdl hdl);
  void on_open(Hdl hdl);
  void on_message(Hdl hdl, WsServer::message_ptr msg);
  void on_closed(Hdl hdl);
  void on_failed(Hdl hdl);
  void on_plain_http(Hdl hdl);
  void forget(Hdl hdl);
  bool take_message_token(Peer& p, double now);
  void count(WebSocketEvent e, uint64_t n = 1) { events(e, n); }
  void set_open_count() {
    open.store(peers.size());
    events(WebSocketEvent::OpenNow, peers.size());
  }
  void refuse(Hdl hdl, Peer& p, WebSocketEvent why, websocketpp::close::status::value code, const char* reason);
  void send_now(const Udp::endpoint& to, const std::vector<uint8_t>& bytes);
  void sweep_idle();
  void schedule_sweep();
};

void WebSocketListener::Impl::install_handlers() {
  server.set_tcp_pre_init_handler([this](Hdl h) { on_tcp_accepted(h); });
  server.set_open_handler([this](Hdl h) { on_open(h); });
  server.set_message_handler([this](Hdl h, WsServer::message_ptr m) { on_message(h, std::move(m)); });
  server.set_close_handler([this](Hdl h) { on_closed(h); });
  server.set_fail_handler([this](Hdl h) { on_failed(h); });
  server.set_http_handler([this](Hdl h) { on_plain_http(h); });
}

// A request without an upgrade gets 400 and the connection ends after it, with neither
// the fail nor the close handler: it is forgotten here.
void WebSocketListener::Impl::on_plain_http(Hdl hdl) {
  std::error_code ec;
  if (WsServer::connection_ptr con = server.get_con_from_hdl(hdl, ec)) {
    con->set_status(websocketpp::http::status_code::bad_request);
  }
  auto it = peers.find(hdl);
  if (it != peers.end() && !it->second.counted) count(WebSocketEvent::UpgradeFailed);
  forget(hdl);
}

// Admission by the connection caps, before a byte of the upgrade is read: a refused
// connection's socket is closed at once, so holding sockets open costs an attacker the
// caps' worth of connections and no more.
void WebSocketListener::Impl::on_tcp_accepted(Hdl hdl) {
  WsServer::connection_ptr con = server.get_con_from_hdl(hdl);
  asio::error_code ec;
  Tcp::endpoint remote = con->get_raw_socket().remote_endpoint(ec);
  auto refuse_socket = [&](WebSocketEvent why) {
    if (!stopping) count(why);
    asio::error_code ignored;
    con->get_raw_socket().close(ignored);
  };
  if (ec || stopping) return refuse_socket(WebSocketEvent::UpgradeFailed);
  if (peers.size() >= limits.max_connections) return refuse_socket(WebSocketEvent::Full);
  uint32_t& from_address = per_address[remote.address()];
  if (from_address >= limits.max_per_address) {
    if (from_address == 0) per_address.erase(remote.address());
    return refuse_socket(WebSocketEvent::AddressFull);
  }
  ++from_address;
  // Datagrams are small and late ones are worthless: no Nagle delay on the way out.
  con->get_raw_socket().set_option(Tcp::no_delay(true), ec);
  Peer p;
  p.endpoint = Udp::endpoint(remote.address(), remote.port());
  p.tokens = limits.message_burst;
  p.bucket_time = p.last_heard = seconds_now();
  peers.emplace(hdl, p);
  count(WebSocketEvent::Accepted);
  set_open_count();
}

void WebSocketListener::Impl::on_open(Hdl hdl) {
  auto it = peers.find(hdl);
  if (it == peers.end()) return;
  it->second.upgraded = true;
  it->second.last_heard = seconds_now();
  upgraded_by_endpoint[it->second.endpoint] = hdl;
}

bool WebSocketListener::Impl::take_message_token(Peer& p, double now) {
  p.tokens = std::min(limits.message_burst, p.tokens + (now - p.bucket_time) * limits.messages_per_second);
  p.bucket_time = now;
  if (p.tokens < 1.0) return false;
  p.tokens -= 1.0;
  return true;
}

void WebSocketListener::Impl::refuse(Hdl hdl, Peer& p, WebSocketEvent why, ws_close::value code, const char* reason) {
  count(why);
  p.counted = true;
  std::error_code ec;
  server.close(hdl, code, reason, ec);
}

void WebSocketListener::Impl::on_message(Hdl hdl, WsServer::message_ptr msg) {
  auto it = peers.find(hdl);
  if (it == peers.end() || it->second.counted) return;
  Peer& p = it->second;
  // Keel datagrams are bytes; a text frame is a client that speaks something else.
  if (msg->get_opcode() != websocketpp::frame::opcode::binary) {
    return refuse(hdl, p, WebSocketEvent::TextFrame, ws_close::unsupported_data, "binary messages only");
  }
  const double now = seconds_now();
  if (!take_message_token(p, now)) {
    count(WebSocketEvent::RateLimited);
    return;
  }
  p.last_heard = now;
  const std::string& payload = msg->get_payload();
  deliver(p.endpoint, reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
}

void WebSocketListener::Impl::on_closed(Hdl hdl) {
  auto it = peers.find(hdl);
  if (it != peers.end() && !it->second.counted) {
    // With drop_on_protocol_error, a violation ends the connection with its reason here.
    std::error_code ec = server.get_con_from_hdl(hdl)->get_ec();
    if (ec == websocketpp::processor::error::message_too_big) {
      count(WebSocketEvent::TooLarge);
    } else if (ec && ec.category() == websocketpp::processor::error::get_processor_category()) {
      count(WebSocketEvent::BadFrame);
    }
  }
  forget(hdl);
}

void WebSocketListener::Impl::on_failed(Hdl hdl) {
  auto it = peers.find(hdl);
  if (it != peers.end() && !it->second.counted) {
    std::error_code ec = server.get_con_from_hdl(hdl)->get_ec();
    count(ec == websocketpp::error::open_handshake_timeout ? WebSocketEvent::UpgradeTimeout
                                                           : WebSocketEvent::UpgradeFailed);
  }
  forget(hdl);
}

void WebSocketListener::Impl::forget(Hdl hdl) {
  auto it = peers.find(hdl);
  if (it == peers.end()) return;  // refused at accept: never counted in
  const Peer& p = it->second;
  auto routed = upgraded_by_endpoint.find(p.endpoint);
  if (routed != upgraded_by_endpoint.end() && !routed->second.owner_before(hdl) && !hdl.owner_before(routed->second)) {
    upgraded_by_endpoint.erase(routed);
  }
  auto count = per_address.find(p.endpoint.address());
  if (count != per_address.end() && --count->second == 0) per_address.erase(count);
  peers.erase(it);
  set_open_count();
}

void WebSocketListener::Impl::send_now(const Udp::endpoint& to, const std::vector<uint8_t>& bytes) {
  auto it = upgraded_by_endpoint.find(to);
  if (it == upgraded_by_endpoint.end()) {
    count(WebSocketEvent::SendFailed);
    return;
  }
  std::error_code ec;
  WsServer::connection_ptr con = server.get_con_from_hdl(it->second, ec);
  if (ec || !con) {
    count(WebSocketEvent::SendFailed);
    return;
  }
  // A peer that does not read must not make the server queue without bound: past the
  // backlog, datagrams are dropped as a full UDP socket buffer would drop them.
  if (con->get_buffered_amount() + bytes.size() > limits.max_send_backlog_bytes) {
    count(WebSocketEvent::SendBacklog);
    return;
  }
  ec = con->send(bytes.data(), bytes.size(), websocketpp::frame::opcode::binary);
  if (ec) {
    count(WebSocketEvent::SendFailed);
    return;
  }
  count(WebSocketEvent::Sent, bytes.size());
}

void WebSocketListener::Impl::sweep_idle() {
  const double now = seconds_now();
  std::vector<Hdl> idle;
  for (auto& [hdl, p] : peers) {
    if (p.upgraded && !p.counted && now - p.last_heard > limits.idle_timeout) idle.push_back(hdl);
  }
  for (Hdl& h : idle) refuse(h, peers.at(h), WebSocketEvent::Idle, ws_close::going_away, "idle");
}

void WebSocketListener::Impl::schedule_sweep() {
  sweep_timer.expires_after(std::chrono::milliseconds(250));
  sweep_timer.async_wait([this](const asio::error_code& ec) {
    if (ec || stopping) return;
    sweep_idle();
    schedule_sweep();
  });
}

// --- WebSocketListener ----------------------------------------------------------------------

WebSocketListener::WebSocketListener(asio::io_context& io, const WebSocketLimits& limits, DeliverFn deliver,
                                     EventFn events)
    : impl_(std::make_unique<Impl>(io, limits, std::move(deliver), std::move(events))) {}

WebSocketListener::~WebSocketListener() = default;

std::string WebSocketListener::listen(const Tcp::endpoint& at) {
  Impl& m = *impl_;
  std::error_code ec;
  m.server.init_asio(&m.io, ec);
  if (ec) return ec.message();
  m.server.set_user_agent("");  // no Server header: the 101 reply stays as short as it can be
  m.server.set_max_message_size(m.limits.max_message_bytes);
  m.server.set_max_http_body_size(0);
  m.server.set_open_handshake_timeout(milliseconds(m.limits.handshake_timeout));
  m.server.set_close_handshake_timeout(1000);
  m.server.set_pong_timeout(1000);
  m.server.set_reuse_addr(true);
  m.install_handlers();
  m.server.listen(at, ec);
  if (ec) return ec.message();
  asio::error_code aec;
  m.bound = m.server.get_local_endpoint(aec);
  return aec ? aec.message() : std::string();
}

Tcp::endpoint WebSocketListener::bound_endpoint() const { return impl_->bound; }

void WebSocketListener::start_accepting() {
  std::error_code ec;
  impl_->server.start_accept(ec);
  if (ec) impl_->count(WebSocketEvent::UpgradeFailed);
  impl_->schedule_sweep();
}

void WebSocketListener::send(const Udp::endpoint& to, const uint8_t* data, size_t size) {
  asio::post(impl_->io, [m = impl_.get(), to, bytes = std::vector<uint8_t>(data, data + size)] {
    m->send_now(to, bytes);
  });
}

void WebSocketListener::close_all(double wait_seconds) {
  Impl* m = impl_.get();
  asio::post(m->io, [m] {
    m->stopping = true;
    std::error_code ec;
    m->server.stop_listening(ec);
    m->sweep_timer.cancel();
    std::vector<Hdl> all;
    for (auto& [hdl, p] : m->peers) all.push_back(hdl);
    for (Hdl& h : all) {
      Impl::Peer& p = m->peers.at(h);
      p.counted = true;  // the server's own close: no refusal to count
      if (p.upgraded) {
        m->server.close(h, ws_close::going_away, "server stopping", ec);
      } else if (auto con = m->server.get_con_from_hdl(h, ec)) {
        asio::error_code ignored;
        con->get_raw_socket().close(ignored);
      }
    }
  });
  const double end = seconds_now() + wait_seconds;
  while (m->open.load() > 0 && seconds_now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

size_t WebSocketListener::open_connections() const { return impl_->open.load(); }

}  // namespace keel::server
