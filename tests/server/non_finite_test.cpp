// A world that stops being finite, as keel-server handles it: the match ends at the tick
// it happened, the log names the tick, the body and the field, the clients are told the
// match is over, and the recording is finished (it opens, and holds every tick up to and
// including the one that went wrong) rather than streaming NaN.
#include "../common/loopback.h"
#include "server_fixture.h"

#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace keel::test {
namespace {

// The sandbox, plus a fault: from tick `at`, a player's input gives the demo scene's
// sphere (body 8) a NaN velocity through the World API, which takes what rules set as
// given. (Not the player's character: the character controller sets its velocity itself.)
class SandboxGoingNaN final : public game::Rules {
 public:
  explicit SandboxGoingNaN(uint64_t at) : at_(at) {}
  game::GameSpec spec() const override { return sandbox_.spec(); }
  void on_join(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_join(m, s); }
  void on_leave(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_leave(m, s); }
  void apply_input(game::Match& m, game::PlayerSlot& s, const game::InputFrame& f) override {
    sandbox_.apply_input(m, s, f);
    if (m.tick() < at_) return;
    sim::World& w = m.world_for_rules();
    w.set_linear_velocity(w.find_body(8), sim::Vec3(std::numeric_limits<float>::quiet_NaN(), 0, 0));
  }

 private:
  games::SandboxRules sandbox_;
  uint64_t at_;
};

// The sandbox, plus a fault a module could have: from tick `at`, applying an input throws.
class SandboxThrowing final : public game::Rules {
 public:
  explicit SandboxThrowing(uint64_t at) : at_(at) {}
  game::GameSpec spec() const override { return sandbox_.spec(); }
  void on_join(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_join(m, s); }
  void on_leave(game::Match& m, game::PlayerSlot& s) override { sandbox_.on_leave(m, s); }
  void apply_input(game::Match& m, game::PlayerSlot& s, const game::InputFrame& f) override {
    if (m.tick() >= at_) throw std::runtime_error("the goal table is empty");
    sandbox_.apply_input(m, s, f);
  }

 private:
  games::SandboxRules sandbox_;
  uint64_t at_;
};

using keel::testing::read_text;

TEST(ServerNonFinite, AMatchWhoseWorldGoesNaNEndsWithTheBodyNamedAndItsRecordingFinished) {
  static constexpr uint64_t kAt = 90;  // 1.5 s at 60 Hz: time to connect and play first
  auto opts = test_options("non_finite");
  opts.log_file = opts.record_dir + "/server.log";
  opts.log_level = "info";
  std::vector<std::string> recordings;
  {
    RunningServer rs(opts, [] { return std::make_unique<SandboxGoingNaN>(kAt); });
    auto a = rs.client(1, /*predict=*/false, /*match=*/7);
    ASSERT_TRUE(drive({a.get()}, 5.0, [&] { return a->playing(); }));
    ASSERT_TRUE(drive({a.get()}, 5.0, [&] { return a->disconnected(); }));
    EXPECT_EQ(a->disconnect_reason(), protocol::fb::DenyReason::MatchOver);
    EXPECT_TRUE(drive({}, 2.0, [&] { return rs.server->counters().matches <= 1; }))
        << "match 7 was ended and freed; the start-up match (no players) goes on";
    recordings = rs.server->recordings();
  }
  const std::string log = read_text(opts.log_file);
  const size_t at = log.find("match_aborted_non_finite");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find("tick"), std::string::npos) << line;
  EXPECT_NE(line.find("body=8"), std::string::npos) << line;
  EXPECT_NE(line.find("position.x"), std::string::npos) << line;  // the NaN velocity moved it
  EXPECT_NE(log.find("the world is no longer finite at tick"), std::string::npos) << log;

  // Match 7's recording: finished, and its last tick is the one the world went wrong at
  // (the NaN velocity is set before the step of tick kAt, the check runs after it).
  ASSERT_EQ(recordings.size(), 2u);
  bool seen = false;
  for (const std::string& path : recordings) {
    auto rec = replay::Recording::open(path);
    ASSERT_TRUE(rec) << path;
    EXPECT_TRUE(rec->index().finished) << path;
    if (path.find("/match-7-") == std::string::npos) continue;
    seen = true;
    EXPECT_GE(rec->index().last_tick, kAt) << path;
    EXPECT_LE(rec->index().last_tick, kAt + 1) << path;
  }
  EXPECT_TRUE(seen) << "match 7 was recorded";
}

// A hook that throws ends its own match (its clients are told MatchOver, the reason is
// logged) and nothing else: the server and its other match go on.
TEST(ServerNonFinite, AMatchWhoseRulesThrowEndsAloneWithTheReasonLogged) {
  static constexpr uint64_t kAt = 90;
  auto opts = test_options("rules_throw");
  opts.log_file = opts.record_dir + "/server.log";
  opts.log_level = "info";
  {
    RunningServer rs(opts, [] { return std::make_unique<SandboxThrowing>(kAt); });
    auto a = rs.client(1, /*predict=*/false, /*match=*/7);
    ASSERT_TRUE(drive({a.get()}, 5.0, [&] { return a->playing(); }));
    ASSERT_TRUE(drive({a.get()}, 5.0, [&] { return a->disconnected(); }));
    EXPECT_EQ(a->disconnect_reason(), protocol::fb::DenyReason::MatchOver);
    EXPECT_TRUE(drive({}, 2.0, [&] { return rs.server->counters().matches <= 1; }));
    const uint64_t before = rs.server->primary_tick();
    EXPECT_TRUE(drive({}, 1.0, [&] { return rs.server->primary_tick() > before + 10; }))
        << "the start-up match (no players, so no input to throw on) keeps stepping";
  }
  const std::string log = read_text(opts.log_file);
  const size_t at = log.find("match_aborted_rules_failed");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find("the goal table is empty"), std::string::npos) << line;
  EXPECT_NE(line.find("match=7"), std::string::npos) << line;
}

// keel-server with a scene whose numbers are finite but absurd: it refuses to start,
// prints the sim's message naming the body, collider and field, and exits 2 (before, a
// body at 1e30 m loaded, and then no client could join, with nothing logged).
TEST(ServerNonFinite, AnAbsurdSceneIsRefusedAtStartUpNamingTheField) {
  const std::string dir = fresh_dir("absurd_scene");
  const std::string scene = dir + "/absurd.json";
  const std::string ball = R"({"id": 2, "motion": "Dynamic", "colliders": [{"shape": "Sphere", "radius": 0.5}]})";
  struct Case {
    std::string scene;
    const char* message;
  } cases[] = {
      {R"("bodies": [{"id": 2, "motion": "Dynamic", "position": {"x": 0, "y": 1e30, "z": 0},
          "colliders": [{"shape": "Sphere", "radius": 0.5}]}])",
       "absurd.json: body 2: position.y must be within +-100000 (got 1e+30)"},
      {R"("bodies": [{"id": 3, "motion": "Static", "colliders": [{"shape": "Box",
          "half_extents": {"x": 1e30, "y": 1, "z": 1}}]}])",
       "absurd.json: body 3: colliders[0].half_extents.x must be at most 10000 (got 1e+30)"},
      {R"("gravity": {"x": 0, "y": -1e30, "z": 0}, "bodies": [)" + ball + "]",
       "absurd.json: settings: gravity.y must be within +-1000 (got -1e+30)"},
      {R"("bodies": [)" + ball + R"(], "spawn_points": [{"position": {"x": 2e5, "y": 0, "z": 0}}])",
       "absurd.json: spawn_points[0].position.x: must be within +-100000 (got 2e+05)"},
  };
  for (const Case& c : cases) {
    std::ofstream(scene) << R"({"name": "absurd", "tick_rate": 60, )" << c.scene << "}";
    const std::string record = dir + "/rec";
    const char* argv[] = {"keel-server", "--scene", scene.c_str(), "--bind", "127.0.0.1:0", "--record",
                          record.c_str()};
    ::testing::internal::CaptureStderr();
    const int code = server::server_main(int(std::size(argv)), argv);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, 2) << err;
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace keel::test
