// The SDK's WebSocket transport against a real keel-server process with --websocket: a
// client whose token names the listener's HOST:PORT plays; one whose token names only the
// server's UDP address is refused (token_wrong_address), as the listener has its own
// handshake (docs/protocol.md, "WebSocket"); and a token from the browser page's /token
// endpoint (--web, docs/browser.md) admits a player, as the page's client will be.
#include <keel/client/client.h>
#include <keel/client/keel_client.h>
#include <keel/client/transport.h>
#include <keel/protocol/token.h>

#include "server_process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>

namespace keel::client {
namespace {

using test::fetch_metrics;
using test::metric;
using test::now_s;

// The server every test here talks to: the demo scene, recorded into `dir`; with `web`,
// also the browser page's endpoint on web_port.
struct Server : test::ServerProcess {
  uint16_t web_port;
  explicit Server(const std::string& dir, bool web = false, uint16_t port = test::free_port(true))
      : ServerProcess(arguments(dir, web, port), dir + "/server.log"), web_port(port) {}

  static std::vector<std::string> arguments(const std::string& dir, bool web, uint16_t port) {
    std::vector<std::string> args = {"--scene", std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json", "--record", dir};
    if (web) {
      args.push_back("--web");
      args.push_back("127.0.0.1:" + std::to_string(port));
    }
    return args;
  }
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

// What the page does with its token, done by the SDK: fetch /token, open the WebSocket it
// names, connect with the token. The server counts a player, and the client decodes
// snapshots of the scene's 16 bodies (scenes/demo.json) plus the player's character.
TEST(WebSocketTransport, ATokenFromTheWebPagesEndpointAdmitsAPlayer) {
  std::string dir = std::string(KEEL_BINARY_DIR) + "/test-client-output/ws_web_token";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Server server(dir, /*web=*/true);
  ASSERT_GT(server.pid, 0);
  const std::string raw = fetch_metrics(server.web_port, "/token");
  const size_t body_at = raw.find("\r\n\r\n");
  ASSERT_EQ(raw.rfind("HTTP/1.1 200", 0), 0u) << raw;
  ASSERT_NE(body_at, std::string::npos);
  auto answer = nlohmann::json::parse(raw.substr(body_at + 4), nullptr, false);
  ASSERT_TRUE(answer.is_object()) << raw;
  auto token = protocol::token_from_base64(answer["token"].get<std::string>());
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(answer["websocket"], "ws://" + server.ws + "/");

  std::string error;
  auto transport = open_websocket_transport(answer["websocket"].get<std::string>(), error);
  ASSERT_TRUE(transport) << error;
  ClientConfig config;
  config.auto_reconnect = false;
  Client c(std::move(transport), config);
  c.connect(*token, now_s());
  EXPECT_TRUE(run_until({&c}, 8.0, [&] { return c.state() == State::Playing && c.stats().snapshots_received >= 3; }))
      << to_string(c.state());
  const std::string m = fetch_metrics(server.metrics_port);
  EXPECT_EQ(metric(m, "keel_players"), 1) << m;
  EXPECT_EQ(metric(m, "keel_websocket_connections"), 1);
  EXPECT_EQ(c.world().bodies().size(), 17u);  // 16 scene bodies and the player's character
}

}  // namespace keel::client
