// A WebSocket client connection for the SDK's WebSocket transport (transport.cpp), on
// websocketpp (Debian's libwebsocketpp-dev) and its own io_context, driven by poll():
// no threads, nothing blocks. websocketpp's headers are C++17 that C++20 refuses and name
// asio::io_service, so websocket_client.cpp is compiled as C++17 without
// ASIO_NO_DEPRECATED (client-sdk/CMakeLists.txt); this header therefore uses the standard
// library only, and no Keel header (they are C++20).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace keel::client {

class WebSocketClient {
 public:
  /// Messages longer than `max_message_bytes` are dropped and counted, not delivered.
  explicit WebSocketClient(size_t max_message_bytes);
  ~WebSocketClient();
  WebSocketClient(const WebSocketClient&) = delete;
  WebSocketClient& operator=(const WebSocketClient&) = delete;

  /// Starts connecting to `uri` ("ws://host:port/path"). "" or what is wrong with it.
  std::string connect(const std::string& uri);
  /// Runs whatever is ready (resolving, the upgrade, reads, writes) and returns.
  void poll();
  bool is_open() const { return open_; }
  /// The connection failed or closed; it never reopens.
  bool is_closed() const { return closed_; }
  /// Queues one binary message. False when the connection is not open.
  bool send(const uint8_t* data, size_t size);
  /// Moves out the binary messages received so far (at most `max`).
  void take(std::vector<std::vector<uint8_t>>& out, size_t max);
  uint64_t oversized_messages() const { return oversized_; }
  uint64_t text_messages() const { return text_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool open_ = false;
  bool closed_ = false;
  uint64_t oversized_ = 0;
  uint64_t text_ = 0;
};

}  // namespace keel::client
