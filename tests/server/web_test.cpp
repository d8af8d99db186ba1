// keel-server --web: the browser page's files and the development token endpoint, over
// real loopback sockets against a real keel-server process, and the rule that keeps the
// token endpoint on loopback unless --web-remote-tokens says otherwise.
#include "process_helpers.h"

#include "web_endpoint.h"

#include <keel/protocol/token.h>
#include <keel/server/config.h>

#include <nlohmann/json.hpp>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

struct HttpAnswer {
  int status = 0;
  std::string head, body;
};

// One GET with the given Host header; status 0 when nothing came back.
HttpAnswer http_get(uint16_t port, const std::string& path, const std::string& host) {
  std::string raw;
  {
    asio::io_context io;
    asio::ip::tcp::socket s(io);
    asio::error_code ec;
    s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return {};
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
    asio::write(s, asio::buffer(req), ec);
    char buf[4096];
    while (!ec) {
      size_t n = s.read_some(asio::buffer(buf), ec);
      raw.append(buf, n);
    }
  }
  HttpAnswer a;
  const size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return a;
  a.status = std::atoi(raw.c_str() + 9);
  a.head = raw.substr(0, end);
  a.body = raw.substr(end + 4);
  return a;
}

struct WebServer {
  std::string dir, ws;
  uint16_t web_port = 0;
  pid_t pid = 0;
  explicit WebServer(const std::string& name) {
    dir = fresh_dir(name);
    ws = "127.0.0.1:" + std::to_string(free_port(true));
    web_port = free_port(true);
    pid = spawn_process({std::string(KEEL_BINARY_DIR) + "/bin/keel-server", "--scene", demo_scene(), "--bind",
                         "127.0.0.1:" + std::to_string(free_port(false)), "--websocket", ws, "--web",
                         "127.0.0.1:" + std::to_string(web_port), "--record", dir, "--status-interval", "0"},
                        dir + "/server.txt");
    const double t0 = seconds_now();
    while (http_get(web_port, "/", "localhost").status != 200 && seconds_now() - t0 < 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~WebServer() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    if (!wait_for_exit(pid, 5.0)) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

}  // namespace

TEST(WebConfig, TheHostHeaderIsReadCaseBlindAndTrimmed) {
  EXPECT_EQ(server::parse_http_request("GET /token HTTP/1.1\r\nUser-Agent: h\r\nHOST: \t LocalHost:80 \r\n\r\n").host,
            "localhost:80");
  EXPECT_EQ(server::parse_http_request("GET /token HTTP/1.0\r\nHost:[::1]:8080\r\n\r\n").host, "[::1]:8080");
  EXPECT_EQ(server::parse_http_request("GET /token HTTP/1.1\r\nX-Host: 127.0.0.1\r\n\r\n").host, "");
  EXPECT_EQ(server::parse_http_request("GET /token HTTP/1.1\r\nHosts: 127.0.0.1\r\n\r\n").host, "");
  EXPECT_EQ(server::parse_http_request("GET /token HTTP/1.1\r\n\r\n").host, "");
  EXPECT_EQ(server::parse_http_request("GET /token HTTP/1.1\r\n\r\nHost: localhost\r\n").host, "");  // a body
  // The first Host wins; a second one cannot turn a refused name into an accepted one.
  EXPECT_EQ(server::parse_http_request("GET / HTTP/1.1\r\nHost: evil.example\r\nHost: localhost\r\n\r\n").host,
            "evil.example");
}

TEST(WebConfig, LoopbackHostNames) {
  for (const char* ok : {"localhost", "localhost:8080", "127.0.0.1", "127.0.0.1:8080", "127.1.2.3:1", "[::1]", "[::1]:8080"}) {
    EXPECT_TRUE(server::loopback_host(ok)) << ok;
  }
  for (const char* bad : {"", "evil.example", "evil.example:8080", "localhost.evil.example", "10.0.0.1:8080",
                          "[::2]:8080", "[::1", "0.0.0.0:8080", "127.0.0.1.evil.example"}) {
    EXPECT_FALSE(server::loopback_host(bad)) << bad;
  }
}

TEST(WebConfig, TheTokenEndpointBindsLoopbackUnlessTheFlagSaysOtherwise) {
  server::ServerOptions o;
  o.scene_path = demo_scene();
  o.token_key_path = "key";
  o.bind = {"127.0.0.1:7777"};
  o.websocket = "127.0.0.1:7778";
  o.web_bind = "127.0.0.1:8080";
  EXPECT_TRUE(server::validate(o));
  o.web_bind = "[::1]:8080";
  EXPECT_TRUE(server::validate(o));
  o.web_bind = "192.0.2.7:8080";
  auto refused = server::validate(o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("loopback addresses only"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("--web-remote-tokens"), std::string::npos) << refused.error().message;
  o.web_remote_tokens = true;
  EXPECT_TRUE(server::validate(o));
  o.websocket.clear();
  auto no_ws = server::validate(o);
  ASSERT_FALSE(no_ws);
  EXPECT_NE(no_ws.error().message.find("needs --websocket"), std::string::npos) << no_ws.error().message;
  server::ServerOptions flag_alone;
  flag_alone.scene_path = demo_scene();
  flag_alone.web_remote_tokens = true;
  EXPECT_FALSE(server::validate(flag_alone));
  flag_alone.web_bind = "not an address";
  flag_alone.websocket = "127.0.0.1:7778";
  EXPECT_FALSE(server::validate(flag_alone));
}

TEST(WebProcess, ANonLoopbackBindIsRefusedWithAClearMessage) {
  const std::string dir = fresh_dir("web_refused");
  pid_t pid = spawn_process({std::string(KEEL_BINARY_DIR) + "/bin/keel-server", "--scene", demo_scene(), "--websocket",
                             "127.0.0.1:" + std::to_string(free_port(true)), "--web", "0.0.0.0:8080", "--record", dir},
                            dir + "/server.txt");
  ASSERT_GT(pid, 0);
  auto status = wait_for_exit(pid, 5.0);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2);
  std::stringstream out;
  out << std::ifstream(dir + "/server.txt").rdbuf();
  EXPECT_NE(out.str().find("--web 0.0.0.0:8080: the page's token endpoint hands a connect token to anyone who asks"),
            std::string::npos)
      << out.str();
}

TEST(WebProcess, ThePageAndATokenForTheWebSocketListenerComeBack) {
  WebServer s("web_page");
  ASSERT_GT(s.pid, 0);
  HttpAnswer page = http_get(s.web_port, "/", "localhost");
  ASSERT_EQ(page.status, 200) << page.head;
  EXPECT_NE(page.head.find("Content-Type: text/html"), std::string::npos);
  EXPECT_NE(page.body.find("<script src=\"/keel_web.js\">"), std::string::npos);
  HttpAnswer script = http_get(s.web_port, "/keel_web.js", "localhost");
  ASSERT_EQ(script.status, 200);
  EXPECT_NE(script.head.find("Content-Type: text/javascript"), std::string::npos);
  EXPECT_NE(script.body.find("fetch('/token'"), std::string::npos);
  // The drawing and the replay viewer's vendored three.js come from the same server, before
  // the page's script (the Content-Security-Policy allows no other origin).
  const size_t three_tag = page.body.find("<script src=\"/three.js\">");
  const size_t draw_tag = page.body.find("<script src=\"/keel_draw.js\">");
  ASSERT_NE(three_tag, std::string::npos);
  ASSERT_NE(draw_tag, std::string::npos);
  EXPECT_LT(three_tag, draw_tag);
  EXPECT_LT(draw_tag, page.body.find("<script src=\"/keel_web.js\">"));
  EXPECT_NE(page.body.find("script-src 'self' 'wasm-unsafe-eval';"), std::string::npos);
  HttpAnswer three = http_get(s.web_port, "/three.js", "localhost");
  ASSERT_EQ(three.status, 200);
  EXPECT_NE(three.head.find("Content-Type: text/javascript"), std::string::npos);
  std::stringstream vendored;
  vendored << std::ifstream(std::string(KEEL_SOURCE_DIR) + "/replay/tool/viewer/vendor/three-bundle.min.js").rdbuf();
  EXPECT_GT(vendored.str().size(), 500000u);  // the whole bundle (about 570 KB)
  EXPECT_TRUE(three.body == vendored.str()) << "served " << three.body.size() << " bytes of " << vendored.str().size();
  EXPECT_NE(three.body.find("var KEEL_THREE="), std::string::npos);
  HttpAnswer draw = http_get(s.web_port, "/keel_draw.js", "localhost");
  ASSERT_EQ(draw.status, 200);
  EXPECT_NE(draw.body.find("window.KeelDraw"), std::string::npos);
  EXPECT_EQ(http_get(s.web_port, "/nope", "localhost").status, 404);

  HttpAnswer a = http_get(s.web_port, "/token", "127.0.0.1:" + std::to_string(s.web_port));
  ASSERT_EQ(a.status, 200) << a.head << a.body;
  EXPECT_NE(a.head.find("Cache-Control: no-store"), std::string::npos);
  auto j = nlohmann::json::parse(a.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << a.body;
  EXPECT_EQ(j["websocket"], "ws://" + s.ws + "/");
  EXPECT_EQ(j["match_id"], 0);
  auto token = kp::token_from_base64(j["token"].get<std::string>());
  ASSERT_TRUE(token) << token.error().message;
  ASSERT_EQ(token->server_addresses.size(), 1u);
  EXPECT_EQ(token->server_addresses[0], s.ws);
  EXPECT_EQ(token->expire_time - token->create_time, server::kWebTokenTtlSeconds);
  // Minted under the development key (no --token-key), for the start-up match.
  kp::PrivateToken priv;
  ASSERT_EQ(kp::open_private_token(kp::development_token_key(), token->private_data, token->nonce, token->expire_time,
                                   priv),
            kp::DropReason::None);
  EXPECT_EQ(priv.client_id, j["client_id"].get<uint64_t>());
  // A client id is a player id: 32 bits, in the page's own range.
  EXPECT_GE(priv.client_id, server::kWebFirstClientId);
  EXPECT_LT(priv.client_id, server::kWebFirstClientId + 2 * server::kWebClientIdSpan);
  EXPECT_LE(priv.client_id, 0xffffffffull);
  EXPECT_EQ(priv.match_id, 0u);
  EXPECT_EQ(priv.server_addresses, token->server_addresses);

  // Each token is for another client.
  HttpAnswer b = http_get(s.web_port, "/token", "[::1]");
  ASSERT_EQ(b.status, 200);
  EXPECT_NE(nlohmann::json::parse(b.body)["client_id"], j["client_id"]);
}

TEST(WebProcess, TokensAreRefusedToOtherHostsAndPastTheRate) {
  WebServer s("web_rate");
  ASSERT_GT(s.pid, 0);
  // A page whose own name resolves to 127.0.0.1 (DNS rebinding) sends that name as Host.
  HttpAnswer rebound = http_get(s.web_port, "/token", "evil.example:" + std::to_string(s.web_port));
  EXPECT_EQ(rebound.status, 403);
  EXPECT_EQ(rebound.body.find("token"), 0u) << rebound.body;
  EXPECT_EQ(http_get(s.web_port, "/token", "").status, 403);
  EXPECT_EQ(http_get(s.web_port, "/", "evil.example").status, 200);  // the page itself is public
  {
    asio::io_context io;
    asio::ip::tcp::socket sock(io);
    sock.connect({asio::ip::make_address("127.0.0.1"), s.web_port});
    asio::write(sock, asio::buffer(std::string("HEAD /token HTTP/1.1\r\nHost: localhost\r\n\r\n")));
    std::string raw;
    asio::error_code ec;
    char buf[1024];
    while (!ec) raw.append(buf, sock.read_some(asio::buffer(buf), ec));
    EXPECT_EQ(raw.rfind("HTTP/1.1 405", 0), 0u) << raw;  // no token minted to be thrown away
  }

  // The bucket holds kWebTokenBurst and refills at kWebTokensPerSecond.
  const double t0 = seconds_now();
  int granted = 0, limited = 0;
  for (int i = 0; i < 40; ++i) {
    int st = http_get(s.web_port, "/token", "localhost").status;
    granted += st == 200;
    limited += st == 429;
  }
  const double elapsed = seconds_now() - t0;
  EXPECT_EQ(granted + limited, 40);
  EXPECT_GE(granted, static_cast<int>(server::kWebTokenBurst));
  EXPECT_LE(granted, static_cast<int>(server::kWebTokenBurst + server::kWebTokensPerSecond * elapsed) + 1)
      << "in " << elapsed << " s";
  if (elapsed < 1.0) {
    EXPECT_GT(limited, 0);
  }
}

}  // namespace keel::test
