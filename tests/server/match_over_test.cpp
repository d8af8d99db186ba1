// The rules' end condition (game::Rules::match_over) as keel-server applies it: the match
// stops at the tick the rules name, its clients are told MatchOver, its recording is
// finished and replays to the bit, and the server goes on hosting.
#include "server_fixture.h"

#include <keel/game/match.h>
#include <keel/games/sandbox.h>

namespace keel::test {
namespace {

// The sandbox's behaviour under the sandbox's name (so keel-replay re-runs a recording
// with the stock rules) plus an end condition: the match is over at tick `end`.
class SandboxEndingAt final : public game::Rules {
 public:
  explicit SandboxEndingAt(uint64_t end) : end_(end) {}
  game::GameSpec spec() const override { return sandbox_.spec(); }
  void on_join(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_join(m, s); }
  void on_leave(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_leave(m, s); }
  void apply_input(game::Match& m, game::PlayerSlot& s, const game::InputFrame& f) override {
    sandbox_.apply_input(m, s, f);
  }
  std::optional<std::string> match_over(const game::Match& m) const override {
    if (m.tick() < end_) return std::nullopt;
    return "reached tick " + std::to_string(end_);
  }

 private:
  games::SandboxRules sandbox_;
  uint64_t end_;
};

server::RulesFactory ending_at(uint64_t end) {
  return [end] { return std::make_unique<SandboxEndingAt>(end); };
}

TEST(ServerRules, MatchOverEndsTheMatchTellsClientsAndFinishesTheRecording) {
  constexpr uint64_t kEnd = 120;  // 2 s at 60 Hz: time to connect and play first
  auto opts = test_options("match_over");
  RunningServer rs(opts, ending_at(kEnd));
  auto a = rs.client(1, /*predict=*/true, /*match=*/7);
  auto b = rs.client(2, /*predict=*/false, /*match=*/7);
  ASSERT_TRUE(drive({a.get(), b.get()}, 5.0, [&] { return a->playing() && b->playing(); }));
  ASSERT_TRUE(drive({a.get(), b.get()}, 5.0, [&] { return a->disconnected() && b->disconnected(); }));
  EXPECT_EQ(a->disconnect_reason(), protocol::fb::DenyReason::MatchOver);
  EXPECT_EQ(b->disconnect_reason(), protocol::fb::DenyReason::MatchOver);
  // Both matches (the start-up one and match 7) ended and were freed; the server runs on.
  EXPECT_TRUE(drive({}, 2.0, [&] { return rs.server->counters().matches == 0; }));
  EXPECT_EQ(rs.server->counters().players, 0u);

  auto recordings = rs.server->recordings();
  ASSERT_EQ(recordings.size(), 2u);
  for (const std::string& path : recordings) {
    auto rec = replay::Recording::open(path);
    ASSERT_TRUE(rec) << path;
    EXPECT_TRUE(rec->index().finished) << path;
    auto result = verify_recording(path);
    EXPECT_TRUE(result.error.empty() && !result.diverged_at) << path << ": " << result.error;
    EXPECT_EQ(result.verified, kEnd) << path;
  }

  // A new client for match 7 gets a fresh match, which the rules end in its turn.
  auto c = rs.client(3, false, 7);
  EXPECT_TRUE(drive({c.get()}, 5.0, [&] { return c->disconnected(); }));
  EXPECT_EQ(c->disconnect_reason(), protocol::fb::DenyReason::MatchOver);
  EXPECT_EQ(rs.server->recordings().size(), 3u);
}

TEST(ServerRules, StopAfterTicksStopsWhenTheStartUpMatchIsOverFirst) {
  auto opts = test_options("match_over_stop");
  opts.stop_after_ticks = 100000;  // never reached: the rules end the match at tick 30
  RunningServer rs(opts, ending_at(30));
  double t0 = seconds_now();
  EXPECT_EQ(rs.server->wait(), 0);
  EXPECT_LT(seconds_now() - t0, 3.0);
  auto result = verify_recording(rs.server->recordings().at(0));
  EXPECT_EQ(result.verified, 30u);
}

}  // namespace
}  // namespace keel::test
