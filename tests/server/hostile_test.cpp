// A client that misbehaves while others play, and inputs under packet loss.
#include "server_fixture.h"

#include <keel/protocol/handshake.h>
#include <keel/protocol/input_codec.h>

#include <random>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

TEST(ServerHostile, GarbageOversizedReplayedAndSpoofedPacketsHurtOnlyTheSender) {
  auto opts = test_options("hostile");
  RunningServer rs(opts);
  auto good1 = rs.client(1, true);
  auto good2 = rs.client(2, false);
  auto attacker = rs.client(66, false);
  std::vector<TestClient*> all{good1.get(), good2.get(), attacker.get()};
  ASSERT_TRUE(drive(all, 5.0, [&] { return good1->match() && good2->playing() && attacker->playing(); }));
  uint64_t snaps1 = good1->snapshots(), snaps2 = good2->snapshots(), checks1 = good1->hash_checks();
  auto before = rs.server->counters();

  // A second socket plays the spoofer: a stranger's address.
  asio::ip::udp::socket stranger(rs.io);
  stranger.open(asio::ip::udp::v4());
  stranger.bind({asio::ip::make_address("127.0.0.1"), 0});
  size_t colon = rs.address.rfind(':');
  asio::ip::udp::endpoint server_ep{asio::ip::make_address(rs.address.substr(0, colon)),
                                    static_cast<uint16_t>(std::stoi(rs.address.substr(colon + 1)))};
  std::mt19937_64 rng(99);
  auto random_bytes = [&](size_t n) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    return b;
  };
  const int kRounds = 60;
  double attack_start = seconds_now();
  for (int round = 0; round < kRounds; ++round) {
    attacker->send_raw(random_bytes(1 + rng() % 1400));           // garbage
    attacker->send_raw(random_bytes(3000));                        // oversized
    attacker->send_raw(random_bytes(5));                           // too small
    const auto& sent = attacker->sent();
    attacker->send_raw(sent[sent.size() / 2]);                     // replayed (old sequence)
    std::vector<uint8_t> forged = sent.back();
    forged[5] = static_cast<uint8_t>(forged[5] + 100);              // a fresh sequence, same bytes
    attacker->send_raw(forged);                                    // fails authentication
    stranger.send_to(asio::buffer(sent.back()), server_ep);        // spoofed: unknown address
    for (const auto& d : sent) {
      // The attacker's handshake response, echoed from another address: refused.
      if (d[0] == static_cast<uint8_t>(kp::PacketType::ConnectionResponse)) {
        stranger.send_to(asio::buffer(d), server_ep);
        break;
      }
    }
    drive(all, 1.0 / 60.0);
  }
  drive(all, 1.0, [] { return false; });
  double attack_seconds = seconds_now() - attack_start;
  auto after = rs.server->counters();

  // The others played on: snapshots kept coming at the snapshot rate and predictions held.
  double expected_snapshots = attack_seconds * 30.0;
  EXPECT_GT(double(good1->snapshots() - snaps1), expected_snapshots * 0.8);
  EXPECT_GT(double(good2->snapshots() - snaps2), expected_snapshots * 0.8);
  EXPECT_GT(good1->hash_checks(), checks1 + 60);
  EXPECT_EQ(good1->hash_mismatches(), 0u);
  EXPECT_FALSE(good1->disconnected());
  EXPECT_FALSE(good2->disconnected());
  EXPECT_EQ(after.desyncs, 0u);
  // ...and every kind of bad packet shows in the counters.
  auto grew = [&](const char* reason) { return after.drop(reason) - before.drop(reason); };
  EXPECT_GE(grew("too_large"), uint64_t(kRounds));
  EXPECT_GE(grew("too_small"), uint64_t(kRounds));
  EXPECT_GE(grew("replayed"), uint64_t(kRounds) / 2);
  EXPECT_GE(grew("auth_failed"), uint64_t(kRounds) / 2);
  EXPECT_GE(grew("unknown_address"), uint64_t(kRounds));
  EXPECT_GE(grew("challenge_invalid"), uint64_t(kRounds));
  uint64_t garbage = grew("wrong_protocol_id") + grew("unknown_packet_type") + grew("malformed_payload") +
                     grew("too_small") - uint64_t(kRounds);
  EXPECT_GT(garbage, uint64_t(kRounds) / 2);
  rs.server->request_stop();
  rs.server->wait();
  for (const auto& path : rs.server->recordings()) {
    auto result = verify_recording(path);
    EXPECT_TRUE(result.error.empty() && !result.diverged_at) << path;
  }
}

TEST(ServerHostile, StolenTokenFromAnotherAddressIsRefused) {
  auto opts = test_options("stolen_token");
  RunningServer rs(opts);
  auto owner = rs.client(5);
  ASSERT_TRUE(drive({owner.get()}, 5.0, [&] { return owner->playing(); }));
  // The owner's request, captured and sent again from another address.
  asio::ip::udp::socket thief(rs.io);
  thief.open(asio::ip::udp::v4());
  thief.bind({asio::ip::make_address("127.0.0.1"), 0});
  size_t colon = rs.address.rfind(':');
  asio::ip::udp::endpoint server_ep{asio::ip::make_address(rs.address.substr(0, colon)),
                                    static_cast<uint16_t>(std::stoi(rs.address.substr(colon + 1)))};
  auto before = rs.server->counters();
  thief.send_to(asio::buffer(owner->sent().front()), server_ep);
  drive({owner.get()}, 0.3, [] { return false; });
  EXPECT_EQ(rs.server->counters().drop("token_in_use") - before.drop("token_in_use"), 1u);
  EXPECT_EQ(rs.server->counters().players, 1u);
}

TEST(ServerHostile, InputsUnderLossStillReachTheirTicks) {
  auto opts = test_options("loss");
  RunningServer rs(opts);
  auto c = rs.client(11, true, 0, 0.2);  // 20% of datagrams lost each way
  ASSERT_TRUE(drive({c.get()}, 8.0, [&] { return c->match() != nullptr; }))
      << "accepted=" << c->accepted() << " scene=" << (c->snapshot_config() != nullptr)
      << " denied=" << c->denied() << " disconnected=" << c->disconnected();
  double start = seconds_now();
  drive({c.get()}, 4.0, [&] {
    // A different input nearly every tick, so repeat-last cannot pass for delivery.
    const float yaw = static_cast<float>(std::fmod((seconds_now() - start) * 7.0, 6.0) - 3.0);
    c->input = games::sandbox_input(yaw > 0 ? 0.5f : -0.5f, 0.0f, yaw, false, false);
    return false;
  });
  EXPECT_EQ(c->hash_mismatches(), 0u);
  EXPECT_GT(c->hash_checks(), 150u);
  rs.server->request_stop();
  rs.server->wait();
  auto path = rs.server->recordings().at(0);
  auto result = verify_recording(path);
  EXPECT_TRUE(result.error.empty() && !result.diverged_at) << path;
  // Compare what the client sent for each tick with what the server applied.
  auto rec = replay::Recording::open(path);
  ASSERT_TRUE(rec);
  auto cursor = rec->ticks_from_start();
  uint64_t compared = 0, same = 0;
  const auto& sent = c->inputs_sent();
  while (auto t = cursor.next()) {
    uint64_t applied_at = t->tick - 1;  // the record of tick T holds the inputs stepped from T-1
    auto it = sent.find(applied_at);
    if (it == sent.end() || applied_at < sent.begin()->first + 30) continue;
    for (const auto& in : t->inputs.inputs) {
      if (in.player != 11) continue;
      ++compared;
      if (in.frame == it->second) ++same;
    }
  }
  ASSERT_GT(compared, 150u);
  auto counters = rs.server->counters();
  EXPECT_GT(double(same) / double(compared), 0.9)
      << same << " of " << compared << "; late " << counters.drop("late") << ", missing "
      << counters.inputs_missing << ", out_of_range " << counters.drop("out_of_range") << [&] {
           std::string all;
           for (const auto& [k, v] : counters.drops) if (v) all += " " + k + "=" + std::to_string(v);
           return all;
         }();
}

}  // namespace
}  // namespace keel::test
