// keel-netbench SCENE [--seconds S] [--snapshot-rate R] [--rtt-ms X] [--loss P] ...
//
// Steps a scene and streams it to one simulated client through the real packet layer
// (authenticated Connections over a seeded LinkSimulator: half the RTT each way, the
// given loss both ways), the client acknowledging the newest decoded snapshot in an
// input batch every tick. Checks at every decoded snapshot that the client holds exactly
// the server's quantised state, and measures the error against the true state. Prints,
// as its last line:
//   netbench kbps_down_mean=.. bytes_per_snapshot_mean=.. bytes_per_snapshot_p95=..
//            bytes_per_snapshot_max=.. max_pos_error_mm=.. max_rot_error_deg=.. encode_us_mean=..
// kbps_down_mean counts every server-to-client datagram byte (headers, tags, acks; not
// IP/UDP headers); bytes_per_snapshot is the Snapshot message.
//
// keel-netbench SCENE --describe [--seconds S] instead measures what keeping the world
// description costs a server per tick (protocol::update_description after each step of
// a match of the scene with no players), against the step itself, in rounds of one
// second; last line:
//   describe bodies=.. step_us_median=.. describe_us_median=.. ratio=..
//
// keel-netbench SCENE --interest [--clients N] [--client-kbps K] [--interest-radius R]
// [--everything] measures interest management with many clients (interest_bench.cpp);
// last line: interest mode=.. kbps_down_mean=.. pos_err_mm_p50=.. pos_err_mm_p99=.. ...
#include "interest_bench.h"

#include <keel/protocol/connection.h>
#include <keel/protocol/link_sim.h>
#include <keel/protocol/messages.h>
#include <keel/scene/scene.h>
#include <keel/protocol/snapshot_stream.h>
#include <keel/protocol/world_description.h>
#include <keel/sim/world.h>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

struct Options {
  std::string scene;
  double seconds = 30;
  uint32_t snapshot_rate = 60;
  double rtt_ms = 100;
  double loss = 0.01;
  uint64_t seed = 1;
  bool idle = false;
  bool velocities = false;
  uint32_t rotation_bits = 11;
  uint32_t resolution = 512;
  bool describe = false;
  bool interest = false;
  InterestBenchOptions interest_options;
};

// A match with no players and no rules of its own: the scene stepped as keel-server
// steps an empty match.
class NoRules final : public keel::game::Rules {
 public:
  keel::game::GameSpec spec() const override {
    keel::game::GameSpec s;
    s.name = "netbench";
    return s;
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The cost of update_description per tick next to the cost of the step, per round of
// one second of ticks (medians over the rounds).
int run_describe(const Options& o, const ks::SceneDef& scene) {
  using Clock = std::chrono::steady_clock;
  auto match = keel::game::Match::create(scene, std::make_unique<NoRules>());
  if (!match) {
    std::fprintf(stderr, "keel-netbench: %s\n", match.error().message.c_str());
    return 1;
  }
  kp::WorldDescription known = kp::WorldDescription::from_scene(scene);
  const uint32_t rate = scene.settings.tick_rate;
  const uint64_t rounds = std::max<uint64_t>(1, uint64_t(o.seconds));
  std::vector<double> step_us, describe_us;
  uint64_t changes = 0;
  for (uint64_t r = 0; r < rounds; ++r) {
    double step = 0, describe = 0;
    for (uint32_t t = 0; t < rate; ++t) {
      auto t0 = Clock::now();
      match->step({});
      auto t1 = Clock::now();
      changes += kp::update_description(known, *match).added.size();
      auto t2 = Clock::now();
      step += std::chrono::duration<double, std::micro>(t1 - t0).count();
      describe += std::chrono::duration<double, std::micro>(t2 - t1).count();
    }
    step_us.push_back(step / rate);
    describe_us.push_back(describe / rate);
  }
  const double s = median(step_us), d = median(describe_us);
  std::printf("describe bodies=%zu step_us_median=%.1f describe_us_median=%.2f ratio=%.4f changes=%llu\n",
              known.bodies().size(), s, d, s > 0 ? d / s : 0.0, (unsigned long long)changes);
  return 0;
}

struct Results {
  std::vector<double> snapshot_bytes;
  double encode_us_total = 0;
  uint64_t encodes = 0;
  uint64_t decoded = 0;
  uint64_t mismatches = 0;
  double max_pos_error = 0;  // m
  double max_rot_error = 0;  // degrees
  uint64_t down_bytes = 0;
  uint64_t up_bytes = 0;
};

// Angle between two rotations in degrees (the tool is not stepping a world: libm is fine).
double rotation_error_deg(const ks::Quat& a, const ks::Quat& b) {
  double d = std::fabs(double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z + double(a.w) * b.w);
  return 2.0 * std::acos(std::min(1.0, d)) * 180.0 / M_PI;
}

void measure_error(const kp::QuantSnapshot& got, const std::vector<ks::BodyState>& truth,
                   const kp::SnapshotConfig& config, Results& res) {
  std::map<uint32_t, const ks::BodyState*> by_id;
  for (const auto& b : truth) by_id[b.id] = &b;
  for (const auto& q : got.bodies) {
    auto it = by_id.find(q.id);
    if (it == by_id.end()) continue;
    ks::BodyState s = kp::dequantize(q, config);
    res.max_pos_error = std::max(res.max_pos_error, double(glm::length(s.position - it->second->position)));
    res.max_rot_error = std::max(res.max_rot_error, rotation_error_deg(s.rotation, it->second->rotation));
  }
}

std::vector<uint8_t> ack_batch(uint64_t tick, uint64_t ack) {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<uint8_t> frame(4, 0);  // one idle input frame's worth of bits
  auto body = kp::fb::CreateInputBatchDirect(fbb, tick, 1, &frame, ack, 0);
  return kp::finish_message(fbb, kp::fb::Body::InputBatch, body.Union());
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * (v.size() - 1) + 0.5))];
}

struct Bench {
  const Options& opt;
  ks::World& world;
  kp::SnapshotConfig config;
  kp::Connection server, client;
  kp::LinkSimulator down, up;
  kp::SnapshotSender sender;
  kp::SnapshotReceiver receiver;
  std::map<uint64_t, std::pair<kp::QuantSnapshot, std::vector<ks::BodyState>>> sent;
  Results res;

  Bench(const Options& o, ks::World& w, const kp::SnapshotConfig& c)
      : opt(o), world(w), config(c),
        down({o.rtt_ms / 2, 0, o.loss, 0, 0, o.seed}),
        up({o.rtt_ms / 2, 0, o.loss, 0, 0, o.seed + 1}),
        sender(c), receiver(c) {
    kp::ConnectionKeys ks_, kc;
    for (int i = 0; i < 32; ++i) {
      ks_.send[i] = kc.receive[i] = uint8_t(i * 3 + 1);
      ks_.receive[i] = kc.send[i] = uint8_t(i * 5 + 2);
    }
    server.set_keys(ks_);
    client.set_keys(kc);
  }

  void server_tick(uint64_t tick, double now) {
    auto truth = kp::snapshot_bodies(world);
    auto quant = kp::quantize(truth, tick, config);
    auto t0 = std::chrono::steady_clock::now();
    auto msg = sender.encode(quant);
    auto t1 = std::chrono::steady_clock::now();
    res.encode_us_total += std::chrono::duration<double, std::micro>(t1 - t0).count();
    ++res.encodes;
    if (!msg.empty()) {
      res.snapshot_bytes.push_back(double(msg.size()));
      server.send(kp::Channel::Snapshot, msg);
      sent[tick] = {std::move(quant), std::move(truth)};
    }
    while (sent.size() > 512) sent.erase(sent.begin());
    for (auto& d : server.update(now)) {
      res.down_bytes += d.size();
      down.send(d, now);
    }
  }

  void client_tick(uint64_t tick, double now) {
    for (auto& d : down.receive(now)) client.receive(d, now);
    while (auto m = client.take(kp::Channel::Snapshot)) {
      const kp::fb::Message* msg = nullptr;
      if (kp::check_message(*m, msg) != kp::DropReason::None ||
          msg->body_type() != kp::fb::Body::Snapshot) {
        continue;
      }
      if (receiver.receive(*msg->body_as_Snapshot()) != kp::DropReason::None) continue;
      ++res.decoded;
      auto it = sent.find(receiver.latest().tick);
      if (it == sent.end()) continue;
      if (!(it->second.first == receiver.latest())) ++res.mismatches;
      measure_error(receiver.latest(), it->second.second, config, res);
    }
    client.send(kp::Channel::Input, ack_batch(tick, receiver.ack_tick()));
    for (auto& d : client.update(now)) {
      res.up_bytes += d.size();
      up.send(d, now);
    }
    for (auto& d : up.receive(now)) server.receive(d, now);
    while (auto m = server.take(kp::Channel::Input)) {
      const kp::fb::Message* msg = nullptr;
      if (kp::check_message(*m, msg) == kp::DropReason::None &&
          msg->body_type() == kp::fb::Body::InputBatch) {
        sender.on_ack(msg->body_as_InputBatch()->ack_snapshot_tick());
      }
    }
  }

  void run() {
    uint32_t rate = world.settings().tick_rate;
    uint64_t ticks = uint64_t(opt.seconds * rate);
    uint32_t every = std::max<uint32_t>(1, rate / std::max<uint32_t>(1, opt.snapshot_rate));
    bool tty = isatty(STDERR_FILENO);
    for (uint64_t t = 1; t <= ticks; ++t) {
      world.step();
      double now = double(t) / rate;
      if (t % every == 0) server_tick(world.tick(), now);
      client_tick(t, now);
      if (tty && t % rate == 0) {
        std::fprintf(stderr, "\rnetbench: %llu/%llu s", (unsigned long long)(t / rate),
                     (unsigned long long)(ticks / rate));
      }
    }
    if (tty) std::fprintf(stderr, "\n");
  }
};

void stop_kinematic(ks::World& world) {
  for (ks::BodyId id : world.bodies()) {
    if (world.body_state(id).motion == ks::MotionType::Kinematic) {
      world.set_linear_velocity(id, ks::Vec3(0.0f));
      world.set_angular_velocity(id, ks::Vec3(0.0f));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"keel-netbench: snapshot bandwidth, error and encode cost over a simulated link"};
  app.add_option("SCENE", o.scene, "scene file (JSON or KSCN binary)")->required();
  app.add_option("--seconds", o.seconds, "simulated seconds")->default_val(30)->check(CLI::Range(0.1, 3600.0));
  app.add_option("--snapshot-rate", o.snapshot_rate, "snapshots per second")->default_val(60)->check(CLI::Range(1, 120));
  app.add_option("--rtt-ms", o.rtt_ms, "round-trip time in ms")->default_val(100)->check(CLI::Range(0.0, 2000.0));
  app.add_option("--loss", o.loss, "packet loss probability, both ways")->default_val(0.01)->check(CLI::Range(0.0, 0.9));
  app.add_option("--seed", o.seed, "link simulator seed")->default_val(1);
  app.add_flag("--idle", o.idle, "stop every kinematic body first, so the scene comes to rest");
  app.add_flag("--velocities", o.velocities, "send velocities too");
  app.add_option("--rotation-bits", o.rotation_bits, "bits per smallest-three component")->default_val(11)->check(CLI::Range(9, 15));
  app.add_option("--resolution", o.resolution, "position grid steps per metre")->default_val(512)->check(CLI::Range(16, 4096));
  app.add_flag("--describe", o.describe, "measure the world description's cost per tick instead");
  app.add_flag("--interest", o.interest, "interest management with many clients instead (the scene's kinematic bodies are the players)");
  app.add_option("--clients", o.interest_options.clients, "--interest: players measured, each a client")
      ->default_val(64)->check(CLI::Range(1, 256));
  app.add_option("--client-kbps", o.interest_options.kbps, "--interest: per-client budget, kbit/s")
      ->default_val(256)->check(CLI::Range(16.0, 100000.0));
  app.add_option("--interest-radius", o.interest_options.radius, "--interest: m beyond which bodies leave a client's interest; 0 = none")
      ->default_val(0)->check(CLI::Range(0.0, 100000.0));
  app.add_option("--view-radius", o.interest_options.view_radius, "--interest: m around a player within which the error is measured")
      ->default_val(60)->check(CLI::Range(1.0, 100000.0));
  app.add_flag("--everything", o.interest_options.everything, "--interest: send every client the whole world, no budget");
  CLI11_PARSE(app, argc, argv);

  auto scene = keel::scene::load_scene_file(o.scene);
  if (!scene) {
    std::fprintf(stderr, "keel-netbench: %s\n", scene.error().message.c_str());
    return 1;
  }
  if (o.describe) return run_describe(o, *scene);
  auto world = ks::World::from_scene(*scene);
  if (!world) {
    std::fprintf(stderr, "keel-netbench: %s\n", world.error().message.c_str());
    return 1;
  }
  if (o.idle) stop_kinematic(*world);
  auto config = kp::SnapshotConfig::for_scene(*scene);
  config.velocities = o.velocities;
  config.rotation_bits = o.rotation_bits;
  config.position_resolution = o.resolution;
  if (!config.valid()) {
    std::fprintf(stderr, "keel-netbench: the scene's bounds need more than 24 bits per axis at this resolution\n");
    return 1;
  }
  if (o.interest) {
    o.interest_options.seconds = o.seconds;
    o.interest_options.snapshot_rate = o.snapshot_rate;
    o.interest_options.rtt_ms = o.rtt_ms;
    o.interest_options.loss = o.loss;
    o.interest_options.seed = o.seed;
    return run_interest(o.interest_options, *world, config);
  }
  Bench bench(o, *world, config);
  bench.run();
  const Results& r = bench.res;
  double mean = 0;
  for (double b : r.snapshot_bytes) mean += b;
  mean = r.snapshot_bytes.empty() ? 0 : mean / r.snapshot_bytes.size();
  std::printf("bodies=%zu snapshots_sent=%zu decoded=%llu state_mismatches=%llu kbps_up_mean=%.1f\n",
              kp::snapshot_bodies(bench.world).size(), r.snapshot_bytes.size(),
              (unsigned long long)r.decoded, (unsigned long long)r.mismatches,
              r.up_bytes * 8.0 / 1000.0 / o.seconds);
  std::printf("netbench kbps_down_mean=%.1f bytes_per_snapshot_mean=%.1f bytes_per_snapshot_p95=%.0f "
              "bytes_per_snapshot_max=%.0f max_pos_error_mm=%.3f max_rot_error_deg=%.3f encode_us_mean=%.1f\n",
              r.down_bytes * 8.0 / 1000.0 / o.seconds, mean, percentile(r.snapshot_bytes, 0.95),
              r.snapshot_bytes.empty() ? 0.0 : *std::max_element(r.snapshot_bytes.begin(), r.snapshot_bytes.end()),
              r.max_pos_error * 1000.0, r.max_rot_error, r.encodes ? r.encode_us_total / r.encodes : 0.0);
  return r.mismatches == 0 ? 0 : 2;
}
