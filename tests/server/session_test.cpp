// Sessions over real UDP on loopback: connect, play, disconnect; several clients in
// several matches with every recording re-run to the bit; desync reports; IPv6; metrics.
#include "server_fixture.h"

#include <keel/protocol/input_codec.h>
#include <keel/replay/desync_dump.h>

#include <set>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

// View stamps a client cannot have (from the future, or older than any game's history)
// are clamped, counted in keel_views_clamped_total, and the players play on.
TEST(ServerSession, ImpossibleViewStampsAreClampedAndCounted) {
  auto opts = test_options("views_clamped");
  RunningServer rs(opts);
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int32_t behind : {-30, 5000}) {
    TestClientOptions o;
    o.server = rs.address;
    o.client_id = clients.size() + 1;
    o.view.behind = behind;
    clients.push_back(std::make_unique<TestClient>(rs.io, o));
    clients.back()->start(seconds_now());
  }
  std::vector<TestClient*> all{clients[0].get(), clients[1].get()};
  ASSERT_TRUE(drive(all, 5.0, [&] {
    return clients[0]->playing() && clients[1]->playing() && clients[0]->snapshots() >= 10 &&
           clients[1]->snapshots() >= 10;
  }));
  EXPECT_EQ(rs.server->counters().players, 2u);
  EXPECT_GT(rs.server->counters().views_clamped, 20u);  // each fresh frame of both players
  const std::string text = rs.server->metrics_text();
  EXPECT_NE(text.find("keel_views_clamped_total"), std::string::npos);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);
}

TEST(ServerSession, ConnectPlayDisconnect) {
  auto opts = test_options("connect_play_disconnect");
  RunningServer rs(opts);
  auto c = rs.client(42);
  c->input = games::sandbox_input(0.0f, 1.0f, 0.0f, false, false);  // walk forward the whole time
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->playing() && c->snapshots() >= 10; }))
      << "accepted=" << c->accepted() << " playing=" << c->playing() << " snapshots=" << c->snapshots();
  EXPECT_EQ(c->player_id(), 42u);
  EXPECT_EQ(rs.server->counters().players, 1u);
  drive({c.get()}, 1.0);
  c->disconnect(seconds_now());
  // The server closes the session on the Disconnect, not after the time-out.
  double t0 = seconds_now();
  while (rs.server->counters().players != 0 && seconds_now() - t0 < 2.0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(rs.server->counters().players, 0u);
  EXPECT_LT(seconds_now() - t0, 1.0);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);

  auto recordings = rs.server->recordings();
  ASSERT_EQ(recordings.size(), 1u);
  auto result = verify_recording(recordings[0]);
  EXPECT_TRUE(result.error.empty()) << result.error;
  EXPECT_FALSE(result.diverged_at.has_value());
  EXPECT_GT(result.verified, 60u);
  // The player's forward input reached the match and was recorded as applied.
  auto rec = replay::Recording::open(recordings[0]);
  ASSERT_TRUE(rec);
  auto cursor = rec->ticks_from_start();
  bool joined = false, left = false, walked = false;
  while (auto t = cursor.next()) {
    for (const auto& e : t->inputs.events) {
      if (e.player == 42 && e.kind == game::PlayerEvent::Kind::Join) joined = true;
      if (e.player == 42 && e.kind == game::PlayerEvent::Kind::Leave) left = true;
    }
    const game::Layout& layout = rec->spec().input;
    for (const auto& in : t->inputs.inputs) {
      walked = walked || (in.player == 42 && layout.stick(in.frame, games::SandboxRules::kMove).y > 0.99f);
    }
  }
  EXPECT_TRUE(joined);
  EXPECT_TRUE(left);
  EXPECT_TRUE(walked);
  EXPECT_TRUE(rec->index().finished);
}

TEST(ServerSession, SilentClientTimesOutAndFreesItsSlot) {
  auto opts = test_options("timeout");
  opts.idle_timeout = 0.5;
  opts.max_players = 1;
  RunningServer rs(opts);
  auto c = rs.client(4);
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->playing(); }));
  // The client goes silent: no more updates, so no packets.
  double t0 = seconds_now();
  while (rs.server->counters().players != 0 && seconds_now() - t0 < 3.0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double took = seconds_now() - t0;
  EXPECT_EQ(rs.server->counters().players, 0u);
  EXPECT_GT(took, 0.4);
  EXPECT_LT(took, 1.0);
  // The slot is free again: another player gets in.
  auto d = rs.client(5);
  EXPECT_TRUE(drive({d.get()}, 5.0, [&] { return d->playing(); }));
}

TEST(ServerSession, StopAfterTicksRecordsExactlyThatMany) {
  auto opts = test_options("stop_after_ticks");
  opts.stop_after_ticks = 45;
  RunningServer rs(opts);
  EXPECT_EQ(rs.server->wait(), 0);  // stops by itself
  auto rec = replay::Recording::open(rs.server->recordings().at(0));
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->index().finished);
  EXPECT_EQ(rec->index().last_tick, 45u);
  auto result = verify_recording(rs.server->recordings().at(0));
  EXPECT_FALSE(result.diverged_at.has_value());
  EXPECT_EQ(result.verified, 45u);
}

TEST(ServerSession, EightClientsTwoMatchesRecordingsVerify) {
  auto opts = test_options("eight_clients");
  RunningServer rs(opts);
  std::vector<std::unique_ptr<TestClient>> clients;
  for (uint64_t id = 1; id <= 8; ++id) {
    // Six in the start-up match, two in match 5 (created on demand); half predict.
    clients.push_back(rs.client(id, id % 2 == 0, id <= 6 ? 0 : 5));
  }
  std::vector<TestClient*> ptrs;
  for (auto& c : clients) ptrs.push_back(c.get());
  double start = seconds_now();
  const double kSeconds = 10.0;
  drive(ptrs, kSeconds, [&] {
    // Players wander: each turns at its own pace and throws now and then.
    double t = seconds_now() - start;
    for (size_t i = 0; i < clients.size(); ++i) {
      const float yaw = static_cast<float>(std::fmod(t * (0.5 + 0.1 * i), 6.0) - 3.0);
      clients[i]->input = games::sandbox_input(0.0f, 1.0f, yaw, false, static_cast<int>(t * 2) % 3 == 0);
    }
    return false;
  });
  for (auto& c : clients) {
    EXPECT_TRUE(c->playing()) << "client " << c->player_id();
    // 30 snapshots a second for most of 10 s (idle ticks may skip a few).
    EXPECT_GT(c->snapshots(), 150u) << "client " << c->player_id();
    if (c->match() != nullptr) {
      EXPECT_GT(c->hash_checks(), 400u) << "client " << c->player_id();
      EXPECT_EQ(c->hash_mismatches(), 0u) << "client " << c->player_id();
    }
  }
  auto counters = rs.server->counters();
  EXPECT_EQ(counters.players, 8u);
  EXPECT_EQ(counters.matches, 2u);
  EXPECT_EQ(counters.desyncs, 0u);
  EXPECT_GT(counters.hash_checks, 20u);
  EXPECT_EQ(counters.drop("type_not_allowed"), 0u);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);
  for (auto& c : clients) {
    drive({c.get()}, 0.2, [&] { return c->disconnected(); });
    EXPECT_TRUE(c->disconnected());
    EXPECT_EQ(c->disconnect_reason(), kp::fb::DenyReason::ServerShuttingDown);
  }
  auto recordings = rs.server->recordings();
  ASSERT_EQ(recordings.size(), 2u);
  for (const auto& path : recordings) {
    auto result = verify_recording(path);
    EXPECT_TRUE(result.error.empty()) << path << ": " << result.error;
    EXPECT_FALSE(result.diverged_at.has_value()) << path << " diverged at " << *result.diverged_at;
    EXPECT_GT(result.verified, 500u) << path;
  }
}

TEST(ServerSession, DesyncReportIsCountedToldAndDumped) {
  auto opts = test_options("desync");
  RunningServer rs(opts);
  auto c = rs.client(3, true);
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->match() != nullptr && c->hash_checks() >= 30; }));
  uint64_t tick = c->match()->tick();
  uint64_t bad = c->match()->hash() ^ 0x5a5a;
  c->send_hash_report(tick, bad);
  ASSERT_TRUE(drive({c.get()}, 2.0, [&] { return c->desync_events() == 1; }));
  EXPECT_EQ(rs.server->counters().desyncs, 1u);
  rs.server->request_stop();
  rs.server->wait();
  // The dump sits next to the recording and holds the server's state at that tick.
  std::string rec = rs.server->recordings().at(0);
  std::string prefix = rec.substr(0, rec.size() - 5) + ".desync-t" + std::to_string(tick);
  std::string dump_path;
  for (const auto& e : std::filesystem::directory_iterator(opts.record_dir)) {
    if (e.path().string().rfind(prefix, 0) == 0) dump_path = e.path().string();
  }
  ASSERT_FALSE(dump_path.empty());
  // One desync dump format and one file name ending, the client's too.
  EXPECT_TRUE(dump_path.ends_with(replay::kDesyncDumpExtension)) << dump_path;
  auto dump = replay::read_desync_dump(dump_path);
  ASSERT_TRUE(dump) << dump.error().message;
  EXPECT_EQ(dump->tick, tick);
  EXPECT_EQ(dump->hash, dump->expected_hash);
  EXPECT_NE(dump->note.find(replay::hex_hash(bad)), std::string::npos) << dump->note;
}

TEST(ServerSession, ResyncHelloGetsAFreshCheckpoint) {
  auto opts = test_options("resync");
  RunningServer rs(opts);
  auto c = rs.client(8, true);
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->match() != nullptr && c->hash_checks() >= 20; }));
  uint64_t tick_before = c->match()->tick();
  EXPECT_EQ(c->checkpoints(), 1u);
  c->request_resync();
  ASSERT_TRUE(drive({c.get()}, 3.0, [&] { return c->checkpoints() == 2; }));
  EXPECT_GE(c->match()->tick(), tick_before);
  uint64_t checks = c->hash_checks();
  // Frames resume from the new checkpoint and keep agreeing with the server.
  EXPECT_TRUE(drive({c.get()}, 3.0, [&] { return c->hash_checks() >= checks + 30; }));
  EXPECT_EQ(c->hash_mismatches(), 0u);
  EXPECT_EQ(rs.server->counters().drop("type_not_allowed"), 0u);
}

TEST(ServerSession, Ipv6Loopback) {
  auto opts = test_options("ipv6");
  opts.bind = {"[::1]:0"};
  std::unique_ptr<RunningServer> rs;
  try {
    rs = std::make_unique<RunningServer>(opts);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  ASSERT_EQ(rs->address.front(), '[');
  auto c = rs->client(9);
  EXPECT_TRUE(drive({c.get()}, 5.0, [&] { return c->playing() && c->snapshots() >= 5; }));
}

TEST(ServerSession, FullMatchDeniesAndMetricsServe) {
  auto opts = test_options("full_match");
  opts.max_players = 1;
  opts.metrics_bind = "127.0.0.1:0";
  RunningServer rs(opts);
  auto a = rs.client(1);
  ASSERT_TRUE(drive({a.get()}, 5.0, [&] { return a->playing(); }));
  auto b = rs.client(2);
  EXPECT_TRUE(drive({a.get(), b.get()}, 3.0, [&] { return b->denied(); }));
  EXPECT_FALSE(b->accepted());

  auto fetch = [&](const std::string& path) {
    asio::io_context io;
    asio::ip::tcp::socket s(io);
    std::string addr = rs.server->metrics_address();
    size_t colon = addr.rfind(':');
    s.connect({asio::ip::make_address(addr.substr(0, colon)), static_cast<uint16_t>(std::stoi(addr.substr(colon + 1)))});
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    asio::write(s, asio::buffer(req));
    std::string body;
    asio::error_code ec;
    char buf[4096];
    for (;;) {
      size_t n = s.read_some(asio::buffer(buf), ec);
      body.append(buf, n);
      if (ec) break;
    }
    return body;
  };
  std::string metrics = fetch("/metrics");
  EXPECT_NE(metrics.find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(metrics.find("keel_tick_duration_seconds_bucket{le=\"0.008\"}"), std::string::npos);
  EXPECT_NE(metrics.find("keel_players 1"), std::string::npos);
  EXPECT_NE(metrics.find("keel_drops_total{reason=\"auth_failed\"}"), std::string::npos);
  EXPECT_NE(fetch("/healthz").find("ok"), std::string::npos);
  EXPECT_NE(fetch("/nope").find("404"), std::string::npos);
}

}  // namespace
}  // namespace keel::test
