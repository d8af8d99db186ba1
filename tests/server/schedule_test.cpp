// A match's tick schedule on an injected clock (MatchHost::run takes the time): a stall is
// caught up by at most --max-catch-up-ticks, the rest is dropped, logged and counted, the
// late ticks are counted, and the match then ticks at its rate again — exactly, with no
// machine timing in the way.
#include "server_fixture.h"
#include <keel/games/sandbox.h>

#include "log.h"
#include "match_host.h"
#include "metrics.h"
#include "net.h"
#include "router.h"

#include <keel/scene/scene.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace keel::test {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// Everything a MatchHost needs, with no sockets: a match without sessions sends nothing.
struct Host {
  server::ServerOptions options;
  std::string log_path;
  std::FILE* log_file = nullptr;
  std::unique_ptr<server::Logger> log;
  server::Metrics metrics;
  std::unique_ptr<server::DatagramSender> sender;
  server::Router router;
  std::shared_ptr<server::MatchHost> match;

  explicit Host(const std::string& name, server::RulesFactory rules = {}) {
    options = test_options(name);
    options.max_catch_up_ticks = 5;
    log_path = options.record_dir + "/server.log";
    log_file = std::fopen(log_path.c_str(), "w");
    log = std::make_unique<server::Logger>(server::LogLevel::Info, false, log_file);
    sender = std::make_unique<server::DatagramSender>(std::vector<int>{}, metrics);
    auto scene = scene::load_scene_file(demo_scene());
    if (!scene) throw std::runtime_error(scene.error().message);
    server::HostServices services{options, *log, metrics, *sender, router, std::move(rules), {}};
    server::MatchSettings settings;
    settings.scene = std::make_shared<const sim::SceneDef>(std::move(*scene));
    settings.scene_path = demo_scene();
    auto created = server::MatchHost::create(1, settings, services, server::Now{0}, false);
    if (!created) throw std::runtime_error(created.error().message);
    match = *created;
    match->start_clock(server::Now{0});
  }
  ~Host() {
    match->shutdown(server::Now{0}, protocol::fb::DenyReason::ServerShuttingDown);
    match.reset();
    std::fclose(log_file);
  }
  std::string log_text() {
    std::fflush(log_file);
    std::stringstream text;
    text << std::ifstream(log_path).rdbuf();
    return text.str();
  }
};

TEST(ServerSchedule, AStallIsCaughtUpBoundedAndTheRestDropped) {
  Host h("schedule_stall");
  server::MatchHost& m = *h.match;
  m.run(server::Now{0});  // tick 0 is due at the origin
  ASSERT_EQ(m.tick(), 1u);

  // A second without a run (a stopped process, a descheduled thread): 60 ticks are due.
  m.run(server::Now{kSecond + kSecond / 100});
  EXPECT_EQ(m.tick(), 6u) << "five ticks caught up";
  EXPECT_EQ(h.metrics.ticks_dropped.load(), 55u) << "the rest of the backlog dropped";
  // Ticks stepped more than a period after they were due: the four oldest of the five.
  EXPECT_EQ(h.metrics.ticks_late.load(), 4u);
  std::string log = h.log_text();
  EXPECT_NE(log.find("tick_backlog_dropped"), std::string::npos) << log;
  EXPECT_NE(log.find("dropped=55"), std::string::npos) << log;
  EXPECT_LE(h.metrics.schedule_error_ticks(), 1.0);

  // Back at the rate: each run at the next due time steps exactly one tick, none late.
  for (int i = 0; i < 120; ++i) {
    uint64_t before = m.tick();
    EXPECT_FALSE(m.due(server::Now{m.next_due_ns() - 1}));
    m.run(server::Now{m.next_due_ns()});
    ASSERT_EQ(m.tick(), before + 1) << "run " << i;
  }
  EXPECT_EQ(h.metrics.ticks_dropped.load(), 55u);
  EXPECT_EQ(h.metrics.ticks_late.load(), 4u);
  // Tick 181 (counted from the origin) is next, at 181/60 s rounded up to the nanosecond:
  // the schedule kept its origin through the stall.
  EXPECT_EQ(m.next_due_ns(), (181 * kSecond + 59) / 60);
  EXPECT_LE(h.metrics.schedule_error_ticks(), 1.0);
}

TEST(ServerSchedule, AShortDelayIsCaughtUpWithoutDropping) {
  Host h("schedule_delay");
  server::MatchHost& m = *h.match;
  m.run(server::Now{0});
  m.run(server::Now{45'000'000});  // 45 ms: ticks 1 and 2 are due
  EXPECT_EQ(m.tick(), 3u);
  EXPECT_EQ(h.metrics.ticks_dropped.load(), 0u);
  EXPECT_EQ(h.metrics.ticks_late.load(), 1u) << "tick 1, due 28 ms before";
}

// Sandbox rules under the sandbox name whose match is over at tick 3.
class OverAtThree final : public game::Rules {
 public:
  game::GameSpec spec() const override { return sandbox_.spec(); }
  void on_join(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_join(m, s); }
  void on_leave(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_leave(m, s); }
  void apply_input(game::Match& m, game::PlayerSlot& s, const game::InputFrame& f) override {
    sandbox_.apply_input(m, s, f);
  }
  std::optional<std::string> match_over(const game::Match& m) const override {
    return m.tick() >= 3 ? std::optional<std::string>("three") : std::nullopt;
  }

 private:
  games::SandboxRules sandbox_;
};

TEST(ServerSchedule, AMatchOverMidCatchUpStopsAtItsTick) {
  Host h("schedule_over", [] { return std::make_unique<OverAtThree>(); });
  server::MatchHost& m = *h.match;
  m.run(server::Now{0});
  m.run(server::Now{kSecond});  // five ticks due after the drop; the rules end at tick 3
  EXPECT_EQ(m.tick(), 3u);
  EXPECT_TRUE(m.over());
  EXPECT_TRUE(m.ended(server::Now{kSecond}));
  EXPECT_FALSE(m.due(server::Now{10 * kSecond}));
  EXPECT_EQ(m.end_reason(), protocol::fb::DenyReason::MatchOver);
  m.run(server::Now{2 * kSecond});
  EXPECT_EQ(m.tick(), 3u);
  EXPECT_NE(h.log_text().find("match_over"), std::string::npos);
}

}  // namespace
}  // namespace keel::test
