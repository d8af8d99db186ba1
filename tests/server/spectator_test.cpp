// Spectators over real UDP on loopback: a token minted with the spectator role is sent the
// match like any client, takes no player seat (a full match still admits it, within
// --max-spectators), is never a player of the match (the game never hears it join, the
// recording holds no input of it), never displaces the player whose id it shares, and
// whatever it sends as input plays no one.
#include "server_fixture.h"

namespace keel::test {
namespace {

std::unique_ptr<TestClient> spectator(RunningServer& rs, uint64_t id) {
  TestClientOptions o;
  o.server = rs.address;
  o.client_id = id;
  o.role = protocol::ClientRole::Spectator;
  o.seed = id * 31 + 5;
  auto c = std::make_unique<TestClient>(rs.io, o);
  c->start(seconds_now());
  return c;
}

TEST(ServerSpectator, SpectatorsWatchAFullMatchWithoutPlayingInIt) {
  auto opts = test_options("spectators");
  opts.max_players = 1;
  opts.max_spectators = 2;
  RunningServer rs(opts);
  auto player = rs.client(7, true);
  ASSERT_TRUE(drive({player.get()}, 5.0, [&] { return player->match() != nullptr; }));
  // One spectator holds the player's own id and pushes hard on every input; the other
  // has an id of its own. The match is full (one seat), and both are still let in.
  auto same_id = spectator(rs, 7);
  same_id->input = games::sandbox_input(1.0f, 1.0f, 0.0f, true, true);
  auto other = spectator(rs, 9);
  std::vector<TestClient*> all = {player.get(), same_id.get(), other.get()};
  ASSERT_TRUE(drive(all, 6.0, [&] {
    return same_id->playing() && other->playing() && same_id->snapshots() >= 30 && other->snapshots() >= 30;
  })) << "accepted " << same_id->accepted() << "/" << other->accepted() << ", denied " << same_id->denied()
      << "/" << other->denied();
  EXPECT_TRUE(same_id->spectator());
  EXPECT_TRUE(other->spectator());
  EXPECT_FALSE(player->spectator());
  // A third spectator is past --max-spectators; a second player past --max-players.
  auto third = spectator(rs, 10);
  auto second_player = rs.client(8);
  std::vector<TestClient*> late = {player.get(), same_id.get(), other.get(), third.get(), second_player.get()};
  ASSERT_TRUE(drive(late, 4.0, [&] { return third->denied() && second_player->denied(); }));
  // The player kept its session through it all, and played on.
  EXPECT_FALSE(player->disconnected());
  const uint64_t checks = player->hash_checks();
  drive(all, 1.0);
  EXPECT_GT(player->hash_checks(), checks);
  EXPECT_EQ(player->hash_mismatches(), 0u);
  auto counters = rs.server->counters();
  EXPECT_EQ(counters.players, 3u);
  EXPECT_EQ(counters.spectators, 2u);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);

  // The recording: one player, 7, whose inputs are the player's, never the spectator's.
  auto path = rs.server->recordings().at(0);
  auto result = verify_recording(path);
  EXPECT_TRUE(result.error.empty() && !result.diverged_at) << path;
  auto rec = replay::Recording::open(path);
  ASSERT_TRUE(rec);
  auto cursor = rec->ticks_from_start();
  const game::InputFrame pushed = [&] {
    game::InputFrame f = same_id->input;
    games::SandboxRules::make_spec().input.sanitize(f);
    return f;
  }();
  uint64_t inputs = 0, pushed_seen = 0;
  while (auto t = cursor.next()) {
    for (const auto& in : t->inputs.inputs) {
      EXPECT_EQ(in.player, 7u) << "tick " << t->tick;
      ++inputs;
      if (in.frame == pushed) ++pushed_seen;
    }
    for (const auto& e : t->inputs.events) EXPECT_EQ(e.player, 7u) << "tick " << t->tick;
  }
  EXPECT_GT(inputs, 60u);  // about a second of play at 60 Hz at least
  EXPECT_EQ(pushed_seen, 0u);
}

}  // namespace
}  // namespace keel::test
