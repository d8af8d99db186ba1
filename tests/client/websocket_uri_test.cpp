// The WebSocket transport's address forms: what open_websocket_transport connects to, and
// what it refuses before touching the network.
#include <keel/client/transport.h>

#include <gtest/gtest.h>

namespace keel::client {
namespace {

std::string uri(const std::string& text) {
  std::string error;
  std::string u = websocket_uri(text, error);
  EXPECT_EQ(u.empty(), !error.empty()) << text;
  return u;
}

TEST(WebSocketUri, HostPortAndWsUrlsNameTheListener) {
  EXPECT_EQ(uri("127.0.0.1:7778"), "ws://127.0.0.1:7778/");
  EXPECT_EQ(uri("ws://127.0.0.1:7778"), "ws://127.0.0.1:7778/");
  EXPECT_EQ(uri("ws://[::1]:7778/keel"), "ws://[::1]:7778/keel");
  EXPECT_EQ(uri("play.example.com:80"), "ws://play.example.com:80/");
}

TEST(WebSocketUri, MalformedAddressesAreRefusedWithAReason) {
  for (const char* bad : {"", "127.0.0.1", "::1:7778", "ws://127.0.0.1:0/", "ws://127.0.0.1:70000", "ws:///x",
                          "ws://127.0.0.1:7778/a b", "http://127.0.0.1:7778/"}) {
    std::string error;
    EXPECT_EQ(websocket_uri(bad, error), "") << bad;
    EXPECT_FALSE(error.empty()) << bad;
    EXPECT_EQ(open_websocket_transport(bad, error), nullptr) << bad;
  }
  std::string error;
  EXPECT_EQ(websocket_uri("wss://127.0.0.1:443/", error), "");
  EXPECT_NE(error.find("proxy"), std::string::npos) << error;  // TLS is the reverse proxy's job
}

}  // namespace
}  // namespace keel::client
