// The SDK's WebSocket transport against a real keel-server process with --websocket: a
// client whose token names the listener's HOST:PORT plays; one whose token names only the
// server's UDP address is refused (token_wrong_address), as the listener has its own
// handshake (docs/protocol.md, "WebSocket"); and a token from the browser page's /token
// endpoint (--web, docs/browser.md) admits a player, as the page's client will be.
#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE 1
#endif
#include <asio.hpp>

#include <keel/client/client.h>
#include <keel/client/keel_client.h>
#include <keel/client/transport.h>
#include <keel/protocol/token.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace keel::client {
namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

uint16_t free_port(bool tcp) {
  asio::io_context io;
  if (tcp) return asio::ip::tcp::acceptor(io, {asio::ip::make_address("127.0.0.1"), 0}).local_endpoint().port();
  return asio::ip::udp::socket(io, {asio::ip::make_address("127.0.0.1"), 0}).local_endpoint().port();
}

std::string fetch_metrics(uint16_t port, const std::string& path = "/metrics") {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  asio::error_code ec;
  s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return "";
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n", body;
  asio::write(s, asio::buffer(req), ec);
  char buf[4096];
  while (!ec) body.append(buf, s.read_some(asio::buffer(buf), ec));
  return body;
}

double metric(const std::string& text, const std::string& name) {
  size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + name.size() + 2);
}

struct Server {
  pid_t pid = 0;
  std::string udp = "127.0.0.1:" + std::to_string(free_port(false));
  std::string ws = "127.0.0.1:" + std::to_string(free_port(true));
  uint16_t metrics_port = free_port(true);
  uint16_t web_port = free_port(true);
  std::string log;

  explicit Server(const std::string& dir, bool web = false) : log(dir + "/server.log") {
    std::vector<std::string> args = {std::string(KEEL_BINARY_DIR) + "/bin/keel-server", "--scene",
                                     std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json", "--bind", udp, "--websocket", ws,
                                     "--record", dir, "--status-interval", "0", "--metrics",
                                     "127.0.0.1:" + std::to_string(metrics_port)};
    if (web) {
      args.push_back("--web");
      args.push_back("127.0.0.1:" + std::to_string(web_port));
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = 0;
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 100 && metric(fetch_metrics(metrics_port), "keel_ticks_total") < 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Server() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 100 && waitpid(pid, nullptr, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
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
