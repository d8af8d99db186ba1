// The world description end to end: a real keel-server process on 127.0.0.1 runs the
// sandbox; an interpolating and a predicting client, each behind 15% loss and 60 +/- 20 ms
// each way (the link conditioner), throw balls for a few seconds — more than the eight a
// player may keep, so the oldest are removed mid-match — then stand still. Each client's
// world() must then name exactly the bodies of the server's world (its recording, re-run
// from tick 0 to the client's newest snapshot), with their motion types, kinds and
// colliders; the scene's bodies as the scene describes them. The predicting client's
// table must also agree with its own confirmed match. Bounded: about 12 s.
#include "../common/loopback.h"
#include "test_util.h"

#include <keel/client/client.h>
#include <keel/client/link_conditioner.h>
#include <keel/protocol/world_description.h>
#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace keel::client {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using games::SandboxRules;

std::string bin(const std::string& name) { return std::string(KEEL_BINARY_DIR) + "/bin/" + name; }

using keel::testing::free_udp_port;
using keel::testing::read_text;

// keel-server on the demo scene, recording into dir/rec; stopped (SIGTERM) when destroyed.
struct ServerProcess {
  explicit ServerProcess(const fs::path& d) : dir(d) {
    fs::create_directories(dir / "rec");
    address = "127.0.0.1:" + std::to_string(free_udp_port());
    const std::string log = (dir / "server.log").string(), rec = (dir / "rec").string();
    const std::string exe = bin("keel-server"), scene = std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json";
    pid = ::fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execl(exe.c_str(), exe.c_str(), "--scene", scene.c_str(), "--bind", address.c_str(), "--record", rec.c_str(),
              "--status-interval", "0", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100 && read_text(dir / "server.log").find("server_started") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~ServerProcess() { stop(); }
  void stop() {
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = 0;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = 0;
  }
  fs::path recording() const {
    for (auto& e : fs::directory_iterator(dir / "rec")) {
      if (e.path().extension() == ".krec") return e.path();
    }
    return {};
  }
  fs::path dir;
  std::string address;
  pid_t pid = 0;
};

// Throws (fire held, walking in a circle so the balls land apart) until `stop_firing`.
game::InputFrame thrower(uint64_t tick, double now, double stop_firing) {
  static const game::Layout layout = SandboxRules::make_spec().input;
  game::InputFrame f;
  layout.set_code(f, layout.first_component(SandboxRules::kLookYaw), static_cast<uint32_t>((tick * 997u) & 0xffffu));
  layout.set_button(f, SandboxRules::kButtons, SandboxRules::kFire, now < stop_firing);
  return f;
}

std::unique_ptr<Client> lossy_client(const std::string& address, Mode mode, uint64_t user, uint64_t seed,
                                     const std::function<double()>& now, double stop_firing) {
  std::string error;
  auto udp = open_udp_transport(address, error);
  EXPECT_TRUE(udp) << error;
  auto token = mint_token_for(protocol::development_token_key(), user, 0, address);
  EXPECT_TRUE(token);
  if (!udp || !token) return nullptr;
  LinkImpairment link;
  link.loss = 0.15;
  link.latency_ms = 60;
  link.jitter_ms = 20;
  auto conditioned = std::make_unique<ConditionedTransport>(std::move(udp), LinkConditionerConfig::symmetric(link, seed));
  ClientConfig cfg;
  cfg.mode = mode;
  cfg.input_source = [now, stop_firing](uint64_t tick) { return thrower(tick, now(), stop_firing); };
  auto c = std::make_unique<Client>(std::move(conditioned), cfg);
  c->connect(*token, now());
  return c;
}

// The client's table against the server's world: the same ids; bodies the scene has as
// the scene describes them; the others as the server's world and the match's kinds do.
void expect_same_world(const protocol::WorldDescription& client, const protocol::WorldDescription& server,
                       const protocol::WorldDescription& scene, const char* who) {
  SCOPED_TRACE(who);
  std::vector<uint32_t> client_ids, server_ids;
  for (const auto& b : client.bodies()) client_ids.push_back(b.id);
  for (const auto& b : server.bodies()) server_ids.push_back(b.id);
  ASSERT_EQ(client_ids, server_ids);
  for (const auto& b : client.bodies()) {
    const protocol::BodyDescription* expected = scene.find(b.id);
    if (expected == nullptr) expected = server.find(b.id);
    EXPECT_TRUE(protocol::same_description(b, *expected)) << "body " << b.id;
  }
}

TEST(WorldDescriptionEndToEnd, BothClientsDescribeTheServersWorldThroughSpawnsAndRemovalsOnALossyLink) {
  if (!fs::exists(bin("keel-server"))) GTEST_SKIP() << "keel-server not built: " << bin("keel-server");
  const fs::path dir = fs::path(::testing::TempDir()) / "keel_world_description_e2e";
  fs::remove_all(dir);
  ServerProcess server(dir);
  ASSERT_NE(read_text(dir / "server.log").find("server_started"), std::string::npos) << read_text(dir / "server.log");

  const auto start = Clock::now();
  auto now = [start] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // Eight balls a player are kept; at one every 20 ticks, six seconds of throwing is 18: ten
  // removed each, the last ones well after both clients are playing.
  const double stop_firing = 7.0, settle = 10.0;
  std::unique_ptr<Client> interp = lossy_client(server.address, Mode::Interpolate, 601, 11, now, stop_firing);
  std::unique_ptr<Client> predict = lossy_client(server.address, Mode::Predict, 602, 12, now, stop_firing);
  ASSERT_TRUE(interp && predict);
  uint64_t versions_seen = 0, last_version = 0;
  while (now() < settle) {
    interp->update(now());
    predict->update(now());
    if (interp->world_version() != last_version) ++versions_seen;
    last_version = interp->world_version();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(interp->state(), State::Playing);
  ASSERT_EQ(predict->state(), State::Playing);
  ASSERT_NE(predict->predictor(), nullptr);
  const protocol::WorldDescription interp_world = interp->world();
  const protocol::WorldDescription predict_world = predict->world();
  const std::vector<uint64_t> ticks = interp->snapshots().ticks();
  ASSERT_FALSE(ticks.empty());
  const uint64_t at = ticks.back();

  // The predicting client's own confirmed match holds the same bodies with the same
  // shapes (kinds are not state: a match restored from a checkpoint lacks them).
  const protocol::WorldDescription confirmed = protocol::WorldDescription::from_match(predict->predictor()->confirmed());
  ASSERT_EQ(confirmed.bodies().size(), predict_world.bodies().size());
  for (size_t i = 0; i < confirmed.bodies().size(); ++i) {
    const auto& mine = predict_world.bodies()[i];
    const auto& its = confirmed.bodies()[i];
    ASSERT_EQ(mine.id, its.id);
    EXPECT_EQ(mine.motion, its.motion);
    ASSERT_EQ(mine.colliders.size(), its.colliders.size());
    for (size_t c = 0; c < its.colliders.size(); ++c) {
      EXPECT_EQ(mine.colliders[c].shape, its.colliders[c].shape) << mine.id;
      EXPECT_EQ(mine.colliders[c].radius, its.colliders[c].radius) << mine.id;
      EXPECT_EQ(mine.colliders[c].half_extents, its.colliders[c].half_extents) << mine.id;
    }
  }
  // Every described dynamic body has a pose to draw.
  for (const auto& b : interp_world.bodies()) {
    if (b.motion == sim::MotionType::Dynamic) {
      EXPECT_TRUE(interp->pose(b.id, now())) << b.id;
    }
  }
  const ClientStats is = interp->stats(), ps = predict->stats();
  interp->disconnect(now());
  predict->disconnect(now());
  server.stop();

  // Spawns and removals happened while both were playing, and each reached each client.
  EXPECT_GE(is.description.bodies_removed, 10u);
  EXPECT_GE(ps.description.bodies_removed, 10u);
  EXPECT_GE(is.description.bodies_added, 20u);
  EXPECT_EQ(is.description.dropped, 0u);
  EXPECT_EQ(ps.description.dropped, 0u);
  EXPECT_GT(versions_seen, 10u);

  auto rec = replay::Recording::open(server.recording().string());
  ASSERT_TRUE(rec) << rec.error().message;
  auto replay = replay::Replay::start(*rec, 0);  // from the start: kinds are not in checkpoints
  ASSERT_TRUE(replay) << replay.error().message;
  while (replay->tick() < at) ASSERT_TRUE(replay->step()) << "tick " << replay->tick();
  const protocol::WorldDescription server_world = protocol::WorldDescription::from_match(replay->match());
  const protocol::WorldDescription scene = protocol::WorldDescription::from_scene(replay->match().scene());

  uint32_t balls = 0, characters = 0;
  for (const auto& b : server_world.bodies()) {
    balls += b.kind == SandboxRules::kKindBall;
    characters += b.kind == SandboxRules::kKindCharacter;
  }
  EXPECT_EQ(characters, 2u);
  EXPECT_EQ(balls, 2 * SandboxRules::kMaxBallsPerPlayer);  // the newest eight of each player
  expect_same_world(interp_world, server_world, scene, "interpolating client");
  expect_same_world(predict_world, server_world, scene, "predicting client");
}


std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

// The "draw" line prefix the example prints for a collider of a scene body.
std::string draw_prefix(const sim::BodyDef& b, const sim::ColliderDef& c) {
  static const char* shapes[] = {"sphere", "box", "capsule", "hull", "mesh", "heightfield"};
  static const char* motions[] = {"static", "kinematic", "dynamic"};
  std::string line = "draw id=" + std::to_string(b.id) + " kind=" + std::to_string(b.kind) +
                     " motion=" + motions[int(b.motion)] + " shape=" + shapes[int(c.shape)] + " ";
  switch (c.shape) {
    case sim::ShapeType::Sphere: return line + format("r=%.3f", c.radius);
    case sim::ShapeType::Box: return line + format("half=(%.3f,%.3f,%.3f)", c.half_extents.x, c.half_extents.y, c.half_extents.z);
    case sim::ShapeType::Capsule: return line + format("r=%.3f h=%.3f", c.radius, c.half_height);
    default: return line;
  }
}

// keel-client-draw-list-example against a live keel-server: its last printed frame names
// every scene body with its shape and dimensions (static ones where the scene puts them),
// its own character and the balls it threw; and its table saw balls removed.
TEST(WorldDescriptionEndToEnd, TheDrawListExampleDrawsTheScenesBodiesWithTheirShapes) {
  const std::string example = bin("keel-client-draw-list-example");
  if (!fs::exists(bin("keel-server")) || !fs::exists(example)) GTEST_SKIP() << "keel-server or the example is not built";
  const fs::path dir = fs::path(::testing::TempDir()) / "keel_draw_list_e2e";
  fs::remove_all(dir);
  ServerProcess server(dir);
  const std::string out = (dir / "draw_list.txt").string();
  const std::string cmd = example + " " + server.address + " 5 150 fire > " + out + " 2>&1";
  const int rc = std::system(cmd.c_str());
  server.stop();
  const std::string text = read_text(out);
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << text;

  // The last frame's draw list.
  const size_t last = text.rfind("\nframe ");
  ASSERT_NE(last, std::string::npos) << text;
  const std::string frame = text.substr(last, text.find("\nend ", last) - last);
  const sim::SceneDef scene = testing::demo_scene();
  for (const sim::BodyDef& b : scene.bodies) {
    for (const sim::ColliderDef& c : b.colliders) {
      const std::string prefix = draw_prefix(b, c);
      const size_t at = frame.find("\n" + prefix);
      ASSERT_NE(at, std::string::npos) << "no \"" << prefix << "\" in\n" << frame;
      if (b.motion != sim::MotionType::Static) continue;
      const sim::Vec3 p = b.position + b.rotation * c.center;
      const std::string pos = format(" pos=(%.3f,%.3f,%.3f)", p.x, p.y, p.z);
      const std::string line = frame.substr(at + 1, frame.find('\n', at + 1) - at - 1);
      EXPECT_NE(line.find(pos), std::string::npos) << line << " vs " << pos;
    }
  }
  const std::string ball = format(" kind=2 motion=dynamic shape=sphere r=%.3f ", SandboxRules::kBallRadius);
  const std::string character = format(" kind=1 motion=dynamic shape=capsule r=%.3f h=%.3f ", SandboxRules::kCharacterRadius,
                                       SandboxRules::kCharacterHalfHeight);
  size_t balls = 0;
  for (size_t at = frame.find(ball); at != std::string::npos; at = frame.find(ball, at + 1)) ++balls;
  EXPECT_EQ(balls, SandboxRules::kMaxBallsPerPlayer) << frame;
  EXPECT_NE(frame.find(character), std::string::npos) << frame;
  EXPECT_NE(text.find("\nremoved id="), std::string::npos) << "no ball was removed:\n" << text;
  EXPECT_NE(text.find("added id=1 kind=0 motion=static colliders=1"), std::string::npos) << text;
}

}  // namespace
}  // namespace keel::client
