// An in-process stand-in for keel-server, built from the protocol library's pieces, so
// the client's session state machine can be tested without sockets or sleeps: time is
// simulated and the two ends share a loopback "network". It follows the session
// contract of docs/protocol.md in the simplest way (one match, development key).
#pragma once

#include <keel/client/transport.h>
#include <keel/protocol/connection.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/game_events.h>
#include <keel/protocol/handshake.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>
#include <keel/scene/scene.h>
#include <keel/protocol/snapshot_stream.h>
#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace keel::client::testing {

inline const char* kFakeServerAddress = "127.0.0.1:40000";

inline uint64_t unix_now() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

/// Two queues of datagrams between one client and the server.
struct Wire {
  std::deque<std::vector<uint8_t>> to_server;
  std::deque<std::vector<uint8_t>> to_client;
};

/// The client's end of a Wire.
class WireTransport final : public Transport {
 public:
  explicit WireTransport(std::shared_ptr<Wire> wire) : wire_(std::move(wire)) {}
  void send(std::span<const uint8_t> d, double) override {
    ++stats_.datagrams_sent;
    stats_.bytes_sent += d.size();
    wire_->to_server.emplace_back(d.begin(), d.end());
  }
  void receive(std::vector<std::vector<uint8_t>>& out, double, size_t max) override {
    while (!wire_->to_client.empty() && max-- > 0) {
      ++stats_.datagrams_received;
      stats_.bytes_received += wire_->to_client.front().size();
      out.push_back(std::move(wire_->to_client.front()));
      wire_->to_client.pop_front();
    }
  }
  const TransportStats& stats() const override { return stats_; }

 private:
  std::shared_ptr<Wire> wire_;
  TransportStats stats_;
};

class FakeServer {
 public:
  struct BlockOut {
    uint8_t kind = 0;
    uint64_t tick = 0;
    std::vector<uint8_t> bytes;
  };
  struct Peer {
    std::shared_ptr<Wire> wire;
    std::unique_ptr<protocol::Connection> conn;
    uint32_t player = 0;
    bool hello = false;
    bool predict = false;
    bool playing = false;
    bool joined = false;
    uint64_t frames_from = UINT64_MAX;
    std::deque<BlockOut> blocks;
    protocol::FrameWindow window;
    std::unique_ptr<protocol::SnapshotSender> sender;
    protocol::InputReceiver receiver;
    std::map<uint64_t, game::InputFrame> inputs;
    game::InputFrame last;
    std::vector<std::pair<uint64_t, uint64_t>> reports;  // HashReport (tick, hash)
    uint64_t hellos = 0;
    bool said_goodbye = false;  // a Disconnect arrived
    double last_receive = 0;
    uint64_t applied = 0, missing = 0;
  };

  /// A server of `rules` (the sandbox when null).
  explicit FakeServer(const sim::SceneDef& scene, std::unique_ptr<game::Rules> rules = nullptr)
      : handshake_(protocol::development_token_key(), kFakeServerAddress),
        match_(std::move(*game::Match::create(scene, rules ? std::move(rules) : std::make_unique<games::SandboxRules>()))),
        scene_bytes_(scene::scene_to_binary(scene)),
        config_(protocol::SnapshotConfig::for_scene(scene)),
        game_name_(match_.spec().name),
        game_hash_(game::spec_hash(match_.spec())) {}

  /// Connects a client end: the server reads `wire->to_server`.
  void attach(std::shared_ptr<Wire> wire) { wires_.push_back(std::move(wire)); }

  /// Reads every wire, steps the match when a tick is due, sends.
  void update(double now) {
    for (auto& w : wires_) {
      while (!w->to_server.empty()) {
        auto d = std::move(w->to_server.front());
        w->to_server.pop_front();
        on_datagram(w, d, now);
      }
    }
    while (now >= next_tick_time_) {
      step();
      next_tick_time_ += 1.0 / match_.scene().settings.tick_rate;
    }
    for (auto& [wire, p] : peers_) {
      if (!p.conn) continue;
      if (!p.blocks.empty() && !p.conn->block_in_progress()) {
        BlockOut& b = p.blocks.front();
        send_message(p, block_info(b));
        p.conn->send_block(b.bytes);
        p.blocks.pop_front();
      }
      if (p.hello && p.blocks.empty() && !p.conn->block_in_progress()) p.playing = true;
      for (auto& d : p.conn->update(now)) wire->to_client.push_back(std::move(d));
    }
  }

  game::Match& match() { return match_; }
  Peer* peer(const Wire* w) {
    for (auto& [wire, p] : peers_) {
      if (wire.get() == w) return &p;
    }
    return nullptr;
  }
  /// Every tick's hash, by match tick (the frame of tick t carries the hash of t + 1).
  const std::map<uint64_t, uint64_t>& hashes() const { return hashes_; }
  void set_snapshot_every(uint32_t n) { snapshot_every_ = n; }
  /// What ConnectionAccept says the server runs (default: the match's game); a hash of 0
  /// is what a server that names no game sends.
  void advertise(std::string game, uint64_t spec_hash) {
    game_name_ = std::move(game);
    game_hash_ = spec_hash;
  }
  /// Every GameEvents message sent, by the tick it carries (tick after the step).
  const std::map<uint64_t, std::vector<game::GameEvent>>& events_sent() const { return events_sent_; }
  /// Drops everything a client sends (a dead server) while true.
  bool deaf = false;

 private:
  std::vector<uint8_t> block_info(const BlockOut& info) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto b = protocol::fb::CreateBlockInfo(fbb, info.kind, info.tick, static_cast<uint32_t>(info.bytes.size()));
    return protocol::finish_message(fbb, protocol::fb::Body::BlockInfo, b.Union());
  }
  void send_message(Peer& p, const std::vector<uint8_t>& m) { p.conn->send(protocol::Channel::Control, m); }

  void on_datagram(const std::shared_ptr<Wire>& w, const std::vector<uint8_t>& d, double now) {
    if (deaf) return;
    protocol::PacketHeader h;
    if (protocol::read_header(d, h) != protocol::DropReason::None) return;
    std::string from = "client" + std::to_string(reinterpret_cast<uintptr_t>(w.get()));
    if (h.type == protocol::PacketType::ConnectionRequest) {
      std::vector<uint8_t> reply;
      if (handshake_.on_request(d, from, unix_now(), reply) == protocol::DropReason::None) {
        w->to_client.push_back(reply);
      }
      return;
    }
    if (h.type == protocol::PacketType::ConnectionResponse) {
      protocol::AcceptedClient a;
      if (handshake_.on_response(d, from, unix_now(), a) != protocol::DropReason::None) return;
      Peer& p = peers_[w];
      // A response repeated while its session is live is a resend; after a silence it
      // starts a new session (the client timed out and reconnected).
      if (p.conn && p.player == a.client_id && now - p.last_receive < 0.5) return;
      if (p.joined) leaves_.push_back(p.player);
      p = Peer{};
      p.wire = w;
      p.player = static_cast<uint32_t>(a.client_id);
      p.conn = std::make_unique<protocol::Connection>();
      p.conn->set_keys(a.keys);
      p.last_receive = now;
      p.sender = std::make_unique<protocol::SnapshotSender>(config_);
      flatbuffers::FlatBufferBuilder fbb(64);
      auto acc = protocol::fb::CreateConnectionAcceptDirect(fbb, protocol::kProtocolVersion, 0, p.player,
                                                            match_.scene().settings.tick_rate, match_.tick(),
                                                            game_name_.c_str(), game_hash_);
      send_message(p, protocol::finish_message(fbb, protocol::fb::Body::ConnectionAccept, acc.Union()));
      joins_.push_back(p.player);
      p.joined = true;
      return;
    }
    auto it = peers_.find(w);
    if (it == peers_.end() || !it->second.conn) return;
    Peer& p = it->second;
    if (p.conn->receive(d, now) == protocol::DropReason::None) p.last_receive = now;
    while (auto m = p.conn->take(protocol::Channel::Control)) on_control(p, *m);
    while (auto m = p.conn->take(protocol::Channel::Input)) on_input(p, *m);
  }

  void on_control(Peer& p, const std::vector<uint8_t>& bytes) {
    const protocol::fb::Message* m = nullptr;
    if (protocol::check_message(bytes, m) != protocol::DropReason::None) return;
    if (m->body_type() == protocol::fb::Body::ClientHello) {
      auto* hello = m->body_as_ClientHello();
      ++p.hellos;
      p.predict = hello->mode() == protocol::fb::ClientMode::Predict;
      if (!hello->resync()) p.blocks.push_back({0, 0, scene_bytes_});
      if (p.predict) {
        p.blocks.push_back({1, match_.tick(), match_.save_state()});
        p.window = protocol::FrameWindow{match_.input_layout()};
        p.frames_from = match_.tick();
      }
      p.hello = true;
    } else if (m->body_type() == protocol::fb::Body::Disconnect) {
      p.said_goodbye = true;
    } else if (m->body_type() == protocol::fb::Body::HashReport) {
      p.reports.emplace_back(m->body_as_HashReport()->tick(), m->body_as_HashReport()->state_hash());
    }
  }

  void on_input(Peer& p, const std::vector<uint8_t>& bytes) {
    const protocol::fb::Message* m = nullptr;
    if (protocol::check_message(bytes, m) != protocol::DropReason::None) return;
    if (m->body_type() != protocol::fb::Body::InputBatch) return;
    auto* batch = m->body_as_InputBatch();
    std::vector<std::pair<uint64_t, game::PlayerInput>> fresh;
    if (p.receiver.receive(match_.input_layout(), *batch, match_.tick(), fresh) == protocol::DropReason::None) {
      for (auto& [tick, q] : fresh) {
        if (tick >= match_.tick()) p.inputs[tick] = q.frame;
      }
    }
    p.window.on_ack(batch->ack_input_frame_tick());
    p.sender->on_ack(batch->ack_snapshot_tick());
  }

  void step() {
    uint64_t t = match_.tick();
    game::TickInputs in;
    for (uint32_t id : leaves_) in.events.push_back({game::PlayerEvent::Kind::Leave, id});
    for (uint32_t id : joins_) in.events.push_back({game::PlayerEvent::Kind::Join, id});
    leaves_.clear();
    joins_.clear();
    std::map<uint32_t, game::InputFrame> frames;
    for (auto& [w, p] : peers_) {
      if (!p.joined) continue;
      auto it = p.inputs.find(t);
      if (it != p.inputs.end()) {
        p.last = it->second;
        ++p.applied;
      } else {
        ++p.missing;
      }
      p.inputs.erase(p.inputs.begin(), p.inputs.upper_bound(t));
      frames[p.player] = p.last;
    }
    for (auto& [id, f] : frames) in.inputs.push_back({id, f});
    match_.step(in);
    protocol::InputFrameMessage frame{t, match_.hash(), in};
    hashes_[match_.tick()] = frame.state_hash;  // keyed by the state tick, as HashReport
    bool snapshot = match_.tick() % snapshot_every_ == 0;
    protocol::QuantSnapshot q;
    if (snapshot) q = protocol::quantize(protocol::snapshot_bodies(match_.world()), match_.tick(), config_);
    std::vector<uint8_t> events;
    if (!match_.events().empty()) {
      events = protocol::encode_game_events(match_.spec(), match_.tick(), match_.events());
      events_sent_[match_.tick()] = match_.events();
    }
    for (auto& [w, p] : peers_) {
      if (!p.conn) continue;
      if (!events.empty() && p.playing) send_message(p, events);
      if (p.predict && t >= p.frames_from) {
        p.window.add(frame);
        for (const auto& msg : p.window.messages()) p.conn->send(protocol::Channel::Frames, msg);
      }
      if (snapshot && p.playing) {
        auto msg = p.sender->encode(q);
        if (!msg.empty()) p.conn->send(protocol::Channel::Snapshot, msg);
      }
    }
  }

  protocol::ServerHandshake handshake_;
  game::Match match_;
  std::vector<uint8_t> scene_bytes_;
  protocol::SnapshotConfig config_;
  std::vector<std::shared_ptr<Wire>> wires_;
  std::map<std::shared_ptr<Wire>, Peer> peers_;
  std::vector<uint32_t> joins_, leaves_;
  std::map<uint64_t, uint64_t> hashes_;
  std::string game_name_;
  uint64_t game_hash_ = 0;
  std::map<uint64_t, std::vector<game::GameEvent>> events_sent_;
  double next_tick_time_ = 0;
  uint32_t snapshot_every_ = 2;
};

}  // namespace keel::client::testing
