// The link conditioner's statistics over many datagrams: loss, duplication, reordering,
// latency bounds, seeded reproducibility, and the outage switch.
#include "fake_server.h"

#include <keel/client/link_conditioner.h>

#include <gtest/gtest.h>

#include <cstring>

namespace keel::client {
namespace {

using testing::Wire;
using testing::WireTransport;

// Pushes n numbered datagrams up through the conditioner, one per ms, and collects what
// reaches the far end with its arrival time.
std::vector<std::pair<uint32_t, double>> push_up(const LinkConditionerConfig& cfg, int n) {
  auto wire = std::make_shared<Wire>();
  auto ct = std::make_unique<ConditionedTransport>(std::make_unique<WireTransport>(wire), cfg);
  std::vector<std::pair<uint32_t, double>> got;
  std::vector<std::vector<uint8_t>> scratch;
  auto drain = [&](double now) {
    while (!wire->to_server.empty()) {
      uint32_t seq;
      std::memcpy(&seq, wire->to_server.front().data(), 4);
      got.emplace_back(seq, now);
      wire->to_server.pop_front();
    }
  };
  for (int i = 0; i < n; ++i) {
    double now = i * 0.001;
    uint8_t d[4];
    uint32_t seq = static_cast<uint32_t>(i);
    std::memcpy(d, &seq, 4);
    ct->send(d, now);
    drain(now);
  }
  for (double now = n * 0.001; now < n * 0.001 + 2.0; now += 0.001) {
    ct->receive(scratch, now, 100);
    drain(now);
  }
  return got;
}

TEST(LinkConditioner, LossAndDuplicationRates) {
  LinkImpairment l;
  l.loss = 0.2;
  l.duplicate = 0.05;
  auto got = push_up(LinkConditionerConfig::symmetric(l, 3), 20000);
  std::map<uint32_t, int> count;
  for (auto& [seq, at] : got) ++count[seq];
  double delivered = static_cast<double>(count.size()) / 20000;
  uint64_t dups = 0;
  for (auto& [seq, c] : count) dups += c - 1;
  EXPECT_NEAR(delivered, 0.8, 0.015);
  EXPECT_NEAR(static_cast<double>(dups) / count.size(), 0.05, 0.01);
}

TEST(LinkConditioner, LatencyStaysInsideTheJitterBand) {
  LinkImpairment l;
  l.latency_ms = 80;
  l.jitter_ms = 30;
  auto got = push_up(LinkConditionerConfig::symmetric(l, 5), 5000);
  ASSERT_EQ(got.size(), 5000u);
  double lo = 1e9, hi = 0, sum = 0;
  for (auto& [seq, at] : got) {
    double delay_ms = (at - seq * 0.001) * 1000.0;
    lo = std::min(lo, delay_ms);
    hi = std::max(hi, delay_ms);
    sum += delay_ms;
  }
  // 80 +/- 30 ms, measured on a 1 ms grid.
  EXPECT_GE(lo, 50.0 - 1e-6);
  EXPECT_LE(hi, 111.0);
  EXPECT_NEAR(sum / got.size(), 80.0, 2.0);
}

TEST(LinkConditioner, ReordersAboutTheRequestedShare) {
  LinkImpairment l;
  l.latency_ms = 20;
  l.reorder = 0.1;
  auto got = push_up(LinkConditionerConfig::symmetric(l, 9), 10000);
  ASSERT_EQ(got.size(), 10000u);
  // A held-back datagram arrives after one sent later than it.
  uint32_t newest = 0;
  int late = 0;
  for (auto& [seq, at] : got) {
    if (seq < newest) ++late;
    newest = std::max(newest, seq);
  }
  EXPECT_NEAR(late / 10000.0, 0.1, 0.015);
}

TEST(LinkConditioner, SameSeedSameRunAndAnOutageDropsEverything) {
  LinkImpairment l;
  l.latency_ms = 30;
  l.jitter_ms = 10;
  l.loss = 0.3;
  l.reorder = 0.2;
  auto a = push_up(LinkConditionerConfig::symmetric(l, 11), 3000);
  auto b = push_up(LinkConditionerConfig::symmetric(l, 11), 3000);
  auto c = push_up(LinkConditionerConfig::symmetric(l, 12), 3000);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);

  auto wire = std::make_shared<Wire>();
  ConditionedTransport ct(std::make_unique<WireTransport>(wire), LinkConditionerConfig{});
  ct.set_outage(1.0, 4.0);
  uint8_t d[8] = {};
  ct.send(d, 0.5);
  ct.send(d, 1.5);
  wire->to_client.push_back({1, 2, 3});
  std::vector<std::vector<uint8_t>> got;
  ct.receive(got, 2.0, 10);
  EXPECT_TRUE(got.empty());
  ct.send(d, 4.5);
  EXPECT_EQ(wire->to_server.size(), 2u);
  EXPECT_EQ(ct.link_stats().outage_dropped, 2u);
}

}  // namespace
}  // namespace keel::client
