// Client: the wiring of the client's parts (client_impl.h). One update(now) reads the
// transport, hands each datagram to the transport part (which dispatches each message
// by channel and state: anything unexpected is dropped and counted; docs/protocol.md,
// "Session: what flows after the handshake"), then does what is due: handshake resends,
// time-outs and reconnects, the clock's inputs, prediction, sends.
#include "client_impl.h"

namespace keel::client {

using namespace detail;

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

void Client::Impl::refresh_stats() {
  const TransportStats& t = transport->stats();
  stats.bytes_sent = t.bytes_sent;
  stats.bytes_received = t.bytes_received;
  stats.prediction = prediction_base;
  if (predictor) accumulate(stats.prediction, predictor->stats());
  stats.inputs_late = stats.prediction.local_inputs_late;
  stats.description = description.stats();
}


Client::Client(std::unique_ptr<Transport> transport, ClientConfig config)
    : impl_(std::make_unique<Impl>(std::move(transport), std::move(config))) {}

Client::~Client() = default;

void Client::connect(const protocol::ConnectToken& token, double now) {
  impl_->token = token;
  impl_->ever_accepted = false;
  impl_->start_attempt(now);
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

void Client::set_max_kbps(uint32_t kbps) { impl_->config.max_kbps = kbps; }

double Client::render_tick(double now) const { return impl_->render_tick(now); }

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
bool Client::spectating() const { return impl_->spectator; }
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

}  // namespace keel::client
