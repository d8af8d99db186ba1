#include "front_door.h"

#include <keel/protocol/packet.h>

#include <algorithm>
#include <chrono>

namespace keel::server {

namespace kp = keel::protocol;

FrontDoor::FrontDoor(asio::io_context& io, const ServerOptions& options, const kp::TokenKey& key, Logger& log,
                     Metrics& metrics, Router& router, AdmitFn admit, ClockFn clock)
    : io_(io), options_(options), key_(key), log_(log), metrics_(metrics), router_(router),
      admit_(std::move(admit)), clock_(std::move(clock)) {}

keel::Status FrontDoor::bind() {
  std::vector<int> fds;
  for (size_t i = 0; i < options_.bind.size(); ++i) {
    Udp::endpoint at = *parse_endpoint(options_.bind[i]);
    Udp::socket s(io_);
    asio::error_code ec;
    s.open(at.protocol(), ec);
    // One socket per family: [::] must not also claim IPv4, or 0.0.0.0 beside it fails.
    if (!ec && at.address().is_v6()) s.set_option(asio::ip::v6_only(true), ec);
    if (!ec) s.bind(at, ec);
    if (ec) return keel::Error{"--bind " + options_.bind[i] + ": " + ec.message()};
    s.set_option(asio::socket_base::receive_buffer_size(4 << 20), ec);  // best effort
    s.set_option(asio::socket_base::send_buffer_size(4 << 20), ec);
    Udp::endpoint bound = s.local_endpoint();
    // What tokens must name: --public-address, else the bound address. No client reaches
    // 0.0.0.0 or [::], so such a socket accepts no token until Agones reports the
    // GameServer's address (Server::create refuses it otherwise).
    std::string token_address = !options_.public_address.empty() ? options_.public_address[i]
                                : bound.address().is_unspecified() ? std::string()
                                                                   : format_endpoint(bound);
    addresses_.push_back(format_endpoint(bound));
    handshakes_.push_back(std::make_unique<kp::ServerHandshake>(key_, token_address));
    if (!token_address.empty()) add_token_address(token_address);
    fds.push_back(s.native_handle());
    sockets_.push_back(std::move(s));
  }
  if (!options_.websocket.empty()) {
    if (keel::Status st = listen_websocket(); !st) return st;
  }
  sender_ = std::make_unique<DatagramSender>(std::move(fds), metrics_, websocket_.get());
  return {};
}

// The WebSocket listener is one more socket to the rest of the server: its messages go
// through on_datagram like a UDP socket's datagrams, with its own handshake, which
// accepts tokens naming its bound address (or --websocket-public-address) as text of
// the same canonical form UDP addresses have (docs/protocol.md, "WebSocket").
keel::Status FrontDoor::listen_websocket() {
  WebSocketLimits limits;
  limits.max_connections = options_.websocket_max_connections;
  limits.max_per_address = options_.websocket_max_per_address;
  limits.handshake_timeout = options_.websocket_handshake_timeout;
  limits.idle_timeout = options_.websocket_idle_timeout;
  limits.messages_per_second = options_.websocket_max_messages_per_second;
  limits.message_burst = options_.websocket_max_messages_per_second;
  limits.max_message_bytes = kp::kMaxPacketBytes;
  const uint32_t socket = static_cast<uint32_t>(sockets_.size());
  websocket_ = std::make_unique<WebSocketListener>(
      io_, limits,
      [this, socket](const Udp::endpoint& peer, const uint8_t* data, size_t size) {
        on_datagram(socket, peer, {data, size});
      },
      [this](WebSocketEvent event, uint64_t n) { count_websocket(event, n); });
  const Udp::endpoint at = *parse_endpoint(options_.websocket);
  std::string failed = websocket_->listen({at.address(), at.port()});
  if (!failed.empty()) return keel::Error{"--websocket " + options_.websocket + ": " + failed};
  const asio::ip::tcp::endpoint bound = websocket_->bound_endpoint();
  websocket_address_ = format_endpoint(Udp::endpoint(bound.address(), bound.port()));
  std::string token_address = !options_.websocket_public_address.empty() ? options_.websocket_public_address
                              : bound.address().is_unspecified()         ? std::string()
                                                                         : websocket_address_;
  handshakes_.push_back(std::make_unique<kp::ServerHandshake>(key_, token_address));
  if (!token_address.empty()) add_token_address(token_address);
  return {};
}

void FrontDoor::count_websocket(WebSocketEvent event, uint64_t n) {
  switch (event) {
    case WebSocketEvent::Accepted: metrics_.websocket_accepted.fetch_add(n, std::memory_order_relaxed); return;
    case WebSocketEvent::OpenNow: metrics_.websocket_connections.store(n, std::memory_order_relaxed); return;
    case WebSocketEvent::Sent:
      metrics_.packets_out.fetch_add(1, std::memory_order_relaxed);
      metrics_.bytes_out.fetch_add(n, std::memory_order_relaxed);
      return;
    case WebSocketEvent::SendFailed: return metrics_.drop(ServerDrop::SendFailed, n);
    case WebSocketEvent::Full: return metrics_.drop(ServerDrop::WebSocketFull, n);
    case WebSocketEvent::AddressFull: return metrics_.drop(ServerDrop::WebSocketAddressFull, n);
    case WebSocketEvent::UpgradeTimeout: return metrics_.drop(ServerDrop::WebSocketUpgradeTimeout, n);
    case WebSocketEvent::UpgradeFailed: return metrics_.drop(ServerDrop::WebSocketUpgradeFailed, n);
    case WebSocketEvent::TooLarge: return metrics_.drop(ServerDrop::WebSocketTooLarge, n);
    case WebSocketEvent::TextFrame: return metrics_.drop(ServerDrop::WebSocketTextFrame, n);
    case WebSocketEvent::BadFrame: return metrics_.drop(ServerDrop::WebSocketBadFrame, n);
    case WebSocketEvent::RateLimited: return metrics_.drop(ServerDrop::WebSocketRateLimited, n);
    case WebSocketEvent::Idle: return metrics_.drop(ServerDrop::WebSocketIdle, n);
    case WebSocketEvent::SendBacklog: return metrics_.drop(ServerDrop::WebSocketSendBacklog, n);
  }
}

void FrontDoor::start_receiving() {
  for (uint32_t i = 0; i < sockets_.size(); ++i) receive_next(i);
  if (websocket_) websocket_->start_accepting();
}

void FrontDoor::close_websockets(double wait_seconds) {
  if (websocket_) websocket_->close_all(wait_seconds);
}

void FrontDoor::receive_next(uint32_t socket) {
  // One receive buffer per socket, larger than any valid datagram so oversize ones are
  // seen (and counted) instead of silently truncated.
  struct Buffer {
    std::vector<uint8_t> bytes = std::vector<uint8_t>(65536);
    Udp::endpoint from;
  };
  auto buf = std::make_shared<Buffer>();
  sockets_[socket].async_receive_from(asio::buffer(buf->bytes), buf->from,
                                      [this, socket, buf](const asio::error_code& ec, size_t n) {
                                        if (ec == asio::error::operation_aborted) return;
                                        if (!ec) on_datagram(socket, buf->from, {buf->bytes.data(), n});
                                        if (sockets_[socket].is_open()) receive_next(socket);
                                      });
}

void FrontDoor::on_datagram(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes) {
  metrics_.packets_in.fetch_add(1, std::memory_order_relaxed);
  metrics_.bytes_in.fetch_add(bytes.size(), std::memory_order_relaxed);
  if (bytes.size() < kp::kPacketHeaderBytes) {
    metrics_.drop(kp::DropReason::TooSmall);
    return;
  }
  if (bytes.size() > kp::kMaxPacketBytes) {
    metrics_.drop(kp::DropReason::TooLarge);
    return;
  }
  // The header check is cheap and settles most garbage before any lookup.
  kp::PacketHeader header;
  kp::DropReason r = kp::read_header(bytes, header);
  if (r != kp::DropReason::None) {
    metrics_.drop(r);
    return;
  }
  if (bytes[0] == static_cast<uint8_t>(kp::PacketType::Connected)) {
    auto host = router_.find({socket, from});
    if (!host) {
      metrics_.drop(ServerDrop::UnknownAddress);
      return;
    }
    host->post(Datagram{socket, from, std::vector<uint8_t>(bytes.begin(), bytes.end())});
    return;
  }
  on_handshake(socket, from, bytes);
}

void FrontDoor::on_handshake(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes) {
  if (!admitting_.load()) {
    metrics_.drop(ServerDrop::NotAdmitting);
    return;
  }
  // Malformed handshakes are dropped before they spend any allowance: a flood of them
  // must not use up the rate that real players' handshakes need.
  kp::DropReason shape = kp::check_handshake_shape(bytes);
  if (shape != kp::DropReason::None) {
    metrics_.drop(shape);
    return;
  }
  const double t = clock_();
  const bool allowed = from.address().is_loopback() ? limiter_.allow_unlimited_source(t)
                                                     : limiter_.allow(from.address(), t);
  if (!allowed) {
    metrics_.drop(ServerDrop::HandshakeRateLimited);
    return;
  }
  const uint64_t unix_now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  if (bytes[0] == static_cast<uint8_t>(kp::PacketType::ConnectionRequest)) {
    std::string address = format_endpoint(from);
    std::vector<uint8_t> reply;
    kp::DropReason r = handshakes_[socket]->on_request(bytes, address, unix_now, reply);
    metrics_.drop(r);
    if (r == kp::DropReason::None) sender_->send(socket, from, reply);
    else log_.debug("handshake_dropped", {{"address", address}, {"reason", kp::to_string(r)}});
    return;
  }
  if (bytes[0] == static_cast<uint8_t>(kp::PacketType::ConnectionResponse)) {
    on_response(socket, from, bytes, unix_now);
    return;
  }
  metrics_.drop(kp::DropReason::TypeNotAllowed);  // challenges and denies go server-to-client only
}

void FrontDoor::on_response(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes,
                            uint64_t unix_now) {
  std::string address = format_endpoint(from);
  Admission a;
  kp::DropReason r = handshakes_[socket]->on_response(bytes, address, unix_now, a.client);
  metrics_.drop(r);
  if (r == kp::DropReason::ChallengeReused) {
    // Each challenge admits once. A resend from a session's own client (its
    // ConnectionAccept may be lost) earns that session the bytes to answer it.
    if (auto host = router_.find({socket, from})) host->post(Datagram{socket, from, {}, bytes.size()});
    return;
  }
  if (r != kp::DropReason::None) {
    log_.debug("handshake_dropped", {{"address", address}, {"reason", kp::to_string(r)}});
    return;
  }
  a.socket = socket;
  a.from = from;
  a.handshake_bytes = bytes.size();
  if (!admit_(std::move(a))) metrics_.drop(ServerDrop::InboxFull);
}

bool FrontDoor::add_token_address(const std::string& address) {
  std::lock_guard lock(token_addresses_mutex_);
  if (std::find(token_addresses_.begin(), token_addresses_.end(), address) != token_addresses_.end()) return false;
  token_addresses_.push_back(address);
  return true;
}

void FrontDoor::accept_token_address(const std::string& address) {
  if (!add_token_address(address)) return;
  // The handshakes belong to the I/O thread.
  asio::post(io_, [this, address] {
    for (auto& hs : handshakes_) {
      if (!hs->accept_address(address)) {
        log_.warn("token_address_refused", {{"address", address}, {"why", "too many addresses"}});
      }
    }
  });
}

std::vector<std::string> FrontDoor::token_addresses() const {
  std::lock_guard lock(token_addresses_mutex_);
  return token_addresses_;
}

}  // namespace keel::server
