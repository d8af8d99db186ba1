// End to end: the client SDK and keel-bot against a real keel-server process on
// 127.0.0.1, with the server's recording as the ground truth. Each test starts its own
// server on a free port and stops it; each is bounded (the lossy run takes 10 s, see
// docs/client-sdk.md). Skipped, saying why, when keel-server has not been built.
#include "test_util.h"

#include <keel/client/client.h>
#include <keel/protocol/snapshot_codec.h>
#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace keel::client {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string bin(const std::string& name) { return std::string(KEEL_BINARY_DIR) + "/bin/" + name; }

// A UDP port nobody holds right now on 127.0.0.1.
uint16_t free_udp_port() {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a command line, returns its exit status; output goes to `out` when given.
int run(const std::string& cmd, std::string* out = nullptr) {
  std::string full = cmd + " > " + (out ? "/tmp/keel_e2e_cmd_" + std::to_string(::getpid()) : "/dev/null") + " 2>&1";
  int rc = std::system(full.c_str());
  if (out) *out = read_text("/tmp/keel_e2e_cmd_" + std::to_string(::getpid()));
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class ServerProcess {
 public:
  ServerProcess(const fs::path& dir) : dir_(dir) {
    fs::create_directories(dir_ / "rec");
    port_ = free_udp_port();
    address_ = "127.0.0.1:" + std::to_string(port_);
    std::string log = (dir_ / "server.log").string();
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::string exe = bin("keel-server");
      std::string scene = std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json";
      std::string rec = (dir_ / "rec").string();
      ::execl(exe.c_str(), exe.c_str(), "--scene", scene.c_str(), "--bind", address_.c_str(), "--record",
              rec.c_str(), "--status-interval", "0", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Ready when it says so (bounded).
    for (int i = 0; i < 100 && log_text().find("server_started") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~ServerProcess() { stop(); }

  /// SIGTERM and wait (the recording is finished on a clean shutdown); SIGKILL after 5 s.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  bool ready() { return log_text().find("server_started") != std::string::npos; }
  std::string log_text() const { return read_text(dir_ / "server.log"); }
  const std::string& address() const { return address_; }
  /// The recording of match `id` (the newest if several).
  fs::path recording(uint64_t id) const {
    fs::path best;
    std::string prefix = "match-" + std::to_string(id) + "-";
    for (auto& e : fs::directory_iterator(dir_ / "rec")) {
      std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) == 0 && e.path().extension() == ".krec" && (best.empty() || n > best.filename().string())) {
        best = e.path();
      }
    }
    return best;
  }
  std::vector<fs::path> server_dumps() const {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(dir_ / "rec")) {
      if (e.path().filename().string().find(".desync-") != std::string::npos) out.push_back(e.path());
    }
    return out;
  }

 private:
  fs::path dir_;
  uint16_t port_ = 0;
  std::string address_;
  pid_t pid_ = 0;
};

class EndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(bin("keel-server"))) GTEST_SKIP() << "keel-server not built: " << bin("keel-server");
    dir_ = fs::path(::testing::TempDir()) /
           ("keel_client_e2e_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ready()) << server_->log_text();
  }
  nlohmann::json bot(const std::string& args) {
    fs::path summary = dir_ / "summary.json";
    std::string out;
    int rc = run(bin("keel-bot") + " --server " + server_->address() + " --quiet --summary " + summary.string() +
                 " " + args, &out);
    EXPECT_EQ(rc, 0) << out;
    return nlohmann::json::parse(read_text(summary), nullptr, false);
  }
  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(EndToEnd, InterpolationRendersTheRecordedStateWithinQuantisation) {
  std::string error;
  auto transport = open_udp_transport(server_->address(), error);
  ASSERT_TRUE(transport) << error;
  ClientConfig cfg;
  cfg.input_source = [](uint64_t tick) { return protocol::dequantize_input(testing::walk(1, tick, 23)); };
  Client c(std::move(transport), cfg);
  auto token = mint_token_for(protocol::development_token_key(), 501, 0, server_->address());
  ASSERT_TRUE(token);
  const auto start = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  c.connect(*token, now());
  while (now() < 3.0) {
    c.update(now());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(c.state(), State::Playing);
  ASSERT_GT(c.stats().snapshots_received, 40u);
  std::vector<uint64_t> ticks = c.snapshots().ticks();
  c.disconnect(now());
  server_->stop();

  auto rec = replay::Recording::open(server_->recording(0).string());
  ASSERT_TRUE(rec) << rec.error().message;
  ASSERT_FALSE(ticks.empty());
  auto r = replay::Replay::start(*rec, ticks.front());
  ASSERT_TRUE(r) << "tick " << ticks.front() << ": " << r.error().message;
  size_t compared = 0;
  for (uint64_t tick : ticks) {
    while (r->tick() < tick) ASSERT_TRUE(r->step());
    for (const sim::BodyState& b : protocol::snapshot_bodies(r->match().world())) {
      auto p = c.pose_at_tick(b.id, static_cast<double>(tick));
      ASSERT_TRUE(p) << "body " << b.id << " tick " << tick;
      // Half a grid step (1/512 m) per axis, plus float rounding of the dequantised value.
      for (int a = 0; a < 3; ++a) {
        EXPECT_LE(std::fabs(p->position[a] - b.position[a]), 1.0 / 1024 + 1e-5) << "body " << b.id << " tick " << tick;
      }
      EXPECT_GT(std::fabs(glm::dot(p->rotation, b.rotation)), 0.99999f);
      ++compared;
    }
  }
  EXPECT_GT(compared, 200u);
}

TEST_F(EndToEnd, FourPredictingBotsOnABadLinkNeverDesync) {
  // 20% loss, 5% duplication, 10% reordering, 80 +/- 30 ms each way, for 20 s.
  nlohmann::json s = bot("--bots 4 --mode predict --seconds 20 --loss 0.2 --duplicate 0.05 --reorder 0.1 "
                         "--latency-ms 80 --jitter-ms 30 --match 0 --first-client-id 100");
  ASSERT_FALSE(s.is_discarded());
  EXPECT_EQ(s["bots"], 4);
  EXPECT_EQ(s["connected"], 4);
  EXPECT_EQ(s["hash_mismatches"], 0);
  EXPECT_GT(s["rollbacks"].get<uint64_t>(), 0u);
  for (const auto& b : s["per_bot"]) {
    SCOPED_TRACE(b.dump());
    EXPECT_EQ(b["hash_checks"], b["confirmed_ticks"]);  // every confirmed tick checked
    EXPECT_GT(b["confirmed_ticks"].get<uint64_t>(), 400u);
    EXPECT_EQ(b["hash_mismatches"], 0);
    EXPECT_EQ(b["server_desyncs"], 0);
    // Every input sent was applied at its tick or counted late, except the newest ones
    // whose frames had not come back when the run ended (under a second's worth).
    uint64_t accounted = b["inputs_applied"].get<uint64_t>() + b["inputs_late"].get<uint64_t>();
    EXPECT_LE(accounted, b["inputs_sent"].get<uint64_t>());
    EXPECT_LT(b["inputs_sent"].get<uint64_t>() - accounted, 60u);
    EXPECT_LT(b["inputs_late"].get<uint64_t>() * 10, b["inputs_sent"].get<uint64_t>());
  }
  server_->stop();
  EXPECT_EQ(server_->log_text().find("desync"), std::string::npos);
  std::string out;
  EXPECT_EQ(run(bin("keel-replay") + " verify " + server_->recording(0).string(), &out), 0) << out;
  EXPECT_NE(out.find("verified"), std::string::npos) << out;
}

TEST_F(EndToEnd, PerturbedClientIsDetectedAtTheNextConfirmedTickAndItsDumpDiffs) {
  fs::path dumps = dir_ / "client-dumps";
  nlohmann::json s = bot("--bots 1 --mode predict --seconds 4 --perturb-at 2 --match 0 --first-client-id 200 "
                         "--dump-dir " + dumps.string());
  ASSERT_FALSE(s.is_discarded());
  const auto& b = s["per_bot"][0];
  ASSERT_TRUE(b.contains("perturbed_tick")) << b.dump();
  uint64_t at = b["perturbed_tick"].get<uint64_t>();
  // The state at `at` was flipped; the first state stepped from it is checked and fails.
  EXPECT_EQ(b["first_mismatch_tick"].get<uint64_t>(), at + 1);
  EXPECT_GE(b["hash_mismatches"].get<uint64_t>(), 1u);
  EXPECT_EQ(b["resyncs"], 1);
  std::string dump = b["dump"].get<std::string>();
  ASSERT_TRUE(fs::exists(dump)) << dump;
  server_->stop();
  // The server heard the report too, and diffing the client's dump against the server's
  // recording names what differs at that tick.
  EXPECT_NE(server_->log_text().find("tick=" + std::to_string(at + 1)), std::string::npos) << server_->log_text();
  std::string out;
  EXPECT_EQ(run(bin("keel-replay") + " diff " + server_->recording(0).string() + " " + dump, &out), 1) << out;
  EXPECT_NE(out.find(std::to_string(at + 1)), std::string::npos) << out;
  auto server_dumps = server_->server_dumps();
  ASSERT_FALSE(server_dumps.empty());
  EXPECT_EQ(run(bin("keel-replay") + " diff " + server_dumps.front().string() + " " + dump, &out), 1) << out;
}

TEST_F(EndToEnd, ReconnectsAfterAThreeSecondOutage) {
  nlohmann::json s = bot("--bots 1 --seconds 8 --outage-at 2 --outage-seconds 3 --token-timeout 1 "
                         "--match 0 --first-client-id 300");
  ASSERT_FALSE(s.is_discarded());
  const auto& b = s["per_bot"][0];
  EXPECT_EQ(s["connected"], 1) << b.dump();
  EXPECT_GE(b["timeouts"].get<uint64_t>(), 1u);
  EXPECT_EQ(b["reconnects"], 1);
  EXPECT_GT(b["snapshots_received"].get<uint64_t>(), 100u);  // about 30/s outside the outage
  EXPECT_NE(server_->log_text().find("client_left"), std::string::npos);
}

TEST_F(EndToEnd, TheCExamplePlays) {
  std::string out;
  EXPECT_EQ(run(bin("keel-client-c-example") + " " + server_->address() + " 2 predict", &out), 0) << out;
  EXPECT_NE(out.find("body 2 at"), std::string::npos) << out;
}

}  // namespace
}  // namespace keel::client
