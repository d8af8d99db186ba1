// The session's control messages: the accept (and whether the server runs our game),
// block announcements paired with their blocks (the scene, then checkpoints), match
// events, game events for an interpolating client, and entering Playing. Part of
// Client::Impl (client_impl.h, "session").
#include "client_impl.h"

#include <keel/scene/scene.h>

namespace keel::client {

using namespace detail;

namespace {

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

}  // namespace

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
  spectator = m.spectator();
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

void Client::Impl::enter_playing(uint64_t tick) {
  state = State::Playing;
  heard_since_playing = false;
  event(ClientEvent::Kind::Playing, tick);
}

}  // namespace keel::client
