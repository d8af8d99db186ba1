#include "test_client.h"
#include <keel/games/sandbox.h>

#include <chrono>

namespace keel::test {

namespace kp = keel::protocol;
namespace fb = keel::protocol::fb;

namespace {

asio::ip::udp::endpoint parse(const std::string& text) {
  size_t colon = text.rfind(':');
  std::string host = text.substr(0, colon);
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
  return {asio::ip::make_address(host), static_cast<uint16_t>(std::stoi(text.substr(colon + 1)))};
}

uint64_t unix_now() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

kp::ConnectToken mint_test_token(const TestClientOptions& o) {
  kp::MintParams p;
  p.client_id = o.client_id;
  p.match_id = o.match_id;
  p.server_addresses = o.token_addresses.empty() ? std::vector<std::string>{o.server} : o.token_addresses;
  p.ttl_seconds = 60;
  p.timeout_seconds = o.timeout_seconds;
  p.role = o.role;
  auto t = kp::mint_token(o.key, p, unix_now());
  return *t;
}

TestClient::TestClient(asio::io_context& io, TestClientOptions options)
    : options_(std::move(options)), socket_(io), server_(parse(options_.server)), rng_(options_.seed) {
  socket_.open(server_.protocol());
  socket_.bind({server_.address(), options_.local_port});
  socket_.non_blocking(true);
}

bool TestClient::lose() {
  if (options_.loss <= 0) return false;
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < options_.loss;
}

void TestClient::send_raw(const std::vector<uint8_t>& bytes) {
  asio::error_code ec;
  socket_.send_to(asio::buffer(bytes), server_, 0, ec);
}

void TestClient::send(const std::vector<uint8_t>& bytes) {
  if (sent_.size() < 20000) sent_.push_back(bytes);
  if (lose()) return;
  send_raw(bytes);
}

void TestClient::start(double now) {
  token_ = options_.token ? *options_.token : mint_test_token(options_);
  request_ = kp::build_connection_request(token_);
  send(request_);
  last_handshake_send_ = now;
  next_tick_time_ = now;
}

void TestClient::update(double now) {
  if (disconnected_ || denied_) return;
  receive_all(now);
  if (disconnected_ || denied_) return;
  if (now - last_handshake_send_ > 0.1 && !accepted_) {
    send(conn_ ? response_ : request_);
    last_handshake_send_ = now;
  }
  if (accepted_ && now >= next_tick_time_) {
    client_tick(now);
    next_tick_time_ += 1.0 / tick_rate_;
    if (next_tick_time_ < now) next_tick_time_ = now + 1.0 / tick_rate_;
  }
  if (conn_) {
    for (auto& d : conn_->update(now)) send(d);
  }
}

void TestClient::receive_all(double now) {
  std::vector<uint8_t> buf(65536);
  for (;;) {
    asio::ip::udp::endpoint from;
    asio::error_code ec;
    size_t n = socket_.receive_from(asio::buffer(buf), from, 0, ec);
    if (ec) return;
    bytes_received_ += n;
    if (lose()) continue;
    on_datagram({buf.data(), n}, now);
    if (disconnected_) return;
  }
}

void TestClient::on_datagram(std::span<const uint8_t> bytes, double now) {
  if (bytes.empty()) return;
  auto type = static_cast<kp::PacketType>(bytes[0]);
  if (type == kp::PacketType::ConnectionChallenge && !conn_) {
    if (kp::answer_challenge(bytes, kp::client_keys(token_), response_) != kp::DropReason::None) return;
    conn_.emplace();
    conn_->set_keys(kp::client_keys(token_));
    send(response_);
    last_handshake_send_ = now;
    return;
  }
  if (type == kp::PacketType::ConnectionDeny) {
    // Only a deny sealed with this token's key counts, as in the client SDK: the tests
    // that wait for one check that the server seals its denies.
    kp::fb::DenyReason reason{};
    if (kp::read_deny(bytes, kp::client_keys(token_), reason) == kp::DropReason::None) denied_ = true;
    return;
  }
  if (type != kp::PacketType::Connected || !conn_) return;
  // Judge by the packet counter: a packet that authenticated may still report a dropped
  // chunk (a resent reliable message), and its other chunks were delivered.
  uint64_t accepted_before = conn_->stats().packets_received;
  conn_->receive(bytes, now);
  if (conn_->stats().packets_received == accepted_before) return;
  while (auto m = conn_->take(kp::Channel::Control)) {
    on_control(*m, now);
    if (disconnected_) return;
  }
  while (auto b = conn_->take_block()) on_block(std::move(*b));
  while (auto m = conn_->take(kp::Channel::Snapshot)) on_snapshot(*m, now);
  while (auto m = conn_->take(kp::Channel::Frames)) on_frame(*m);
}

void TestClient::on_control(std::span<const uint8_t> bytes, double now) {
  const fb::Message* m = nullptr;
  if (kp::check_message(bytes, m) != kp::DropReason::None) return;
  switch (m->body_type()) {
    case fb::Body::ConnectionAccept: {
      const auto* a = m->body_as_ConnectionAccept();
      accepted_ = true;
      player_id_ = a->player_id();
      spectator_ = a->spectator();
      tick_rate_ = a->tick_rate() ? a->tick_rate() : 60;
      accept_tick_ = a->server_tick();
      newest_server_tick_ = a->server_tick();
      newest_server_tick_time_ = now;
      accept_time_ = now;
      flatbuffers::FlatBufferBuilder fbb(32);
      auto body = fb::CreateClientHello(fbb, options_.predict ? fb::ClientMode::Predict : fb::ClientMode::Interpolate, false,
                                        options_.max_kbps);
      conn_->send(kp::Channel::Control, kp::finish_message(fbb, fb::Body::ClientHello, body.Union()));
      break;
    }
    case fb::Body::BlockInfo:
      pending_block_kind_ = m->body_as_BlockInfo()->kind();
      pending_block_tick_ = m->body_as_BlockInfo()->tick();
      break;
    case fb::Body::MatchEvent:
      if (m->body_as_MatchEvent()->kind() == fb::MatchEventKind::DesyncDetected) ++desync_events_;
      break;
    case fb::Body::Disconnect:
      disconnected_ = true;
      disconnect_reason_ = m->body_as_Disconnect()->reason();
      break;
    default:
      break;
  }
}

void TestClient::on_block(std::vector<uint8_t> block) {
  if (!scene_ready_) {
    auto scene = keel::scene::parse_scene_binary(block, "scene block");
    if (!scene) return;
    scene_ = std::move(*scene);
    config_ = kp::SnapshotConfig::for_scene(*scene_);
    snapshot_rx_.emplace(*config_);
    interest_rx_.emplace(*config_);
    scene_ready_ = true;
    return;
  }
  auto match = game::Match::create(*scene_, std::make_unique<games::SandboxRules>());
  if (!match || !match->restore_state(block)) return;
  match_.emplace(std::move(*match));
  ++checkpoints_;
  frame_rx_ = kp::FrameReceiver(match_->tick());
  frames_ahead_.clear();
}

void TestClient::on_snapshot(std::span<const uint8_t> bytes, double now) {
  const fb::Message* m = nullptr;
  if (!snapshot_rx_ || kp::check_message(bytes, m) != kp::DropReason::None) return;
  uint64_t tick = 0;
  if (m->body_type() == fb::Body::PartialSnapshot) {
    // keel-server's interest management: the bodies held are what every partial
    // snapshot so far updated.
    if (interest_rx_->receive(*m->body_as_PartialSnapshot()) != kp::DropReason::None) return;
    held_ = interest_rx_->held();
    tick = held_.tick;
  } else if (m->body_type() == fb::Body::Snapshot) {
    if (snapshot_rx_->receive(*m->body_as_Snapshot()) != kp::DropReason::None) return;
    held_ = snapshot_rx_->latest();
    tick = held_.tick;
  } else {
    return;
  }
  ++snapshots_;
  if (tick > newest_server_tick_) {
    newest_server_tick_ = tick;
    newest_server_tick_time_ = now;
  }
}

void TestClient::on_frame(std::span<const uint8_t> bytes) {
  const fb::Message* m = nullptr;
  if (!match_ || kp::check_message(bytes, m) != kp::DropReason::None ||
      m->body_type() != fb::Body::ServerInputFrameRun) {
    return;
  }
  std::vector<kp::InputFrameMessage> run;
  if (kp::decode_input_frame_run(input_tx_.layout(), *m->body_as_ServerInputFrameRun(), run) != kp::DropReason::None) return;
  for (const kp::InputFrameMessage& frame : run) on_input_frame(frame);
}

void TestClient::on_input_frame(const kp::InputFrameMessage& frame) {
  if (frame_rx_.receive(frame) != kp::DropReason::None) return;
  ++frames_;
  frames_ahead_[frame.tick] = frame;
  while (!frames_ahead_.empty() && frames_ahead_.begin()->first < match_->tick()) frames_ahead_.erase(frames_ahead_.begin());
  for (auto it = frames_ahead_.find(match_->tick()); it != frames_ahead_.end(); it = frames_ahead_.find(match_->tick())) {
    match_->step(it->second.inputs);
    uint64_t hash = match_->hash();
    bool same = hash == it->second.state_hash;
    ++confirmed_;
    if (same) ++hash_checks_;
    else ++hash_mismatches_;
    // The contract: report every mismatch, and every 60th confirmed tick as a sample.
    if (!same || confirmed_ % 60 == 0) send_hash_report(match_->tick(), hash);
    frames_ahead_.erase(it);
  }
}

void TestClient::request_resync() {
  flatbuffers::FlatBufferBuilder fbb(32);
  auto body = fb::CreateClientHello(fbb, fb::ClientMode::Predict, true);
  conn_->send(kp::Channel::Control, kp::finish_message(fbb, fb::Body::ClientHello, body.Union()));
}

void TestClient::send_hash_report(uint64_t tick, uint64_t hash) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = fb::CreateHashReport(fbb, tick, hash);
  conn_->send(kp::Channel::Control, kp::finish_message(fbb, fb::Body::HashReport, body.Union()));
}

uint64_t TestClient::server_tick_estimate(double now) const {
  return newest_server_tick_ + static_cast<uint64_t>(std::max(0.0, now - newest_server_tick_time_) * tick_rate_);
}

const kp::QuantSnapshot* TestClient::latest_snapshot() const {
  return snapshot_rx_ && snapshots_ > 0 ? &held_ : nullptr;
}

void TestClient::client_tick(double now) {
  uint64_t target = server_tick_estimate(now) + 3;  // lead: loopback RTT plus a margin
  // Inputs go out for consecutive ticks up to the target: behind it (the estimate jumped
  // when the first snapshot came), fill the gap with the current input; far behind, skip.
  if (next_input_tick_ == 0 || next_input_tick_ + 60 < target) next_input_tick_ = target;
  while (next_input_tick_ <= target) {
    game::InputFrame q = input;
    input_tx_.layout().sanitize(q);
    input_tx_.add(next_input_tick_, q, options_.view);
    inputs_sent_[next_input_tick_] = q;
    ++next_input_tick_;
  }
  uint64_t ack_snap = snapshot_rx_ ? std::max(snapshot_rx_->ack_tick(), interest_rx_->ack_tick()) : 0;
  uint64_t ack_frame = match_ ? frame_rx_.ack_tick() : 0;
  input_tx_.on_ack(options_.predict ? ack_frame : ack_snap);
  auto batch = input_tx_.build_batch(ack_snap, ack_frame);
  if (!batch.empty()) conn_->send(kp::Channel::Input, batch);
}

void TestClient::disconnect(double now) {
  if (!conn_ || disconnected_) return;
  flatbuffers::FlatBufferBuilder fbb(32);
  auto body = fb::CreateDisconnect(fbb, fb::DenyReason::Unknown);
  auto msg = kp::finish_message(fbb, fb::Body::Disconnect, body.Union());
  for (int i = 0; i < 3; ++i) {
    conn_->send(kp::Channel::Control, msg);
    for (auto& d : conn_->update(now + i * 1e-4)) send(d);
  }
  disconnected_ = true;
}

}  // namespace keel::test
