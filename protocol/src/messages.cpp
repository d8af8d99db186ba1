#include <keel/protocol/messages.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/world_description.h>

#include <cmath>

namespace keel::protocol {
namespace {

template <class V>
size_t size_of(const V* v) {
  return v == nullptr ? 0 : v->size();
}

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
    case fb::Body::ConnectionAccept: {
      auto* a = m.body_as_ConnectionAccept();
      if (a->game() != nullptr && a->game()->size() > game::kMaxNameBytes) return DropReason::OutOfRange;
      return check_version(a->protocol_version());
    }
    case fb::Body::ConnectionDeny: {
      auto* d = m.body_as_ConnectionDeny();
      if (d->reason() > fb::DenyReason::MAX) return DropReason::OutOfRange;
      return check_version(d->protocol_version());
    }
    default:
      return DropReason::None;
  }
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
                size_of(b->frames()) <= L::kMaxInputBatchBytes && size_of(b->views()) <= L::kMaxViewBytes;
      return ok ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::ServerInputFrame:
      // Protocol 1's single frame of fixed fields: it cannot carry a game's own layout,
      // so protocol 2 sends every frame in runs and refuses this one.
      return DropReason::OutOfRange;
    case fb::Body::ServerInputFrameRun: {
      // The payload is decoded against the game's layout by the receiver
      // (decode_input_frame_run); here only its bounds.
      auto* r = m.body_as_ServerInputFrameRun();
      bool ok = r->count() >= 1 && r->count() <= FrameWindow::kMaxFrames && r->payload() != nullptr &&
                r->first_tick() <= UINT64_MAX - r->count() && size_of(r->views()) <= L::kMaxRunViewBytes;
      return ok ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::GameEvents: {
      // Decoded against the game's spec by the receiver (decode_game_events).
      auto* e = m.body_as_GameEvents();
      bool ok = e->count() >= 1 && e->count() <= game::kMaxEventsPerTick && e->payload() != nullptr;
      return ok ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::Snapshot: {
      auto* s = m.body_as_Snapshot();
      bool ok = size_of(s->payload()) <= L::kMaxSnapshotBytes;
      return ok ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::PartialSnapshot: {
      bool ok = size_of(m.body_as_PartialSnapshot()->payload()) <= L::kMaxSnapshotBytes;
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
    case fb::Body::BodyAdded: {
      // Each body is range-checked by the receiver's decode_body_added; here the counts.
      auto* a = m.body_as_BodyAdded();
      size_t n = size_of(a->bodies());
      return n >= 1 && n <= DescriptionLimits::kMaxBodiesPerMessage ? DropReason::None : DropReason::OutOfRange;
    }
    case fb::Body::BodyRemoved: {
      size_t n = size_of(m.body_as_BodyRemoved()->ids());
      return n >= 1 && n <= DescriptionLimits::kMaxIdsPerMessage ? DropReason::None : DropReason::OutOfRange;
    }
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

}  // namespace keel::protocol
