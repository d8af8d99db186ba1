// The client's session state machine against an in-process server made of the protocol
// library's pieces (fake_server.h), on simulated time: handshake, scene and checkpoint,
// snapshots, frames, inputs, hash reports, time-out and reconnect, hostile bytes.
#include "session_harness.h"

#include <keel/client/client.h>
#include <keel/client/link_conditioner.h>
#include <keel/protocol/handshake.h>
#include <keel/replay/desync_dump.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>

namespace keel::client {
namespace {

using testing::Harness;
using testing::interpolate;
using testing::predict;


TEST(Session, InterpolationRendersTheServersStateWithinQuantisation) {
  Harness h;
  h.keep_truth = true;
  Client& c = h.add(interpolate(), 11);
  h.run(3.0);
  ASSERT_EQ(c.state(), State::Playing);
  EXPECT_GT(c.stats().snapshots_received, 60u);
  EXPECT_EQ(c.drops().total(), 0u);
  const SnapshotBuffer& buf = c.snapshots();
  int compared = 0;
  // Every other tick carries a snapshot; on those ticks the pose is the server's state
  // to within the grid (1/512 m: half a step, 1/1024 m, per axis).
  for (uint64_t tick = buf.oldest_tick(); tick <= buf.newest_tick(); tick += 2) {
    for (const sim::BodyState& b : h.truth.at(tick)) {
      auto p = c.pose_at_tick(b.id, static_cast<double>(tick));
      ASSERT_TRUE(p) << "body " << b.id;
      for (int a = 0; a < 3; ++a) EXPECT_LE(std::fabs(p->position[a] - b.position[a]), 1.0 / 1024 + 1e-5);
      EXPECT_GT(std::fabs(glm::dot(p->rotation, b.rotation)), 0.99999f);
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
  // The render time trails the server by about the RTT/2 plus 3 snapshot intervals.
  double behind = c.server_tick_estimate() - c.render_tick(h.now - 1.0 / 240);
  EXPECT_NEAR(behind, 6.0, 1.5);
}

TEST(Session, PredictionUnderABadLinkNeverDesyncsAndChecksEveryConfirmedTick) {
  Harness h;
  LinkImpairment bad{80, 30, 0.2, 0.05, 0.1};
  for (uint64_t id = 21; id <= 23; ++id) h.add(predict(), id, bad);
  h.run(20.0);
  for (size_t i = 0; i < h.clients.size(); ++i) {
    const Client& c = *h.clients[i];
    SCOPED_TRACE("client " + std::to_string(i));
    ASSERT_EQ(c.state(), State::Playing);
    const PredictionStats& p = c.stats().prediction;
    EXPECT_EQ(p.hash_mismatches, 0u);
    EXPECT_EQ(p.hash_checks, p.confirmed_ticks);
    EXPECT_GT(p.confirmed_ticks, 1000u);
    EXPECT_GT(p.rollbacks, 10u);
    EXPECT_GT(p.max_rollback_ticks, 5u);
    EXPECT_EQ(c.stats().resyncs, 0u);
    // Every input whose tick is confirmed was either applied at its tick or counted late.
    uint64_t unconfirmed = c.last_input_tick() + 1 - c.predictor()->confirmed_tick();
    EXPECT_GE(p.local_inputs_applied + p.local_inputs_late + unconfirmed, c.stats().inputs_sent);
    EXPECT_GT(p.local_inputs_applied, 10 * p.local_inputs_late);
    std::printf("client %zu: confirmed %llu rollbacks %llu max depth %u mean %.1f late %llu skipped %llu sent %llu\n", i,
                (unsigned long long)p.confirmed_ticks, (unsigned long long)p.rollbacks, p.max_rollback_ticks,
                p.rollbacks ? double(p.rollback_ticks) / p.rollbacks : 0.0, (unsigned long long)p.local_inputs_late,
                (unsigned long long)c.stats().inputs_skipped, (unsigned long long)c.stats().inputs_sent);
    // The server received sample hash reports, every one equal to its own hash.
    const auto* peer = h.server.peer(h.wires[i].get());
    ASSERT_NE(peer, nullptr);
    EXPECT_GT(peer->reports.size(), 10u);
    for (auto [tick, hash] : peer->reports) EXPECT_EQ(hash, h.server.hashes().at(tick)) << tick;
  }
}

TEST(Session, PerturbedClientIsDetectedAtTheNextConfirmedTickAndResyncs) {
  Harness h;
  ClientConfig cfg = predict();
  cfg.prediction.dump_dir = ::testing::TempDir() + "/keel_session_perturb";
  std::filesystem::remove_all(cfg.prediction.dump_dir);
  Client& c = h.add(cfg, 31);
  h.run(2.0);
  ASSERT_EQ(c.state(), State::Playing);
  ASSERT_EQ(c.stats().prediction.hash_mismatches, 0u);
  uint64_t at = c.predictor()->confirmed_tick();
  ASSERT_TRUE(c.perturb_for_test());
  h.run(3.0);
  const PredictionStats& p = c.stats().prediction;
  EXPECT_EQ(p.hash_mismatches, 1u);  // the resync brought it back
  EXPECT_EQ(p.first_mismatch_tick, at + 1);  // the first state computed from the flipped one
  EXPECT_EQ(c.stats().resyncs, 1u);
  EXPECT_GT(c.predictor()->confirmed_tick(), at + 60);
  // The dump is the client's state after tick `at`; the server's hash rides along.
  auto dump = replay::read_desync_dump(p.last_dump_path);
  ASSERT_TRUE(dump) << dump.error().message;
  EXPECT_EQ(dump->tick, at + 1);
  EXPECT_EQ(dump->expected_hash, h.server.hashes().at(at + 1));
  // The server heard about it: a HashReport for `at` with the wrong hash, and a resync hello.
  const auto* peer = h.server.peer(h.wires[0].get());
  bool reported = false;
  for (auto [tick, hash] : peer->reports) reported |= tick == at + 1 && hash != h.server.hashes().at(at + 1);
  EXPECT_TRUE(reported);
  EXPECT_EQ(peer->hellos, 2u);
}

TEST(Session, ReconnectsAfterAThreeSecondOutage) {
  Harness h;
  Client& c = h.add(interpolate(), 41, LinkImpairment{}, /*timeout=*/1);
  h.run(1.5);
  ASSERT_EQ(c.state(), State::Playing);
  h.links[0]->set_outage(h.now, h.now + 3.0);
  bool saw_reconnecting = false;
  h.run(3.0, [&] { saw_reconnecting |= c.state() == State::Reconnecting; });
  EXPECT_TRUE(saw_reconnecting);
  EXPECT_GE(c.stats().timeouts, 1u);
  uint64_t before = c.stats().snapshots_received;
  h.run(2.0);
  EXPECT_EQ(c.state(), State::Playing);
  EXPECT_EQ(c.stats().reconnects, 1u);
  EXPECT_GT(c.stats().snapshots_received, before + 20);
}

TEST(Session, HostileBytesAreDroppedAndCounted) {
  Harness h;
  Client& c = h.add(interpolate(), 51);
  h.run(1.0);
  ASSERT_EQ(c.state(), State::Playing);
  uint64_t seed = 99;
  auto rnd = [&] { seed = seed * 6364136223846793005ull + 1442695040888963407ull; return seed >> 33; };
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> d(rnd() % 1400);
    for (auto& b : d) b = static_cast<uint8_t>(rnd());
    if (d.size() > 5 && i % 2 == 0) {  // a valid header so it reaches deeper checks
      d[0] = static_cast<uint8_t>(1 + rnd() % 5);
      uint32_t id = protocol::kProtocolId;
      std::memcpy(&d[1], &id, 4);
    }
    h.wires[0]->to_client.push_back(std::move(d));
  }
  // A message the client never expects from a server, on the control channel.
  flatbuffers::FlatBufferBuilder fbb(64);
  auto hello = protocol::fb::CreateClientHello(fbb, protocol::fb::ClientMode::Predict, false);
  h.server.peer(h.wires[0].get())->conn->send(protocol::Channel::Control,
      protocol::finish_message(fbb, protocol::fb::Body::ClientHello, hello.Union()));
  // Authenticated garbage: random bytes and cut-short real messages on every channel.
  auto* peer = h.server.peer(h.wires[0].get());
  flatbuffers::FlatBufferBuilder snap(64);
  std::vector<uint8_t> payload(40, 0xAB);
  auto sm = protocol::fb::CreateSnapshotDirect(snap, 1u << 30, 3, &payload);
  std::vector<uint8_t> real = protocol::finish_message(snap, protocol::fb::Body::Snapshot, sm.Union());
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> d(1 + rnd() % 600);
    for (auto& b : d) b = static_cast<uint8_t>(rnd());
    auto channel = static_cast<protocol::Channel>(rnd() % 4);
    if (channel == protocol::Channel::Control && i % 10 != 0) continue;  // keep the window
    peer->conn->send(channel, i % 3 == 0 ? std::vector<uint8_t>(real.begin(), real.begin() + rnd() % real.size())
                                         : d);
    if (i % 3 == 1) peer->conn->send(protocol::Channel::Snapshot, real);  // verifies, does not decode
  }
  h.run(1.0);
  EXPECT_EQ(c.state(), State::Playing);
  uint64_t snapshots = c.stats().snapshots_received;
  h.run(0.5);
  EXPECT_GT(c.stats().snapshots_received, snapshots);  // still decoding the real stream
  auto drops = c.drops();
  EXPECT_GE(drops.total(), 2000u);
  EXPECT_EQ(drops[protocol::DropReason::TypeNotAllowed] >= 1, true);
}

// Hostile bytes from the very first update, through the handshake, the world
// description, the checkpoint and into play: random datagrams (half of them with a valid
// header, so they reach the handshake and the connection's authentication), cut-short and
// bit-flipped copies of the server's own datagrams, and replays of them seconds later.
// Nothing of it may authenticate, so every seed reaches Playing and predicts without a
// mismatch, as a client left alone does.
TEST(Session, HostileBytesFromTheFirstUpdateNeverStallTheHandshakeOrTransfer) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Harness h;
    Client& c = h.add(predict(), 70 + seed);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull;
    auto rnd = [&] { x = x * 6364136223846793005ull + 1442695040888963407ull; return x >> 33; };
    std::deque<std::vector<uint8_t>> seen;  // server datagrams, kept to replay later
    uint64_t injected = 0;
    h.run(4.0, [&] {
      auto& wire = h.wires[0]->to_client;
      for (const auto& d : wire)
        if (rnd() % 4 == 0 && seen.size() < 512) seen.push_back(d);
      if (rnd() % 3 != 0) return;
      std::vector<uint8_t> d;
      switch (rnd() % 4) {
        case 0:
        case 1: {  // random, half with a valid header
          d.resize(1 + rnd() % 1300);
          for (auto& b : d) b = static_cast<uint8_t>(rnd());
          if (d.size() > 5 && rnd() % 2 == 0) {
            d[0] = static_cast<uint8_t>(1 + rnd() % 5);
            uint32_t id = protocol::kProtocolId;
            std::memcpy(&d[1], &id, 4);
          }
          break;
        }
        case 2:  // a real datagram, cut short or with one bit flipped
          if (seen.empty()) return;
          d = seen[rnd() % seen.size()];
          if (rnd() % 2 == 0 && d.size() > 1) d.resize(1 + rnd() % (d.size() - 1));
          else d[rnd() % d.size()] ^= static_cast<uint8_t>(1u << (rnd() % 8));
          break;
        default:  // a real datagram again, later
          if (seen.empty()) return;
          d = seen[rnd() % seen.size()];
          break;
      }
      wire.insert(wire.begin() + static_cast<std::ptrdiff_t>(rnd() % (wire.size() + 1)), std::move(d));
      ++injected;
    });
    h.run(0.1);  // the last ones injected still on the wire
    ASSERT_EQ(c.state(), State::Playing) << "connects " << c.stats().connects << " checkpoint "
                                         << c.stats().checkpoint_tick;
    const PredictionStats& p = c.stats().prediction;
    EXPECT_GT(p.confirmed_ticks, 100u);
    EXPECT_EQ(p.hash_mismatches, 0u);
    EXPECT_EQ(c.stats().resyncs, 0u);
    EXPECT_GT(injected, 250u);
    EXPECT_GE(c.drops().total(), injected);  // of a replayed pair, one copy is dropped
  }
}

TEST(Session, ADenyDuringTheHandshakeClosesWithItsReason) {
  Harness h;
  h.server.deaf = true;  // the server never answers; a deny arrives instead
  Client& c = h.add(interpolate(), 71);
  h.run(0.2);
  ASSERT_EQ(c.state(), State::Connecting);
  // A deny sealed with any key but this token's server-to-client key is somebody else's:
  // dropped as auth_failed, and the client goes on connecting.
  std::array<uint8_t, 32> other_key{};
  other_key.fill(0x5a);
  h.wires[0]->to_client.push_back(protocol::build_deny(protocol::fb::DenyReason::ServerFull, other_key));
  h.run(0.1);
  EXPECT_EQ(c.state(), State::Connecting);
  EXPECT_EQ(c.drops()[protocol::DropReason::AuthFailed], 1u);
  // The server's own deny (sealed with the token's key) ends the attempt with its reason.
  h.wires[0]->to_client.push_back(
      protocol::build_deny(protocol::fb::DenyReason::ServerFull, h.tokens[0].server_to_client_key));
  h.run(0.1);
  EXPECT_EQ(c.state(), State::Disconnected);
  EXPECT_EQ(c.close_reason(), CloseReason::Denied);
  bool saw = false;
  for (const ClientEvent& e : c.take_events()) {
    saw |= e.kind == ClientEvent::Kind::Closed && e.a == static_cast<uint64_t>(CloseReason::Denied) &&
           e.b == static_cast<uint64_t>(protocol::fb::DenyReason::ServerFull);
  }
  EXPECT_TRUE(saw);
  // A deny after the handshake, even a genuine one, is not obeyed: a session ends only
  // through its authenticated Disconnect.
  Harness h2;
  Client& c2 = h2.add(interpolate(), 72);
  h2.run(1.0);
  ASSERT_EQ(c2.state(), State::Playing);
  h2.wires[0]->to_client.push_back(
      protocol::build_deny(protocol::fb::DenyReason::Kicked, h2.tokens[0].server_to_client_key));
  h2.run(0.2);
  EXPECT_EQ(c2.state(), State::Playing);
  EXPECT_GE(c2.drops()[protocol::DropReason::TypeNotAllowed], 1u);
}

// A challenge from anyone but the token's server (sealed with another key, or a real
// challenge with one bit changed) is dropped before the client answers it, so the
// server's own challenge, arriving after the forgeries, is still the one answered.
TEST(Session, AForgedChallengeIsNotAnswered) {
  Harness h;
  h.server.deaf = true;
  Client& c = h.add(interpolate(), 73);
  auto foreign_token = mint_token_for(protocol::development_token_key(), 73, 1, testing::kFakeServerAddress, 3600, 10);
  ASSERT_TRUE(foreign_token.has_value());
  std::vector<uint8_t> forged;
  // A challenge a server really sealed, but for another token (another key).
  protocol::ServerHandshake real(protocol::development_token_key(), testing::kFakeServerAddress);
  ASSERT_EQ(real.on_request(protocol::build_connection_request(*foreign_token), "127.0.0.1:1", 1000, forged),
            protocol::DropReason::None);
  h.wires[0]->to_client.push_back(forged);
  std::vector<uint8_t> flipped;
  ASSERT_EQ(real.on_request(protocol::build_connection_request(h.tokens[0]), "127.0.0.1:2", 1000, flipped),
            protocol::DropReason::None);
  flipped[flipped.size() - 5] ^= 0x01;
  h.wires[0]->to_client.push_back(flipped);
  h.run(0.1);
  EXPECT_EQ(c.state(), State::Connecting);
  EXPECT_EQ(c.drops()[protocol::DropReason::AuthFailed], 2u);
  // Now the server answers: the client connects.
  h.server.deaf = false;
  h.run(1.0);
  EXPECT_EQ(c.state(), State::Playing);
}

TEST(Session, OnlyTheFirstChallengeOfAnAttemptIsAnswered) {
  // A resent request draws another challenge; answering both would make a real server
  // replace the session of the first answer with one the client's connection does not
  // know. The client answers the first and resends that answer.
  Harness h;
  Client& c = h.add(predict(), 101);
  auto& wire = *h.wires[0];
  ASSERT_EQ(wire.to_server.size(), 1u);
  const std::vector<uint8_t> request = wire.to_server.front();
  wire.to_server.push_back(request);
  wire.to_server.push_back(request);
  std::vector<std::vector<uint8_t>> answers;
  for (int i = 0; i < 240; ++i, h.now += 1.0 / 240) {
    c.update(h.now);
    for (const auto& d : wire.to_server) {
      protocol::PacketHeader header;
      if (protocol::read_header(d, header) == protocol::DropReason::None &&
          header.type == protocol::PacketType::ConnectionResponse) {
        answers.push_back(d);
      }
    }
    h.server.update(h.now);
  }
  EXPECT_EQ(c.state(), State::Playing);
  ASSERT_GE(answers.size(), 1u);
  for (const auto& a : answers) EXPECT_EQ(a, answers.front());
  EXPECT_EQ(c.drops()[protocol::DropReason::Duplicate], 2u);  // the two later challenges
}

TEST(Session, DisconnectClosesForGood) {
  Harness h;
  Client& c = h.add(predict(), 61);
  h.run(1.0);
  ASSERT_EQ(c.state(), State::Playing);
  c.disconnect(h.now);
  EXPECT_EQ(c.state(), State::Disconnected);
  EXPECT_EQ(c.close_reason(), CloseReason::Requested);
  h.run(1.0);
  EXPECT_EQ(c.state(), State::Disconnected);
}

}  // namespace
}  // namespace keel::client
