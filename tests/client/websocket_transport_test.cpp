// The SDK's WebSocket transport against a real keel-server process with --websocket: a
// client whose token names the listener's HOST:PORT plays; one whose token names only the
// server's UDP address is refused (token_wrong_address), as the listener has its own
// handshake (docs/protocol.md, "WebSocket").
#include <keel/client/client.h>
#include <keel/client/keel_client.h>
#include <keel/client/transport.h>
#include <keel/protocol/token.h>

#include "server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

namespace keel::client {
namespace {

using test::fetch_metrics;
using test::metric;
using test::now_s;

// The server every test here talks to: the demo scene, recorded into `dir`.
struct Server : test::ServerProcess {
  explicit Server(const std::string& dir)
      : ServerProcess({"--scene", std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json", "--record", dir},
                      dir + "/server.log") {}
};

std::unique_ptr<Client> ws_client(const Server& s, uint64_t id, const std::string& token_address) {
  std::string error;
  auto transport = open_websocket_transport(s.ws, error);
  EXPECT_TRUE(transport) << error;
  if (!transport) return nullptr;
  ClientConfig config;
  config.auto_reconnect = false;
  auto c = std::make_unique<Client>(std::move(transport), config);
  auto token = mint_token_for(protocol::development_token_key(), id, 0, token_address);
  EXPECT_TRUE(token);
  c->connect(*token, now_s());
  return c;
}

bool run_until(std::vector<Client*> clients, double seconds, const std::function<bool()>& done) {
  const double end = now_s() + seconds;
  while (now_s() < end) {
    for (Client* c : clients) c->update(now_s());
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

}  // namespace

TEST(WebSocketTransport, ATokenNamingTheListenerPlaysAndOneNamingOnlyTheUdpAddressIsRefused) {
  std::string dir = std::string(KEEL_BINARY_DIR) + "/test-client-output/ws_transport";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Server server(dir);
  ASSERT_GT(server.pid, 0);

  auto good = ws_client(server, 1, server.ws);
  auto wrong = ws_client(server, 2, server.udp);
  ASSERT_TRUE(good && wrong);
  EXPECT_TRUE(run_until({good.get(), wrong.get()}, 8.0, [&] { return good->state() == State::Playing; }))
      << to_string(good->state());
  run_until({good.get(), wrong.get()}, 1.0, [] { return false; });
  EXPECT_EQ(good->state(), State::Playing);
  EXPECT_NE(wrong->state(), State::Playing);
  EXPECT_NE(wrong->state(), State::Accepted);
  const std::string m = fetch_metrics(server.metrics_port);
  EXPECT_GE(metric(m, "keel_drops_total{reason=\"token_wrong_address\"}"), 1) << m;
  EXPECT_EQ(metric(m, "keel_players"), 1);
  EXPECT_EQ(metric(m, "keel_websocket_connections"), 2);
}

// The C API takes a "ws://" server address and mints its development token for the
// listener's host:port.
TEST(WebSocketTransport, TheCApiPlaysOverAWsAddress) {
  std::string dir = std::string(KEEL_BINARY_DIR) + "/test-client-output/ws_c_api";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Server server(dir);
  ASSERT_GT(server.pid, 0);
  const std::string url = "ws://" + server.ws + "/keel";
  keel_client_config config;
  keel_client_config_init(&config);
  config.server_address = url.c_str();
  keel_client* c = nullptr;
  ASSERT_EQ(keel_client_create(&config, &c), KEEL_OK);
  ASSERT_EQ(keel_client_connect_dev(c, 5, 0, now_s()), KEEL_OK);
  const double end = now_s() + 8.0;
  while (now_s() < end && keel_client_state(c) != KEEL_STATE_PLAYING) {
    keel_client_update(c, now_s());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(keel_client_state(c), KEEL_STATE_PLAYING);
  keel_client_destroy(c);
  config.server_address = "wss://127.0.0.1:1/";
  EXPECT_NE(keel_client_create(&config, &c), KEEL_OK);
}

}  // namespace keel::client
