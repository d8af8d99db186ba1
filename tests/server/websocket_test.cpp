// keel-server's WebSocket listener against hostile peers (real TCP on 127.0.0.1), while a
// UDP client plays in the same server: each refusal is counted under its own
// keel_drops_total reason, the connection is closed, and the UDP client never notices.
#include "server_fixture.h"

#include <keel/protocol/address.h>
#include <keel/protocol/packet.h>

#include <poll.h>

#include <cstring>

namespace keel::test {
namespace {

using Tcp = asio::ip::tcp;

Tcp::endpoint endpoint_of(const std::string& address) {
  auto hp = protocol::parse_host_port(address);
  return {asio::ip::make_address(hp->host), hp->port};
}

// A client frame (RFC 6455 section 5.2): FIN, the opcode, a mask and the masked payload.
std::vector<uint8_t> client_frame(uint8_t opcode, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> f = {static_cast<uint8_t>(0x80 | opcode)};
  const size_t n = payload.size();
  if (n < 126) {
    f.push_back(static_cast<uint8_t>(0x80 | n));
  } else {
    f.push_back(0x80 | 126);
    f.push_back(static_cast<uint8_t>(n >> 8));
    f.push_back(static_cast<uint8_t>(n & 0xff));
  }
  const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  f.insert(f.end(), mask, mask + 4);
  for (size_t i = 0; i < n; ++i) f.push_back(payload[i] ^ mask[i % 4]);
  return f;
}

struct RawPeer {
  asio::io_context& io;
  Tcp::socket socket;

  RawPeer(asio::io_context& context, const std::string& address) : io(context), socket(context) {
    asio::error_code ec;
    socket.connect(endpoint_of(address), ec);
  }
  void write(const std::vector<uint8_t>& bytes) {
    asio::error_code ec;
    asio::write(socket, asio::buffer(bytes), ec);
  }
  void write(const std::string& text) { write(std::vector<uint8_t>(text.begin(), text.end())); }

  // Sends a valid upgrade request and reads the reply's head; the status line.
  std::string upgrade() {
    write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    std::string head;
    char c;
    asio::error_code ec;
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 4096) {
      if (!wait_readable(2.0) || asio::read(socket, asio::buffer(&c, 1), ec) != 1) break;
      head.push_back(c);
    }
    return head.substr(0, head.find("\r\n"));
  }

  bool wait_readable(double seconds) {
    pollfd p{socket.native_handle(), POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(seconds * 1000)) == 1;
  }

  // Whether the server has ended the connection already (EOF is waiting).
  bool closed_now() {
    if (!wait_readable(0)) return false;
    uint8_t buf[4096];
    asio::error_code ec;
    while (!ec && wait_readable(0)) socket.read_some(asio::buffer(buf), ec);
    return ec.operator bool();
  }

  // Whether the server ends the connection within `seconds` (reads and discards until EOF).
  bool closed_by_server(double seconds, const std::function<void()>& meanwhile) {
    const double end = seconds_now() + seconds;
    uint8_t buf[4096];
    while (seconds_now() < end) {
      meanwhile();
      if (!wait_readable(0.005)) continue;
      asio::error_code ec;
      socket.read_some(asio::buffer(buf), ec);
      if (ec) return true;
    }
    return false;
  }
};

server::ServerOptions websocket_options(const std::string& name) {
  server::ServerOptions o = test_options(name);
  o.websocket = "127.0.0.1:0";
  o.websocket_max_per_address = 4;
  o.websocket_handshake_timeout = 1.5;
  o.websocket_idle_timeout = 1.0;
  o.websocket_max_messages_per_second = 50;
  return o;
}

uint64_t drops(const RunningServer& rs, const char* reason) { return rs.server->counters().drop(reason); }

}  // namespace

TEST(WebSocket, TheListenersTokenAddressIsItsBoundHostPortInCanonicalForm) {
  RunningServer rs(websocket_options("ws_address"));
  const std::string ws = rs.server->websocket_address();
  auto hp = protocol::parse_host_port(ws);
  ASSERT_TRUE(hp) << ws;
  EXPECT_EQ(hp->host, "127.0.0.1");
  EXPECT_NE(hp->port, 0);  // the real port, not the 0 asked for
  EXPECT_EQ(ws, "127.0.0.1:" + std::to_string(hp->port));
  EXPECT_NE(ws, rs.address);
  auto names = rs.server->token_addresses();
  EXPECT_NE(std::find(names.begin(), names.end(), ws), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), rs.address), names.end());

  server::ServerOptions keyed;
  keyed.scene_path = demo_scene();
  keyed.token_key_path = "k";
  keyed.bind = {"127.0.0.1:7777"};
  keyed.websocket = "0.0.0.0:7778";
  auto refused = server::check_token_addresses(keyed, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--websocket-public-address"), std::string::npos) << refused.error().message;
  keyed.websocket_public_address = "203.0.113.5:443";
  EXPECT_TRUE(server::check_token_addresses(keyed, false));
  keyed.websocket_public_address = "wss://203.0.113.5:443";
  EXPECT_FALSE(server::validate(keyed));
  server::ServerOptions dev = keyed;
  dev.token_key_path.clear();
  dev.websocket_public_address.clear();
  EXPECT_FALSE(server::validate(dev));  // development mode listens on loopback only
}

TEST(WebSocket, HostilePeersAreCountedAndClosedWhileAUdpClientPlaysOn) {
  RunningServer rs(websocket_options("ws_hostile"));
  const std::string ws = rs.server->websocket_address();
  auto udp = rs.client(1, /*predict=*/true);
  ASSERT_TRUE(drive({udp.get()}, 8.0, [&] { return udp->playing() && udp->snapshots() > 5; }));
  auto keep_playing = [&] { udp->update(seconds_now()); };
  asio::io_context io;

  {  // A message longer than the largest Keel datagram.
    RawPeer p(io, ws);
    ASSERT_NE(p.upgrade().find("101"), std::string::npos);
    p.write(client_frame(0x2, std::vector<uint8_t>(protocol::kMaxPacketBytes + 1, 0xab)));
    EXPECT_TRUE(p.closed_by_server(2.0, keep_playing));
  }
  {  // A text frame.
    RawPeer p(io, ws);
    ASSERT_NE(p.upgrade().find("101"), std::string::npos);
    p.write(client_frame(0x1, {'h', 'i'}));
    EXPECT_TRUE(p.closed_by_server(2.0, keep_playing));
  }
  {  // Garbage after the upgrade: reserved bits set, an unknown opcode.
    RawPeer p(io, ws);
    ASSERT_NE(p.upgrade().find("101"), std::string::npos);
    p.write(std::vector<uint8_t>(64, 0x7f));
    EXPECT_TRUE(p.closed_by_server(2.0, keep_playing));
  }
  {  // Not an upgrade at all.
    RawPeer p(io, ws);
    p.write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(p.closed_by_server(2.0, keep_playing));
  }
  EXPECT_EQ(drops(rs, "websocket_too_large"), 1u);
  EXPECT_EQ(drops(rs, "websocket_text_frame"), 1u);
  EXPECT_EQ(drops(rs, "websocket_bad_frame"), 1u);
  EXPECT_EQ(drops(rs, "websocket_upgrade_failed"), 1u);

  {  // Binary messages faster than the per-connection rate: counted and dropped, not closed.
    RawPeer p(io, ws);
    ASSERT_NE(p.upgrade().find("101"), std::string::npos);
    const uint64_t too_small_before = drops(rs, "too_small");
    std::vector<uint8_t> burst;
    for (int i = 0; i < 200; ++i) {
      auto f = client_frame(0x2, {0x01, 0x02, 0x03});  // not a Keel packet either
      burst.insert(burst.end(), f.begin(), f.end());
    }
    p.write(burst);
    drive({udp.get()}, 0.3, [&] { return drops(rs, "too_small") - too_small_before + drops(rs, "websocket_rate_limited") >= 200; });
    const uint64_t limited = drops(rs, "websocket_rate_limited");
    EXPECT_GE(limited, 100u);  // the burst allowance is 50
    EXPECT_LE(limited, 160u);
    // The ones let through reached the front door, which dropped them as it drops such UDP datagrams.
    EXPECT_EQ(drops(rs, "too_small") - too_small_before + limited, 200u);
    // Then silent: closed as idle.
    EXPECT_TRUE(p.closed_by_server(3.0, keep_playing));
    EXPECT_EQ(drops(rs, "websocket_idle"), 1u);
  }

  {  // More connections from one address than the cap, none of which ever upgrades.
    std::vector<std::unique_ptr<RawPeer>> peers;
    for (int i = 0; i < 7; ++i) peers.push_back(std::make_unique<RawPeer>(io, ws));
    drive({udp.get()}, 1.0, [&] { return drops(rs, "websocket_address_full") >= 3; });
    drive({udp.get()}, 0.1);  // well inside the 1.5 s upgrade time-out
    int refused_at_once = 0;
    for (auto& p : peers) refused_at_once += p->closed_now() ? 1 : 0;
    EXPECT_EQ(refused_at_once, 3);
    EXPECT_EQ(drops(rs, "websocket_address_full"), 3u);
    EXPECT_EQ(drops(rs, "websocket_upgrade_timeout"), 0u);
    drive({udp.get()}, 4.0, [&] { return drops(rs, "websocket_upgrade_timeout") >= 4; });
    EXPECT_EQ(drops(rs, "websocket_upgrade_timeout"), 4u);  // the slow upgrades, after 1.5 s
    for (auto& p : peers) EXPECT_TRUE(p->closed_by_server(1.0, keep_playing));
  }
  drive({udp.get()}, 1.0, [&] { return rs.server->metrics_text().find("keel_websocket_connections 0\n") != std::string::npos; });
  EXPECT_NE(rs.server->metrics_text().find("keel_websocket_connections 0\n"), std::string::npos);

  // The UDP client never noticed.
  const uint64_t snapshots = udp->snapshots();
  drive({udp.get()}, 1.0);
  EXPECT_FALSE(udp->disconnected());
  EXPECT_TRUE(udp->playing());
  EXPECT_GT(udp->snapshots(), snapshots + 20);
  EXPECT_EQ(rs.server->counters().desyncs, 0u);
}

TEST(WebSocket, ConnectionsPastTheServerWideCapAreClosedAtAcceptAndCounted) {
  server::ServerOptions o = websocket_options("ws_full");
  o.websocket_max_connections = 2;
  RunningServer rs(o);
  asio::io_context io;
  const std::string ws = rs.server->websocket_address();
  RawPeer a(io, ws), b(io, ws);
  ASSERT_NE(a.upgrade().find("101"), std::string::npos);
  ASSERT_NE(b.upgrade().find("101"), std::string::npos);
  RawPeer c(io, ws);
  EXPECT_TRUE(c.closed_by_server(1.0, [] {}));
  EXPECT_EQ(drops(rs, "websocket_full"), 1u);
  EXPECT_EQ(drops(rs, "websocket_address_full"), 0u);
  EXPECT_NE(rs.server->metrics_text().find("keel_websocket_connections 2\n"), std::string::npos);
  // Room again once one closes.
  a.socket.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  RawPeer d(io, ws);
  EXPECT_NE(d.upgrade().find("101"), std::string::npos);
  EXPECT_EQ(drops(rs, "websocket_full"), 1u);
}

}  // namespace keel::test
