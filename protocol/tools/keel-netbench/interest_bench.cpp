// keel-netbench SCENE --interest: many clients over a large level. The scene's kinematic
// bodies are the players (at most --clients of them, by id), each driven round a circle
// of its own; every half second a random 2% of the dynamic bodies get a kick, so the
// level always has bodies moving, near some players and far from others. Every client
// has its own authenticated Connection pair over a seeded LinkSimulator, acknowledges
// the newest snapshot it decoded in an input batch every tick, and keeps the client
// SDK's interpolation buffer. Two ways to send:
//   budget (default): interest management, PartialSnapshots by priority within
//                     --client-kbps, bodies past --interest-radius left out;
//   --everything:     the whole-world Snapshot stream (SnapshotSender) every client
//                     got before interest management, with no budget.
// Every 6 ticks each client's shown pose of every body within --view-radius of its player
// (the client SDK's pose at its render tick: the newest snapshot tick minus its
// interpolation delay) is compared with the server's state at that tick. Last line:
//   interest mode=.. clients=.. bodies=.. kbps_down_mean=.. kbps_down_max=.. pos_err_mm_p50=..
//            pos_err_mm_p99=.. rot_err_deg_p50=.. rot_err_deg_p99=.. shown=.. encode_us_mean=..
// kbps counts every server-to-client datagram with 28 bytes of IPv4/UDP header each.
// `shown` is the fraction of (client, body within the view radius) samples the client
// could draw at all.
#include "interest_bench.h"

#include <keel/client/interpolation.h>
#include <keel/protocol/connection.h>
#include <keel/protocol/interest.h>
#include <keel/protocol/link_sim.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/snapshot_stream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <memory>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

struct Splitmix {
  uint64_t s;
  double next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return double((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
  }
};

double rotation_error_deg(const ks::Quat& a, const ks::Quat& b) {
  double d = std::fabs(double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z + double(a.w) * b.w);
  return 2.0 * std::acos(std::min(1.0, d)) * 180.0 / M_PI;
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

std::vector<uint8_t> ack_batch(uint64_t tick, uint64_t ack) {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<uint8_t> frame(4, 0);
  auto body = kp::fb::CreateInputBatchDirect(fbb, tick, 1, &frame, ack, 0);
  return kp::finish_message(fbb, kp::fb::Body::InputBatch, body.Union());
}

struct BenchClient {
  uint32_t player_body = 0;
  kp::Connection server, client;
  kp::LinkSimulator down, up;
  std::unique_ptr<kp::InterestSender> interest;
  std::unique_ptr<kp::SnapshotSender> whole;
  kp::InterestReceiver interest_rx;
  kp::SnapshotReceiver whole_rx;
  keel::client::SnapshotBuffer buffer;
  double bucket = 0;
  uint64_t down_bytes = 0;

  BenchClient(const kp::SnapshotConfig& c, const InterestBenchOptions& o, uint64_t seed)
      : down({o.rtt_ms / 2, 2, o.loss, 0, 0, seed}), up({o.rtt_ms / 2, 2, o.loss, 0, 0, seed + 1}),
        interest_rx(c), whole_rx(c) {
    kp::ConnectionKeys a, b;
    for (int i = 0; i < 32; ++i) {
      a.send[i] = b.receive[i] = uint8_t(i * 3 + 1);
      a.receive[i] = b.send[i] = uint8_t(i * 5 + 2);
    }
    server.set_keys(a);
    client.set_keys(b);
  }
};

struct Truth {
  uint64_t tick;
  std::vector<ks::BodyState> bodies;  // sorted by id
};

class InterestBench {
 public:
  InterestBench(const InterestBenchOptions& o, ks::World& world, const kp::SnapshotConfig& config)
      : o_(o), world_(world), config_(config) {
    for (ks::BodyId id : world_.bodies()) {
      ks::BodyState s = world_.body_state(id);
      if (s.motion == ks::MotionType::Kinematic && players_.size() < o.clients) players_.push_back(s.id);
      if (s.motion == ks::MotionType::Dynamic) dynamic_.push_back(id);
    }
    std::sort(players_.begin(), players_.end());
    kp::InterestConfig ic;
    ic.budget_bytes_per_second = o.kbps * 125.0;
    ic.radius = o.radius;
    for (size_t i = 0; i < players_.size(); ++i) {
      auto c = std::make_unique<BenchClient>(config, o, o.seed * 1000 + i * 2);
      c->player_body = players_[i];
      if (o.everything) c->whole = std::make_unique<kp::SnapshotSender>(config);
      else c->interest = std::make_unique<kp::InterestSender>(config, ic);
      clients_.push_back(std::move(c));
    }
  }

  int run() {
    if (clients_.empty()) {
      std::fprintf(stderr, "keel-netbench: the scene has no kinematic bodies to be players\n");
      return 1;
    }
    const uint32_t rate = world_.settings().tick_rate;
    const uint64_t ticks = uint64_t(o_.seconds * rate);
    const uint32_t every = std::max<uint32_t>(1, rate / std::max<uint32_t>(1, o_.snapshot_rate));
    for (uint64_t t = 1; t <= ticks; ++t) {
      drive(t, rate);
      world_.step();
      remember();
      const double now = double(t) / rate;
      if (t % every == 0) send_snapshots(now);
      for (auto& c : clients_) exchange(*c, now);
      // The first two seconds fill the clients' views; measured after that.
      if (t % 6 == 0 && t > 2 * rate) measure(rate);
    }
    report(double(ticks) / rate);
    return 0;
  }

 private:
  // Players walk circles of 12 m at 3 m/s, each starting at its own phase; kicks wake a
  // few dynamic bodies everywhere.
  void drive(uint64_t t, uint32_t rate) {
    for (size_t i = 0; i < players_.size(); ++i) {
      ks::BodyId id = world_.find_body(players_[i]);
      double a = 0.25 * double(t) / rate + double(i);
      world_.set_linear_velocity(id, ks::Vec3(float(-3.0 * std::sin(a)), 0.0f, float(3.0 * std::cos(a))));
    }
    if (t % (rate / 2) != 0) return;
    for (ks::BodyId id : dynamic_) {
      if (rng_.next() >= 0.02) continue;
      float ang = float(rng_.next() * 6.283);
      world_.set_linear_velocity(id, ks::Vec3(3.0f * std::cos(ang), 2.0f, 3.0f * std::sin(ang)));
      world_.set_angular_velocity(id, ks::Vec3(0.0f, 2.0f, 1.0f));
    }
  }

  void remember() {
    Truth truth{world_.tick(), kp::snapshot_bodies(world_)};
    std::sort(truth.bodies.begin(), truth.bodies.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    history_.push_back(std::move(truth));
    while (history_.size() > 90) history_.pop_front();
  }

  const ks::BodyState* truth_at(uint64_t tick, uint32_t id) const {
    if (history_.empty() || tick < history_.front().tick || tick > history_.back().tick) return nullptr;
    const auto& bodies = history_[tick - history_.front().tick].bodies;
    auto it = std::lower_bound(bodies.begin(), bodies.end(), id, [](const auto& b, uint32_t v) { return b.id < v; });
    return it != bodies.end() && it->id == id ? &*it : nullptr;
  }

  void send_snapshots(double now) {
    const Truth& truth = history_.back();
    kp::QuantSnapshot quant = kp::quantize(truth.bodies, truth.tick, config_);
    std::vector<ks::Vec3> positions;
    for (const auto& b : truth.bodies) positions.push_back(b.position);
    // With a radius the bodies are bucketed once for every client (as keel-server does);
    // the time is counted in the encode figure, shared among the clients.
    std::optional<kp::InterestGrid> grid;
    if (o_.radius > 0.0f) {
      auto g0 = std::chrono::steady_clock::now();
      grid.emplace();
      grid->build(positions, o_.radius);
      encode_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - g0).count();
    }
    // The change stamps and the full forms are followed once a snapshot for every client,
    // as keel-server does, and counted like the grid.
    auto s0 = std::chrono::steady_clock::now();
    stamps_.update(quant);
    forms_.update(quant, config_);
    encode_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s0).count();
    for (auto& c : clients_) {
      c->bucket = std::min(o_.kbps * 125.0 * 0.25, c->bucket + (now - last_refill_) * o_.kbps * 125.0);
      auto t0 = std::chrono::steady_clock::now();
      std::vector<uint8_t> msg;
      if (c->whole) {
        msg = c->whole->encode(quant);
      } else if (c->bucket > 0) {
        const ks::BodyState* me = truth_at(truth.tick, c->player_body);
        std::optional<ks::Vec3> viewer;
        if (me != nullptr) viewer = me->position;
        msg = c->interest->encode({&quant, positions, {}, viewer, grid ? &*grid : nullptr, stamps_.stamps(), &forms_},
                                  c->bucket);
      }
      encode_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      ++encodes_;
      if (!msg.empty()) c->server.send(kp::Channel::Snapshot, msg);
    }
    last_refill_ = now;
  }

  void exchange(BenchClient& c, double now) {
    for (const auto& d : c.server.update(now)) {
      c.down_bytes += d.size() + 28;
      c.bucket -= double(d.size() + 28);
      c.down.send(d, now);
    }
    for (const auto& d : c.down.receive(now)) c.client.receive(d, now);
    while (c.client.take(kp::Channel::Snapshot, taken_)) receive(c, now);
    uint64_t ack = c.whole ? c.whole_rx.ack_tick() : c.interest_rx.ack_tick();
    c.client.send(kp::Channel::Input, ack_batch(history_.back().tick, ack));
    for (const auto& d : c.client.update(now)) c.up.send(d, now);
    for (const auto& d : c.up.receive(now)) c.server.receive(d, now);
    while (c.server.take(kp::Channel::Input, taken_)) {
      const kp::fb::Message* m = nullptr;
      if (kp::check_message(taken_, m) != kp::DropReason::None || m->body_type() != kp::fb::Body::InputBatch) continue;
      uint64_t acked = m->body_as_InputBatch()->ack_snapshot_tick();
      if (c.whole) c.whole->on_ack(acked);
      else c.interest->on_ack(acked);
    }
  }

  void receive(BenchClient& c, double now) {
    const kp::fb::Message* m = nullptr;
    if (kp::check_message(taken_, m) != kp::DropReason::None) return;
    const uint32_t rate = world_.settings().tick_rate;
    if (m->body_type() == kp::fb::Body::Snapshot && c.whole) {
      if (c.whole_rx.receive(*m->body_as_Snapshot()) != kp::DropReason::None) return;
      std::vector<ks::BodyState> bodies;
      for (const auto& q : c.whole_rx.latest().bodies) bodies.push_back(kp::dequantize(q, config_));
      c.buffer.add(c.whole_rx.latest().tick, std::move(bodies), now, rate);
    } else if (m->body_type() == kp::fb::Body::PartialSnapshot && c.interest) {
      if (c.interest_rx.receive(*m->body_as_PartialSnapshot()) != kp::DropReason::None) return;
      const kp::PartialUpdate& u = c.interest_rx.last();
      std::vector<ks::BodyState> bodies;
      for (const auto& q : u.bodies) bodies.push_back(kp::dequantize(q, config_));
      c.buffer.add_partial(u.tick, bodies, u.left, now, rate);
    }
  }

  // What each client shows of the bodies near its player, against the server's state at
  // the tick it renders.
  void measure(uint32_t rate) {
    const Truth& now = history_.back();
    for (auto& c : clients_) {
      if (c->buffer.empty()) continue;
      double render = double(c->buffer.newest_tick()) - c->buffer.delay_seconds() * rate;
      uint64_t tick = uint64_t(std::llround(render));
      const ks::BodyState* me = truth_at(now.tick, c->player_body);
      if (me == nullptr) continue;
      for (const ks::BodyState& b : now.bodies) {
        if (b.motion != ks::MotionType::Dynamic) continue;
        if (glm::length(b.position - me->position) > o_.view_radius) continue;
        const ks::BodyState* truth = truth_at(tick, b.id);
        if (truth == nullptr) continue;
        ++samples_;
        auto pose = c->buffer.sample(b.id, double(tick));
        if (!pose) continue;
        ++shown_;
        pos_err_mm_.push_back(1000.0 * glm::length(pose->position - truth->position));
        rot_err_deg_.push_back(rotation_error_deg(pose->rotation, truth->rotation));
      }
    }
  }

  void report(double seconds) {
    double sum = 0, max = 0;
    for (const auto& c : clients_) {
      double kbps = c->down_bytes * 8.0 / 1000.0 / seconds;
      sum += kbps;
      max = std::max(max, kbps);
    }
    std::printf("interest mode=%s clients=%zu bodies=%zu kbps_down_mean=%.1f kbps_down_max=%.1f "
                "pos_err_mm_p50=%.2f pos_err_mm_p99=%.1f rot_err_deg_p50=%.3f rot_err_deg_p99=%.2f "
                "shown=%.4f encode_us_mean=%.1f\n",
                o_.everything ? "everything" : "budget", clients_.size(), dynamic_.size(), sum / clients_.size(), max,
                percentile(pos_err_mm_, 0.5), percentile(pos_err_mm_, 0.99), percentile(rot_err_deg_, 0.5),
                percentile(rot_err_deg_, 0.99), samples_ ? double(shown_) / double(samples_) : 0.0,
                encodes_ ? encode_us_ / double(encodes_) : 0.0);
  }

  const InterestBenchOptions& o_;
  ks::World& world_;
  kp::SnapshotConfig config_;
  std::vector<uint32_t> players_;
  std::vector<ks::BodyId> dynamic_;
  std::vector<std::unique_ptr<BenchClient>> clients_;
  std::deque<Truth> history_;
  std::vector<uint8_t> taken_;
  Splitmix rng_{12345};
  double last_refill_ = 0;
  double encode_us_ = 0;
  kp::ChangeStamps stamps_;
  kp::FullForms forms_;
  uint64_t encodes_ = 0;
  uint64_t samples_ = 0, shown_ = 0;
  std::vector<double> pos_err_mm_, rot_err_deg_;
};

}  // namespace

int run_interest(const InterestBenchOptions& o, ks::World& world, const kp::SnapshotConfig& config) {
  InterestBench bench(o, world, config);
  return bench.run();
}
