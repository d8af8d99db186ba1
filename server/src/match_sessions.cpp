// The per-client session state machine of docs/protocol.md ("Session"): admission,
// what each state accepts (anything else is dropped as type_not_allowed), the scene and
// checkpoint blocks, inputs, hash reports, time-outs and disconnects.
#include "match_host.h"

#include <keel/protocol/messages.h>
#include <keel/replay/format.h>

#include <algorithm>

namespace keel::server {

namespace kp = keel::protocol;
namespace fb = keel::protocol::fb;

const char* to_string(SessionState s) {
  switch (s) {
    case SessionState::Accepted: return "accepted";
    case SessionState::Syncing: return "syncing";
    case SessionState::Playing: return "playing";
    case SessionState::Closed: return "closed";
  }
  return "unknown";
}

namespace {

std::vector<uint8_t> accept_message(uint32_t client_index, uint32_t player, uint32_t tick_rate, uint64_t tick,
                                    const game::GameSpec& spec, bool spectator) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = fb::CreateConnectionAcceptDirect(fbb, kp::kProtocolVersion, client_index, player, tick_rate, tick,
                                               spec.name.c_str(), game::spec_hash(spec), spectator);
  return kp::finish_message(fbb, fb::Body::ConnectionAccept, body.Union());
}

std::vector<uint8_t> block_info(uint8_t kind, uint64_t tick, size_t size) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = fb::CreateBlockInfo(fbb, kind, tick, static_cast<uint32_t>(size));
  return kp::finish_message(fbb, fb::Body::BlockInfo, body.Union());
}

std::vector<uint8_t> disconnect_message(fb::DenyReason reason) {
  flatbuffers::FlatBufferBuilder fbb(32);
  auto body = fb::CreateDisconnect(fbb, reason);
  return kp::finish_message(fbb, fb::Body::Disconnect, body.Union());
}

std::vector<uint8_t> event_message(fb::MatchEventKind kind, uint64_t tick, uint32_t player,
                                   uint64_t expected = 0, uint64_t reported = 0) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = fb::CreateMatchEvent(fbb, kind, tick, player, expected, reported);
  return kp::finish_message(fbb, fb::Body::MatchEvent, body.Union());
}

}  // namespace

// What the server holds for a client is bounded by its own figure and by the server's
// shared budget: clients send inputs (under 2 KB a message) and small control messages,
// so unreliable messages are capped at 16 KiB, partial ones at 64 KiB, and large blocks
// are refused unless the game asked for them.
kp::ConnectionConfig MatchHost::client_connection_config(const ServerOptions& options, Metrics& metrics) {
  kp::ConnectionConfig c;
  c.max_unreliable_message = 16u << 10;
  c.max_reassembly_bytes = 64u << 10;
  c.max_receive_block_bytes = options.client_block_bytes;
  c.max_held_bytes = options.client_memory_bytes;
  if (options.client_block_bytes > 0) {
    // The block's decompressed bytes (doubling as they grow), its early fragments and
    // the decompression window come on top.
    c.max_held_bytes += 3 * options.client_block_bytes + (9u << 20);
  }
  c.shared_budget = &metrics.client_memory;
  metrics.client_memory_per_client_limit.store(c.max_held_bytes);
  return c;
}

void MatchHost::take_admissions(std::vector<Admission>& admissions, Now now) {
  for (Admission& a : admissions) open_session(a, now);
}

void MatchHost::take_releases(const std::vector<Router::Key>& releases) {
  for (const Router::Key& key : releases) {
    if (Session* s = find_session(key.first, key.second)) close(*s, "replaced", std::nullopt);
  }
}

// The allowance of a client that has not yet proven itself (session.h): every datagram
// to it is checked against what it has sent us.
bool MatchHost::may_send(Session& s, size_t bytes) {
  if (s.proven) return true;
  if (s.unproven_allowance < static_cast<double>(bytes)) {
    services_.metrics.drop(ServerDrop::SendWithheld);
    return false;
  }
  s.unproven_allowance -= static_cast<double>(bytes);
  return true;
}

void MatchHost::open_session(Admission& a, Now now) {
  const uint32_t player = static_cast<uint32_t>(a.client.client_id);
  const bool spectator = a.client.role == kp::ClientRole::Spectator;
  for (Session& old : sessions_) {
    if (old.state == SessionState::Closed || old.socket != a.socket || old.endpoint != a.from) continue;
    if (old.client_key == a.client.keys.receive && a.client.challenge_sequence <= old.issued_through) {
      // The same token from the same address while its session lives, answering a
      // challenge issued before the session was accepted: the client resent its request,
      // got two challenges and answered both. One session; it takes the route the second
      // answer was given (the old id was replaced). A newer challenge means the client
      // sent a new request after it was admitted, i.e. it started over: the loop below
      // replaces the session.
      old.route = a.route;
      session_count_.fetch_sub(1);
      if (a.client.role == kp::ClientRole::Spectator) spectator_count_.fetch_sub(1);
      return;
    }
  }
  for (Session& old : sessions_) {
    if (old.state == SessionState::Closed) continue;
    // A fresh handshake from the same address (another token, or the same token
    // restarted): the client restarted or reconnected. The old session goes silently (the address is the new one's now).
    if (old.socket == a.socket && old.endpoint == a.from) {
      close(old, "replaced", std::nullopt);
      continue;
    }
    // The same player again from elsewhere (a reconnect with a fresh token): the new,
    // authenticated address wins; the old session leaves first so the match sees
    // leave-then-join. A spectator token never displaces a player of the same id (nor
    // the reverse): the two roles are apart.
    if (old.player == player && old.spectator == spectator) close(old, "replaced", fb::DenyReason::Kicked);
  }
  uint32_t index = 0;
  while (std::any_of(sessions_.begin(), sessions_.end(), [&](const Session& s) {
    return s.state != SessionState::Closed && s.client_index == index;
  })) {
    ++index;
  }
  Session& s = sessions_.emplace_back(snapshot_config_, interest_config_, connection_config_);
  s.player = player;
  s.spectator = spectator;
  s.client_index = index;
  s.socket = a.socket;
  s.endpoint = a.from;
  s.address = a.client.address;
  s.route = a.route;
  s.client_key = a.client.keys.receive;
  s.issued_through = a.client.issued_through;
  s.unproven_allowance = static_cast<double>(a.handshake_bytes);
  s.timeout = services_.options.idle_timeout;
  if (a.client.timeout_seconds > 0) s.timeout = std::min<double>(s.timeout, a.client.timeout_seconds);
  s.conn.set_keys(a.client.keys);
  s.rate_tokens = services_.options.max_packets_per_second;
  s.budget_bytes = services_.options.client_kbps * 125.0 * 0.25;
  s.bucket_time = now.s();
  s.last_heard = now.s();
  services_.metrics.players.fetch_add(1);
  if (spectator) services_.metrics.spectators.fetch_add(1);
  services_.metrics.connections.fetch_add(1);
  send_control(s, accept_message(index, player, tick_rate_, match_.tick(), match_.spec(), spectator));
  // A spectator is no player of the match: the game never hears of it, so it is in no
  // recording either.
  if (!spectator) {
    pending_events_.push_back({game::PlayerEvent::Kind::Join, player});
    broadcast_event(fb::MatchEventKind::PlayerJoined, player);
  }
  services_.log.info("client_joined", {{"match", id_}, {"player", player}, {"client_index", index},
                                       {"spectator", spectator}, {"address", s.address}, {"tick", match_.tick()}});
}

Session* MatchHost::find_session(uint32_t socket, const Udp::endpoint& from) {
  for (Session& s : sessions_) {
    if (s.state != SessionState::Closed && s.socket == socket && s.endpoint == from) return &s;
  }
  return nullptr;
}

void MatchHost::receive(Datagram& d, Now now) {
  Session* s = find_session(d.socket, d.from);
  if (s == nullptr) {
    if (d.bytes.empty()) return;  // a resent response for a session already gone
    services_.metrics.drop(ServerDrop::UnknownAddress);
    return;
  }
  if (d.bytes.empty()) {
    // The client resent its handshake response (our ConnectionAccept may have been lost):
    // it may be answered with as many bytes again.
    if (!s->proven) s->unproven_allowance += static_cast<double>(d.earned);
    return;
  }
  // Only authenticated packets spend the budget, so packets spoofed with this client's
  // address cannot starve it; a flood is still cut off before decryption.
  if (s->rate_tokens < 1.0) {
    services_.metrics.drop(ServerDrop::RateLimited);
    return;
  }
  kp::DropCounters before = s->conn.drops();
  uint64_t accepted_before = s->conn.stats().packets_received;
  s->conn.receive(d.bytes, now.s());
  services_.metrics.drops_delta(before, s->conn.drops());
  // A packet can authenticate and still carry a chunk that is dropped (a resent reliable
  // message already delivered): the good chunks count, so judge by the packet counter.
  if (s->conn.stats().packets_received == accepted_before) return;
  s->proven = true;  // it holds the keys and receives at this address
  s->rate_tokens -= 1.0;
  s->last_heard = now.s();
  s->bytes_received += d.bytes.size();
  std::vector<uint8_t>& m = message_buffer_;  // reused: taking messages allocates nothing
  while (s->state != SessionState::Closed) {
    if (s->conn.take(kp::Channel::Control, m)) handle_control(*s, m);
    else if (s->conn.take(kp::Channel::Input, m)) handle_input(*s, m);
    else if (s->conn.take(kp::Channel::Snapshot, m) || s->conn.take(kp::Channel::Frames, m) || s->conn.take_block()) {
      services_.metrics.drop(kp::DropReason::TypeNotAllowed);  // server-to-client channels
    } else {
      break;
    }
  }
}

void MatchHost::handle_control(Session& s, std::span<const uint8_t> bytes) {
  const fb::Message* m = nullptr;
  kp::DropReason r = kp::check_message(bytes, m);
  if (r != kp::DropReason::None) {
    services_.metrics.drop(r);
    return;
  }
  switch (m->body_type()) {
    case fb::Body::ClientHello:
      on_hello(s, *m->body_as_ClientHello());
      return;
    case fb::Body::Disconnect:
      close(s, "client_disconnected", std::nullopt);
      return;
    case fb::Body::HashReport:
      if (s.state == SessionState::Playing) {
        on_hash_report(s, *m->body_as_HashReport());
        return;
      }
      break;
    default:
      break;
  }
  services_.metrics.drop(kp::DropReason::TypeNotAllowed);
  services_.log.debug("message_not_allowed", {{"match", id_}, {"player", s.player},
                                              {"state", to_string(s.state)},
                                              {"type", fb::EnumNameBody(m->body_type())}});
}

void MatchHost::handle_input(Session& s, std::span<const uint8_t> bytes) {
  const fb::Message* m = nullptr;
  kp::DropReason r = kp::check_message(bytes, m);
  if (r != kp::DropReason::None) {
    services_.metrics.drop(r);
    return;
  }
  if (m->body_type() != fb::Body::InputBatch || s.state == SessionState::Accepted) {
    services_.metrics.drop(kp::DropReason::TypeNotAllowed);
    return;
  }
  const fb::InputBatch& batch = *m->body_as_InputBatch();
  s.snapshots.on_ack(batch.ack_snapshot_tick());
  if (s.frames_on) s.frames.on_ack(batch.ack_input_frame_tick());
  if (s.state != SessionState::Playing) return;  // Syncing: acknowledgements only
  // A spectator's batches are how its acknowledgements travel (a batch holds at least one
  // frame); the frames in them play no one and are not kept.
  if (s.spectator) return;
  std::vector<std::pair<uint64_t, game::PlayerInput>> fresh;
  const uint64_t tick = match_.tick();
  const uint64_t clamped_before = s.input_rx.views_clamped();
  r = s.input_rx.receive(match_.input_layout(), batch, tick, fresh);
  if (r != kp::DropReason::None) {
    services_.metrics.drop(r);
    return;
  }
  if (const uint64_t clamped = s.input_rx.views_clamped() - clamped_before; clamped != 0) {
    // A view from the future or older than any history: clamped (protocol.md, "View stamps").
    services_.metrics.views_clamped.fetch_add(clamped, std::memory_order_relaxed);
    if (services_.log.enabled(LogLevel::Debug)) services_.log.debug("views clamped", {{"player", s.player}, {"count", clamped}});
  }
  if (services_.log.enabled(LogLevel::Debug)) {
    services_.log.debug("inputs", {{"player", s.player}, {"tick", tick}, {"first", batch.first_tick()},
                                   {"count", batch.count()}, {"fresh", fresh.size()}});
  }
  for (const auto& [t, q] : fresh) {
    if (t < tick) services_.metrics.drop(ServerDrop::Late);
    else if (t > tick + kp::InputReceiver::kMaxAhead) services_.metrics.drop(kp::DropReason::OutOfRange);
    else s.inputs[t] = q;
  }
}

void MatchHost::on_hello(Session& s, const fb::ClientHello& hello) {
  bool predict = hello.mode() == fb::ClientMode::Predict;
  // A client may lower its own snapshot budget (a slow link), never raise it.
  const double server_kbps = services_.options.client_kbps;
  s.kbps = hello.max_kbps() != 0 ? std::min<double>(server_kbps, hello.max_kbps()) : server_kbps;
  s.snapshots.set_budget(s.kbps * 125.0);
  switch (s.state) {
    case SessionState::Accepted:
      s.predict = predict;
      send_control(s, block_info(0, 0, scene_binary_.size()));
      if (!s.conn.send_block(scene_binary_)) {
        close(s, "scene_too_large", fb::DenyReason::Unknown);
        return;
      }
      s.state = SessionState::Syncing;
      s.sync = SyncStep::Scene;
      send_description_catch_up(s);
      return;
    case SessionState::Syncing:
      // The checkpoint follows the scene anyway; a resync during a transfer waits for it.
      s.predict = predict;
      if (!predict && s.sync == SyncStep::CheckpointDue) s.sync = SyncStep::Scene;
      return;
    case SessionState::Playing:
      s.predict = predict;
      s.frames_on = false;
      if (predict) {
        s.state = SessionState::Syncing;
        s.sync = SyncStep::CheckpointDue;
      }
      return;
    case SessionState::Closed:
      return;
  }
}

void MatchHost::advance_sync(Session& s) {
  if (s.state != SessionState::Syncing || s.conn.block_in_progress()) return;
  if (s.sync == SyncStep::Scene) {
    s.sync = s.predict ? SyncStep::CheckpointDue : SyncStep::None;
  }
  // Never a checkpoint at tick 0: an acknowledgement of frame tick 0 would be
  // indistinguishable from "none yet".
  if (s.sync == SyncStep::CheckpointDue && match_.tick() > 0) {
    std::vector<uint8_t> state = match_.save_state();
    send_control(s, block_info(1, match_.tick(), state.size()));
    if (!s.conn.send_block(state)) {
      close(s, "checkpoint_too_large", fb::DenyReason::Unknown);
      return;
    }
    s.frames = kp::FrameWindow{match_.input_layout()};
    s.frames_on = true;  // every tick stepped from here on goes to this client
    s.sync = SyncStep::Checkpoint;
    return;
  }
  if (s.sync == SyncStep::Checkpoint) s.sync = SyncStep::None;
  if (s.sync == SyncStep::None) {
    s.state = SessionState::Playing;
    services_.log.debug("client_playing", {{"match", id_}, {"player", s.player}, {"predict", s.predict}});
  }
}

void MatchHost::on_hash_report(Session& s, const fb::HashReport& report) {
  std::optional<uint64_t> ours = hash_at(report.tick());
  if (!ours) {
    services_.metrics.drop(report.tick() > match_.tick() ? kp::DropReason::OutOfRange : kp::DropReason::Stale);
    return;
  }
  if (*ours == report.state_hash()) {
    services_.metrics.hash_checks.fetch_add(1);
    return;
  }
  services_.metrics.desyncs.fetch_add(1);
  // Every desync is counted; a client reporting thousands must not flood the log.
  if (++s.desyncs_logged <= 10) services_.log.warn("desync", {{"match", id_}, {"player", s.player}, {"tick", report.tick()},
                                {"server_hash", replay::hex_hash(*ours)},
                                {"client_hash", replay::hex_hash(report.state_hash())}});
  send_control(s, event_message(fb::MatchEventKind::DesyncDetected, report.tick(), s.player, *ours,
                                report.state_hash()));
  write_desync_dump(s, report.tick(), *ours, report.state_hash());
}

void MatchHost::send_control(Session& s, std::vector<uint8_t> message) {
  if (s.state == SessionState::Closed) return;
  // A full reliable window means the client has stopped acknowledging: end it rather
  // than let its backlog grow.
  if (!s.conn.send(kp::Channel::Control, message)) close(s, "control_backlog", fb::DenyReason::Kicked);
}

void MatchHost::broadcast_event(fb::MatchEventKind kind, uint32_t player) {
  std::vector<uint8_t> msg = event_message(kind, match_.tick(), player);
  for (Session& s : sessions_) {
    if (s.state == SessionState::Playing && s.player != player) send_control(s, msg);
  }
}

void MatchHost::close(Session& s, const std::string& reason, std::optional<fb::DenyReason> tell) {
  if (s.state == SessionState::Closed) return;
  if (tell) {
    // The Disconnect goes in five datagrams of its own: nothing is resent after this, and
    // a client that misses every copy (1 in 130,000 at 10 % loss) times out, then
    // reconnects into whatever the match id holds by then.
    std::vector<uint8_t> msg = disconnect_message(*tell);
    for (int i = 0; i < 5; ++i) {
      s.conn.send(kp::Channel::Control, msg);
      for (const auto& d : s.conn.update(now_s_ + i * 1e-4)) {
        if (may_send(s, d.size())) services_.sender.send(s.socket, s.endpoint, d);
      }
    }
  }
  s.state = SessionState::Closed;
  s.close_reason = reason;
  services_.router.remove({s.socket, s.endpoint}, s.route);
  services_.metrics.players.fetch_sub(1);
  session_count_.fetch_sub(1);
  if (s.spectator) {
    services_.metrics.spectators.fetch_sub(1);
    spectator_count_.fetch_sub(1);
  } else {
    pending_events_.push_back({game::PlayerEvent::Kind::Leave, s.player});
    broadcast_event(fb::MatchEventKind::PlayerLeft, s.player);
  }
  const auto& st = s.conn.stats();
  services_.log.info("client_left", {{"match", id_}, {"player", s.player}, {"reason", reason},
                                     {"address", s.address}, {"rtt_ms", st.rtt_ms},
                                     {"loss", st.loss}, {"dropped", s.conn.drops().total()}});
}

void MatchHost::expire_sessions(Now now) {
  for (Session& s : sessions_) {
    if (s.state != SessionState::Closed && now.s() - s.last_heard > s.timeout) {
      close(s, "timed_out", fb::DenyReason::TimedOut);
    }
  }
}

void MatchHost::remove_closed() {
  std::erase_if(sessions_, [](const Session& s) { return s.state == SessionState::Closed; });
}

}  // namespace keel::server
