// A real keel-server process with --websocket: keel-bot players over WebSocket, an
// interpolating watcher over WebSocket and a UDP player share one match, which is recorded
// and verifies with keel-replay.
#include "process_helpers.h"

#include <nlohmann/json.hpp>

namespace keel::test {
namespace {

nlohmann::json read_summary(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

struct Bot {
  std::string summary;
  pid_t pid = 0;
  Bot(const std::string& dir, const std::string& name, std::vector<std::string> args) {
    summary = dir + "/" + name + ".json";
    std::vector<std::string> all = {std::string(KEEL_BINARY_DIR) + "/bin/keel-bot", "--match", "0", "--seconds", "60",
                                    "--summary", summary, "--quiet"};
    all.insert(all.end(), args.begin(), args.end());
    pid = spawn_process(all, dir + "/" + name + ".txt");
  }
  ~Bot() {
    if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  std::optional<int> wait(double seconds) {
    auto s = wait_for_exit(pid, seconds);
    pid = 0;
    return s;
  }
};

}  // namespace

TEST(WebSocketProcess, BotsOverWebSocketAndUdpPlayOneRecordedMatchThatVerifies) {
  if (!std::filesystem::exists(std::string(KEEL_BINARY_DIR) + "/bin/keel-bot")) GTEST_SKIP() << "keel-bot not built";
  std::string dir = fresh_dir("ws_process");
  const std::string udp = "127.0.0.1:" + std::to_string(free_port(false));
  const std::string ws = "127.0.0.1:" + std::to_string(free_port(true));
  const uint16_t metrics_port = free_port(true);
  pid_t server = spawn_process({std::string(KEEL_BINARY_DIR) + "/bin/keel-server", "--scene", demo_scene(), "--bind", udp,
                                "--websocket", ws, "--record", dir, "--status-interval", "0", "--metrics",
                                "127.0.0.1:" + std::to_string(metrics_port)},
                               dir + "/server.txt");
  ASSERT_GT(server, 0);
  auto metric = [&](const std::string& name) { return metric_value(http_fetch(metrics_port, "/metrics"), name); };
  const double t0 = seconds_now();
  while (metric("keel_ticks_total") < 1 && seconds_now() - t0 < 5) std::this_thread::sleep_for(std::chrono::milliseconds(20));

  Bot players(dir, "ws_players", {"--server", ws, "--websocket", "--bots", "2", "--mode", "predict", "--first-client-id", "10"});
  Bot watcher(dir, "ws_watcher", {"--server", ws, "--websocket", "--bots", "1", "--mode", "interpolate", "--inputs", "idle",
                                  "--first-client-id", "20"});
  Bot udp_player(dir, "udp_player", {"--server", udp, "--bots", "1", "--mode", "predict", "--first-client-id", "30"});
  const double t1 = seconds_now();
  while (metric("keel_players") < 4 && seconds_now() - t1 < 8) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(metric("keel_players"), 4);
  EXPECT_EQ(metric("keel_websocket_connections"), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a couple of seconds of play

  kill(server, SIGTERM);
  auto status = wait_for_exit(server, 5.0);
  ASSERT_TRUE(status) << "keel-server still running 5 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  for (Bot* b : {&players, &watcher, &udp_player}) {
    auto s = b->wait(5.0);
    ASSERT_TRUE(s) << b->summary << ": keel-bot did not end with the server";
    EXPECT_TRUE(WIFEXITED(*s) && WEXITSTATUS(*s) == 0) << b->summary;
  }
  nlohmann::json p = read_summary(players.summary), w = read_summary(watcher.summary), u = read_summary(udp_player.summary);
  EXPECT_EQ(p["connected"], 2) << p.dump();
  EXPECT_EQ(p["hash_mismatches"], 0);
  EXPECT_GT(p["confirmed_ticks"].get<uint64_t>(), 2 * 90u);  // predicting over WebSocket, hashes checked
  EXPECT_EQ(w["connected"], 1) << w.dump();
  EXPECT_GT(w["per_bot"][0]["snapshots_received"].get<uint64_t>(), 30u);
  EXPECT_EQ(u["connected"], 1) << u.dump();
  EXPECT_EQ(u["hash_mismatches"], 0);

  std::vector<std::string> recordings;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".krec") recordings.push_back(e.path().string());
  }
  ASSERT_EQ(recordings.size(), 1u);
  auto verified = verify_recording(recordings[0]);
  EXPECT_TRUE(verified.error.empty() && !verified.diverged_at) << verified.error;
  EXPECT_GT(verified.verified, 90u);
  // And with the keel-replay program itself.
  pid_t replay = spawn_process({std::string(KEEL_BINARY_DIR) + "/bin/keel-replay", "verify", recordings[0]},
                               dir + "/replay.txt");
  auto replayed = wait_for_exit(replay, 30.0);
  ASSERT_TRUE(replayed);
  EXPECT_TRUE(WIFEXITED(*replayed) && WEXITSTATUS(*replayed) == 0);
  std::stringstream out;
  out << std::ifstream(dir + "/replay.txt").rdbuf();
  EXPECT_NE(out.str().find("verified "), std::string::npos) << out.str();
}

}  // namespace keel::test
