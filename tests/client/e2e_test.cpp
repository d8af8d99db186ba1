// End to end: the client SDK and keel-bot against a real keel-server process on
// 127.0.0.1, with the server's recording as the ground truth. Each test starts its own
// server on a free port and stops it; each is bounded (the lossy run takes 10 s, see
// docs/client-sdk.md). Skipped, saying why, when keel-server has not been built.
#include "../common/loopback.h"
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

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>

namespace keel::client {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string bin(const std::string& name) { return std::string(KEEL_BINARY_DIR) + "/bin/" + name; }

using keel::testing::free_udp_port;
using keel::testing::read_text;

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
      // A budget that carries every moving body in every snapshot, so that each snapshot
      // tick is one at which every body has a sample of its own (interest management
      // under a tight budget is tests/protocol/interest_test.cpp's).
      ::execl(exe.c_str(), exe.c_str(), "--scene", scene.c_str(), "--bind", address_.c_str(), "--record",
              rec.c_str(), "--status-interval", "0", "--client-kbps", "4000", static_cast<char*>(nullptr));
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

// What the server's recording says about one player: the frame ticks of its join and
// leave, and for every frame tick it was in the match whether the input the server
// applied was fresh (differs from the one applied the tick before) or a repeat (the
// player's input was missing or late, so the server repeated the last one).
struct PlayerRecord {
  uint64_t join = std::numeric_limits<uint64_t>::max();
  uint64_t leave = std::numeric_limits<uint64_t>::max();
  std::map<uint64_t, bool> fresh;
};

std::map<uint32_t, PlayerRecord> player_records(const replay::Recording& rec) {
  std::map<uint32_t, PlayerRecord> out;
  std::map<uint32_t, game::InputFrame> applied;  // the last frame applied, per present player
  replay::TickCursor cursor = rec.ticks_from_start();
  while (std::optional<replay::TickRecord> t = cursor.next()) {
    if (t->tick == 0) continue;  // the starting state: no inputs
    const uint64_t frame = t->tick - 1;  // record T holds the inputs that stepped T-1 to T
    for (const game::PlayerEvent& e : t->inputs.events) {
      if (e.kind == game::PlayerEvent::Kind::Join) {
        out[e.player].join = frame;
        applied[e.player] = game::InputFrame{};  // a new slot starts from the neutral input
      } else {
        out[e.player].leave = frame;
        applied.erase(e.player);
      }
    }
    for (const auto& [player, last] : applied) out[player].fresh[frame] = false;  // unless a new frame came
    for (const game::PlayerInput& in : t->inputs.inputs) {
      if (!applied.count(in.player)) continue;
      out[in.player].fresh[frame] = !(in.frame == applied[in.player]);
      applied[in.player] = in.frame;
    }
  }
  return out;
}

double angle_between(const sim::Quat& a, const sim::Quat& b) {
  double d = std::min(1.0, std::fabs(double(glm::dot(a, b))));
  return 2.0 * std::acos(d);
}

sim::Quat nlerp(const sim::Quat& a, const sim::Quat& b, float t) {
  sim::Quat bb = glm::dot(a, b) < 0.0f ? -b : b;
  return glm::normalize(a * (1.0f - t) + bb * t);
}

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
  // A client over real UDP on loopback that walks (testing::walk) as `user`, its clock
  // reading `now`; it has asked to connect when this returns.
  std::unique_ptr<Client> connect_walker(uint64_t user, double now) {
    std::string error;
    auto transport = open_udp_transport(server_->address(), error);
    EXPECT_TRUE(transport) << error;
    auto token = mint_token_for(protocol::development_token_key(), user, 0, server_->address());
    EXPECT_TRUE(token);
    if (!transport || !token) return nullptr;
    ClientConfig cfg;
    cfg.input_source = [](uint64_t tick) { return testing::walk(1, tick, 23); };
    auto c = std::make_unique<Client>(std::move(transport), cfg);
    c->connect(*token, now);
    return c;
  }
  fs::path dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(EndToEnd, InterpolationRendersTheRecordedStateWithinQuantisation) {
  const auto start = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::unique_ptr<Client> client = connect_walker(501, now());
  ASSERT_TRUE(client);
  Client& c = *client;
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

// pose(body, now) at render times between snapshots, against the server's recorded
// motion. The recording holds every tick; between ticks k and k+1 the server's state at
// fractional tick tau is taken on the straight line between them. The client blends the
// two snapshots around tau (ticks t0 < t1, quantised to 1/512 m), so its position lies
// within half a grid step of the chord between the server's states at t0 and t1; the
// chord itself is off the recorded path by exactly how far the body's motion between t0
// and t1 bends away from a straight line, which the recording gives. So per axis:
//   |pose(tau) - server(tau)| <= 1/1024 m + |chord(tau) - server(tau)| (+ float rounding),
// and rotations likewise within the quantisation angle plus the chord's angle.
TEST_F(EndToEnd, InterpolatedPosesBetweenSnapshotsFollowTheRecordedMotion) {
  const auto start = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  struct Sample {
    double tick;        // the render tick pose() drew
    uint64_t t0, t1;    // the snapshots it blended
    uint32_t body;
    BodyPose pose;
  };
  std::vector<Sample> samples;
  std::unique_ptr<Client> client = connect_walker(502, now());
  ASSERT_TRUE(client);
  Client& c = *client;
  double next_sample = 1.0;  // past the first snapshots, so the delay has settled
  while (now() < 3.0) {
    double t = now();
    c.update(t);
    if (c.state() == State::Playing && t >= next_sample) {
      next_sample = t + 0.013;  // not a multiple of the tick: render ticks fall anywhere
      double tau = c.render_tick(t);
      std::vector<uint64_t> ticks = c.snapshots().ticks();
      auto after = std::upper_bound(ticks.begin(), ticks.end(), static_cast<uint64_t>(std::floor(tau)));
      if (after != ticks.begin() && after != ticks.end() && tau > static_cast<double>(*std::prev(after))) {
        for (uint32_t id = 1; id <= 64; ++id) {
          auto p = c.pose(id, t);
          if (p && !p->extrapolated) samples.push_back({tau, *std::prev(after), *after, id, *p});
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(c.state(), State::Playing);
  c.disconnect(now());
  server_->stop();
  ASSERT_FALSE(samples.empty());

  // The server's state of every body at every tick the samples span.
  auto rec = replay::Recording::open(server_->recording(0).string());
  ASSERT_TRUE(rec) << rec.error().message;
  uint64_t first = samples.front().t0, last = samples.back().t1;
  std::map<uint64_t, std::map<uint32_t, sim::BodyState>> states;
  auto r = replay::Replay::start(*rec, first);
  ASSERT_TRUE(r) << r.error().message;
  for (;;) {
    for (const sim::BodyState& b : protocol::snapshot_bodies(r->match().world())) states[r->tick()][b.id] = b;
    if (r->tick() >= last) break;
    ASSERT_TRUE(r->step()) << "the recording ends at " << r->tick();
  }
  const double grid = 1.0 / 1024 + 1e-5;    // half a 1/512 m step, plus float rounding
  const double rotation_quantum = 0.01;      // rad: 2 acos(0.99999), the exact-tick bound
  size_t compared = 0, moving = 0, between_ticks = 0;
  double worst_excess = -1;
  for (const Sample& s : samples) {
    SCOPED_TRACE("body " + std::to_string(s.body) + " at render tick " + std::to_string(s.tick) + " between snapshots " +
                 std::to_string(s.t0) + " and " + std::to_string(s.t1));
    const uint64_t k = static_cast<uint64_t>(std::floor(s.tick));
    const float f = static_cast<float>(s.tick - static_cast<double>(k));
    const float u = static_cast<float>((s.tick - double(s.t0)) / double(s.t1 - s.t0));
    auto at = [&](uint64_t tick) -> const sim::BodyState* {
      auto it = states[tick].find(s.body);
      return it == states[tick].end() ? nullptr : &it->second;
    };
    const sim::BodyState *a = at(s.t0), *b = at(s.t1), *k0 = at(k), *k1 = at(k + 1);
    if (!a || !b || !k0 || !k1) continue;  // spawned or removed in between: nothing to blend
    sim::Vec3 server = k0->position + (k1->position - k0->position) * f;
    sim::Vec3 chord = a->position + (b->position - a->position) * u;
    for (int axis = 0; axis < 3; ++axis) {
      double bend = std::fabs(double(chord[axis]) - double(server[axis]));
      double off = std::fabs(double(s.pose.position[axis]) - double(server[axis]));
      EXPECT_LE(off, grid + bend) << "axis " << axis << ": bend " << bend;
      worst_excess = std::max(worst_excess, off - bend);
    }
    // Moving: the blend had to travel more than a few grid steps between the snapshots.
    if (glm::length(b->position - a->position) > 4 * grid) ++moving;
    sim::Quat server_rot = nlerp(k0->rotation, k1->rotation, f);
    sim::Quat chord_rot = nlerp(a->rotation, b->rotation, u);
    EXPECT_LE(angle_between(s.pose.rotation, server_rot),
              rotation_quantum + angle_between(chord_rot, server_rot));
    between_ticks += f > 0.0f;
    ++compared;
  }
  // Enough of it, with bodies moving and render times between ticks, to mean something:
  // about 150 render times by 13 bodies, a quarter of them moving (about 1900 and 500).
  EXPECT_GT(compared, 800u);
  EXPECT_GT(moving, 100u);
  EXPECT_GT(between_ticks, compared / 2);
  RecordProperty("worst_error_beyond_bend_m", std::to_string(worst_excess));
  RecordProperty("samples", static_cast<int>(compared));
  RecordProperty("moving_samples", static_cast<int>(moving));
}

TEST_F(EndToEnd, FourPredictingBotsOnABadLinkNeverDesync) {
  // 20% loss, 5% duplication, 10% reordering, 80 +/- 30 ms each way, for 20 s. Scripted
  // inputs turn every tick, so the recording tells an applied input from a repeated one.
  nlohmann::json s = bot("--bots 4 --mode predict --seconds 20 --loss 0.2 --duplicate 0.05 --reorder 0.1 "
                         "--latency-ms 80 --jitter-ms 30 --match 0 --first-client-id 100 --inputs script");
  ASSERT_FALSE(s.is_discarded());
  EXPECT_EQ(s["bots"], 4);
  EXPECT_EQ(s["connected"], 4);
  EXPECT_EQ(s["hash_mismatches"], 0);
  EXPECT_GT(s["rollbacks"].get<uint64_t>(), 0u);
  server_->stop();
  EXPECT_EQ(server_->log_text().find("desync"), std::string::npos);
  std::string out;
  EXPECT_EQ(run(bin("keel-replay") + " verify " + server_->recording(0).string(), &out), 0) << out;
  EXPECT_NE(out.find("verified"), std::string::npos) << out;

  auto rec = replay::Recording::open(server_->recording(0).string());
  ASSERT_TRUE(rec) << rec.error().message;
  const std::map<uint32_t, PlayerRecord> players = player_records(*rec);
  for (const auto& b : s["per_bot"]) {
    SCOPED_TRACE(b.dump());
    auto u = [&](const char* key) { return b[key].get<uint64_t>(); };
    EXPECT_EQ(u("hash_mismatches"), 0u);
    EXPECT_EQ(u("server_desyncs"), 0u);
    EXPECT_EQ(u("resyncs"), 0u);  // one checkpoint: the ticks below are one unbroken run
    auto found = players.find(b["player_id"].get<uint32_t>());
    ASSERT_NE(found, players.end()) << "the bot's player is not in the recording";
    const PlayerRecord& p = found->second;
    const uint64_t checkpoint = u("checkpoint_tick"), confirmed = u("confirmed_tick");

    // Every confirmed tick checked: the client stepped frames checkpoint .. confirmed-1
    // (its match's tick says so, not a counter) and checked each one's hash; the server
    // recorded every one of them with this player in the match.
    EXPECT_EQ(u("hash_checks"), confirmed - checkpoint);
    EXPECT_GT(confirmed - checkpoint, 900u);  // of 1200 ticks in 20 s
    EXPECT_GE(checkpoint, p.join);
    EXPECT_LE(confirmed, p.leave);  // the bot never left while confirming (the recording)
    for (uint64_t t = checkpoint; t < confirmed; ++t) ASSERT_TRUE(p.fresh.count(t)) << "tick " << t;
    // Before its checkpoint a client has no state to check. The checkpoint follows the
    // join by the handshake and one reliable transfer of several datagrams, each lost
    // one (20% each way) resent after a retransmission time-out of a few round trips:
    // up to about 1.5 s was seen, 3 s (180 ticks) is the bound. The end of the run is
    // bounded below, by the inputs in flight.
    EXPECT_LT(checkpoint - p.join, 180u);

    // Every input sent is accounted for. The client produced one for each tick from
    // first_input_tick to last_input_tick, unless it fell behind and skipped some.
    const uint64_t first_input = u("first_input_tick"), last_input = u("last_input_tick");
    ASSERT_GE(first_input, checkpoint);
    EXPECT_EQ(u("inputs_sent") + u("inputs_skipped"), last_input + 1 - first_input);
    // Confirmed ticks from the first input on: the recording says which applied the
    // bot's input (fresh) and which repeated its last one; the client's counts agree.
    uint64_t fresh = 0, repeated = 0;
    for (uint64_t t = first_input; t < confirmed; ++t) (p.fresh.at(t) ? fresh : repeated) += 1;
    EXPECT_EQ(u("inputs_applied"), fresh);
    EXPECT_LE(u("inputs_late"), repeated);  // a skipped tick is repeated but was never sent
    EXPECT_GE(u("inputs_late") + u("inputs_skipped"), repeated);
    EXPECT_LT(u("inputs_late") * 10, u("inputs_sent"));
    // The rest are the inputs for ticks the client had not seen confirmed when the run
    // stopped: those from the confirmed tick to the newest one sent. An input is sent
    // the input lead ahead of the server's tick, and that tick's frame comes back after
    // the server steps it (within a tick) plus one way of the link (at most 110 ms, 7
    // ticks); a lost frame datagram costs a tick more each, as the server resends
    // unacknowledged frames every tick (5 in a row allowed). So the inputs in flight
    // number at most the lead + 13 ticks (the lead was about 10 ticks, in flight 17-18).
    const uint64_t accounted = u("inputs_applied") + u("inputs_late");
    const uint64_t in_flight = last_input + 1 - confirmed;
    EXPECT_LE(u("inputs_sent") - accounted, in_flight);
    EXPECT_GE(u("inputs_sent") + u("inputs_skipped") - accounted, in_flight);
    EXPECT_LE(in_flight, static_cast<uint64_t>(std::ceil(b["input_lead_ticks"].get<double>())) + 13u);
  }
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

// Lag compensation's view stamps over the real path: an interpolating client stamps each
// input with the tick it renders, keel-server clamps and applies it and records it. On
// loopback the client renders about its interpolation delay (three snapshot intervals of
// two ticks) plus its input lead behind the tick each input is for.
TEST_F(EndToEnd, AnInterpolatingClientsInputsCarryTheTickItRendered) {
  const auto start = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::unique_ptr<Client> client = connect_walker(502, now());
  ASSERT_TRUE(client);
  while (now() < 3.0) {
    client->update(now());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(client->state(), State::Playing);
  client->disconnect(now());
  server_->stop();
  std::string out;
  EXPECT_EQ(run(bin("keel-replay") + " verify " + server_->recording(0).string(), &out), 0) << out;
  auto rec = replay::Recording::open(server_->recording(0).string());
  ASSERT_TRUE(rec) << rec.error().message;
  std::vector<uint32_t> lags;
  replay::TickCursor cursor = rec->ticks_from_start();
  while (std::optional<replay::TickRecord> t = cursor.next()) {
    for (const game::PlayerInput& in : t->inputs.inputs) lags.push_back(in.view.lag);
  }
  ASSERT_GT(lags.size(), 60u);
  // The last second of the session: the client has been rendering snapshots for a while.
  std::vector<uint32_t> steady(lags.end() - 60, lags.end());
  std::sort(steady.begin(), steady.end());
  EXPECT_GE(steady.front(), 1u);    // an interpolating client always renders the past
  EXPECT_LE(steady.back(), 60u);    // and not further back than a second on loopback
  EXPECT_GE(steady[30], 3u) << "median lag";
  EXPECT_LE(steady[30], 30u) << "median lag";
}

TEST_F(EndToEnd, TheCExamplePlays) {
  std::string out;
  EXPECT_EQ(run(bin("keel-client-c-example") + " " + server_->address() + " 2 predict", &out), 0) << out;
  EXPECT_NE(out.find("body 2 at"), std::string::npos) << out;
}

}  // namespace
}  // namespace keel::client
