#include <keel/protocol/messages.h>
#include <keel/protocol/frame_window.h>

#include <cmath>

namespace keel::protocol {
namespace {

template <class V>
size_t size_of(const V* v) {
  return v == nullptr ? 0 : v->size();
}

bool finite(float f) { return std::isfinite(f); }

DropReason check_version(uint32_t version) {
  return version == kProtocolVersion ? DropReason::None : DropReason::VersionMismatch;
}

DropReason check_handshake(const fb::Message& m) {
  using L = MessageLimits;
  switch (m.body_type()) {
    case fb::Body::ConnectionRequest: {
      auto* r = m.body_as_ConnectionRequest();
      if (size_of(r->token_nonce()) != 24 || size_of(r->token()) > L::kMaxTokenBytes) {
        return DropReason::OutOfRange;
      }
      return check_version(r->protocol_version());
    }
    case fb::Body::ConnectionChallenge: {
      auto* c = m.body_as_ConnectionChallenge();
      if (size_of(c->challenge()) > L::kMaxChallengeBytes) return DropReason::OutOfRange;
      return check_version(c->protocol_version());
    }
    case fb::Body::ConnectionResponse: {
      auto* c = m.body_as_ConnectionResponse();
      if (size_of(c->challenge()) > L::kMaxChallengeBytes) return DropReason::OutOfRange;
      return check_version(c->protocol_version());
    }
    case fb::Body::ConnectionAccept:
      return check_version(m.body_as_ConnectionAccept()->protocol_version());
    case fb::Body::ConnectionDeny: {
      auto* d = m.body_as_ConnectionDeny();
      if (d->reason() > fb::DenyReason::MAX) return DropReason::OutOfRange;
      return check_version(d->protocol_version());
    }
    default:
      return DropReason::None;
  }
}

DropReason check_input_frame(const fb::ServerInputFrame& f) {
  InputFrameMessage scratch;
  return decode_server_input_frame(f, scratch);
}

DropReason check_gameplay(const fb::Message& m) {
  using L = MessageLimits;
  switch (m.body_type()) {
    case fb::Body::Disconnect:
      return m.body_as_Disconnect()->reason() > fb::DenyReason::MAX ? DropReason::OutOfRange
                                                                    : DropReason::None;
    case fb::Body::InputBatch: {
      auto* b = m.body_as_InputBatch();
      bool ok = b->count() >= 1 && b->count() <= L::kMaxInputWindow &&
                size_of(b->frames()) <= L::kMaxInputBatchBytes;
      return ok ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::ServerInputFrame:
      return check_input_frame(*m.body_as_ServerInputFrame());
    case fb::Body::ServerInputFrameRun: {
      std::vector<InputFrameMessage> scratch;
      return decode_input_frame_run(*m.body_as_ServerInputFrameRun(), scratch);
    }
    case fb::Body::Snapshot: {
      auto* s = m.body_as_Snapshot();
      bool ok = size_of(s->payload()) <= L::kMaxSnapshotBytes;
      return ok ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::MatchEvent:
      return m.body_as_MatchEvent()->kind() > fb::MatchEventKind::MAX ? DropReason::OutOfRange
                                                                      : DropReason::None;
    case fb::Body::BlockInfo:
      return m.body_as_BlockInfo()->kind() > 1 ? DropReason::OutOfRange : DropReason::None;
    case fb::Body::ClientHello:
      return m.body_as_ClientHello()->mode() > fb::ClientMode::MAX ? DropReason::OutOfRange
                                                                     : DropReason::None;
    default:
      return DropReason::None;
  }
}

}  // namespace

DropReason check_message(std::span<const uint8_t> bytes, const fb::Message*& out) {
  out = nullptr;
  if (bytes.size() < 8) return DropReason::TooSmall;
  // Depth 16 and 100k tables bound the Verifier's own work on a hostile buffer.
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), 16, 100000);
  if (!fb::VerifyMessageBuffer(verifier)) return DropReason::VerifierFailed;
  const fb::Message* m = fb::GetMessage(bytes.data());
  if (m->body_type() == fb::Body::NONE || m->body_type() > fb::Body::MAX ||
      m->body() == nullptr) {
    return DropReason::OutOfRange;
  }
  DropReason r = check_handshake(*m);
  if (r == DropReason::None) r = check_gameplay(*m);
  if (r == DropReason::None) out = m;
  return r;
}

std::vector<uint8_t> finish_message(flatbuffers::FlatBufferBuilder& fbb, fb::Body type,
                                    flatbuffers::Offset<void> body) {
  fb::FinishMessageBuffer(fbb, fb::CreateMessage(fbb, type, body));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> encode_server_input_frame(const InputFrameMessage& frame) {
  flatbuffers::FlatBufferBuilder fbb(256);
  std::vector<flatbuffers::Offset<fb::PlayerEventWire>> events;
  for (const auto& e : frame.inputs.events) {
    events.push_back(fb::CreatePlayerEventWire(fbb, static_cast<fb::PlayerEventKind>(e.kind),
                                               e.player));
  }
  std::vector<flatbuffers::Offset<fb::PlayerInputWire>> inputs;
  for (const auto& in : frame.inputs.inputs) {
    const auto& f = in.frame;
    inputs.push_back(fb::CreatePlayerInputWire(fbb, in.player, f.move_x, f.move_z, f.look_yaw,
                                               f.buttons));
  }
  auto body = fb::CreateServerInputFrameDirect(fbb, frame.tick, frame.state_hash, &events,
                                               &inputs);
  return finish_message(fbb, fb::Body::ServerInputFrame, body.Union());
}

DropReason decode_server_input_frame(const fb::ServerInputFrame& msg, InputFrameMessage& out) {
  out.tick = msg.tick();
  out.state_hash = msg.state_hash();
  out.inputs = {};
  size_t n_events = size_of(msg.events());
  size_t n_inputs = size_of(msg.inputs());
  if (n_events > 2 * sim::kMaxPlayersPerMatch || n_inputs > sim::kMaxPlayersPerMatch) {
    return DropReason::OutOfRange;
  }
  for (size_t i = 0; i < n_events; ++i) {
    const auto* e = msg.events()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (e->kind() > fb::PlayerEventKind::MAX) return DropReason::OutOfRange;
    out.inputs.events.push_back({static_cast<sim::PlayerEvent::Kind>(e->kind()), e->player()});
  }
  for (size_t i = 0; i < n_inputs; ++i) {
    const auto* p = msg.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    sim::InputFrame f{p->move_x(), p->move_z(), p->look_yaw(), p->buttons()};
    if (!finite(f.move_x) || !finite(f.move_z) || !finite(f.look_yaw)) {
      return DropReason::OutOfRange;
    }
    // Sorted, unique player ids: the order the match applies them in.
    if (!out.inputs.inputs.empty() && out.inputs.inputs.back().player >= p->player()) {
      return DropReason::OutOfRange;
    }
    out.inputs.inputs.push_back({p->player(), f});
  }
  return DropReason::None;
}

}  // namespace keel::protocol
