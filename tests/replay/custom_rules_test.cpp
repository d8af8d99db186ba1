// A recording of a match that ran a user's own rules: the replay library and the
// keel-replay command line (cli::run_cli) re-run it when given a registry holding those
// rules, and refuse it clearly (exit 2, naming the rules) when not.
#include "replay_test_util.h"
#include "replay_cli_util.h"
#include "../common/ball_rules.h"

#include <keel/replay/commands.h>
#include <keel/replay/replayer.h>
#include <keel/game/registry.h>
#include <keel/games/sandbox.h>

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

namespace keel::replay::test {
namespace {

// Rules unlike the sandbox's: each player is a weightless ball pushed along its move
// vector (no trigonometry needed). Replaying it with the sandbox rules would spawn
// capsules instead, so only the right rules reproduce the recorded hashes.
std::unique_ptr<game::Rules> drift_rules() { return std::make_unique<test_support::BallRules>("drift", 1.0f, 0.0f); }

game::RulesRegistry with_drift() {
  return games::builtin_games().add([] { return drift_rules(); });
}

// 90 ticks of the scripted three-player session, stepped with the drift rules.
void record_drift(const std::string& path) {
  auto match = game::Match::create(load_scene("demo.json"), drift_rules());
  ASSERT_TRUE(match) << match.error().message;
  auto writer = RecordingWriter::create(path, *match, WriterOptions{});
  ASSERT_TRUE(writer) << writer.error().message;
  for (uint64_t t = 1; t <= 90; ++t) {
    const game::TickInputs in = scripted_inputs(t);
    match->step(in);
    ASSERT_TRUE(writer->record(in, *match, match->hash()));
  }
  ASSERT_TRUE(writer->finish());
}

TEST(RulesRegistry, BuiltinKnowsSandboxAndMakesWhatItNames) {
  game::RulesRegistry builtin = games::builtin_games();
  EXPECT_EQ(builtin.names(), std::vector<std::string>{"sandbox"});
  auto sandbox = builtin.make("sandbox");
  ASSERT_TRUE(sandbox);
  EXPECT_EQ((*sandbox)->spec().name, "sandbox");
  auto unknown = builtin.make("drift");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "game \"drift\" is not known to this program (it knows: sandbox; load a game module with --game PATH)");
  EXPECT_EQ(with_drift().names(), (std::vector<std::string>{"drift", "sandbox"}));
}

TEST(RulesRegistry, AFactoryMakingOtherRulesThanItsNameIsRefused) {
  game::RulesRegistry r;
  r.add("hover", [] { return drift_rules(); });
  auto made = r.make("hover");
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().message, "the factory registered for game \"hover\" makes a game named \"drift\"");
  EXPECT_FALSE(game::RulesRegistry().make("sandbox"));
}

TEST(CustomRules, VerifyNeedsTheRulesAndThenReproducesEveryTick) {
  TempDir dir;
  const std::string rec = dir.path("drift.krec");
  record_drift(rec);
  auto r = Recording::open(rec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->header().game, "drift");

  VerifyResult builtin = verify(*r, VerifyOptions{});
  EXPECT_NE(builtin.error.find("the recording's game \"drift\" is not known to this program (it knows: sandbox"),
            std::string::npos)
      << builtin.error;

  const game::RulesRegistry rules = with_drift();
  VerifyOptions options;
  options.rules = &rules;
  VerifyResult own = verify(*r, options);
  EXPECT_TRUE(own.error.empty()) << own.error;
  EXPECT_FALSE(own.diverged_at);
  EXPECT_EQ(own.verified, 90u);

  // Seeking past a checkpoint restores the drift rules' players and bodies too.
  ReplayOptions ro;
  ro.rules = &rules;
  auto at = Replay::start(*r, 75, ro);
  ASSERT_TRUE(at) << at.error().message;
  EXPECT_EQ(at->match().hash(), at->recorded_hash());
  EXPECT_EQ(at->match().spec().name, "drift");
}

TEST(CustomRules, TheCommandLineRunsWithTheCallersRules) {
  TempDir dir;
  const std::string rec = dir.path("drift.krec");
  record_drift(rec);
  std::string out;
  EXPECT_EQ(run({"info", rec}, replay::builtin_rules(), out), cli::kOk) << out;
  EXPECT_NE(out.find("game: drift version 1 (not known to this program"), std::string::npos) << out;
  EXPECT_EQ(run({"info", rec}, with_drift(), out), cli::kOk) << out;
  EXPECT_NE(out.find("game: drift version 1\n"), std::string::npos) << out;
  // What stock keel-replay does with it: a clear refusal, exit 2.
  EXPECT_EQ(run({"verify", rec}, replay::builtin_rules(), out), cli::kError) << out;
  EXPECT_NE(out.find("game \"drift\" is not known to this program (it knows: sandbox"), std::string::npos) << out;
  // A user's replay tool: the same command line, their rules registered.
  const game::RulesRegistry rules = with_drift();
  EXPECT_EQ(run({"verify", rec}, rules, out), cli::kOk) << out;
  EXPECT_NE(out.find("verified 90 ticks"), std::string::npos) << out;
  EXPECT_EQ(run({"dump", rec, "--tick", "40"}, rules, out), cli::kOk) << out;
  EXPECT_NE(out.find("\"tick\""), std::string::npos) << out;
  EXPECT_EQ(out.find("does not match"), std::string::npos) << out;
  EXPECT_EQ(run({"diff", rec, rec}, rules, out), cli::kOk) << out;
  EXPECT_EQ(run({"verify", rec, "--threads", "0"}, rules, out), cli::kError) << out;  // flags checked as before
}

}  // namespace
}  // namespace keel::replay::test
