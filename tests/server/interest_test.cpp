// keel-server's interest management over real UDP on loopback: the game's relevance hook
// keeps a body from a client (weight 0) and the server honours it, and a client in a
// scene far busier than its budget is sent no more than --client-kbps allows.
#include "server_fixture.h"

#include <keel/games/sandbox.h>

namespace keel::test {
namespace {

// The sandbox (delegated to: its rules are final), but body 15 (demo.json's kinematic
// spinner, always moving) is hidden from every client, the rest weighed as usual.
class HidingRules final : public game::Rules {
 public:
  game::GameSpec spec() const override { return sandbox_.spec(); }
  void on_start(game::Match& m) override { sandbox_.on_start(m); }
  void on_join(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_join(m, s); }
  void on_leave(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_leave(m, s); }
  void on_timer(game::Match& m, uint32_t t) override { sandbox_.on_timer(m, t); }
  void before_step(game::Match& m) override { sandbox_.before_step(m); }
  void apply_input(game::Match& m, game::PlayerSlot& s, const game::InputFrame& f) override {
    sandbox_.apply_input(m, s, f);
  }
  void after_step(game::Match& m) override { sandbox_.after_step(m); }
  std::optional<std::string> match_over(const game::Match& m) const override { return sandbox_.match_over(m); }
  void relevance(const game::Match&, uint32_t, std::span<const uint32_t> bodies,
                 std::span<game::BodyInterest> out) const override {
    for (size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i] == 15) out[i].weight = 0.0f;
    }
  }

 private:
  games::SandboxRules sandbox_;
};

bool holds(const protocol::QuantSnapshot* s, uint32_t id) {
  if (s == nullptr) return false;
  return std::any_of(s->bodies.begin(), s->bodies.end(), [&](const protocol::QuantBody& b) { return b.id == id; });
}

TEST(ServerInterest, TheGamesRelevanceHookHidesABody) {
  auto opts = test_options("interest_hook");
  RunningServer rs(opts, [] { return std::make_unique<HidingRules>(); });
  auto c = rs.client(7);
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->playing() && c->snapshots() >= 30; }));
  const protocol::QuantSnapshot* held = c->latest_snapshot();
  ASSERT_NE(held, nullptr);
  EXPECT_FALSE(holds(held, 15));
  // The other moving bodies of the scene, and the player's own character, are sent.
  EXPECT_GE(held->bodies.size(), 5u);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);
}

TEST(ServerInterest, ABusySceneStaysWithinTheClientsBudget) {
  auto opts = test_options("interest_budget");
  opts.scene_path = std::string(KEEL_SOURCE_DIR) + "/scenes/pile.json";  // 1000 falling boxes
  opts.client_kbps = 48;
  RunningServer rs(opts);
  auto c = rs.client(8);
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->playing() && c->snapshots() >= 5; }));
  const double t0 = seconds_now();
  const uint64_t bytes0 = c->bytes_received();
  drive({c.get()}, 2.0);
  const double seconds = seconds_now() - t0;
  const double received = double(c->bytes_received() - bytes0);
  const double rate = opts.client_kbps * 125.0;
  // UDP payload received; the budget counts 28 more bytes a datagram, so this is looser
  // than what the server holds itself to, by at most a quarter second of burst.
  EXPECT_LE(received, rate * seconds + rate * 0.25 + 2000);
  // And the budget is used: a falling pile needs far more than 48 kbit/s.
  EXPECT_GE(received, 0.6 * rate * seconds);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);
}

// A client's hello may lower its budget (never raise it): two clients of one busy match,
// one asking for 24 kbit/s of the server's 64, get about what each asked for.
TEST(ServerInterest, AClientMayAskForLessThanTheServersBudget) {
  auto opts = test_options("interest_hello_budget");
  opts.scene_path = std::string(KEEL_SOURCE_DIR) + "/scenes/pile.json";
  opts.client_kbps = 64;
  RunningServer rs(opts);
  TestClientOptions slow_options;
  slow_options.server = rs.address;
  slow_options.client_id = 10;
  slow_options.max_kbps = 24;
  auto slow = std::make_unique<TestClient>(rs.io, slow_options);
  slow->start(seconds_now());
  auto full = rs.client(11);
  ASSERT_TRUE(drive({slow.get(), full.get()}, 5.0, [&] {
    return slow->playing() && full->playing() && slow->snapshots() >= 5 && full->snapshots() >= 5;
  }));
  const double t0 = seconds_now();
  const uint64_t slow0 = slow->bytes_received(), full0 = full->bytes_received();
  drive({slow.get(), full.get()}, 2.0);
  const double seconds = seconds_now() - t0;
  const double slow_rate = double(slow->bytes_received() - slow0) / seconds;
  const double full_rate = double(full->bytes_received() - full0) / seconds;
  EXPECT_LE(slow_rate * seconds, 24 * 125.0 * (seconds + 0.25) + 2000);
  EXPECT_GE(slow_rate, 24 * 125.0 * 0.6);
  EXPECT_GE(full_rate, 64 * 125.0 * 0.6);
  EXPECT_GT(full_rate, 1.8 * slow_rate);
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);
}

}  // namespace
}  // namespace keel::test
