// Client::Impl: the client's session state and its parts, private to the SDK. Client
// (client.cpp) is the wiring: update() hands datagrams to the transport part, which
// passes each message to the session, interpolation or prediction part by channel, then
// runs the lifecycle, the clock's inputs and the prediction. Each part lives in the file
// named after it (client_transport.cpp, client_session.cpp, client_interpolation.cpp,
// client_clock.cpp, client_prediction.cpp) and is the group of Impl's functions declared
// under its name below; the components they drive (Transport, ClockSync, SnapshotBuffer,
// Predictor) are the SDK's public classes.
#pragma once

#include <keel/client/client.h>
#include "description_receiver.h"
#include <keel/games/sandbox.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/game_events.h>
#include <keel/protocol/handshake.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/snapshot_stream.h>
#include <keel/protocol/interest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>

namespace keel::client {

using protocol::Channel;
using protocol::DropReason;

namespace detail {

// Bounds on what one update does and what a session holds, whatever the server sends.
inline constexpr size_t kMaxDatagramsPerUpdate = 4096;
inline constexpr size_t kMaxPendingBlockInfos = 4;
inline constexpr size_t kMaxPendingBlocks = 2;
inline constexpr size_t kMaxEarlyFrames = 128;   // frames held while a checkpoint is on its way
inline constexpr uint64_t kMaxTicksPerUpdate = 8;  // inputs produced in one update at most
inline constexpr uint64_t kMaxCatchUpTicks = 30;  // further behind than this: skip ahead
inline constexpr double kResyncRepeat = 2.0;      // s before a resync request is repeated
inline constexpr size_t kRecentInputs = 256;      // own inputs kept to seed a new predictor

// Adds a finished predictor's counts to a running total (a resync replaces the predictor).
inline void accumulate(PredictionStats& into, const PredictionStats& s) {
  into.confirmed_ticks += s.confirmed_ticks;
  into.hash_checks += s.hash_checks;
  into.hash_mismatches += s.hash_mismatches;
  into.rollbacks += s.rollbacks;
  into.rollback_ticks += s.rollback_ticks;
  into.max_rollback_ticks = std::max(into.max_rollback_ticks, s.max_rollback_ticks);
  into.last_rollback_ticks = s.last_rollback_ticks;
  into.predicted_ticks += s.predicted_ticks;
  into.stalls += s.stalls;
  into.local_inputs_applied += s.local_inputs_applied;
  into.local_inputs_late += s.local_inputs_late;
  into.rollbacks_across_state_changes += s.rollbacks_across_state_changes;
  for (size_t t = 0; t < s.rollbacks_across_event.size(); ++t) into.rollbacks_across_event[t] += s.rollbacks_across_event[t];
  into.predicted_event_records += s.predicted_event_records;
  into.confirmed_event_records += s.confirmed_event_records;
  if (into.first_mismatch_tick == 0) into.first_mismatch_tick = s.first_mismatch_tick;
  if (!s.last_dump_path.empty()) into.last_dump_path = s.last_dump_path;
}

struct BlockAnnouncement {
  uint8_t kind = 0;
  uint64_t tick = 0;
  uint32_t size = 0;
};

}  // namespace detail

using detail::BlockAnnouncement;

struct Client::Impl {
  Impl(std::unique_ptr<Transport> t, ClientConfig c)
      : transport(std::move(t)), config(std::move(c)), buffer(config.interpolation), clock(config.clock) {
    spec = config.prediction.rules ? config.prediction.rules()->spec() : games::SandboxRules::make_spec();
    spec_hash = game::spec_hash(spec);
    layout = spec.input;
    input_sender = protocol::InputSender{layout};
  }

  // --- configuration and connection -------------------------------------------------
  std::unique_ptr<Transport> transport;
  ClientConfig config;
  State state = State::Disconnected;
  CloseReason close_reason = CloseReason::None;
  uint64_t last_deny = 0;  // DenyReason of the last ConnectionDeny / Disconnect
  std::optional<protocol::ConnectToken> token;
  std::vector<uint8_t> request;
  std::vector<uint8_t> response;
  bool ever_accepted = false;
  double attempt_start = 0;
  double last_handshake_send = -1e9;
  double reconnect_at = 0;
  double last_receive = 0;
  double last_update = -1;
  std::unique_ptr<protocol::Connection> connection;

  // --- session ------------------------------------------------------------------------
  uint32_t player_id = 0;
  bool spectator = false;  // the server admitted this client as a spectator (its token's role)
  uint32_t tick_rate = 60;
  std::optional<sim::SceneDef> scene;
  protocol::SnapshotConfig snapshot_config;
  std::unique_ptr<protocol::SnapshotReceiver> snapshot_receiver;
  std::unique_ptr<protocol::InterestReceiver> interest_receiver;  // partial snapshots
  SnapshotBuffer buffer;
  std::deque<BlockAnnouncement> block_infos;
  std::deque<std::vector<uint8_t>> blocks;
  std::vector<uint8_t> message_buffer;  // the message being handled (its memory reused)
  std::optional<protocol::FrameReceiver> frame_receiver;
  std::deque<std::vector<uint8_t>> early_frames;
  std::unique_ptr<Predictor> predictor;
  DescriptionReceiver description;  // the world description (scene block + BodyAdded/Removed)
  bool awaiting_checkpoint = false;
  double last_resync = -1e9;
  protocol::InputSender input_sender;
  game::GameSpec spec;      // the client's game: config.prediction.rules' spec, else the sandbox's
  uint64_t spec_hash = 0;   // game::spec_hash(spec)
  game::Layout layout;      // spec.input
  std::string server_game;  // what the last ConnectionAccept named
  uint64_t server_spec_hash = 0;
  // Interpolate mode: the newest tick whose GameEvents were reported this session.
  uint64_t last_event_tick = 0;
  bool any_event_tick = false;
  // Predict mode: the newest confirmed tick whose events were reported this session,
  // across the predictors of its checkpoints.
  uint64_t last_confirmed_event_tick = 0;
  bool inputs_started = false;
  // Inputs start once a snapshot or frame has shown where the server is: the scene and
  // checkpoint were taken a while before they arrived, and the accept's tick is older.
  bool heard_since_playing = false;
  uint64_t next_input_tick = 0;
  uint64_t newest_server_tick = 0;  // newest tick a snapshot or frame showed stepped
  game::InputFrame current_input;
  std::map<uint64_t, game::InputFrame> recent_inputs;  // for a predictor after a resync
  ClockSync clock;

  // --- reporting ----------------------------------------------------------------------
  ClientStats stats;
  PredictionStats prediction_base;  // finished predictors (before a resync)
  protocol::DropCounters drops;
  std::vector<ClientEvent> events;
  std::deque<GameEventRecord> game_events;

  void event(ClientEvent::Kind kind, uint64_t tick = 0, uint64_t a = 0, uint64_t b = 0, std::string text = {}) {
    if (events.size() < 4096) events.push_back({kind, tick, a, b, std::move(text)});
  }
  void queue_game_event(GameEventRecord record) {
    if (game_events.size() >= kMaxQueuedGameEvents) {
      ++stats.game_event_queue_drops;
      return;
    }
    game_events.push_back(std::move(record));
  }

  // Each group below is one part of the client, in the file named after it; a part
  // reads the session's fields above and calls the other parts only through these.

  // transport (client_transport.cpp): the handshake, the lifecycle, datagrams in and out.
  void reset_session();
  // The server tick an interpolating client shows at `now`: the estimate less half the
  // round trip and the interpolation delay. Drawn poses and the view sent with each input
  // (lag compensation) both come from it.
  double render_tick(double now) const {
    const double behind = 0.5 * clock.rtt() + buffer.delay_seconds();
    return clock.server_tick(now) - behind * tick_rate;
  }
  void start_attempt(double now);
  void close(CloseReason reason);
  void on_timeout(double now);
  void send_handshake(double now);
  void handle_datagram(std::span<const uint8_t> d, double now);
  void handle_handshake(const protocol::PacketHeader& h, std::span<const uint8_t> d, double now);
  void tick_lifecycle(double now);
  void drain_messages(double now);  // the connection's messages, each to its channel's part
  bool send_control(std::vector<uint8_t> message);
  void flush(double now);
  void send_disconnect(double now);

  // session (client_session.cpp): control messages, blocks, entering Playing.
  void on_control(std::span<const uint8_t> bytes, double now);
  void on_accept(const protocol::fb::ConnectionAccept& m, double now);
  void on_block_info(const protocol::fb::BlockInfo& m);
  void on_match_event(const protocol::fb::MatchEvent& m);
  bool game_matches(const protocol::fb::ConnectionAccept& m, double now);
  void on_game_events(const protocol::fb::GameEvents& m);
  void count_description(DropReason r);
  void pair_blocks(double now);
  void on_scene(std::span<const uint8_t> block, double now);
  void enter_playing(uint64_t tick);

  // interpolation (client_interpolation.cpp): snapshots into the buffer.
  void on_snapshot(std::span<const uint8_t> bytes, double now);
  void on_partial_snapshot(const protocol::fb::PartialSnapshot& message, double now);
  void snapshot_arrived(uint64_t tick, double now);

  // clock (client_clock.cpp): one input per server tick, and the input batch.
  void produce_inputs(double now);
  void send_batch();

  // prediction (client_prediction.cpp): checkpoints, confirmed frames, the predictor.
  void on_checkpoint(const BlockAnnouncement& info, std::span<const uint8_t> block, double now);
  void on_frame(std::span<const uint8_t> bytes, double now);
  void run_prediction(double now);
  void request_resync(double now);

  // client.cpp, the wiring.
  void refresh_stats();
};

}  // namespace keel::client
