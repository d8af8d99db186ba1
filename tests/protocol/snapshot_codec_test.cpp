// The snapshot codec: quantisation error bounds, exact round trips of full and delta
// snapshots (bodies appearing and disappearing), and a client that decodes exactly the
// server's quantised state at every snapshot it receives over a link with 20% loss,
// duplication and reordering.
#include <keel/protocol/connection.h>
#include <keel/protocol/link_sim.h>
#include <keel/protocol/snapshot_stream.h>
#include <keel/sim/det_math.h>

#include <gtest/gtest.h>

#include "../common/splitmix.h"

#include <cmath>
#include <map>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

using Rng = keel::test_support::SplitMix64;  // test data: the same numbers everywhere

ks::Quat random_rotation(Rng& r) {
  ks::Quat q = ks::make_quat(r.range(-1, 1), r.range(-1, 1), r.range(-1, 1), r.range(-1, 1));
  return glm::normalize(q);
}

double angle_deg(const ks::Quat& a, const ks::Quat& b) {
  double d = std::fabs(double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z + double(a.w) * b.w);
  return 2.0 * std::acos(std::min(1.0, d)) * 180.0 / M_PI;
}

std::vector<ks::BodyState> random_bodies(Rng& r, size_t n, uint32_t first_id = 1) {
  std::vector<ks::BodyState> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i].id = first_id + uint32_t(i) * 3;
    v[i].position = {r.range(-200, 200), r.range(-60, 180), r.range(-200, 200)};
    v[i].rotation = random_rotation(r);
    v[i].linear_velocity = {r.range(-5, 5), 0, 0};
  }
  return v;
}

}  // namespace

TEST(SnapshotCodec, QuantisationErrorBounds) {
  Rng r{1};
  for (uint32_t bits : {9u, 10u, 11u}) {
    kp::SnapshotConfig c;
    c.rotation_bits = bits;
    auto bodies = random_bodies(r, 5000);
    auto q = kp::quantize(bodies, 1, c);
    double max_axis = 0, max_angle = 0;
    for (size_t i = 0; i < bodies.size(); ++i) {
      // quantize sorts by id; random_bodies made them ascending already.
      ks::BodyState s = kp::dequantize(q.bodies[i], c);
      for (int a = 0; a < 3; ++a) {
        max_axis = std::max(max_axis, double(std::fabs(s.position[a] - bodies[i].position[a])));
      }
      max_angle = std::max(max_angle, angle_deg(s.rotation, bodies[i].rotation));
    }
    // Half a grid step per axis, plus float rounding of coordinates up to 200 m.
    EXPECT_LE(max_axis, 0.5 / 512 + 2e-5) << bits;
    // Each small component is off by at most e = half a step of sqrt2/(2^bits - 2); the
    // rebuilt largest one (>= 1/2) by at most 3e, so the quaternion by sqrt(12)e and the
    // angle by twice that (radians).
    double e = std::sqrt(2.0) / double((1u << bits) - 2) / 2;
    double bound = 2.0 * std::sqrt(12.0) * e * 180.0 / M_PI + 0.002;
    EXPECT_LE(max_angle, bound) << bits;
    if (bits == 11) {
      EXPECT_LT(max_angle, 0.2);  // the default meets the 0.2 degree bar
    }
  }
}

TEST(SnapshotCodec, UprightBodiesAtRestDoNotFlicker) {
  // Noise far below a grid step around the identity must quantise to one value.
  kp::SnapshotConfig c;
  ks::BodyState a, b;
  a.id = b.id = 1;
  b.rotation = glm::normalize(ks::make_quat(1e-6f, -1e-6f, 2e-6f, 1.0f));
  auto qa = kp::quantize(std::span(&a, 1), 1, c);
  auto qb = kp::quantize(std::span(&b, 1), 2, c);
  EXPECT_EQ(qa.bodies, qb.bodies);
}

TEST(SnapshotCodec, FullAndDeltaRoundTripsWithBodiesComingAndGoing) {
  Rng r{7};
  kp::SnapshotConfig c;
  c.velocities = true;
  auto bodies = random_bodies(r, 300);
  auto s0 = kp::quantize(bodies, 10, c);
  kp::QuantSnapshot out;
  auto full = kp::encode_snapshot(s0, {}, c);
  ASSERT_EQ(kp::decode_snapshot(full, 10, {}, c, out), kp::DropReason::None);
  EXPECT_EQ(out, s0);

  // Move some, remove some, add some.
  auto next = bodies;
  for (size_t i = 0; i < next.size(); i += 4) next[i].position.x += r.range(-0.3f, 0.3f);
  for (size_t i = 1; i < next.size(); i += 9) next[i].rotation = random_rotation(r);
  next.erase(next.begin() + 50, next.begin() + 60);
  auto extra = random_bodies(r, 5, 2);  // ids 2, 5, 8 ... interleave with the old ones
  next.insert(next.end(), extra.begin(), extra.end());
  auto s1 = kp::quantize(next, 15, c);
  auto delta = kp::encode_snapshot(s1, {&s0, nullptr}, c);
  EXPECT_LT(delta.size(), full.size());
  ASSERT_EQ(kp::decode_snapshot(delta, 15, {&s0, nullptr}, c, out), kp::DropReason::None);
  EXPECT_EQ(out, s1);

  // With an older baseline (prediction) as well.
  auto s2 = kp::quantize(next, 20, c);
  for (auto& b : s2.bodies) b.pos[0] = std::min<uint32_t>(b.pos[0] + 7, 512 * 512);
  auto d2 = kp::encode_snapshot(s2, {&s1, &s0}, c);
  EXPECT_EQ(kp::snapshot_older_tick(d2, 15), 10u);
  ASSERT_EQ(kp::decode_snapshot(d2, 20, {&s1, &s0}, c, out), kp::DropReason::None);
  EXPECT_EQ(out, s2);
  // The wrong older baseline is refused, not misdecoded.
  EXPECT_NE(kp::decode_snapshot(d2, 20, {&s1, nullptr}, c, out), kp::DropReason::None);
}

TEST(SnapshotCodec, GarbageAndTruncationAreRejected) {
  Rng r{3};
  kp::SnapshotConfig c;
  auto s0 = kp::quantize(random_bodies(r, 100), 1, c);
  auto s1 = s0;
  s1.tick = 2;
  for (auto& b : s1.bodies) b.pos[1] += 3;
  auto delta = kp::encode_snapshot(s1, {&s0, nullptr}, c);
  kp::QuantSnapshot out;
  for (size_t n = 0; n < delta.size(); ++n) {
    EXPECT_NE(kp::decode_snapshot(std::span(delta).first(n), 2, {&s0, nullptr}, c, out),
              kp::DropReason::None) << n;
  }
  std::vector<uint8_t> junk(600);
  for (int round = 0; round < 300; ++round) {
    for (auto& b : junk) b = uint8_t(r.unit() * 256);
    kp::decode_snapshot(junk, 2, {&s0, nullptr}, c, out);  // must not crash
    kp::decode_snapshot(junk, 2, {}, c, out);
  }
}

TEST(SnapshotStream, ClientMatchesServerUnderLossAndReordering) {
  // A small world that keeps moving: boxes falling on a ground, a spinning kinematic bar.
  ks::SceneDef scene;
  ks::BodyDef ground;
  ground.id = 1;
  ground.motion = ks::MotionType::Static;
  ground.position = {0, -0.5f, 0};
  ground.colliders.push_back({});
  ground.colliders.back().shape = ks::ShapeType::Box;
  ground.colliders.back().half_extents = {30, 0.5f, 30};
  scene.bodies.push_back(ground);
  ks::BodyDef bar = ground;
  bar.id = 2;
  bar.motion = ks::MotionType::Kinematic;
  bar.position = {0, 0.5f, 0};
  bar.angular_velocity = {0, 1.5f, 0};
  bar.colliders.back().half_extents = {6, 0.5f, 0.5f};
  scene.bodies.push_back(bar);
  for (uint32_t i = 0; i < 40; ++i) {
    ks::BodyDef box = ground;
    box.id = 10 + i;
    box.motion = ks::MotionType::Dynamic;
    box.position = {float(i % 8) * 1.5f - 5.0f, 1.0f + float(i / 8) * 1.2f, 2.0f};
    box.colliders.back().half_extents = {0.5f, 0.5f, 0.5f};
    scene.bodies.push_back(box);
  }
  auto world = ks::World::from_scene(scene);
  ASSERT_TRUE(world.has_value()) << world.error().message;
  auto config = kp::SnapshotConfig::for_scene(scene);

  kp::Connection server, client;
  kp::LinkConfig link{40, 20, 0.2, 0.05, 0.2, 11};
  kp::LinkSimulator down(link), up([&] {
    auto l = link;
    l.seed = 12;
    return l;
  }());
  kp::SnapshotSender sender(config);
  kp::SnapshotReceiver receiver(config);
  std::map<uint64_t, kp::QuantSnapshot> sent;
  int decoded = 0, checked = 0;
  uint32_t next_id = 100;
  for (int t = 1; t <= 600; ++t) {
    double now = t / 60.0;
    world->step();
    if (t % 50 == 0) {  // bodies appear and disappear mid-stream
      ks::BodyDef b = scene.bodies[5];
      b.id = next_id++;
      b.position = {0, 4, -3};
      ASSERT_TRUE(world->add_body(b).has_value());
      world->remove_body(world->find_body(10 + uint32_t(t / 50)));
    }
    auto q = kp::quantize(kp::snapshot_bodies(*world), world->tick(), config);
    auto msg = sender.encode(q);
    if (!msg.empty()) {
      server.send(kp::Channel::Snapshot, msg);
      sent[q.tick] = q;
    }
    for (auto& d : server.update(now)) down.send(d, now);
    for (auto& d : down.receive(now)) client.receive(d, now);
    while (auto m = client.take(kp::Channel::Snapshot)) {
      const kp::fb::Message* fm = nullptr;
      ASSERT_EQ(kp::check_message(*m, fm), kp::DropReason::None);
      if (receiver.receive(*fm->body_as_Snapshot()) != kp::DropReason::None) continue;
      ++decoded;
      auto it = sent.find(receiver.latest().tick);
      ASSERT_NE(it, sent.end());
      ASSERT_EQ(receiver.latest(), it->second) << "tick " << it->first;
      ++checked;
    }
    std::vector<uint8_t> ack(8);
    for (int i = 0; i < 8; ++i) ack[i] = uint8_t(receiver.ack_tick() >> (8 * i));
    client.send(kp::Channel::Input, ack);
    for (auto& d : client.update(now)) up.send(d, now);
    for (auto& d : up.receive(now)) server.receive(d, now);
    while (auto m = server.take(kp::Channel::Input)) {
      uint64_t a = 0;
      for (int i = 0; i < 8; ++i) a |= uint64_t((*m)[i]) << (8 * i);
      sender.on_ack(a);
    }
  }
  EXPECT_GT(decoded, 200);  // most single-packet snapshots get through 80% loss... of 20%
  EXPECT_EQ(checked, decoded);
  EXPECT_GT(sender.acked_tick(), 500u);
}

TEST(SnapshotStream, TickExpansionAcrossThe32BitWrap) {
  EXPECT_EQ(kp::expand_tick(5, 0), 5u);
  EXPECT_EQ(kp::expand_tick(3, 0xfffffff0ull), 0x100000003ull);
  EXPECT_EQ(kp::expand_tick(0xfffffff0u, 0x100000003ull), 0xfffffff0ull);
  EXPECT_EQ(kp::expand_tick(7, 0x500000000ull), 0x500000007ull);
}
