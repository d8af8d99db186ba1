// The interest sender's shortcuts change nothing it sends: the grid marks every body
// within a radius (and prunes most of the others), a sender given the grid writes the
// same bytes as one scanning every body, and the bit counts it sizes bodies with are the
// bits the writer writes.
#include <keel/protocol/interest.h>

#include "body_bits.h"

#include <gtest/gtest.h>

#include "../common/splitmix.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

using Rng = keel::test_support::SplitMix64;  // test data: the same numbers everywhere

kp::SnapshotConfig config(bool velocities = false) {
  kp::SnapshotConfig c;
  c.bounds_min = {-300, -20, -300};
  c.bounds_max = {300, 100, 300};
  c.velocities = velocities;
  return c;
}

ks::BodyState random_body(Rng& r, uint32_t id, float spread) {
  ks::BodyState b;
  b.id = id;
  b.position = {r.range(-spread, spread), r.range(0, 10), r.range(-spread, spread)};
  ks::Quat q = ks::make_quat(r.range(-1, 1), r.range(-1, 1), r.range(-1, 1), r.range(-1, 1));
  b.rotation = glm::normalize(q);
  b.linear_velocity = {r.range(-5, 5), r.range(-5, 5), r.range(-5, 5)};
  b.angular_velocity = {r.range(-3, 3), 0.0f, r.range(-3, 3)};
  b.sleeping = r.unit() < 0.2;
  return b;
}

}  // namespace

// Every body the sender's own test keeps (squared distance <= radius squared) is marked,
// bodies at non-finite positions always are, and a 30 m radius over a 500 m field marks
// a small part of the bodies.
TEST(InterestGrid, MarksEveryBodyWithinTheRadius) {
  Rng r{5};
  std::vector<ks::Vec3> pos;
  for (int i = 0; i < 3000; ++i) pos.push_back({r.range(-250, 250), r.range(-5, 20), r.range(-250, 250)});
  pos[17] = {std::numeric_limits<float>::quiet_NaN(), 0, 0};
  pos[18] = {0, 0, std::numeric_limits<float>::infinity()};
  for (float cell : {30.0f, 7.0f, 0.5f}) {
    kp::InterestGrid grid;
    grid.build(pos, cell);
    ASSERT_EQ(grid.size(), pos.size());
    for (int q = 0; q < 50; ++q) {
      const ks::Vec3 centre{r.range(-300, 300), r.range(0, 5), r.range(-300, 300)};
      const float radius = q % 2 ? 30.0f : r.range(1, 120);
      std::vector<uint8_t> near(pos.size(), 0);
      grid.mark_near(centre, radius, near);
      size_t marked = 0;
      for (size_t i = 0; i < pos.size(); ++i) {
        marked += near[i];
        const ks::Vec3 d = pos[i] - centre;
        if (glm::dot(d, d) <= radius * radius) {
          ASSERT_TRUE(near[i]) << "body " << i << " cell " << cell;
        }
      }
      EXPECT_TRUE(near[17] && near[18]);
      // pi 30^2 / 500^2 = 1.1% of the field; the cells around it at most a few times that.
      if (radius == 30.0f) {
        EXPECT_LT(marked, pos.size() / 5) << "cell " << cell;
      }
    }
  }
}

// Bodies spread over 1e30 m do not make the grid huge (its cell grows), and a query
// still finds the ones near it.
TEST(InterestGrid, FarSpreadBodiesKeepItSmall) {
  std::vector<ks::Vec3> pos = {{-1e30f, 0, -1e30f}, {1e30f, 0, 1e30f}, {1, 0, 1}, {2, 0, -2}};
  kp::InterestGrid grid;
  grid.build(pos, 10.0f);
  std::vector<uint8_t> near(pos.size(), 0);
  grid.mark_near({0, 0, 0}, 5.0f, near);
  EXPECT_TRUE(near[2] && near[3]);
  std::vector<uint8_t> all(pos.size(), 0);
  grid.mark_near({std::numeric_limits<float>::quiet_NaN(), 0, 0}, 5.0f, all);
  EXPECT_EQ(std::count(all.begin(), all.end(), uint8_t{1}), 4);  // no radius applies: every body
}

// Two senders of one client over 20 s of a moving field, one given the grid: the same
// message every snapshot, bytes for bytes, with bodies leaving and entering the radius,
// some the game marks always relevant and some it weighs 0.
TEST(InterestGrid, SenderWithTheGridSendsTheSameBytes) {
  const kp::SnapshotConfig c = config();
  kp::InterestConfig ic;
  ic.radius = 40.0f;
  ic.budget_bytes_per_second = 128 * 125.0;
  kp::InterestSender plain(c, ic), gridded(c, ic);
  Rng r{9};
  std::vector<ks::BodyState> bodies;
  std::vector<float> speed;
  for (uint32_t i = 0; i < 1500; ++i) {
    bodies.push_back(random_body(r, 3 + 2 * i, 200));
    speed.push_back(r.range(-3, 3));
  }
  std::vector<kp::BodyRelevance> relevance(bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) {
    relevance[i].always = i % 97 == 0;
    relevance[i].weight = i % 89 == 0 ? 0.0f : 1.0f + float(i % 3);
  }
  size_t sent = 0, left = 0;
  std::deque<uint64_t> acks;
  for (uint64_t t = 1; t <= 1200; ++t) {
    for (size_t i = 0; i < bodies.size(); ++i) bodies[i].position.x += speed[i] / 60.0f;
    if (t % 2 != 0) continue;
    kp::QuantSnapshot q = kp::quantize(bodies, t, c);
    std::vector<ks::Vec3> pos;
    for (const auto& b : bodies) pos.push_back(b.position);
    kp::InterestGrid grid;
    grid.build(pos, ic.radius);
    const ks::Vec3 viewer{float(t) * 0.1f - 60.0f, 1.0f, 10.0f};
    std::vector<uint8_t> a = plain.encode({&q, pos, relevance, viewer}, 600.0);
    std::vector<uint8_t> b = gridded.encode({&q, pos, relevance, viewer, &grid}, 600.0);
    ASSERT_EQ(a, b) << "tick " << t;
    if (a.empty()) continue;
    ++sent;
    left += plain.last_sent().left.size();
    // Acknowledged three snapshots later, both alike.
    acks.push_back(t);
    if (acks.size() > 3) {
      plain.on_ack(acks.front());
      gridded.on_ack(acks.front());
      acks.pop_front();
    }
  }
  EXPECT_GT(sent, 400u);
  EXPECT_GT(left, 10u);
  EXPECT_EQ(plain.in_interest(), gridded.in_interest());
  EXPECT_GT(plain.in_interest(), 20u);
}

// full_bits and delta_bits are exactly what write_full and write_delta write, with and
// without velocities, for bodies near and far from their baselines; min_delta_bits is
// the least any delta takes.
TEST(InterestGrid, BitCountsAreTheWritersBits) {
  for (bool velocities : {false, true}) {
    const kp::SnapshotConfig c = config(velocities);
    Rng r{velocities ? 2u : 1u};
    for (int i = 0; i < 2000; ++i) {
      ks::BodyState a = random_body(r, 1, 250);
      ks::BodyState b = a;
      if (i % 3 == 0) b = random_body(r, 1, 250);  // anywhere: large residuals, another largest
      else b.position += ks::Vec3(r.range(-0.1f, 0.1f), 0.0f, r.range(-0.1f, 0.1f));
      const kp::QuantBody qa = kp::quantize(std::span(&a, 1), 1, c).bodies[0];
      const kp::QuantBody qb = kp::quantize(std::span(&b, 1), 2, c).bodies[0];
      kp::BitWriter full, delta;
      kp::body_bits::write_full(full, qb, c);
      kp::body_bits::write_delta(delta, qb, qa, c);
      ASSERT_EQ(kp::body_bits::full_bits(c), full.bit_count());
      ASSERT_EQ(kp::body_bits::delta_bits(qb, qa, c), delta.bit_count()) << i;
      ASSERT_GE(delta.bit_count(), kp::body_bits::min_delta_bits(c));
    }
    kp::BitWriter same;
    ks::BodyState a = random_body(r, 1, 10);
    const kp::QuantBody qa = kp::quantize(std::span(&a, 1), 1, c).bodies[0];
    kp::body_bits::write_delta(same, qa, qa, c);
    EXPECT_EQ(same.bit_count(), kp::body_bits::min_delta_bits(c));
  }
}
