// A small Keel client for the server tests, built from protocol primitives only:
// handshake, Connection, InputSender, SnapshotReceiver, FrameReceiver and a predicting
// game::Match. Time is the caller's (seconds); the socket is a real UDP socket on
// loopback. Loss is simulated on both directions with a seeded generator.
#pragma once

#define ASIO_STANDALONE 1
#include <asio.hpp>

#include <keel/protocol/connection.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/handshake.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>
#include <keel/scene/scene.h>
#include <keel/protocol/interest.h>
#include <keel/protocol/snapshot_stream.h>
#include <keel/protocol/token.h>
#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace keel::test {

struct TestClientOptions {
  std::string server = "127.0.0.1:7777";
  uint64_t client_id = 1;
  uint64_t match_id = 0;
  bool predict = false;
  double loss = 0.0;        ///< probability each datagram (either way) is lost
  uint64_t seed = 1;
  uint32_t timeout_seconds = 10;
  protocol::TokenKey key = protocol::development_token_key();
  /// What the token names as the server's addresses; empty: `server`.
  std::vector<std::string> token_addresses;
  /// The local UDP port to bind (0: any). A restarted client binds its old one.
  uint16_t local_port = 0;
  /// ClientHello.max_kbps: the client's own cap on its snapshot budget (0 = the server's).
  uint32_t max_kbps = 0;
  /// The view stamp every input carries (docs/protocol.md, "View stamps"; default: the
  /// present). A negative `behind` claims a view from the future.
  protocol::WireView view;
  /// The role its token is minted with.
  protocol::ClientRole role = protocol::ClientRole::Player;
  /// A token to use instead of minting one (a reconnect with the same token).
  std::optional<protocol::ConnectToken> token;
};

class TestClient {
 public:
  explicit TestClient(asio::io_context& io, TestClientOptions options);

  /// Sends the connection request (and resends it until a challenge comes back).
  void start(double now);
  /// Receives everything waiting, runs the client's tick when due, sends.
  void update(double now);
  /// Sends Disconnect (three datagrams) and stops.
  void disconnect(double now);

  /// The input the client sends from now on (quantised before use).
  game::InputFrame input;

  bool accepted() const { return accepted_; }
  bool playing() const { return scene_ready_ && (!options_.predict || match_.has_value()); }
  bool disconnected() const { return disconnected_; }
  protocol::fb::DenyReason disconnect_reason() const { return disconnect_reason_; }
  bool denied() const { return denied_; }
  uint32_t player_id() const { return player_id_; }
  /// ConnectionAccept said this client is a spectator.
  bool spectator() const { return spectator_; }
  uint64_t snapshots() const { return snapshots_; }
  uint64_t frames() const { return frames_; }
  uint64_t hash_checks() const { return hash_checks_; }
  uint64_t hash_mismatches() const { return hash_mismatches_; }
  uint64_t desync_events() const { return desync_events_; }
  const protocol::QuantSnapshot* latest_snapshot() const;
  const protocol::SnapshotConfig* snapshot_config() const { return config_ ? &*config_ : nullptr; }
  /// The predicted match (predicting clients after the checkpoint).
  const game::Match* match() const { return match_ ? &*match_ : nullptr; }
  uint64_t server_tick_estimate(double now) const;
  /// The quantised input the client sent for each tick.
  const std::map<uint64_t, game::InputFrame>& inputs_sent() const { return inputs_sent_; }
  /// Every datagram this client sent (for replay tests).
  const std::vector<std::vector<uint8_t>>& sent() const { return sent_; }
  asio::ip::udp::socket& socket() { return socket_; }
  const protocol::ConnectToken& token() const { return token_; }
  uint16_t local_port() const { return socket_.local_endpoint().port(); }
  /// Bytes of every datagram received from the server (lost ones included).
  uint64_t bytes_received() const { return bytes_received_; }
  /// Sends raw bytes to the server from this client's socket.
  void send_raw(const std::vector<uint8_t>& bytes);
  /// Asks for a new checkpoint, as a predicting client that lost the frame chain does.
  void request_resync();
  uint64_t checkpoints() const { return checkpoints_; }
  /// Sends a HashReport for `tick` with `hash` (tests of desync handling).
  void send_hash_report(uint64_t tick, uint64_t hash);

 private:
  void receive_all(double now);
  void on_datagram(std::span<const uint8_t> bytes, double now);
  void on_control(std::span<const uint8_t> bytes, double now);
  void on_block(std::vector<uint8_t> block);
  void on_snapshot(std::span<const uint8_t> bytes, double now);
  void on_frame(std::span<const uint8_t> bytes);
  void on_input_frame(const protocol::InputFrameMessage& frame);
  void client_tick(double now);
  void send(const std::vector<uint8_t>& bytes);
  bool lose();

  TestClientOptions options_;
  asio::ip::udp::socket socket_;
  asio::ip::udp::endpoint server_;
  std::mt19937_64 rng_;
  protocol::ConnectToken token_;
  std::vector<uint8_t> request_, response_;
  double last_handshake_send_ = -1e9;
  std::optional<protocol::Connection> conn_;
  bool accepted_ = false, denied_ = false, disconnected_ = false;
  protocol::fb::DenyReason disconnect_reason_ = protocol::fb::DenyReason::Unknown;
  uint32_t player_id_ = 0;
  bool spectator_ = false;
  uint32_t tick_rate_ = 60;
  uint64_t accept_tick_ = 0;
  double accept_time_ = 0;
  uint64_t newest_server_tick_ = 0;
  double newest_server_tick_time_ = 0;
  double next_tick_time_ = 0;
  uint64_t next_input_tick_ = 0;
  int pending_block_kind_ = -1;
  uint64_t pending_block_tick_ = 0;
  std::optional<sim::SceneDef> scene_;
  bool scene_ready_ = false;
  std::optional<protocol::SnapshotConfig> config_;
  std::optional<protocol::SnapshotReceiver> snapshot_rx_;
  std::optional<protocol::InterestReceiver> interest_rx_;
  protocol::QuantSnapshot held_;  // the newest snapshot's view of the world
  std::optional<game::Match> match_;
  protocol::FrameReceiver frame_rx_;
  std::map<uint64_t, protocol::InputFrameMessage> frames_ahead_;
  protocol::InputSender input_tx_{games::SandboxRules::make_spec().input};  // keel-server runs the sandbox
  uint64_t snapshots_ = 0, frames_ = 0, hash_checks_ = 0, hash_mismatches_ = 0, desync_events_ = 0;
  uint64_t confirmed_ = 0;
  uint64_t checkpoints_ = 0;
  std::vector<std::vector<uint8_t>> sent_;
  uint64_t bytes_received_ = 0;
  std::map<uint64_t, game::InputFrame> inputs_sent_;
};

/// Mints a development-mode token for a client.
protocol::ConnectToken mint_test_token(const TestClientOptions& o);

}  // namespace keel::test
