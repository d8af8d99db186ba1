// Interest management: the partial-snapshot sender keeps to its budget with the packet
// layer's overhead counted (real Connections), sends the most relevant bodies first,
// tells a client when a body leaves its interest and sends it in full when it comes
// back, and its per-body baselines survive losing every other packet; every body a
// client can see ends at the server's quantised value once it stops moving.
#include <keel/protocol/connection.h>
#include <keel/protocol/interest.h>
#include <keel/protocol/link_sim.h>
#include <keel/sim/det_math.h>

#include <gtest/gtest.h>

#include "../common/splitmix.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

using Rng = keel::test_support::SplitMix64;  // test data: the same numbers everywhere

kp::SnapshotConfig test_config() {
  kp::SnapshotConfig c;
  c.bounds_min = {-300, -20, -300};
  c.bounds_max = {300, 100, 300};
  return c;
}

// A field of bodies; each moves on a circle of its own until `stop_tick`, then rests.
struct Field {
  std::vector<ks::BodyState> bodies;
  std::vector<float> radius, speed;
  uint64_t stop_tick = ~0ull;

  Field(size_t n, float spread, uint64_t seed) {
    Rng r{seed};
    for (size_t i = 0; i < n; ++i) {
      ks::BodyState b;
      b.id = 10 + uint32_t(i) * 2;
      b.position = {r.range(-spread, spread), r.range(0, 10), r.range(-spread, spread)};
      bodies.push_back(b);
      radius.push_back(r.range(0.5f, 3.0f));
      speed.push_back(r.range(0.5f, 2.0f));
    }
  }
  void step(uint64_t tick) {
    if (tick >= stop_tick) {
      for (auto& b : bodies) b.linear_velocity = b.angular_velocity = ks::Vec3(0.0f), b.sleeping = true;
      return;
    }
    for (size_t i = 0; i < bodies.size(); ++i) {
      double a = speed[i] * double(tick) / 60.0;
      ks::BodyState& b = bodies[i];
      b.position.x += float(radius[i] * (std::cos(a) - std::cos(a - speed[i] / 60.0)));
      b.position.z += float(radius[i] * (std::sin(a) - std::sin(a - speed[i] / 60.0)));
      b.rotation = glm::normalize(ks::make_quat(0.0f, float(std::sin(a / 2)), 0.0f, float(std::cos(a / 2))));
      b.linear_velocity = {1.0f, 0.0f, 0.0f};
      b.sleeping = false;
    }
  }
};

// One server-to-client snapshot stream over real, authenticated Connections and a
// simulated link; the client's acknowledgements travel back on the Input channel. The
// server side keeps the token bucket keel-server keeps: every datagram is charged with
// its bytes plus 28 of IPv4/UDP header, a snapshot may use what the bucket holds.
struct Stream {
  kp::SnapshotConfig config = test_config();
  kp::InterestSender sender;
  kp::InterestReceiver receiver{config};
  kp::Connection server, client;
  kp::LinkSimulator down, up;
  double rate;
  double bucket = 0;
  double last_time = 0;
  uint64_t wire_bytes = 0;     // every server datagram, +28 each
  uint64_t decoded = 0, stale = 0, refused = 0, datagrams = 0;
  uint32_t drop_every = 0;     // drop every Nth server datagram (0: none)
  std::vector<uint8_t> taken;

  Stream(const kp::InterestConfig& interest, const kp::LinkConfig& link)
      : sender(config, interest), down(link), up(link), rate(interest.budget_bytes_per_second) {
    kp::ConnectionKeys a, b;
    for (int i = 0; i < 32; ++i) {
      a.send[i] = b.receive[i] = uint8_t(i);
      a.receive[i] = b.send[i] = uint8_t(100 + i);
    }
    server.set_keys(a);
    client.set_keys(b);
  }

  static double bucket_cap(double rate) { return rate * 0.25; }

  // One tick at 60 Hz; a snapshot every `every` ticks.
  void tick(uint64_t t, const Field& f, std::optional<ks::Vec3> viewer, uint32_t every = 2,
            std::span<const kp::BodyRelevance> relevance = {}) {
    double now = double(t) / 60.0;
    bucket = std::min(bucket_cap(rate), bucket + (now - last_time) * rate);
    last_time = now;
    if (t % every == 0 && bucket > 0) {
      kp::QuantSnapshot q = kp::quantize(f.bodies, t, config);
      std::vector<ks::Vec3> pos;
      for (const auto& b : f.bodies) pos.push_back(b.position);  // bodies are in id order
      kp::InterestFrame frame{&q, pos, relevance, viewer};
      std::vector<uint8_t> m = sender.encode(frame, bucket);
      if (!m.empty()) {
        EXPECT_LE(double(kp::snapshot_wire_bytes(m.size())), bucket);
        server.send(kp::Channel::Snapshot, m);
      }
    }
    for (const auto& d : server.update(now)) {
      wire_bytes += d.size() + 28;
      bucket -= double(d.size() + 28);
      ++datagrams;
      if (drop_every != 0 && datagrams % drop_every == 0) continue;
      down.send(d, now);
    }
    for (const auto& d : down.receive(now)) client.receive(d, now);
    while (client.take(kp::Channel::Snapshot, taken)) {
      const kp::fb::Message* msg = nullptr;
      ASSERT_EQ(kp::check_message(taken, msg), kp::DropReason::None);
      ASSERT_EQ(msg->body_type(), kp::fb::Body::PartialSnapshot);
      kp::DropReason r = receiver.receive(*msg->body_as_PartialSnapshot());
      if (r == kp::DropReason::None) ++decoded;
      else if (r == kp::DropReason::Stale) ++stale;
      else ++refused;
    }
    uint64_t ack = receiver.ack_tick();
    std::vector<uint8_t> ack_bytes(8);
    for (int i = 0; i < 8; ++i) ack_bytes[i] = uint8_t(ack >> (8 * i));
    client.send(kp::Channel::Input, ack_bytes);
    for (const auto& d : client.update(now)) up.send(d, now);
    for (const auto& d : up.receive(now)) server.receive(d, now);
    while (server.take(kp::Channel::Input, taken)) {
      uint64_t v = 0;
      for (int i = 0; i < 8; ++i) v |= uint64_t(taken[i]) << (8 * i);
      sender.on_ack(v);
    }
  }

  // True when the client holds exactly the server's quantised value of body i.
  bool holds(const Field& f, size_t i) const {
    const kp::QuantBody* held = receiver.find(f.bodies[i].id);
    if (held == nullptr) return false;
    kp::QuantSnapshot q = kp::quantize(std::span(&f.bodies[i], 1), 1, config);
    return *held == q.bodies[0];
  }
};

kp::LinkConfig link(double one_way_ms, double loss, uint64_t seed = 7) {
  kp::LinkConfig l;
  l.latency_ms = one_way_ms;
  l.jitter_ms = 5;
  l.loss = loss;
  l.seed = seed;
  return l;
}

}  // namespace

TEST(Interest, WireBytesOfAMessage) {
  EXPECT_EQ(kp::snapshot_wire_bytes(100), 13u + 16 + 28 + 4 + 100);
  EXPECT_EQ(kp::snapshot_wire_bytes(1028), 13u + 16 + 28 + 4 + 1028);
  EXPECT_EQ(kp::snapshot_wire_bytes(1029), 2 * (13u + 16 + 28 + 8) + 1029);
  EXPECT_EQ(kp::snapshot_wire_bytes(3000), 3 * (13u + 16 + 28 + 8) + 3000);
}

// 2,000 moving bodies, far more than 256 kbit/s can carry: over 20 s the server's
// datagrams (headers, tags and IPv4/UDP included) stay within the budget and its bucket,
// and the budget is used rather than left idle.
TEST(Interest, NeverExceedsItsBudget) {
  kp::InterestConfig ic;
  ic.budget_bytes_per_second = 256 * 125.0;
  Stream s(ic, link(40, 0.02));
  Field f(2000, 200, 3);
  const uint64_t ticks = 20 * 60;
  for (uint64_t t = 1; t <= ticks; ++t) {
    f.step(t);
    s.tick(t, f, ks::Vec3(0.0f));
  }
  double seconds = double(ticks) / 60.0;
  double allowed = ic.budget_bytes_per_second * seconds + Stream::bucket_cap(ic.budget_bytes_per_second);
  EXPECT_LE(double(s.wire_bytes), allowed);
  EXPECT_GE(double(s.wire_bytes), 0.8 * ic.budget_bytes_per_second * seconds);
  EXPECT_GT(s.decoded, 500u);
  EXPECT_EQ(s.stale + s.refused, 0u);
  EXPECT_LE(s.receiver.bodies(), kp::InterestLimits::kMaxInterestBodies);
}

// A budget for about one body per snapshot: the near moving body goes first, the far
// still one only after it (its priority grows more slowly), and it does go eventually.
TEST(Interest, NearMovingBodyBeforeFarStillOne) {
  kp::SnapshotConfig c = test_config();
  kp::InterestConfig ic;
  kp::InterestSender sender(c, ic);
  std::vector<ks::BodyState> bodies(2);
  bodies[0].id = 5;   // far, still
  bodies[0].position = {80, 1, 0};
  bodies[0].sleeping = true;
  bodies[1].id = 9;   // near, moving
  bodies[1].position = {2, 1, 0};
  bodies[1].linear_velocity = {3, 0, 0};
  std::vector<ks::Vec3> pos = {bodies[0].position, bodies[1].position};
  // Room for one body sent in full and the message's own bytes, not for two bodies.
  double one_body = 0;
  {
    kp::InterestSender probe(c, ic);
    kp::QuantSnapshot q = kp::quantize(std::span(&bodies[1], 1), 1, c);
    one_body = double(kp::snapshot_wire_bytes(probe.encode({&q, std::span(&pos[1], 1), {}, ks::Vec3(0.0f)}, 1e9).size()));
  }
  std::vector<uint32_t> order;
  for (uint64_t t = 1; t <= 80; ++t) {
    bodies[1].position.x += 0.05f;
    pos[1] = bodies[1].position;
    kp::QuantSnapshot q = kp::quantize(bodies, t, c);
    kp::InterestFrame frame{&q, pos, {}, ks::Vec3(0.0f)};
    std::vector<uint8_t> m = sender.encode(frame, one_body + 4);
    if (m.empty()) continue;
    ASSERT_EQ(sender.last_sent().bodies.size(), 1u);
    order.push_back(sender.last_sent().bodies[0].id);
  }
  ASSERT_GE(order.size(), 2u);
  EXPECT_EQ(order[0], 9u);
  // The far body's relevance is 1/26 of the near one's (16 m halves it): it waits about
  // 26 snapshots, then goes once.
  auto far = std::find(order.begin(), order.end(), 5u);
  ASSERT_NE(far, order.end());
  EXPECT_GE(far - order.begin(), 10);
  EXPECT_LE(far - order.begin(), 40);
}

// A body that walks out of a 50 m radius and back: the client is told it left and drops
// it, and when it returns it is sent in full and held at the server's value.
TEST(Interest, LeaveAndReenter) {
  kp::InterestConfig ic;
  ic.radius = 50;
  Stream s(ic, link(30, 0.0));
  Field f(3, 5, 11);
  f.stop_tick = 0;  // everything rests unless moved by hand
  auto& walker = f.bodies[1];
  walker.position = {10, 1, 0};
  bool left_seen = false, full_on_return = false;
  uint64_t t = 1;
  for (; t <= 120; ++t) s.tick(t, f, ks::Vec3(0.0f));
  ASSERT_TRUE(s.holds(f, 1));
  walker.position = {120, 1, 0};
  for (; t <= 240; ++t) {
    s.tick(t, f, ks::Vec3(0.0f));
    const auto& l = s.receiver.last().left;
    left_seen = left_seen || std::find(l.begin(), l.end(), walker.id) != l.end();
  }
  EXPECT_TRUE(left_seen);
  EXPECT_EQ(s.receiver.find(walker.id), nullptr);
  EXPECT_TRUE(s.holds(f, 0));
  walker.position = {20, 1, 5};
  for (; t <= 360; ++t) {
    s.tick(t, f, ks::Vec3(0.0f));
    const auto& full = s.sender.last_sent().full;
    full_on_return = full_on_return || std::find(full.begin(), full.end(), walker.id) != full.end();
  }
  EXPECT_TRUE(full_on_return);
  EXPECT_TRUE(s.holds(f, 1));
  EXPECT_EQ(s.stale + s.refused, 0u);
}

// The game's weight 0 takes a body out of interest like the radius does; `always` keeps
// a far body in.
TEST(Interest, GameWeightAndAlwaysRelevant) {
  kp::InterestConfig ic;
  ic.radius = 30;
  Stream s(ic, link(20, 0.0));
  Field f(3, 5, 5);
  f.stop_tick = 0;
  f.bodies[0].position = {200, 1, 0};  // far but always relevant
  f.bodies[1].position = {5, 1, 0};    // near but weighed 0
  f.bodies[2].position = {6, 1, 0};
  std::vector<kp::BodyRelevance> rel(3);
  rel[0].always = true;
  rel[1].weight = 0;
  for (uint64_t t = 1; t <= 120; ++t) s.tick(t, f, ks::Vec3(0.0f), 2, rel);
  EXPECT_TRUE(s.holds(f, 0));
  EXPECT_EQ(s.receiver.find(f.bodies[1].id), nullptr);
  EXPECT_TRUE(s.holds(f, 2));
}

// Every other datagram lost, moving bodies and 20% of the budget they need: the client
// never meets a delta it cannot decode, and once the bodies stop it holds every one of
// them at the server's value.
TEST(Interest, PerBodyBaselinesSurviveLosingEveryOtherPacket) {
  kp::InterestConfig ic;
  ic.budget_bytes_per_second = 64 * 125.0;
  Stream s(ic, link(50, 0.0));
  s.drop_every = 2;
  Field f(300, 60, 21);
  f.stop_tick = 8 * 60;
  for (uint64_t t = 1; t <= 20 * 60; ++t) {
    f.step(t);
    s.tick(t, f, std::nullopt);
  }
  EXPECT_GT(s.decoded, 100u);
  EXPECT_EQ(s.stale + s.refused, 0u);
  for (size_t i = 0; i < f.bodies.size(); ++i) EXPECT_TRUE(s.holds(f, i)) << "body " << f.bodies[i].id;
}

// 1,000 bodies over a 400 m square, a 100 m radius, 2% loss: once everything stops, every
// body within the radius is held at exactly the server's quantised value (so shown
// within the quantisation error: 1/1024 m, 0.14 degrees) and none beyond it is held.
TEST(Interest, VisibleBodiesConvergeAfterTheyStop) {
  kp::InterestConfig ic;
  ic.radius = 100;
  Stream s(ic, link(40, 0.02, 9));
  Field f(1000, 200, 4);
  f.stop_tick = 5 * 60;
  for (uint64_t t = 1; t <= 25 * 60; ++t) {
    f.step(t);
    s.tick(t, f, ks::Vec3(0.0f));
  }
  size_t inside = 0;
  for (size_t i = 0; i < f.bodies.size(); ++i) {
    float d = glm::length(f.bodies[i].position);
    if (d < 99.0f) {
      ++inside;
      EXPECT_TRUE(s.holds(f, i)) << "body " << f.bodies[i].id << " at " << d << " m";
      const kp::QuantBody* held = s.receiver.find(f.bodies[i].id);
      if (held != nullptr) {
        EXPECT_LE(glm::length(kp::dequantize(*held, s.config).position - f.bodies[i].position), 1.0f / 512);
      }
    } else if (d > 101.0f) {
      EXPECT_EQ(s.receiver.find(f.bodies[i].id), nullptr) << "body " << f.bodies[i].id;
    }
  }
  EXPECT_GT(inside, 100u);
  EXPECT_EQ(s.stale + s.refused, 0u);
}

// Untrusted payloads: random bytes and truncations of a real message are refused and
// counted, never crash, and leave what the receiver holds unchanged.
TEST(Interest, MalformedPayloadsAreRefused) {
  kp::SnapshotConfig c = test_config();
  kp::InterestSender sender(c);
  kp::InterestReceiver rx(c);
  Field f(50, 20, 2);
  kp::QuantSnapshot q = kp::quantize(f.bodies, 10, c);
  std::vector<ks::Vec3> pos;
  for (const auto& b : f.bodies) pos.push_back(b.position);
  std::vector<uint8_t> m = sender.encode({&q, pos, {}, std::nullopt}, 1e9);
  ASSERT_FALSE(m.empty());
  const kp::fb::Message* msg = nullptr;
  ASSERT_EQ(kp::check_message(m, msg), kp::DropReason::None);
  std::vector<uint8_t> payload(msg->body_as_PartialSnapshot()->payload()->begin(),
                               msg->body_as_PartialSnapshot()->payload()->end());
  Rng r{5};
  int refused = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<uint8_t> bad = payload;
    if (round % 2 == 0) bad.resize(size_t(r.unit() * bad.size()));
    else for (int k = 0; k < 4; ++k) bad[size_t(r.unit() * bad.size())] ^= uint8_t(1 + r.unit() * 254);
    flatbuffers::FlatBufferBuilder fbb;
    auto body = kp::fb::CreatePartialSnapshotDirect(fbb, 10, &bad);
    std::vector<uint8_t> bm = kp::finish_message(fbb, kp::fb::Body::PartialSnapshot, body.Union());
    ASSERT_EQ(kp::check_message(bm, msg), kp::DropReason::None);
    kp::InterestReceiver fresh(c);
    if (fresh.receive(*msg->body_as_PartialSnapshot()) != kp::DropReason::None) {
      ++refused;
      EXPECT_EQ(fresh.bodies(), 0u);
      EXPECT_EQ(fresh.ack_tick(), 0u);
    }
  }
  EXPECT_GT(refused, 250);
  ASSERT_EQ(kp::check_message(m, msg), kp::DropReason::None);
  EXPECT_EQ(rx.receive(*msg->body_as_PartialSnapshot()), kp::DropReason::None);
  EXPECT_EQ(rx.bodies(), f.bodies.size());
}

namespace {

// The fuzz target's baselines (tests/fuzz/fuzz_protocol_snapshot.cpp).
kp::QuantSnapshot fuzz_baseline(uint64_t tick, uint32_t shift) {
  kp::QuantSnapshot s;
  s.tick = tick;
  for (uint32_t i = 0; i < 40; ++i) {
    kp::QuantBody b;
    b.id = 1 + i * 2;
    b.pos[0] = 1000 + i * 30 + shift;
    b.pos[1] = 500 + shift;
    b.pos[2] = 2000 - i;
    b.largest = 3;
    b.rot[0] = b.rot[1] = b.rot[2] = 1023;
    b.at_rest = (i % 3) == 0;
    s.bodies.push_back(b);
  }
  return s;
}

}  // namespace

// Seeds for fuzz_protocol_snapshot: PartialSnapshot payloads at tick 105 against the
// fuzz target's receiver (bodies held at ticks 100 and 104), one with deltas and leaves,
// one in full; each must decode there. Written only when asked:
//   KEEL_WRITE_FUZZ_SEEDS=tests/fuzz/corpus build/bin/keel_protocol_tests --gtest_filter='Interest.FuzzSeeds'
TEST(Interest, FuzzSeeds) {
  kp::SnapshotConfig c;
  kp::InterestSender tx(c);
  kp::InterestReceiver rx(c);
  auto payload_of = [](const std::vector<uint8_t>& m) {
    const kp::fb::Message* msg = nullptr;
    EXPECT_EQ(kp::check_message(m, msg), kp::DropReason::None);
    auto* p = msg->body_as_PartialSnapshot()->payload();
    return std::vector<uint8_t>(p->begin(), p->end());
  };
  std::vector<uint8_t> full;
  for (uint64_t tick : {100u, 104u}) {
    kp::QuantSnapshot s = fuzz_baseline(tick, uint32_t(tick - 100));
    std::vector<ks::Vec3> pos(s.bodies.size(), ks::Vec3(0.0f));
    std::vector<uint8_t> m = tx.encode({&s, pos, {}, std::nullopt}, 1e9);
    if (tick == 100) full = payload_of(m);
    const kp::fb::Message* msg = nullptr;
    ASSERT_EQ(kp::check_message(m, msg), kp::DropReason::None);
    ASSERT_EQ(rx.receive(*msg->body_as_PartialSnapshot()), kp::DropReason::None);
    tx.on_ack(tick);
  }
  kp::QuantSnapshot s = fuzz_baseline(105, 7);
  s.bodies.resize(30);  // ten bodies leave
  std::vector<ks::Vec3> pos(s.bodies.size(), ks::Vec3(0.0f));
  std::vector<uint8_t> m = tx.encode({&s, pos, {}, std::nullopt}, 1e9);
  ASSERT_EQ(tx.last_sent().left.size(), 10u);
  ASSERT_TRUE(tx.last_sent().full.empty());
  std::vector<uint8_t> delta = payload_of(m);
  const kp::fb::Message* msg = nullptr;
  ASSERT_EQ(kp::check_message(m, msg), kp::DropReason::None);
  ASSERT_EQ(rx.receive(*msg->body_as_PartialSnapshot()), kp::DropReason::None);
  EXPECT_EQ(rx.bodies(), 30u);
  const char* dir = std::getenv("KEEL_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) return;
  for (auto& [name, bytes] : {std::pair{"partial_delta", delta}, std::pair{"partial_full", full}}) {
    std::string path = std::string(dir) + "/protocol_snapshot/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
}

namespace {

// FNV-1a over every byte of a message stream: a pin of what the sender chooses and writes.
struct StreamHash {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(std::span<const uint8_t> bytes) {
    for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
    for (int i = 0; i < 8; ++i) h = (h ^ uint8_t(bytes.size() >> (8 * i))) * 0x100000001b3ull;
  }
};

// 400 bodies circling for 4 s then resting, a viewer walking through a 60 m radius (bodies
// leave and come back), acknowledgements two snapshots late with every fifth lost, still
// bodies sent at a quarter of their relevance, and a budget far below the world: every
// rule of the choice (priority order, ties by id, pruning, baselines, leaves) has a part.
uint64_t pinned_stream_hash(size_t& messages, size_t& bodies_sent, bool with_stamps = false,
                            bool with_forms = false) {
  kp::SnapshotConfig c = test_config();
  kp::InterestConfig ic;
  ic.radius = 60;
  ic.still_factor = 0.25f;
  kp::InterestSender sender(c, ic);
  Field f(400, 90, 21);
  f.stop_tick = 240;
  StreamHash hash;
  messages = bodies_sent = 0;
  std::deque<uint64_t> sent_ticks;
  kp::ChangeStamps stamps;
  kp::FullForms forms;
  for (uint64_t t = 1; t <= 480; ++t) {
    f.step(t);
    if (t % 2 != 0) continue;
    kp::QuantSnapshot q = kp::quantize(f.bodies, t, c);
    std::vector<ks::Vec3> pos;
    for (const auto& b : f.bodies) pos.push_back(b.position);
    const ks::Vec3 viewer(-90.0f + 0.4f * float(t), 2.0f, 0.0f);
    stamps.update(q);
    std::span<const uint64_t> changed_at;
    if (with_stamps) changed_at = stamps.stamps();
    forms.update(q, c);
    const kp::FullForms* full = with_forms ? &forms : nullptr;
    std::vector<uint8_t> m = sender.encode({&q, pos, {}, viewer, nullptr, changed_at, full}, 700.0);
    if (m.empty()) continue;
    ++messages;
    bodies_sent += sender.last_sent().bodies.size();
    hash.add(m);
    sent_ticks.push_back(t);
    if (sent_ticks.size() > 2) {
      if (messages % 5 != 0) sender.on_ack(sent_ticks.front());
      sent_ticks.pop_front();
    }
  }
  return hash.h;
}

}  // namespace

// The sender's messages for one fixed stream, byte for byte, as the sender wrote them
// before its candidates carried their own priority and id and its tracks a settled flag:
// those change how fast the choice is made, never what is chosen or how it is written.
TEST(Interest, MessagesOfAFixedStreamArePinned) {
  size_t messages = 0, bodies = 0;
  const uint64_t h = pinned_stream_hash(messages, bodies);
  EXPECT_EQ(messages, 240u);  // one every snapshot: the budget never lets the world fit
  EXPECT_EQ(bodies, 21319u);
  EXPECT_EQ(h, 0xb64eb1848b701feaull);
}

// Change stamps only spare the sender reading baselines: the same stream, byte for byte.
TEST(Interest, ChangeStampsLeaveTheMessagesAsTheyWere) {
  size_t messages = 0, bodies = 0;
  const uint64_t h = pinned_stream_hash(messages, bodies, true);
  EXPECT_EQ(messages, 240u);
  EXPECT_EQ(bodies, 21319u);
  EXPECT_EQ(h, 0xb64eb1848b701feaull);
}

// Full forms written once a snapshot only spare each sender writing them: the same
// stream, byte for byte, with and without change stamps beside them.
TEST(Interest, FullFormsLeaveTheMessagesAsTheyWere) {
  for (bool stamps : {false, true}) {
    size_t messages = 0, bodies = 0;
    const uint64_t h = pinned_stream_hash(messages, bodies, stamps, true);
    EXPECT_EQ(messages, 240u);
    EXPECT_EQ(bodies, 21319u);
    EXPECT_EQ(h, 0xb64eb1848b701feaull);
  }
}

// Each form is the bits a PartialSnapshot carries for the body in full, after bodies
// move, rest, come and go (only the changed ones are written again), with velocities
// (forms longer than a word) and without; forms of another snapshot or configuration
// are not used.
TEST(Interest, FullFormsAreEachBodysFullBits) {
  for (bool velocities : {false, true}) {
    kp::SnapshotConfig c = test_config();
    c.velocities = velocities;
    Field f(50, 20, 7);
    f.stop_tick = 30;
    kp::FullForms forms;
    for (uint64_t t = 1; t <= 60; ++t) {
      f.step(t);
      std::vector<ks::BodyState> bodies = f.bodies;
      if (t % 20 == 0) bodies.erase(bodies.begin() + static_cast<long>(t / 20));  // one leaves
      kp::QuantSnapshot q = kp::quantize(bodies, t, c);
      forms.update(q, c);
      ASSERT_TRUE(forms.of(q, c));
      ASSERT_EQ(forms.size(), q.bodies.size());
      for (size_t i = 0; i < q.bodies.size(); ++i) {
        const kp::PartialEntry plain{&q.bodies[i], nullptr, 0};
        const kp::PartialEntry copied{&q.bodies[i], nullptr, 0, forms.form(i)};
        ASSERT_EQ(kp::encode_partial(t, {&copied, 1}, {}, c), kp::encode_partial(t, {&plain, 1}, {}, c))
            << "body " << i << " tick " << t;
      }
      kp::SnapshotConfig other = c;
      other.rotation_bits = c.rotation_bits - 1;
      EXPECT_FALSE(forms.of(q, other));
      q.tick += 1;
      EXPECT_FALSE(forms.of(q, c));
    }
  }
}

// A body's stamp is the first snapshot tick at which it held its present value, even when
// it moves away and back (the sender then compares the values), and a body first seen is
// stamped with its first tick.
TEST(Interest, ChangeStampsFollowEachBodysValue) {
  kp::SnapshotConfig c = test_config();
  auto snap = [&](uint64_t tick, std::vector<std::pair<uint32_t, float>> bodies) {
    std::vector<ks::BodyState> states;
    for (auto [id, x] : bodies) {
      ks::BodyState b;
      b.id = id;
      b.position = ks::Vec3(x, 1.0f, 0.0f);
      states.push_back(b);
    }
    return kp::quantize(states, tick, c);
  };
  kp::ChangeStamps stamps;
  stamps.update(snap(2, {{1, 0.0f}, {2, 5.0f}}));
  EXPECT_EQ(std::vector<uint64_t>(stamps.stamps().begin(), stamps.stamps().end()), (std::vector<uint64_t>{2, 2}));
  stamps.update(snap(4, {{1, 0.0f}, {2, 6.0f}, {3, 1.0f}}));
  EXPECT_EQ(std::vector<uint64_t>(stamps.stamps().begin(), stamps.stamps().end()), (std::vector<uint64_t>{2, 4, 4}));
  // Body 2 back where it was at tick 2: a new value against tick 4's, so stamped 6.
  stamps.update(snap(6, {{1, 0.0f}, {2, 5.0f}, {3, 1.0f}}));
  EXPECT_EQ(std::vector<uint64_t>(stamps.stamps().begin(), stamps.stamps().end()), (std::vector<uint64_t>{2, 6, 4}));
  // Body 1 gone: the others keep their stamps.
  stamps.update(snap(8, {{2, 5.0f}, {3, 1.0f}}));
  EXPECT_EQ(std::vector<uint64_t>(stamps.stamps().begin(), stamps.stamps().end()), (std::vector<uint64_t>{6, 4}));
}

// The stream's body-set number changes exactly when the ids do, and a sender told it
// (skipping the comparison of every track's id while the set holds) writes the messages
// of one that compares: bodies leave the world and come back while a viewer walks by.
TEST(Interest, TheBodySetNumberSparesTheIdComparisonAndChangesNoByte) {
  kp::SnapshotConfig c = test_config();
  kp::InterestConfig ic;
  ic.radius = 60;
  kp::InterestSender told(c, ic), comparing(c, ic);
  Field f(300, 90, 33);
  kp::ChangeStamps stamps;
  uint64_t set = 0;
  std::vector<uint32_t> last_ids;
  size_t changes = 0, messages = 0;
  for (uint64_t t = 1; t <= 400; ++t) {
    f.step(t);
    if (t % 2 != 0) continue;
    // Every 50 ticks one body goes; every 70 ticks a new one comes (ids stay sorted).
    if (t % 50 == 0) f.bodies.erase(f.bodies.begin() + static_cast<std::ptrdiff_t>(t % f.bodies.size()));
    if (t % 70 == 0) {
      ks::BodyState b = f.bodies.back();
      b.id += 2;
      f.bodies.push_back(b);
    }
    kp::QuantSnapshot q = kp::quantize(f.bodies, t, c);
    std::vector<ks::Vec3> pos;
    for (const auto& b : f.bodies) pos.push_back(b.position);
    const ks::Vec3 viewer(-90.0f + 0.45f * float(t), 2.0f, 0.0f);
    stamps.update(q);
    std::vector<uint32_t> ids;
    for (const auto& b : q.bodies) ids.push_back(b.id);
    EXPECT_NE(stamps.body_set(), 0u);
    EXPECT_EQ(stamps.body_set() != set, ids != last_ids) << t;
    changes += stamps.body_set() != set;
    set = stamps.body_set();
    last_ids = ids;
    kp::InterestFrame with{&q, pos, {}, viewer, nullptr, stamps.stamps(), nullptr, stamps.body_set()};
    kp::InterestFrame without{&q, pos, {}, viewer, nullptr, stamps.stamps(), nullptr, 0};
    const std::vector<uint8_t> a = told.encode(with, 700.0);
    const std::vector<uint8_t> b = comparing.encode(without, 700.0);
    ASSERT_EQ(a, b) << t;
    messages += !a.empty();
    if (t % 6 == 0) {
      told.on_ack(t - 2);
      comparing.on_ack(t - 2);
    }
  }
  // The first snapshot, 8 bodies gone, 5 new; at tick 350 one went and one came at once.
  EXPECT_EQ(changes, 1u + 8u + 5u - 1u);
  EXPECT_GT(messages, 150u);
}
