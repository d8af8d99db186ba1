// Every message of messages.fbs survives build -> check_message -> read, and the checks
// refuse what they must: truncation, wrong version, bad enums, non-finite numbers.
#include <keel/protocol/messages.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kp = keel::protocol;
namespace fb = keel::protocol::fb;

namespace {

const fb::Message* checked(const std::vector<uint8_t>& bytes) {
  const fb::Message* m = nullptr;
  EXPECT_EQ(kp::check_message(bytes, m), kp::DropReason::None);
  return m;
}

template <class Make>
std::vector<uint8_t> build(fb::Body type, Make make) {
  flatbuffers::FlatBufferBuilder fbb;
  return kp::finish_message(fbb, type, make(fbb).Union());
}

}  // namespace

TEST(Messages, HandshakeRoundTrips) {
  std::vector<uint8_t> nonce(24, 7), token(1024, 9), challenge(300, 3);
  auto req = build(fb::Body::ConnectionRequest, [&](auto& b) {
    return fb::CreateConnectionRequestDirect(b, kp::kProtocolVersion, 123, &nonce, &token);
  });
  auto* r = checked(req)->body_as_ConnectionRequest();
  EXPECT_EQ(r->protocol_version(), kp::kProtocolVersion);
  EXPECT_EQ(r->token_expiry(), 123u);
  EXPECT_EQ(std::vector<uint8_t>(r->token_nonce()->begin(), r->token_nonce()->end()), nonce);
  EXPECT_EQ(std::vector<uint8_t>(r->token()->begin(), r->token()->end()), token);

  auto ch = build(fb::Body::ConnectionChallenge, [&](auto& b) {
    return fb::CreateConnectionChallengeDirect(b, kp::kProtocolVersion, 5, &challenge);
  });
  EXPECT_EQ(checked(ch)->body_as_ConnectionChallenge()->challenge_sequence(), 5u);
  auto resp = build(fb::Body::ConnectionResponse, [&](auto& b) {
    return fb::CreateConnectionResponseDirect(b, kp::kProtocolVersion, 5, &challenge);
  });
  auto* rs = checked(resp)->body_as_ConnectionResponse();
  EXPECT_EQ(rs->challenge_sequence(), 5u);
  EXPECT_EQ(std::vector<uint8_t>(rs->challenge()->begin(), rs->challenge()->end()), challenge);
  auto acc = build(fb::Body::ConnectionAccept, [&](auto& b) {
    return fb::CreateConnectionAccept(b, kp::kProtocolVersion, 3, 42, 60, 1000);
  });
  auto* a = checked(acc)->body_as_ConnectionAccept();
  EXPECT_EQ(a->client_index(), 3u);
  EXPECT_EQ(a->player_id(), 42u);
  EXPECT_EQ(a->tick_rate(), 60u);
  EXPECT_EQ(a->server_tick(), 1000u);
  auto deny = build(fb::Body::ConnectionDeny, [&](auto& b) {
    return fb::CreateConnectionDeny(b, kp::kProtocolVersion, fb::DenyReason::TokenExpired);
  });
  EXPECT_EQ(checked(deny)->body_as_ConnectionDeny()->reason(), fb::DenyReason::TokenExpired);
  auto ka = build(fb::Body::KeepAlive, [&](auto& b) { return fb::CreateKeepAlive(b, 3); });
  EXPECT_EQ(checked(ka)->body_as_KeepAlive()->client_index(), 3u);
  auto dc = build(fb::Body::Disconnect,
                  [&](auto& b) { return fb::CreateDisconnect(b, fb::DenyReason::Kicked); });
  EXPECT_EQ(checked(dc)->body_as_Disconnect()->reason(), fb::DenyReason::Kicked);
}

TEST(Messages, GameplayRoundTrips) {
  std::vector<uint8_t> frames(40, 1), payload(5000, 2);
  auto batch = build(fb::Body::InputBatch, [&](auto& b) {
    return fb::CreateInputBatchDirect(b, 100, 8, &frames, 97, 95);
  });
  auto* ib = checked(batch)->body_as_InputBatch();
  EXPECT_EQ(ib->first_tick(), 100u);
  EXPECT_EQ(ib->count(), 8);
  EXPECT_EQ(ib->ack_snapshot_tick(), 97u);
  EXPECT_EQ(ib->ack_input_frame_tick(), 95u);
  EXPECT_EQ(std::vector<uint8_t>(ib->frames()->begin(), ib->frames()->end()), frames);
  auto snap = build(fb::Body::Snapshot, [&](auto& b) {
    return fb::CreateSnapshotDirect(b, 200, 10, &payload);
  });
  auto* s = checked(snap)->body_as_Snapshot();
  EXPECT_EQ(s->tick(), 200u);
  EXPECT_EQ(s->baseline_age(), 10u);
  EXPECT_EQ(std::vector<uint8_t>(s->payload()->begin(), s->payload()->end()), payload);
  auto hr = build(fb::Body::HashReport,
                  [&](auto& b) { return fb::CreateHashReport(b, 77, 0x1234567890abcdefull); });
  EXPECT_EQ(checked(hr)->body_as_HashReport()->tick(), 77u);
  EXPECT_EQ(checked(hr)->body_as_HashReport()->state_hash(), 0x1234567890abcdefull);
  auto ev = build(fb::Body::MatchEvent, [&](auto& b) {
    return fb::CreateMatchEvent(b, fb::MatchEventKind::DesyncDetected, 50, 4, 1, 2);
  });
  auto* e = checked(ev)->body_as_MatchEvent();
  EXPECT_EQ(e->kind(), fb::MatchEventKind::DesyncDetected);
  EXPECT_EQ(e->tick(), 50u);
  EXPECT_EQ(e->player(), 4u);
  EXPECT_EQ(e->expected_hash(), 1u);
  EXPECT_EQ(e->reported_hash(), 2u);
  auto bi = build(fb::Body::BlockInfo, [&](auto& b) { return fb::CreateBlockInfo(b, 1, 600, 4 << 20); });
  auto partial = build(fb::Body::PartialSnapshot, [&](auto& b) {
    return fb::CreatePartialSnapshotDirect(b, 300, &payload);
  });
  auto* ps = checked(partial)->body_as_PartialSnapshot();
  EXPECT_EQ(ps->tick(), 300u);
  EXPECT_EQ(std::vector<uint8_t>(ps->payload()->begin(), ps->payload()->end()), payload);
  std::vector<uint8_t> huge(kp::MessageLimits::kMaxSnapshotBytes + 1, 0);
  auto too_big = build(fb::Body::PartialSnapshot, [&](auto& b) {
    return fb::CreatePartialSnapshotDirect(b, 301, &huge);
  });
  const fb::Message* refused = nullptr;
  EXPECT_EQ(kp::check_message(too_big, refused), kp::DropReason::OutOfRange);
  auto* info = checked(bi)->body_as_BlockInfo();
  EXPECT_EQ(info->kind(), 1u);
  EXPECT_EQ(info->tick(), 600u);
  EXPECT_EQ(info->size(), 4u << 20);
}

// ServerInputFrameRun's round trip is in frame_run_test.cpp, GameEvents' in
// game_events_test.cpp and BodyAdded's and BodyRemoved's in world_description_test.cpp,
// with their codecs; PartialSnapshot's payload codec is in interest_test.cpp. A message
// appended to the Body union needs a round trip too: this stops the build until it has one.
static_assert(fb::Body::MAX == fb::Body::PartialSnapshot,
              "a new message in messages.fbs needs a round trip in messages_test.cpp");

TEST(Messages, ClientHelloRoundTrips) {
  for (auto mode : {fb::ClientMode::Interpolate, fb::ClientMode::Predict}) {
    for (bool resync : {false, true}) {
      auto hello = build(fb::Body::ClientHello,
                         [&](auto& b) { return fb::CreateClientHello(b, mode, resync); });
      const fb::Message* m = checked(hello);
      ASSERT_NE(m, nullptr);
      ASSERT_EQ(m->body_type(), fb::Body::ClientHello);
      EXPECT_EQ(m->body_as_ClientHello()->mode(), mode);
      EXPECT_EQ(m->body_as_ClientHello()->resync(), resync);
    }
  }
  // An empty hello is the schema defaults: an interpolating client's first hello.
  auto empty = build(fb::Body::ClientHello,
                     [&](auto& b) { return fb::ClientHelloBuilder(b).Finish(); });
  const fb::Message* m = checked(empty);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->body_as_ClientHello()->mode(), fb::ClientMode::Interpolate);
  EXPECT_FALSE(m->body_as_ClientHello()->resync());
  // A mode this build does not know is refused, not read.
  auto unknown = build(fb::Body::ClientHello, [&](auto& b) {
    return fb::CreateClientHello(b, static_cast<fb::ClientMode>(2), false);
  });
  EXPECT_EQ(kp::check_message(unknown, m), kp::DropReason::OutOfRange);
  EXPECT_EQ(m, nullptr);
}

// Protocol 1's single input frame of fixed fields (move_x, move_z, look_yaw, buttons as
// floats) cannot carry a game's own layout: protocol 2 refuses it however well formed,
// so no field of it is ever read.
namespace {

std::vector<uint8_t> server_input_frame(float move_x, uint32_t first_player, uint32_t second_player) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::PlayerEventWire>> events{
      fb::CreatePlayerEventWire(fbb, fb::PlayerEventKind::Join, 7)};
  std::vector<flatbuffers::Offset<fb::PlayerInputWire>> inputs{
      fb::CreatePlayerInputWire(fbb, first_player, move_x, -0.25f, 1.0f, 3),
      fb::CreatePlayerInputWire(fbb, second_player, 0.0f, 1.0f, -3.0f, 0)};
  auto body = fb::CreateServerInputFrameDirect(fbb, 1234, 0xfeedface12345678ull, &events, &inputs);
  return kp::finish_message(fbb, fb::Body::ServerInputFrame, body.Union());
}

}  // namespace

TEST(Messages, TheOldServerInputFrameIsRefused) {
  const fb::Message* m = nullptr;
  const std::vector<uint8_t> good = server_input_frame(0.5f, 1, 7);
  // It is a valid FlatBuffer: the Verifier passes it, the range check refuses it.
  flatbuffers::Verifier verifier(good.data(), good.size());
  EXPECT_TRUE(fb::VerifyMessageBuffer(verifier));
  EXPECT_EQ(kp::check_message(good, m), kp::DropReason::OutOfRange);
  EXPECT_EQ(m, nullptr);
  // What protocol 1 refused for its contents is refused the same way, before any is read.
  EXPECT_EQ(kp::check_message(server_input_frame(std::numeric_limits<float>::quiet_NaN(), 1, 7), m),
            kp::DropReason::OutOfRange);
  EXPECT_EQ(kp::check_message(server_input_frame(0.5f, 7, 1), m), kp::DropReason::OutOfRange);
}

TEST(Messages, ChecksRejectBadMessages) {
  const fb::Message* m = nullptr;
  auto deny = build(fb::Body::ConnectionDeny, [&](auto& b) {
    return fb::CreateConnectionDeny(b, kp::kProtocolVersion + 1, fb::DenyReason::Unknown);
  });
  EXPECT_EQ(kp::check_message(deny, m), kp::DropReason::VersionMismatch);
  auto bad_enum = build(fb::Body::ConnectionDeny, [&](auto& b) {
    return fb::CreateConnectionDeny(b, kp::kProtocolVersion, static_cast<fb::DenyReason>(200));
  });
  EXPECT_EQ(kp::check_message(bad_enum, m), kp::DropReason::OutOfRange);
  std::vector<uint8_t> short_nonce(5);
  auto req = build(fb::Body::ConnectionRequest, [&](auto& b) {
    return fb::CreateConnectionRequestDirect(b, kp::kProtocolVersion, 1, &short_nonce, nullptr);
  });
  EXPECT_EQ(kp::check_message(req, m), kp::DropReason::OutOfRange);
  auto zero_batch = build(fb::Body::InputBatch, [&](auto& b) { return fb::CreateInputBatch(b, 1, 0); });
  EXPECT_EQ(kp::check_message(zero_batch, m), kp::DropReason::OutOfRange);
  auto good = build(fb::Body::HashReport, [&](auto& b) { return fb::CreateHashReport(b, 1, 2); });
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_NE(kp::check_message(std::span(good).first(n), m), kp::DropReason::None) << n;
  }
  std::vector<uint8_t> garbage(64, 0xff);
  EXPECT_NE(kp::check_message(garbage, m), kp::DropReason::None);
}
