// libFuzzer: the message gate. Arbitrary bytes go through check_message(); when it
// accepts them, every field of every message type is read (every vector element, every
// nested table), as a receiver might, so ASan sees any read the Verifier let through
// outside the buffer, and the range checks are re-asserted: an accepted message with an
// unknown enum or too long a vector is reported as a crash. Covers every Body member,
// ClientHello included, and decodes BodyAdded / BodyRemoved as a client does; protocol 1's ServerInputFrame must be refused. Frame runs are decoded
// against the sandbox's input layout.
#include "fuzz_layouts.h"

#include <keel/protocol/frame_window.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/world_description.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace kp = keel::protocol;
namespace fb = keel::protocol::fb;

namespace {

volatile uint64_t g_sink;  // keeps the reads below from being optimised away

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "check_message accepted a message with %s\n", what);
    std::abort();
  }
}

template <class V>
uint64_t sum_bytes(const V* v) {
  uint64_t s = 0;
  if (v != nullptr) {
    for (auto b : *v) s += b;
  }
  return s;
}

uint64_t read_handshake_body(const fb::Message& m) {
  using L = kp::MessageLimits;
  switch (m.body_type()) {
    case fb::Body::ConnectionRequest: {
      auto* r = m.body_as_ConnectionRequest();
      require(r->token_nonce() != nullptr && r->token_nonce()->size() == 24, "a bad nonce");
      require(r->token() == nullptr || r->token()->size() <= L::kMaxTokenBytes, "a long token");
      return r->protocol_version() + r->token_expiry() + sum_bytes(r->token_nonce()) +
             sum_bytes(r->token());
    }
    case fb::Body::ConnectionChallenge: {
      auto* c = m.body_as_ConnectionChallenge();
      require(c->challenge() == nullptr || c->challenge()->size() <= L::kMaxChallengeBytes,
              "a long challenge");
      return c->protocol_version() + c->challenge_sequence() + sum_bytes(c->challenge());
    }
    case fb::Body::ConnectionResponse: {
      auto* c = m.body_as_ConnectionResponse();
      require(c->challenge() == nullptr || c->challenge()->size() <= L::kMaxChallengeBytes,
              "a long challenge");
      return c->protocol_version() + c->challenge_sequence() + sum_bytes(c->challenge());
    }
    case fb::Body::ConnectionAccept: {
      auto* a = m.body_as_ConnectionAccept();
      return a->protocol_version() + a->client_index() + a->player_id() + a->tick_rate() +
             a->server_tick();
    }
    case fb::Body::ConnectionDeny: {
      auto* d = m.body_as_ConnectionDeny();
      require(d->reason() <= fb::DenyReason::MAX, "an unknown deny reason");
      return d->protocol_version() + static_cast<uint64_t>(d->reason());
    }
    default:
      return 0;
  }
}

// The gate checks a run's bounds only; its payload is decoded against the game's input
// layout (here the sandbox's), and may be refused there.
uint64_t read_input_frame_run(const fb::ServerInputFrameRun& run) {
  static const keel::game::Layout sandbox = keel::fuzz::sandbox_layout();
  require(run.count() >= 1 && run.count() <= kp::FrameWindow::kMaxFrames, "a bad run count");
  require(run.payload() != nullptr, "a run without a payload");
  std::vector<kp::InputFrameMessage> frames;
  if (kp::decode_input_frame_run(sandbox, run, frames) != kp::DropReason::None) return run.count();
  require(frames.size() == run.count(), "a run decoded into another number of frames");
  uint64_t s = 0;
  for (const auto& f : frames) s += f.tick + f.state_hash + f.inputs.inputs.size() + f.inputs.events.size();
  return s;
}

// The world description's decode, and what a decoded description promises.
uint64_t read_body_added(const fb::BodyAdded& message) {
  using L = kp::DescriptionLimits;
  require(message.bodies() != nullptr && message.bodies()->size() >= 1 &&
              message.bodies()->size() <= L::kMaxBodiesPerMessage,
          "a bad BodyAdded count");
  uint64_t tick = 0;
  std::vector<kp::BodyDescription> bodies;
  if (kp::decode_body_added(message, tick, bodies) != kp::DropReason::None) return tick;
  uint64_t s = tick;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const kp::BodyDescription& b = bodies[i];
    require(b.id != 0 && (i == 0 || b.id > bodies[i - 1].id), "unsorted body ids");
    require(b.colliders.size() <= L::kMaxColliders, "too many colliders");
    for (const keel::sim::ColliderDef& c : b.colliders) {
      for (uint32_t index : c.indices) require(index < c.points.size(), "a mesh index past its vertices");
      require(c.heights.empty() || uint64_t(c.rows) * c.columns == c.heights.size(), "heights not rows x columns");
      s += c.points.size() + c.indices.size() + c.heights.size() + static_cast<uint64_t>(c.shape);
    }
    s += b.id + b.kind;
  }
  return s;
}

uint64_t read_body_removed(const fb::BodyRemoved& message) {
  uint64_t tick = 0;
  std::vector<uint32_t> ids;
  if (kp::decode_body_removed(message, tick, ids) != kp::DropReason::None) return tick;
  require(ids.size() >= 1 && ids.size() <= kp::DescriptionLimits::kMaxIdsPerMessage, "a bad BodyRemoved count");
  uint64_t s = tick;
  for (size_t i = 0; i < ids.size(); ++i) {
    require(ids[i] != 0 && (i == 0 || ids[i] > ids[i - 1]), "unsorted removed ids");
    s += ids[i];
  }
  return s;
}

uint64_t read_gameplay_body(const fb::Message& m) {
  using L = kp::MessageLimits;
  switch (m.body_type()) {
    case fb::Body::KeepAlive:
      return m.body_as_KeepAlive()->client_index();
    case fb::Body::Disconnect:
      require(m.body_as_Disconnect()->reason() <= fb::DenyReason::MAX, "an unknown reason");
      return static_cast<uint64_t>(m.body_as_Disconnect()->reason());
    case fb::Body::InputBatch: {
      auto* b = m.body_as_InputBatch();
      require(b->count() >= 1 && b->count() <= L::kMaxInputWindow, "a bad input count");
      require(b->frames() == nullptr || b->frames()->size() <= L::kMaxInputBatchBytes,
              "long input frames");
      return b->first_tick() + b->count() + sum_bytes(b->frames()) + b->ack_snapshot_tick() +
             b->ack_input_frame_tick();
    }
    case fb::Body::ServerInputFrame:
      require(false, "protocol 1's ServerInputFrame (protocol 2 refuses it)");
      return 0;
    case fb::Body::ServerInputFrameRun:
      return read_input_frame_run(*m.body_as_ServerInputFrameRun());
    case fb::Body::Snapshot: {
      auto* s = m.body_as_Snapshot();
      require(s->payload() == nullptr || s->payload()->size() <= L::kMaxSnapshotBytes,
              "a long snapshot");
      return s->tick() + s->baseline_age() + sum_bytes(s->payload());
    }
    case fb::Body::HashReport:
      return m.body_as_HashReport()->tick() + m.body_as_HashReport()->state_hash();
    case fb::Body::MatchEvent: {
      auto* e = m.body_as_MatchEvent();
      require(e->kind() <= fb::MatchEventKind::MAX, "an unknown match event");
      return static_cast<uint64_t>(e->kind()) + e->tick() + e->player() + e->expected_hash() +
             e->reported_hash();
    }
    case fb::Body::BlockInfo: {
      auto* b = m.body_as_BlockInfo();
      require(b->kind() <= 1, "an unknown block kind");
      return b->kind() + b->tick() + b->size();
    }
    case fb::Body::ClientHello: {
      auto* h = m.body_as_ClientHello();
      require(h->mode() <= fb::ClientMode::MAX, "an unknown client mode");
      return static_cast<uint64_t>(h->mode()) + static_cast<uint64_t>(h->resync());
    }
    case fb::Body::BodyAdded:
      return read_body_added(*m.body_as_BodyAdded());
    case fb::Body::BodyRemoved:
      return read_body_removed(*m.body_as_BodyRemoved());
    default:
      return 0;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fb::Message* m = nullptr;
  if (kp::check_message({data, size}, m) != kp::DropReason::None) {
    require(m == nullptr, "a rejected message still handed out");
    return 0;
  }
  require(m != nullptr, "no message for an accepted buffer");
  require(m->body_type() != fb::Body::NONE && m->body_type() <= fb::Body::MAX && m->body(),
          "no body or an unknown body type");
  g_sink = g_sink + read_handshake_body(*m) + read_gameplay_body(*m);
  return 0;
}
