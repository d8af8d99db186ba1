// A pushball match between real processes under a bad network: keel-server running the
// pushball module and recording, four predicting keel-bots (seek inputs, so goals
// happen) behind 15% loss, 5% duplication, 10% reordering and 60 +/- 20 ms each way, and
// the C game example playing a match of its own. The bots' summary must show every bot
// playing with zero mismatches over thousands of hash checks, rollbacks, and rollbacks
// across state changes; the recording must verify with the module, and be refused without
// it and with another build of it.
#include "../common/loopback.h"
#include "process_helpers.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace keel::test {
namespace {

namespace fs = std::filesystem;

std::string bin(const std::string& name) { return std::string(KEEL_BINARY_DIR) + "/bin/" + name; }
std::string pushball_module() { return std::string(KEEL_BINARY_DIR) + "/games/pushball.so"; }

using keel::testing::read_text;

// Runs a program to its end (at most `seconds`); its exit code, -1 when it did not exit.
int run_to_end(std::vector<std::string> args, const std::string& out_path, double seconds) {
  const pid_t pid = spawn_process(std::move(args), out_path);
  if (pid <= 0) return -1;
  auto status = wait_for_exit(pid, seconds);
  return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

TEST(PushballMatch, FourPredictingBotsOnABadLinkScoreWithoutADesyncAndTheRecordingVerifies) {
  for (const std::string& need : {bin("keel-bot"), bin("keel-replay"), pushball_module()}) {
    if (!fs::exists(need)) GTEST_SKIP() << need << " is not built";
  }
  const std::string dir = fresh_dir("pushball_match");
  const std::string address = "127.0.0.1:" + std::to_string(free_port(false));
  const pid_t server = spawn_process({bin("keel-server"), "--game", pushball_module(), "--scene",
                                      std::string(KEEL_SOURCE_DIR) + "/games/pushball/pushball.json", "--bind",
                                      address, "--record", dir, "--status-interval", "0"},
                                     dir + "/server.txt");
  ASSERT_GT(server, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  // The C example of a module's game, in a match of its own, while the bots play.
  const bool c_example = fs::exists(bin("keel-client-c-game-example"));
  pid_t c_pid = 0;
  if (c_example) {
    c_pid = spawn_process({bin("keel-client-c-game-example"), pushball_module(), address, "4", "7"},
                          dir + "/c_example.txt");
  }
  // The bots play 20 s, and on until a goal is confirmed (at most 50 s): seeking bots
  // sometimes hold the ball in a stand-off for long. The match may end by score before
  // the run does: the server then sends each bot one Disconnect{MatchOver}, which the
  // lossy link may eat. A 60 s token time-out keeps such a bot waiting (playing, with nothing to play) rather than reconnecting into a fresh
  // match 1 before the run ends.
  const std::string summary_path = dir + "/bots.json";
  const int bots_rc = run_to_end({bin("keel-bot"), "--server", address, "--game", pushball_module(), "--mode",
                                  "predict", "--bots", "4", "--loss", "0.15", "--duplicate", "0.05", "--reorder", "0.1",
                                  "--latency-ms", "60", "--jitter-ms", "20", "--inputs", "seek", "--seconds", "20",
                                  "--until-event", "goal", "--max-seconds", "50", "--match", "1",
                                  "--token-timeout", "60", "--summary", summary_path, "--quiet"},
                                 dir + "/bots.txt", 65.0);
  std::optional<int> c_status = c_pid > 0 ? wait_for_exit(c_pid, 10.0) : std::nullopt;
  kill(server, SIGTERM);
  auto server_status = wait_for_exit(server, 10.0);
  ASSERT_TRUE(server_status) << "keel-server did not stop";
  EXPECT_TRUE(WIFEXITED(*server_status) && WEXITSTATUS(*server_status) == 0) << read_text(dir + "/server.txt");
  ASSERT_EQ(bots_rc, 0) << read_text(dir + "/bots.txt");
  if (c_example) {
    ASSERT_TRUE(c_status);
    EXPECT_TRUE(WIFEXITED(*c_status) && WEXITSTATUS(*c_status) == 0) << read_text(dir + "/c_example.txt");
    const std::string c_out = read_text(dir + "/c_example.txt");
    EXPECT_NE(c_out.find("input 0: drive stick"), std::string::npos) << c_out;
    EXPECT_NE(c_out.find("event kickoff"), std::string::npos) << c_out;
  }

  const nlohmann::json s = nlohmann::json::parse(read_text(summary_path), nullptr, false);
  ASSERT_FALSE(s.is_discarded());
  EXPECT_EQ(s["bots"], 4);
  EXPECT_EQ(s["connected"], 4);
  for (const auto& b : s["per_bot"]) {
    SCOPED_TRACE("bot " + b["bot"].dump());
    EXPECT_GT(b["confirmed_ticks"].get<uint64_t>(), 300u);  // played at least 5 s of the match
    EXPECT_EQ(b["hash_checks"], b["confirmed_ticks"]);
    EXPECT_EQ(b["hash_mismatches"], 0);
    EXPECT_EQ(b["server_game"], "pushball");
    EXPECT_GT(b["rollbacks"].get<uint64_t>(), 0u);
  }
  const uint64_t checks = s["hash_checks"], rollbacks = s["rollbacks"];
  const uint64_t across = s["rollbacks_across_state_changes"];
  // A goal changes the score: the rollbacks whose range held one crossed a score change.
  const uint64_t across_goal = s["rollbacks_across_event"].value("goal", uint64_t{0});
  const uint64_t goals = s["game_events"].value("goal", uint64_t{0});
  std::printf("pushball match: %llu confirmed ticks, %llu hash checks, %llu mismatches, %llu rollbacks, "
              "%llu across events, %llu across a score change (goal), %llu goals, %llu kickoffs, stopped by %s "
              "after %.1f s\n",
              (unsigned long long)s["confirmed_ticks"].get<uint64_t>(), (unsigned long long)checks,
              (unsigned long long)s["hash_mismatches"].get<uint64_t>(), (unsigned long long)rollbacks,
              (unsigned long long)across, (unsigned long long)across_goal, (unsigned long long)goals,
              (unsigned long long)s["game_events"].value("kickoff", uint64_t{0}), s["stopped"].get<std::string>().c_str(),
              s["seconds"].get<double>());
  EXPECT_EQ(s["hash_mismatches"], 0);
  EXPECT_GT(checks, 2000u);
  EXPECT_GT(rollbacks, 0u);
  EXPECT_GT(across, 0u);
  EXPECT_LT(across, rollbacks);
  EXPECT_GT(across_goal, 0u);
  EXPECT_LE(across_goal, across);
  EXPECT_GE(goals, 1u);

  std::string recording;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("match-1-", 0) == 0 && e.path().extension() == ".krec") {
      recording = e.path().string();
    }
  }
  ASSERT_FALSE(recording.empty());
  EXPECT_EQ(run_to_end({bin("keel-replay"), "--game", pushball_module(), "verify", recording}, dir + "/verify.txt", 60.0),
            0)
      << read_text(dir + "/verify.txt");
  EXPECT_NE(read_text(dir + "/verify.txt").find("verified"), std::string::npos);
  // Without the module: refused, naming the game.
  EXPECT_NE(run_to_end({bin("keel-replay"), "verify", recording}, dir + "/bare.txt", 30.0), 0);
  EXPECT_NE(read_text(dir + "/bare.txt").find("\"pushball\""), std::string::npos) << read_text(dir + "/bare.txt");
  // Another build of the same game (one byte more, so another build id): refused, naming it.
  const std::string other = dir + "/other/pushball.so";
  fs::create_directories(dir + "/other");
  fs::copy_file(pushball_module(), other, fs::copy_options::overwrite_existing);
  std::ofstream(other, std::ios::app) << '\0';
  EXPECT_NE(run_to_end({bin("keel-replay"), "--game", other, "verify", recording}, dir + "/other.txt", 30.0), 0);
  const std::string refused = read_text(dir + "/other.txt");
  EXPECT_NE(refused.find("module " + other + " build "), std::string::npos) << refused;
  EXPECT_NE(refused.find("from module pushball.so build "), std::string::npos) << refused;
}

}  // namespace
}  // namespace keel::test
