// A game with declared state and events, recorded and re-run: the recording stores every
// step's events and the game's spec, the replay reproduces them, every tool names them by
// the game's declared names, and a re-run whose events differ (though its state hashes
// agree) is reported as a divergence.
#include "../common/loopback.h"
#include "replay_test_util.h"
#include "replay_cli_util.h"

#include <keel/game/registry.h>
#include <keel/replay/commands.h>
#include <keel/replay/replayer.h>
#include <keel/replay/view.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace keel::replay::test {
namespace {

// "beeper": every 10th step emits beep {n: the step count, loud: n % 20 == 0}; a counter
// in the match's declared state. `offset` shifts the payload only (not the state), as a
// module whose events depend on something outside its state would.
class Beeper final : public game::Rules {
 public:
  explicit Beeper(int32_t offset = 0) : offset_(offset) {}
  game::GameSpec spec() const override {
    game::GameSpec s;
    s.name = "beeper";
    s.input.add_bool("ready");
    s.state.global.add("steps", game::StateType::U32);
    game::EventType beep{"beep", {}};
    beep.payload.add_int("n", 0, 100000);
    beep.payload.add_bool("loud");
    s.events.push_back(beep);
    return s;
  }
  void after_step(game::Match& m) override {
    const game::StateRef steps{0, 1, game::StateType::U32};
    const uint32_t n = m.state().get_u32(steps) + 1;
    m.state().set_u32(steps, n);
    if (n % 10 != 0) return;
    const game::Layout& payload = m.spec().events[0].payload;
    game::Values v;
    payload.set_integer(v, 0, int32_t(n) + offset_);
    payload.set_bool(v, 1, n % 20 == 0);
    m.emit(0, v);
  }

 private:
  int32_t offset_;
};

game::RulesRegistry beeper_games(int32_t offset = 0) {
  game::RulesRegistry r;
  r.add("beeper", [offset] { return std::make_unique<Beeper>(offset); });
  return r;
}

void record_beeper(const std::string& path, uint64_t ticks, uint64_t seed = 0) {
  auto match = game::Match::create(load_scene("pyramid.json"), std::make_unique<Beeper>(), seed);
  ASSERT_TRUE(match) << match.error().message;
  WriterOptions options;
  options.checkpoint_interval = 25;
  auto writer = RecordingWriter::create(path, *match, options);
  ASSERT_TRUE(writer) << writer.error().message;
  for (uint64_t t = 1; t <= ticks; ++t) ASSERT_TRUE(step_and_record(*writer, *match, {}));
  ASSERT_TRUE(writer->finish());
}

using keel::testing::read_text;

TEST(GameRecording, EventsAreRecordedReplayedAndNamed) {
  TempDir dir;
  const std::string rec = dir.path("beeper.krec");
  record_beeper(rec, 60);
  auto r = Recording::open(rec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spec(), Beeper().spec());
  // Ticks 10, 20, ... 60 hold one beep each, with the step count as its payload.
  const game::RulesRegistry games = beeper_games();
  ReplayOptions ro;
  ro.rules = &games;
  auto replay = Replay::start(*r, 0, ro);
  ASSERT_TRUE(replay) << replay.error().message;
  int beeps = 0;
  while (replay->step()) {
    ASSERT_EQ(replay->match().events(), replay->recorded_events()) << "tick " << replay->tick();
    if (replay->tick() % 10 == 0) {
      ASSERT_EQ(replay->recorded_events().size(), 1u);
      EXPECT_EQ(r->spec().events[0].payload.integer(replay->recorded_events()[0].payload, 0), int32_t(replay->tick()));
      ++beeps;
    } else {
      EXPECT_TRUE(replay->recorded_events().empty());
    }
  }
  EXPECT_EQ(beeps, 6);

  std::string out;
  EXPECT_EQ(run({"verify", rec}, games, out), cli::kOk) << out;
  EXPECT_NE(out.find("verified 60 ticks"), std::string::npos) << out;
  EXPECT_EQ(run({"info", rec}, games, out), cli::kOk) << out;
  EXPECT_NE(out.find("events: 1\n  beep:\n    n: int 0 .. 100000"), std::string::npos) << out;
  EXPECT_NE(out.find("match state: 1 fields, 4 bytes\n  steps: u32\n"), std::string::npos) << out;
  EXPECT_EQ(run({"dump", rec, "--tick", "40"}, games, out), cli::kOk) << out;
  EXPECT_NE(out.find("\"steps\": \"40\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"event\": \"beep\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"n\": \"40\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"loud\": \"true\""), std::string::npos) << out;
  const std::string csv = dir.path("bodies.csv"), events = dir.path("events.csv");
  EXPECT_EQ(run({"export", rec, "--csv", csv, "--events", events}, games, out), cli::kOk) << out;
  EXPECT_EQ(read_text(events),
            "tick,event,payload\n10,beep,n=10 loud=false\n20,beep,n=20 loud=true\n30,beep,n=30 loud=false\n"
            "40,beep,n=40 loud=true\n50,beep,n=50 loud=false\n60,beep,n=60 loud=true\n");

  view::CollectOptions co;
  co.rules = &games;
  auto data = view::collect(rec, "", co);
  ASSERT_TRUE(data) << data.error().message;
  ASSERT_EQ(data->events.size(), 6u);
  EXPECT_EQ(data->events[1].tick, 20u);
  EXPECT_EQ(data->events[1].name, "beep");
  EXPECT_EQ(data->events[1].payload, "n=20 loud=true");
}

TEST(GameRecording, EventsThatDifferAreADivergenceEvenWhenTheStateAgrees) {
  TempDir dir;
  const std::string rec = dir.path("beeper.krec");
  record_beeper(rec, 30);
  std::string out;
  EXPECT_EQ(run({"verify", rec}, beeper_games(1), out), cli::kDiffers) << out;
  EXPECT_NE(out.find("diverged at tick 10: the state hashes agree"), std::string::npos) << out;
  EXPECT_NE(out.find("but the game events differ from the recorded ones"), std::string::npos) << out;
}

// A match created with a seed records it; the replay starts its generator from it, so it
// reproduces the recorded hashes (which cover the generator's state).
TEST(GameRecording, TheMatchSeedIsRecordedAndReplayed) {
  TempDir dir;
  const std::string rec = dir.path("seeded.krec");
  record_beeper(rec, 20, 0x5eed);
  auto r = Recording::open(rec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->header().game_seed, 0x5eedu);
  const game::RulesRegistry games = beeper_games();
  ReplayOptions ro;
  ro.rules = &games;
  auto replay = Replay::start(*r, 20, ro);
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_EQ(replay->match().hash(), replay->recorded_hash());
  auto unseeded = game::Match::create(load_scene("pyramid.json"), std::make_unique<Beeper>());
  ASSERT_TRUE(unseeded);
  EXPECT_NE(unseeded->random_state(), game::Match::create(load_scene("pyramid.json"), std::make_unique<Beeper>(), 0x5eed)->random_state());
  std::string out;
  EXPECT_EQ(run({"verify", rec}, games, out), cli::kOk) << out;
  EXPECT_EQ(run({"info", rec}, games, out), cli::kOk) << out;
  EXPECT_NE(out.find("game seed: 0000000000005eed\n"), std::string::npos) << out;
}

// Another version of the game (its spec differs) is refused before anything is re-run.
TEST(GameRecording, AnotherSpecOfTheSameGameIsRefused) {
  TempDir dir;
  const std::string rec = dir.path("beeper.krec");
  record_beeper(rec, 10);
  class BeeperV2 final : public game::Rules {
   public:
    game::GameSpec spec() const override {
      game::GameSpec s = Beeper().spec();
      s.version = 2;
      s.input.add_bool("set");
      return s;
    }
  };
  game::RulesRegistry v2;
  v2.add("beeper", [] { return std::make_unique<BeeperV2>(); });
  std::string out;
  EXPECT_EQ(run({"verify", rec}, v2, out), cli::kError) << out;
  EXPECT_NE(out.find("the recording's game \"beeper\" declares another spec (version 1) than this program's (version 2)"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace keel::replay::test
