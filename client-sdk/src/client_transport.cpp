// The client's link to the server: the handshake and its resends, time-outs and
// reconnects, datagrams in (to the handshake or the connection) and out (the
// connection's packets onto the transport), and the goodbye. Part of Client::Impl
// (client_impl.h, "transport").
#include "client_impl.h"

namespace keel::client {

using namespace detail;

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
  // Handshake packets carry no connection sequence (the server seals its two with the
  // token's key, but they are not tied to one attempt): only the handshake state listens.
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
    // Sealed with the token's server-to-client key: a challenge from anyone but the
    // server the token names fails here and is dropped, and the first real one is
    // still answered.
    std::vector<uint8_t> answer;
    DropReason r = protocol::answer_challenge(d, protocol::client_keys(*token), answer);
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
    // Only a deny the server sealed for this token ends the attempt: a forged one is
    // dropped and counted, and the handshake goes on.
    protocol::fb::DenyReason reason{};
    DropReason r = protocol::read_deny(d, protocol::client_keys(*token), reason);
    if (r != DropReason::None) {
      drops.add(r);
      return;
    }
    last_deny = static_cast<uint64_t>(reason);
    close(CloseReason::Denied);
    return;
  }
  drops.add(DropReason::TypeNotAllowed);
}


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


bool Client::Impl::send_control(std::vector<uint8_t> message) {
  if (!connection || !connection->send(Channel::Control, message)) return false;
  return true;
}

void Client::Impl::flush(double now) {
  if (!connection || state == State::Connecting) return;  // the server has no connection yet
  for (auto& d : connection->update(now)) transport->send(d, now);
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

}  // namespace keel::client
