// The client's session state machine (docs/protocol.md, "Session: what flows after the
// handshake"). One update(now) reads the socket, dispatches each message by channel and
// state (anything unexpected is dropped and counted), then does what is due: handshake
// resends, time-outs and reconnects, one input per server tick, prediction, sends.
#include <keel/client/client.h>
#include "description_receiver.h"
#include <keel/games/sandbox.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/game_events.h>
#include <keel/protocol/handshake.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>
#include <keel/scene/scene.h>
#include <keel/protocol/snapshot_stream.h>
#include <keel/protocol/interest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>

namespace keel::client {
namespace {

using protocol::Channel;
using protocol::DropReason;

constexpr size_t kMaxDatagramsPerUpdate = 4096;
constexpr size_t kMaxPendingBlockInfos = 4;
constexpr size_t kMaxPendingBlocks = 2;
constexpr size_t kMaxEarlyFrames = 128;   // frames held while a checkpoint is on its way
constexpr uint64_t kMaxTicksPerUpdate = 8;  // inputs produced in one update at most
constexpr uint64_t kMaxCatchUpTicks = 30;  // further behind than this: skip ahead
constexpr double kResyncRepeat = 2.0;      // s before a resync request is repeated
constexpr size_t kRecentInputs = 256;      // own inputs kept to seed a new predictor

// Adds a finished predictor's counts to a running total (a resync replaces the predictor).
void accumulate(PredictionStats& into, const PredictionStats& s) {
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

}  // namespace

const char* to_string(State state) {
  switch (state) {
    case State::Disconnected: return "disconnected";
    case State::Connecting: return "connecting";
    case State::Accepted: return "accepted";
    case State::Playing: return "playing";
    case State::Reconnecting: return "reconnecting";
  }
  return "unknown";
}

const char* to_string(CloseReason reason) {
  switch (reason) {
    case CloseReason::None: return "none";
    case CloseReason::Requested: return "requested";
    case CloseReason::TimedOut: return "timed_out";
    case CloseReason::HandshakeTimedOut: return "handshake_timed_out";
    case CloseReason::Denied: return "denied";
    case CloseReason::ServerDisconnected: return "server_disconnected";
    case CloseReason::BadSession: return "bad_session";
    case CloseReason::GameMismatch: return "game_mismatch";
  }
  return "unknown";
}

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

  // Handshake and lifecycle.
  void reset_session();
  void start_attempt(double now);
  void close(CloseReason reason);
  void on_timeout(double now);
  void send_handshake(double now);
  void handle_datagram(std::span<const uint8_t> d, double now);
  void handle_handshake(const protocol::PacketHeader& h, std::span<const uint8_t> d, double now);
  void tick_lifecycle(double now);

  // Messages.
  void drain_messages(double now);
  void on_control(std::span<const uint8_t> bytes, double now);
  void on_accept(const protocol::fb::ConnectionAccept& m, double now);
  void on_block_info(const protocol::fb::BlockInfo& m);
  void on_match_event(const protocol::fb::MatchEvent& m);
  bool game_matches(const protocol::fb::ConnectionAccept& m, double now);
  void on_game_events(const protocol::fb::GameEvents& m);
  void count_description(DropReason r);
  void pair_blocks(double now);
  void on_scene(std::span<const uint8_t> block, double now);
  void on_checkpoint(const BlockAnnouncement& info, std::span<const uint8_t> block, double now);
  void on_snapshot(std::span<const uint8_t> bytes, double now);
  void on_partial_snapshot(const protocol::fb::PartialSnapshot& message, double now);
  void snapshot_arrived(uint64_t tick, double now);
  void on_frame(std::span<const uint8_t> bytes, double now);
  void enter_playing(uint64_t tick);

  // Playing.
  void produce_inputs(double now);
  void send_batch();
  void run_prediction(double now);
  void request_resync(double now);
  bool send_control(std::vector<uint8_t> message);
  void flush(double now);
  void send_disconnect(double now);
  void refresh_stats();
};

// --- lifecycle ------------------------------------------------------------------------

void Client::Impl::reset_session() {
  if (connection) {
    // Keep the closing connection's drop counters in the client's totals.
    const auto& c = connection->drops();
    for (size_t i = 0; i < drops.counts.size(); ++i) drops.counts[i] += c.counts[i];
  }
  connection.reset();
  response.clear();
  scene.reset();
  snapshot_receiver.reset();
  interest_receiver.reset();
  block_infos.clear();
  blocks.clear();
  frame_receiver.reset();
  early_frames.clear();
  if (predictor) accumulate(prediction_base, predictor->stats());
  predictor.reset();
  awaiting_checkpoint = false;
  input_sender = protocol::InputSender{layout};
  inputs_started = false;
  recent_inputs.clear();
  // A new session may be of a new match whose ticks start again; within a session the
  // server sends each tick's events once and a new checkpoint is never older.
  any_event_tick = false;
  last_event_tick = 0;
  last_confirmed_event_tick = 0;
  clock = ClockSync(config.clock);
}

void Client::Impl::start_attempt(double now) {
  last_deny = 0;
  reset_session();
  buffer.clear();  // kept after a close, so the last view can still be drawn
  description.reset();  // likewise: the new session's scene describes its world
  state = State::Connecting;
  close_reason = CloseReason::None;
  request = protocol::build_connection_request(*token);
  attempt_start = now;
  last_handshake_send = -1e9;
  send_handshake(now);
}

void Client::Impl::close(CloseReason reason) {
  reset_session();
  state = State::Disconnected;
  close_reason = reason;
  event(ClientEvent::Kind::Closed, 0, static_cast<uint64_t>(reason), last_deny);
}

void Client::Impl::on_timeout(double now) {
  ++stats.timeouts;
  if (!config.auto_reconnect) {
    close(CloseReason::TimedOut);
    return;
  }
  reset_session();
  state = State::Reconnecting;
  close_reason = CloseReason::TimedOut;
  reconnect_at = now + config.reconnect_delay;
  event(ClientEvent::Kind::Reconnecting);
}

void Client::Impl::send_handshake(double now) {
  const std::vector<uint8_t>& d = response.empty() ? request : response;
  transport->send(d, now);
  last_handshake_send = now;
}

void Client::Impl::tick_lifecycle(double now) {
  switch (state) {
    case State::Connecting:
      if (now - attempt_start > config.handshake_timeout) {
        if (ever_accepted && config.auto_reconnect) {
          on_timeout(now);  // still unreachable: keep trying
        } else {
          close(CloseReason::HandshakeTimedOut);
        }
      } else if (now - last_handshake_send >= config.handshake_resend) {
        send_handshake(now);
      }
      break;
    case State::Accepted:
    case State::Playing:
      if (now - last_receive > std::max<double>(1.0, token->timeout_seconds)) on_timeout(now);
      break;
    case State::Reconnecting:
      if (now >= reconnect_at) {
        if (config.token_source) {
          if (auto fresh = config.token_source()) token = std::move(*fresh);
        }
        start_attempt(now);
      }
      break;
    case State::Disconnected:
      break;
  }
}

// --- datagrams ------------------------------------------------------------------------

void Client::Impl::handle_datagram(std::span<const uint8_t> d, double now) {
  protocol::PacketHeader h;
  DropReason r = protocol::read_header(d, h);
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  if (h.type != protocol::PacketType::Connected) {
    handle_handshake(h, d, now);
    return;
  }
  if (!connection) {
    drops.add(DropReason::TypeNotAllowed);
    return;
  }
  // The connection counts its own drops (auth, replay, malformed chunks).
  if (connection->receive(d, now) == DropReason::None) last_receive = now;
}

void Client::Impl::handle_handshake(const protocol::PacketHeader& h, std::span<const uint8_t> d,
                                    double now) {
  // Handshake packets are unauthenticated: only the handshake state listens to them.
  if (state != State::Connecting) {
    drops.add(DropReason::TypeNotAllowed);
    return;
  }
  if (h.type == protocol::PacketType::ConnectionChallenge) {
    // The first challenge of an attempt is the one answered: a resent request draws a
    // second, newer challenge, and answering that too would make the server replace the
    // session it opened for the first answer with one this client's connection state
    // does not know (the client would wait in Accepted forever). The first answer is
    // resent until the server accepts it.
    if (!response.empty()) {
      drops.add(DropReason::Duplicate);
      return;
    }
    std::vector<uint8_t> answer;
    DropReason r = protocol::answer_challenge(d, answer);
    if (r != DropReason::None) {
      drops.add(r);
      return;
    }
    response = std::move(answer);
    if (!connection) {
      connection = std::make_unique<protocol::Connection>(config.connection);
      connection->set_keys(protocol::client_keys(*token));
      last_receive = now;
    }
    send_handshake(now);
    return;
  }
  if (h.type == protocol::PacketType::ConnectionDeny) {
    protocol::PacketType type{};
    const protocol::fb::Message* m = nullptr;
    std::vector<uint8_t> storage;
    DropReason r = protocol::read_handshake(d, type, m, storage);
    if (r != DropReason::None) {
      drops.add(r);
      return;
    }
    last_deny = static_cast<uint64_t>(m->body_as_ConnectionDeny()->reason());
    close(CloseReason::Denied);
    return;
  }
  drops.add(DropReason::TypeNotAllowed);
}

// --- messages -------------------------------------------------------------------------

void Client::Impl::drain_messages(double now) {
  if (!connection) return;
  std::vector<uint8_t>& message = message_buffer;  // reused: taking messages allocates nothing
  while (connection) {
    if (!connection->take(Channel::Control, message)) break;
    on_control(message, now);  // may close the connection
  }
  while (connection) {
    auto b = connection->take_block();
    if (!b) break;
    blocks.push_back(std::move(*b));
    if (blocks.size() > kMaxPendingBlocks) {
      blocks.pop_front();
      drops.add(DropReason::BlockInvalid);
    }
    pair_blocks(now);
  }
  while (connection) {
    if (!connection->take(Channel::Snapshot, message)) break;
    on_snapshot(message, now);
  }
  while (connection) {
    if (!connection->take(Channel::Frames, message)) break;
    on_frame(message, now);
  }
  while (connection) {
    auto m = connection->take(Channel::Input);  // the server never sends on it
    if (!m) break;
    drops.add(DropReason::TypeNotAllowed);
  }
}

void Client::Impl::on_control(std::span<const uint8_t> bytes, double now) {
  const protocol::fb::Message* m = nullptr;
  DropReason r = protocol::check_message(bytes, m);
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  using protocol::fb::Body;
  bool session = state == State::Accepted || state == State::Playing;
  switch (m->body_type()) {
    case Body::ConnectionAccept:
      if (state == State::Connecting) {
        on_accept(*m->body_as_ConnectionAccept(), now);
        return;
      }
      break;
    case Body::BlockInfo:
      if (session) {
        on_block_info(*m->body_as_BlockInfo());
        pair_blocks(now);
        return;
      }
      break;
    case Body::MatchEvent:
      if (session) {
        on_match_event(*m->body_as_MatchEvent());
        return;
      }
      break;
    case Body::GameEvents:
      if (session) {
        on_game_events(*m->body_as_GameEvents());
        return;
      }
      break;
    case Body::BodyAdded:
      if (session) {
        count_description(description.on_added(*m->body_as_BodyAdded()));
        return;
      }
      break;
    case Body::BodyRemoved:
      if (session) {
        count_description(description.on_removed(*m->body_as_BodyRemoved()));
        return;
      }
      break;
    case Body::Disconnect:
      last_deny = static_cast<uint64_t>(m->body_as_Disconnect()->reason());
      close(CloseReason::ServerDisconnected);
      return;
    default:
      break;
  }
  drops.add(DropReason::TypeNotAllowed);
}

void Client::Impl::on_accept(const protocol::fb::ConnectionAccept& m, double now) {
  if (!scene::is_supported_tick_rate(m.tick_rate())) {
    drops.add(DropReason::OutOfRange);
    close(CloseReason::BadSession);
    return;
  }
  if (!game_matches(m, now)) return;
  state = State::Accepted;
  player_id = m.player_id();
  tick_rate = m.tick_rate();
  clock.start(m.server_tick(), tick_rate, now);
  newest_server_tick = m.server_tick();
  ++stats.connects;
  if (ever_accepted) ++stats.reconnects;
  ever_accepted = true;
  event(ClientEvent::Kind::Connected, m.server_tick(), player_id);
  flatbuffers::FlatBufferBuilder fbb(64);
  auto mode = config.mode == Mode::Predict ? protocol::fb::ClientMode::Predict
                                           : protocol::fb::ClientMode::Interpolate;
  auto hello = protocol::fb::CreateClientHello(fbb, mode, false, config.max_kbps);
  send_control(protocol::finish_message(fbb, protocol::fb::Body::ClientHello, hello.Union()));
}

// A printable copy of a name from the network (at most kMaxNameBytes; other bytes as '?').
std::string printable_name(const flatbuffers::String* s) {
  std::string out;
  if (s == nullptr) return out;
  for (size_t i = 0; i < s->size() && i < game::kMaxNameBytes; ++i) {
    char ch = s->c_str()[i];
    out.push_back(ch >= 0x20 && ch < 0x7f ? ch : '?');
  }
  return out;
}

std::string hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[size_t(i)] = digits[v & 15];
  return out;
}

bool Client::Impl::game_matches(const protocol::fb::ConnectionAccept& m, double now) {
  server_game = printable_name(m.game());
  server_spec_hash = m.game_spec_hash();
  // A server that names no game (hash 0) cannot be checked. Every other mismatch closes,
  // interpolating clients' too: their inputs are encoded in their game's layout, which
  // the server would read as its own game's.
  if (server_spec_hash == 0 || server_spec_hash == spec_hash) return true;
  std::string text = "server runs " + (server_game.empty() ? std::string("an unnamed game") : server_game) +
                     " (spec " + hex64(server_spec_hash) + "), this client " + spec.name + " (spec " +
                     hex64(spec_hash) + ")";
  event(ClientEvent::Kind::GameMismatch, m.server_tick(), server_spec_hash, spec_hash, std::move(text));
  // The server has a session for us now: say goodbye rather than leave it to time out.
  state = State::Accepted;
  send_disconnect(now);
  close(CloseReason::GameMismatch);
  return false;
}

void Client::Impl::on_game_events(const protocol::fb::GameEvents& m) {
  // A predicting client reports the confirmed match's own events, which are these.
  if (config.mode == Mode::Predict) return;
  // (A server of another game was refused at ConnectionAccept; one that names no game
  // and runs another sends events that fail the decode below.)
  uint64_t tick = 0;
  std::vector<game::GameEvent> decoded;
  DropReason r = protocol::decode_game_events(spec, m, tick, decoded);
  if (r == DropReason::None && any_event_tick && tick <= last_event_tick) r = DropReason::Stale;
  if (r != DropReason::None) {
    drops.add(r);
    ++stats.game_events_dropped;
    return;
  }
  ++stats.game_events_received;
  any_event_tick = true;
  last_event_tick = tick;
  for (game::GameEvent& e : decoded) queue_game_event({tick, std::move(e), false});
}

void Client::Impl::count_description(DropReason r) {
  if (r != DropReason::None) drops.add(r);
}

void Client::Impl::on_block_info(const protocol::fb::BlockInfo& m) {
  bool predict = config.mode == Mode::Predict;
  if (m.kind() > 1 || (m.kind() == 1 && !predict) || m.size() == 0 ||
      m.size() > config.connection.max_receive_block_bytes) {
    drops.add(DropReason::OutOfRange);
    return;
  }
  block_infos.push_back({m.kind(), m.tick(), m.size()});
  if (block_infos.size() > kMaxPendingBlockInfos) {
    block_infos.pop_front();
    drops.add(DropReason::BlockInvalid);
  }
}

void Client::Impl::on_match_event(const protocol::fb::MatchEvent& m) {
  using protocol::fb::MatchEventKind;
  switch (m.kind()) {
    case MatchEventKind::PlayerJoined:
      event(ClientEvent::Kind::PlayerJoined, m.tick(), m.player());
      break;
    case MatchEventKind::PlayerLeft:
      event(ClientEvent::Kind::PlayerLeft, m.tick(), m.player());
      break;
    case MatchEventKind::DesyncDetected:
      ++stats.server_desyncs;
      event(ClientEvent::Kind::ServerDesync, m.tick(), m.reported_hash(), m.expected_hash());
      break;
  }
}

void Client::Impl::pair_blocks(double now) {
  // BlockInfo (control) and its block (block channel) travel separately and may arrive
  // in either order; each block belongs to the oldest announcement not yet matched.
  while (!block_infos.empty() && !blocks.empty() && connection) {
    BlockAnnouncement info = block_infos.front();
    std::vector<uint8_t> block = std::move(blocks.front());
    block_infos.pop_front();
    blocks.pop_front();
    if (block.size() != info.size) {
      drops.add(DropReason::BlockInvalid);
      continue;
    }
    if (info.kind == 0) {
      on_scene(block, now);
    } else {
      on_checkpoint(info, block, now);
    }
  }
}

void Client::Impl::on_scene(std::span<const uint8_t> block, double /*now*/) {
  if (scene) return;  // sent again with a resync: the scene of a match never changes
  auto parsed = scene::parse_scene_binary(block, "server scene");
  if (!parsed) {
    close(CloseReason::BadSession);
    return;
  }
  protocol::SnapshotConfig sc = protocol::SnapshotConfig::for_scene(*parsed);
  if (!sc.valid()) {
    close(CloseReason::BadSession);
    return;
  }
  scene = std::move(*parsed);
  description.on_scene(*scene);
  snapshot_config = sc;
  snapshot_receiver = std::make_unique<protocol::SnapshotReceiver>(sc);
  interest_receiver = std::make_unique<protocol::InterestReceiver>(sc);
  if (config.mode == Mode::Interpolate) {
    enter_playing(newest_server_tick);
  } else {
    awaiting_checkpoint = true;
  }
}

void Client::Impl::on_checkpoint(const BlockAnnouncement& info, std::span<const uint8_t> block,
                                 double now) {
  if (!scene) {
    drops.add(DropReason::TypeNotAllowed);
    return;
  }
  auto p = Predictor::create(*scene, block, info.tick, player_id, config.prediction);
  if (!p) {
    close(CloseReason::BadSession);
    return;
  }
  if (predictor) accumulate(prediction_base, predictor->stats());
  predictor = std::move(*p);
  stats.checkpoint_tick = info.tick;
  frame_receiver.emplace(info.tick);
  awaiting_checkpoint = false;
  // No clock observation here: a large checkpoint may have been seconds in flight.
  newest_server_tick = std::max(newest_server_tick, info.tick);
  // Inputs already sent for ticks the new checkpoint has not reached are still ours.
  for (auto it = recent_inputs.lower_bound(info.tick); it != recent_inputs.end(); ++it) {
    predictor->set_local_input(it->first, it->second);
  }
  std::deque<std::vector<uint8_t>> early = std::move(early_frames);
  early_frames.clear();
  if (state != State::Playing) enter_playing(info.tick);
  for (auto& f : early) on_frame(f, now);
}

void Client::Impl::enter_playing(uint64_t tick) {
  state = State::Playing;
  heard_since_playing = false;
  event(ClientEvent::Kind::Playing, tick);
}

void Client::Impl::on_snapshot(std::span<const uint8_t> bytes, double now) {
  const protocol::fb::Message* m = nullptr;
  DropReason r = protocol::check_message(bytes, m);
  if (r == DropReason::None && m->body_type() == protocol::fb::Body::PartialSnapshot && interest_receiver) {
    on_partial_snapshot(*m->body_as_PartialSnapshot(), now);
    return;
  }
  if (r == DropReason::None && (m->body_type() != protocol::fb::Body::Snapshot || !snapshot_receiver)) {
    r = DropReason::TypeNotAllowed;
  }
  if (r == DropReason::None) r = snapshot_receiver->receive(*m->body_as_Snapshot());
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  const protocol::QuantSnapshot& q = snapshot_receiver->latest();
  std::vector<sim::BodyState> bodies;
  bodies.reserve(q.bodies.size());
  for (const protocol::QuantBody& b : q.bodies) bodies.push_back(protocol::dequantize(b, snapshot_config));
  buffer.add(q.tick, std::move(bodies), now, tick_rate);
  snapshot_arrived(q.tick, now);
}

// Interest management: the bodies this snapshot updates get a sample each, those that
// left the client's interest are dropped from the buffer (and so from pose()).
void Client::Impl::on_partial_snapshot(const protocol::fb::PartialSnapshot& message, double now) {
  DropReason r = interest_receiver->receive(message);
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  const protocol::PartialUpdate& u = interest_receiver->last();
  std::vector<sim::BodyState> bodies;
  bodies.reserve(u.bodies.size());
  for (const protocol::QuantBody& b : u.bodies) bodies.push_back(protocol::dequantize(b, snapshot_config));
  buffer.add_partial(u.tick, bodies, u.left, now, tick_rate);
  stats.interest_left += u.left.size();
  snapshot_arrived(u.tick, now);
}

void Client::Impl::snapshot_arrived(uint64_t tick, double now) {
  ++stats.snapshots_received;
  heard_since_playing = true;
  newest_server_tick = std::max(newest_server_tick, tick);
  clock.observe(tick, now);
}

void Client::Impl::on_frame(std::span<const uint8_t> bytes, double now) {
  const protocol::fb::Message* m = nullptr;
  DropReason r = protocol::check_message(bytes, m);
  std::vector<protocol::InputFrameMessage> frames;
  if (r == DropReason::None && config.mode == Mode::Predict &&
      m->body_type() == protocol::fb::Body::ServerInputFrameRun) {
    r = protocol::decode_input_frame_run(layout, *m->body_as_ServerInputFrameRun(), frames);
  } else if (r == DropReason::None) {
    r = DropReason::TypeNotAllowed;
  }
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  if (!frame_receiver || !predictor) {
    // The checkpoint is still on its way: keep the newest few to replay after it. They
    // already tell the time: the server may be well past the checkpoint's tick.
    uint64_t tick = frames.back().tick;
    if (tick + 1 > newest_server_tick) {
      newest_server_tick = tick + 1;
      clock.observe(tick + 1, now);
    }
    early_frames.emplace_back(bytes.begin(), bytes.end());
    if (early_frames.size() > kMaxEarlyFrames) early_frames.pop_front();
    return;
  }
  for (protocol::InputFrameMessage& frame : frames) {
    r = frame_receiver->receive(frame);
    if (r == DropReason::Duplicate) continue;  // a run repeats frames until they are acked
    if (r != DropReason::None) {
      drops.add(r);
      continue;
    }
    ++stats.frames_received;
    heard_since_playing = true;
    newest_server_tick = std::max(newest_server_tick, frame.tick + 1);
    clock.observe(frame.tick + 1, now);  // the frame of tick t was sent after stepping t
    if (!predictor->add_confirmed(std::move(frame))) drops.add(DropReason::OutOfRange);
  }
}

// --- playing --------------------------------------------------------------------------

bool Client::Impl::send_control(std::vector<uint8_t> message) {
  if (!connection || !connection->send(Channel::Control, message)) return false;
  return true;
}

void Client::Impl::produce_inputs(double now) {
  if (!heard_since_playing) return;
  // The server has stepped at least to the newest tick it showed us, so an input must
  // be for that tick plus the lead even while the estimate is still catching up (at the
  // start of a session the clock has seen no frame or snapshot yet).
  uint64_t known = newest_server_tick + static_cast<uint64_t>(std::ceil(clock.lead_ticks()));
  uint64_t target = std::max(clock.input_tick(now), known);
  // The first tick the server may still be waiting for: past the newest contiguous
  // confirmed frame (predicting) or the newest snapshot (interpolating).
  uint64_t floor_tick = newest_server_tick;
  if (config.mode == Mode::Predict) floor_tick = frame_receiver ? frame_receiver->ack_tick() + 1 : 0;
  if (!inputs_started || target > next_input_tick + kMaxCatchUpTicks) {
    // Start, or skip ahead after a stall: the skipped ticks get the server's repeat rule.
    if (inputs_started) stats.inputs_skipped += target - next_input_tick;
    input_sender = protocol::InputSender{layout};
    next_input_tick = std::max(target, floor_tick);
    if (!inputs_started) stats.first_input_tick = next_input_tick;
    inputs_started = true;
  } else if (next_input_tick < floor_tick) {
    // Behind the server (the clock estimate lagged): those ticks are stepped already.
    stats.inputs_skipped += floor_tick - next_input_tick;
    input_sender.on_ack(floor_tick - 1);
    next_input_tick = floor_tick;
  }
  uint64_t produced = 0;
  while (next_input_tick <= target && produced < kMaxTicksPerUpdate) {
    uint64_t tick = next_input_tick++;
    game::InputFrame frame = config.input_source ? config.input_source(tick) : current_input;
    game::InputFrame q = frame;
    layout.sanitize(q);  // what the server will apply: the prediction uses the same codes
    // An interpolating client shows the world where Client::render_tick puts it: that is
    // what the player aimed at, so it goes with the frame for the server's lag
    // compensation. A predicting client shows its prediction of this very tick.
    protocol::WireView view;
    if (config.mode == Mode::Interpolate) {
      const double behind = 0.5 * clock.rtt() + buffer.delay_seconds();
      view = protocol::view_at(tick, clock.server_tick(now) - behind * tick_rate);
    }
    input_sender.add(tick, q, view);
    if (predictor) predictor->set_local_input(tick, q);
    recent_inputs[tick] = q;
    if (recent_inputs.size() > kRecentInputs) recent_inputs.erase(recent_inputs.begin());
    ++stats.inputs_sent;
    ++produced;
  }
  if (produced > 0) send_batch();
}

void Client::Impl::send_batch() {
  // A server sends one kind of snapshot; the newest decoded of either is acknowledged.
  uint64_t snapshot_ack = std::max(snapshot_receiver ? snapshot_receiver->ack_tick() : 0,
                                   interest_receiver ? interest_receiver->ack_tick() : 0);
  uint64_t frame_ack = frame_receiver ? frame_receiver->ack_tick() : 0;
  // The server treats a tick as held once a confirmed frame (predicting) or a snapshot
  // (interpolating) shows it stepped; inputs at or before it need not be resent.
  input_sender.on_ack(config.mode == Mode::Predict ? frame_ack : snapshot_ack);
  std::vector<uint8_t> batch = input_sender.build_batch(snapshot_ack, frame_ack);
  if (batch.empty() || !connection) return;
  if (connection->send(Channel::Input, batch)) ++stats.batches_sent;
}

void Client::Impl::request_resync(double now) {
  if (awaiting_checkpoint && now - last_resync < kResyncRepeat) return;
  flatbuffers::FlatBufferBuilder fbb(64);
  auto hello = protocol::fb::CreateClientHello(fbb, protocol::fb::ClientMode::Predict, true, config.max_kbps);
  if (!send_control(protocol::finish_message(fbb, protocol::fb::Body::ClientHello, hello.Union()))) return;
  // Frames after this belong to the new checkpoint's chain: hold them until it arrives.
  awaiting_checkpoint = true;
  last_resync = now;
  frame_receiver.reset();
  early_frames.clear();
  ++stats.resyncs;
  event(ClientEvent::Kind::Resync, predictor ? predictor->confirmed_tick() : 0);
}

void Client::Impl::run_prediction(double now) {
  if (!predictor) return;
  if (awaiting_checkpoint && now - last_resync >= kResyncRepeat) request_resync(now);
  std::vector<HashCheck> checks;
  std::vector<GameEventRecord> records;
  uint64_t present = inputs_started ? next_input_tick : predictor->confirmed_tick();
  predictor->advance(present, checks, &records);
  for (GameEventRecord& rec : records) {
    if (!rec.predicted) {
      // A resync's checkpoint is never older than the confirmed tick, but each
      // confirmed tick is reported once even if one were.
      if (rec.tick < last_confirmed_event_tick) continue;
      last_confirmed_event_tick = rec.tick;
    }
    queue_game_event(std::move(rec));
  }
  bool desync = false;
  for (const HashCheck& c : checks) {
    if (c.report) {
      flatbuffers::FlatBufferBuilder fbb(64);
      auto report = protocol::fb::CreateHashReport(fbb, c.tick, c.hash);
      if (send_control(protocol::finish_message(fbb, protocol::fb::Body::HashReport, report.Union()))) {
        ++stats.hash_reports_sent;
      }
    }
    if (c.mismatch) {
      event(ClientEvent::Kind::Desync, c.tick, c.hash, c.expected);
      desync = true;
    }
  }
  if ((desync && config.resync_on_desync) || predictor->needs_resync()) request_resync(now);
}

void Client::Impl::flush(double now) {
  if (!connection || state == State::Connecting) return;  // the server has no connection yet
  for (auto& d : connection->update(now)) transport->send(d, now);
}

void Client::Impl::refresh_stats() {
  const TransportStats& t = transport->stats();
  stats.bytes_sent = t.bytes_sent;
  stats.bytes_received = t.bytes_received;
  stats.prediction = prediction_base;
  if (predictor) accumulate(stats.prediction, predictor->stats());
  stats.inputs_late = stats.prediction.local_inputs_late;
  stats.description = description.stats();
}

// --- public ---------------------------------------------------------------------------

Client::Client(std::unique_ptr<Transport> transport, ClientConfig config)
    : impl_(std::make_unique<Impl>(std::move(transport), std::move(config))) {}

Client::~Client() = default;

void Client::connect(const protocol::ConnectToken& token, double now) {
  impl_->token = token;
  impl_->ever_accepted = false;
  impl_->start_attempt(now);
}

void Client::Impl::send_disconnect(double now) {
  if (!connection || (state != State::Accepted && state != State::Playing)) return;
  flatbuffers::FlatBufferBuilder fbb(32);
  auto d = protocol::fb::CreateDisconnect(fbb, protocol::fb::DenyReason::Unknown);
  send_control(protocol::finish_message(fbb, protocol::fb::Body::Disconnect, d.Union()));
  // Three datagrams, because nothing will resend it: each call past the resend
  // interval puts the unacknowledged message into a fresh packet.
  double step = std::max(1.0, config.connection.resend_interval * 10);
  for (int i = 0; i < 3; ++i) flush(now + step * i);
}

void Client::disconnect(double now) {
  Impl& s = *impl_;
  s.last_deny = 0;
  s.send_disconnect(now);
  s.close(CloseReason::Requested);
}

void Client::update(double now) {
  Impl& s = *impl_;
  if (s.state == State::Playing && s.last_update >= 0 && now > s.last_update) {
    s.stats.playing_seconds += now - s.last_update;
  }
  s.last_update = now;
  std::vector<std::vector<uint8_t>> datagrams;
  s.transport->receive(datagrams, now, kMaxDatagramsPerUpdate);
  for (const auto& d : datagrams) {
    s.handle_datagram(d, now);
    s.drain_messages(now);
  }
  s.tick_lifecycle(now);
  if (s.state == State::Playing && s.connection) {
    auto cs = s.connection->stats();
    s.clock.set_link(cs.rtt_ms / 1000.0, cs.jitter_ms / 1000.0, now);
    s.produce_inputs(now);
    s.run_prediction(now);
  } else if (s.state == State::Accepted && s.connection) {
    auto cs = s.connection->stats();
    s.clock.set_link(cs.rtt_ms / 1000.0, cs.jitter_ms / 1000.0, now);
  }
  s.flush(now);
  s.refresh_stats();
}

void Client::set_input(const game::InputFrame& frame) { impl_->current_input = frame; }

double Client::render_tick(double now) const {
  const Impl& s = *impl_;
  double behind = 0.5 * s.clock.rtt() + s.buffer.delay_seconds();
  return s.clock.server_tick(now) - behind * s.tick_rate;
}

std::optional<BodyPose> Client::pose(uint32_t body, double now) {
  Impl& s = *impl_;
  if (s.config.mode == Mode::Predict && s.predictor) {
    if (auto b = s.predictor->predicted_body(body)) return BodyPose{b->position, b->rotation, false, false};
  }
  auto p = s.buffer.sample(body, render_tick(now));
  if (p && p->extrapolated) ++s.stats.extrapolated_poses;
  return p;
}

std::optional<BodyPose> Client::pose_at_tick(uint32_t body, double tick) const {
  return impl_->buffer.sample(body, tick);
}

State Client::state() const { return impl_->state; }
Mode Client::mode() const { return impl_->config.mode; }
CloseReason Client::close_reason() const { return impl_->close_reason; }
uint32_t Client::player_id() const { return impl_->player_id; }
uint32_t Client::tick_rate() const { return impl_->tick_rate; }
const ClientStats& Client::stats() const { return impl_->stats; }
const ClockSync& Client::clock() const { return impl_->clock; }
const SnapshotBuffer& Client::snapshots() const { return impl_->buffer; }
const protocol::WorldDescription& Client::world() const { return impl_->description.world(); }
uint64_t Client::world_version() const { return impl_->description.version(); }
const Predictor* Client::predictor() const { return impl_->predictor.get(); }
Transport& Client::transport() { return *impl_->transport; }
double Client::server_tick_estimate() const {
  return impl_->clock.started() ? impl_->clock.server_tick(impl_->last_update) : 0.0;
}
uint64_t Client::last_input_tick() const {
  return impl_->inputs_started && impl_->next_input_tick > 0 ? impl_->next_input_tick - 1 : 0;
}

std::vector<ClientEvent> Client::take_events() {
  std::vector<ClientEvent> out;
  out.swap(impl_->events);
  return out;
}

std::vector<GameEventRecord> Client::take_game_events() {
  std::vector<GameEventRecord> out(std::make_move_iterator(impl_->game_events.begin()),
                                   std::make_move_iterator(impl_->game_events.end()));
  impl_->game_events.clear();
  return out;
}

const game::GameSpec& Client::game_spec() const { return impl_->spec; }
const std::string& Client::server_game() const { return impl_->server_game; }
uint64_t Client::server_game_spec_hash() const { return impl_->server_spec_hash; }

protocol::DropCounters Client::drops() const {
  protocol::DropCounters d = impl_->drops;
  if (impl_->connection) {
    const auto& c = impl_->connection->drops();
    for (size_t i = 0; i < d.counts.size(); ++i) d.counts[i] += c.counts[i];
  }
  return d;
}

std::optional<protocol::ConnectionStats> Client::connection_stats() const {
  if (!impl_->connection) return std::nullopt;
  return impl_->connection->stats();
}

bool Client::perturb_for_test() {
  return impl_->predictor != nullptr && impl_->predictor->perturb_for_test();
}

keel::Expected<protocol::ConnectToken> mint_token_for(const protocol::TokenKey& key, uint64_t client_id,
                                                     uint64_t match_id, const std::string& server_address,
                                                     uint64_t ttl_seconds, uint32_t timeout_seconds) {
  protocol::MintParams p;
  p.client_id = client_id;
  p.match_id = match_id;
  p.server_addresses = {server_address};
  p.ttl_seconds = ttl_seconds;
  p.timeout_seconds = timeout_seconds;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return protocol::mint_token(key, p, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now).count()));
}

}  // namespace keel::client
