// keel::client::Client — one game client of a Keel server.
//
// No threads of its own and no clock: the game calls update(now) every frame (now in
// seconds, any monotonic origin) and the client reads its socket, runs the session state
// machine of docs/protocol.md ("Session: what flows after the handshake"), produces one
// input per server tick at the input lead, predicts (predicted mode), and sends.
//
//   Disconnected --connect()--> Connecting --ConnectionAccept--> Accepted
//        --scene (+ checkpoint in predicted mode)--> Playing --> Closed
//
// Every byte from the network is untrusted: datagrams and messages pass the protocol
// layer's checks, and messages the current state does not expect are dropped and counted
// (drops()[TypeNotAllowed]). A connection idle for the token's timeout is closed as
// TimedOut; with auto_reconnect the client then connects again, with a fresh token from
// token_source when one is set, else the same token (valid until it expires).
#pragma once

#include <keel/client/clock.h>
#include <keel/client/interpolation.h>
#include <keel/client/prediction.h>
#include <keel/client/transport.h>
#include <keel/protocol/connection.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/token.h>
#include <keel/protocol/world_description.h>
#include <keel/game/match.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keel::client {

enum class Mode : uint8_t { Interpolate = 0, Predict = 1 };

enum class State : uint8_t {
  Disconnected = 0,  ///< never connected, or closed without reconnecting
  Connecting,        ///< handshake: request / challenge / response
  Accepted,          ///< ConnectionAccept received; waiting for the scene (and checkpoint)
  Playing,           ///< scene (and checkpoint) loaded: snapshots, frames, inputs flow
  Reconnecting,      ///< timed out; a new attempt starts after reconnect_delay
};

enum class CloseReason : uint8_t {
  None = 0,
  Requested,          ///< disconnect() was called
  TimedOut,           ///< no accepted packet for the token's timeout
  HandshakeTimedOut,  ///< no answer to the handshake within handshake_timeout
  Denied,             ///< ConnectionDeny (see last_deny_reason())
  ServerDisconnected, ///< Disconnect from the server
  BadSession,         ///< the server sent a scene or checkpoint that does not load
  GameMismatch,       ///< the server runs another game or game version than the client's
};
const char* to_string(State state);
const char* to_string(CloseReason reason);

/// Things the game may want to react to, in the order they happened.
struct ClientEvent {
  enum class Kind : uint8_t {
    Connected,      ///< ConnectionAccept: a = player id
    Playing,        ///< ready to render (a = the tick it starts at)
    Closed,         ///< a = CloseReason, b = the server's DenyReason (Denied, ServerDisconnected)
    Reconnecting,   ///< a time-out will be followed by a new attempt
    Desync,         ///< a confirmed tick's hash disagreed: tick, a = ours, b = server's
    ServerDesync,   ///< the server reported our HashReport disagreed: tick
    Resync,         ///< asked the server for a new checkpoint
    PlayerJoined,   ///< a = player id
    PlayerLeft,     ///< a = player id
    /// The server's ConnectionAccept names another game spec than the client's (the
    /// client then closes with GameMismatch): a = the server's spec hash, b = ours,
    /// text = "server runs <name> (spec <hash>), this client <name> (spec <hash>)".
    GameMismatch,
  };
  Kind kind = Kind::Connected;
  uint64_t tick = 0;
  uint64_t a = 0;
  uint64_t b = 0;
  std::string text;  ///< GameMismatch only
};

/// At most this many game event records wait in the client for take_game_events();
/// past it the newest are dropped and counted (ClientStats::game_event_queue_drops).
inline constexpr size_t kMaxQueuedGameEvents = 4096;

struct ClientConfig {
  Mode mode = Mode::Interpolate;
  InterpolationConfig interpolation;
  PredictionConfig prediction;  ///< prediction.rules: the server's rules (default: sandbox)
  ClockConfig clock;
  protocol::ConnectionConfig connection;
  double handshake_resend = 0.1;    ///< s between repeated handshake packets
  double handshake_timeout = 5.0;   ///< s per attempt
  bool auto_reconnect = true;       ///< after a time-out (not after a deny or disconnect)
  double reconnect_delay = 0.5;     ///< s between a time-out and the next attempt
  bool resync_on_desync = true;     ///< ask for a new checkpoint after a hash mismatch
  /// The client's own cap on its snapshot budget, kbit/s (ClientHello.max_kbps); 0 = the
  /// server's --client-kbps. The server never gives more than its own.
  uint32_t max_kbps = 0;
  /// Fresh tokens for reconnect attempts (a matchmaking call in a game); when unset, the
  /// client reuses its token, which works from the same socket until the token expires.
  std::function<std::optional<protocol::ConnectToken>()> token_source;
  /// Input for a tick; when unset, the frame last given to set_input() is used. The
  /// client's game (its input layout, its events, and in predicted mode its rules) is
  /// prediction.rules' spec, else the sandbox's; a client closes with GameMismatch when
  /// the server names a game whose spec hash differs, in either mode.
  std::function<game::InputFrame(uint64_t tick)> input_source;
};

/// The world description's messages (docs/client-sdk.md, "World description").
struct DescriptionStats {
  uint64_t messages = 0;        ///< BodyAdded / BodyRemoved messages applied
  uint64_t bodies_added = 0;    ///< bodies announced (catch-up included)
  uint64_t bodies_removed = 0;  ///< removals applied to a described body
  uint64_t dropped = 0;         ///< messages refused by the decode or past a bound
  uint64_t incomplete = 0;      ///< bodies announced without all of their geometry
};

struct ClientStats {
  uint64_t connects = 0;            ///< ConnectionAccepts received
  uint64_t reconnects = 0;          ///< connects after the first
  uint64_t timeouts = 0;
  uint64_t snapshots_received = 0;  ///< decoded (whole-world and partial)
  uint64_t interest_left = 0;       ///< bodies the server said left this client's interest
  uint64_t frames_received = 0;     ///< ServerInputFrames accepted
  uint64_t inputs_sent = 0;         ///< distinct input ticks produced and sent
  uint64_t inputs_late = 0;         ///< predicted mode: the server applied something else at their tick
  uint64_t inputs_skipped = 0;      ///< ticks the client produced no input for (it fell behind)
  uint64_t first_input_tick = 0;    ///< the session's first tick an input was produced for (0 = none)
  uint64_t checkpoint_tick = 0;     ///< predicted mode: tick of the newest checkpoint loaded
  uint64_t batches_sent = 0;
  uint64_t hash_reports_sent = 0;
  uint64_t server_desyncs = 0;      ///< MatchEvent{DesyncDetected} about us
  uint64_t resyncs = 0;
  uint64_t extrapolated_poses = 0;  ///< pose() answers that were extrapolated
  uint64_t bytes_sent = 0;          ///< UDP payload, all datagrams
  uint64_t bytes_received = 0;
  double playing_seconds = 0;       ///< time spent in Playing
  uint64_t game_events_received = 0;  ///< GameEvents messages decoded (interpolate mode)
  /// GameEvents messages dropped: a failed decode or a stale tick (also in drops(), by
  /// reason).
  uint64_t game_events_dropped = 0;
  uint64_t game_event_queue_drops = 0;  ///< records dropped because the queue was full
  PredictionStats prediction;       ///< predicted mode (accumulated over checkpoints)
  DescriptionStats description;     ///< the world description (over every session)
};

class Client {
 public:
  Client(std::unique_ptr<Transport> transport, ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Starts connecting with `token` (its first server address must be the transport's).
  void connect(const protocol::ConnectToken& token, double now);
  /// Sends Disconnect (three datagrams) and closes; no reconnect follows.
  void disconnect(double now);
  /// Does everything that is due at `now`. Call every frame; never blocks.
  void update(double now);

  /// The input used for ticks produced from now on (when no input_source is set).
  void set_input(const game::InputFrame& frame);
  /// ClientConfig::max_kbps from now on: the cap is sent in ClientHello, so it takes
  /// effect from the next connect or reconnect.
  void set_max_kbps(uint32_t kbps);

  /// Pose of a body for rendering at local time `now`: interpolated at the render time
  /// (interpolate mode), or the predicted pose (predict mode; the snapshot pose until
  /// the prediction runs). nullopt when the body is unknown.
  std::optional<BodyPose> pose(uint32_t body, double now);
  /// The interpolated pose at an explicit server tick (tests, replays, debug views).
  std::optional<BodyPose> pose_at_tick(uint32_t body, double tick) const;
  /// The server tick being rendered at `now` in interpolate mode.
  double render_tick(double now) const;

  State state() const;
  Mode mode() const;
  CloseReason close_reason() const;
  uint32_t player_id() const;
  /// Whether the server admitted this client as a spectator (the role its token was minted
  /// with): it is sent the match like any client, plays no one, and its inputs are not sent
  /// (its batches carry only acknowledgements).
  bool spectating() const;
  uint32_t tick_rate() const;
  std::vector<ClientEvent> take_events();
  /// The game events reported since the last call, oldest first (see GameEventRecord;
  /// docs/client-sdk.md, "Game events"). Interpolating: the server's, confirmed, each tick
  /// once in tick order. Predicting: the predicted steps' events as predicted and the
  /// confirmed match's as confirmed (in tick order, each tick once).
  std::vector<GameEventRecord> take_game_events();
  /// The client's game spec (the rules it was configured with, else the sandbox's).
  const game::GameSpec& game_spec() const;
  /// The game the server named in its last ConnectionAccept, and its spec hash ("" and
  /// 0 before one, or from a server that names none).
  const std::string& server_game() const;
  uint64_t server_game_spec_hash() const;
  const ClientStats& stats() const;
  /// Drops of the client's own state machine plus the connection's packet layer.
  protocol::DropCounters drops() const;
  const ClockSync& clock() const;
  const SnapshotBuffer& snapshots() const;
  /// Every body of the match the client knows of, by id: the scene's (from the scene
  /// block) and those the server announced since (BodyAdded / BodyRemoved), each with its
  /// motion type, the game's kind and its colliders. The same in both modes: a
  /// predicting client's is the server's confirmed world, not its prediction. A body in
  /// a snapshot (or the prediction) may be missing here for a moment, until its
  /// announcement arrives; draw the bodies listed here (docs/client-sdk.md, "World
  /// description"). Empty until the scene has loaded; the last session's stays after a
  /// close, until the next connection attempt.
  const protocol::WorldDescription& world() const;
  /// Grows whenever world() changes (never goes back, across sessions too).
  uint64_t world_version() const;
  /// The predictor in predicted mode once a checkpoint is loaded, else nullptr.
  const Predictor* predictor() const;
  /// Connection statistics (RTT, loss) of the current connection, if any.
  std::optional<protocol::ConnectionStats> connection_stats() const;
  /// The server tick estimated at the last update (0 before ConnectionAccept).
  double server_tick_estimate() const;
  /// The newest tick the client's own input has been produced for.
  uint64_t last_input_tick() const;

  /// Test hook (predicted mode): flips a bit of the confirmed state; see Predictor.
  bool perturb_for_test();
  /// The transport (e.g. to reach a ConditionedTransport's outage control).
  Transport& transport();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Mints a development-mode token (development_token_key()) — what keel-bot does
/// without --token-key. Valid for `ttl` seconds from the current wall clock.
keel::Expected<protocol::ConnectToken> mint_token_for(const protocol::TokenKey& key, uint64_t client_id,
                                                     uint64_t match_id, const std::string& server_address,
                                                     uint64_t ttl_seconds = 3600, uint32_t timeout_seconds = 10);

}  // namespace keel::client
