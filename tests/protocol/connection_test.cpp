// The packet layer end to end over a simulated link: control messages arrive once and in
// order, fragmented unreliable messages survive loss/duplication/reordering or vanish
// whole, large blocks arrive intact, authentication rejects forgeries and replays, and
// the RTT estimate tracks the link.
#include <keel/protocol/connection.h>
#include <keel/protocol/link_sim.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <numeric>

namespace kp = keel::protocol;

namespace {

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

// Two connections joined by two simulated links, stepped at a fixed rate.
struct Pair {
  kp::Connection a, b;
  kp::LinkSimulator ab, ba;
  double now = 0;

  explicit Pair(const kp::LinkConfig& link, bool keys = true)
      : ab(link), ba([&] {
          auto c = link;
          c.seed += 1000;
          return c;
        }()) {
    if (keys) {
      kp::ConnectionKeys ka, kb;
      for (int i = 0; i < 32; ++i) {
        ka.send[i] = kb.receive[i] = static_cast<uint8_t>(i);
        ka.receive[i] = kb.send[i] = static_cast<uint8_t>(100 + i);
      }
      a.set_keys(ka);
      b.set_keys(kb);
    }
  }
  void step(double dt = 1.0 / 60.0) {
    now += dt;
    for (auto& d : a.update(now)) ab.send(d, now);
    for (auto& d : b.update(now)) ba.send(d, now);
    for (auto& d : ab.receive(now)) b.receive(d, now);
    for (auto& d : ba.receive(now)) a.receive(d, now);
  }
};

kp::LinkConfig bad_link(uint64_t seed) {
  return {50.0, 20.0, 0.2, 0.1, 0.2, seed};
}

}  // namespace

TEST(Connection, ControlMessagesArriveOnceInOrderUnderLoss) {
  Pair p(bad_link(7));
  std::vector<std::vector<uint8_t>> got;
  for (int i = 0; i < 300; ++i) {
    if (i < 200) {
      ASSERT_TRUE(p.a.send(kp::Channel::Control, pattern(1 + i % 300, i)));
    }
    p.step();
    while (auto m = p.b.take(kp::Channel::Control)) got.push_back(*m);
  }
  for (int i = 0; i < 600 && got.size() < 200; ++i) {
    p.step();
    while (auto m = p.b.take(kp::Channel::Control)) got.push_back(*m);
  }
  ASSERT_EQ(got.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(got[i], pattern(1 + i % 300, i)) << i;
  }
}

TEST(Connection, FragmentedMessagesArriveWholeOrNotAtAll) {
  Pair p(bad_link(11));
  // Keyed by the bytes as a string (gcc 12 warns falsely on comparing vectors).
  std::map<std::string, int> sent;
  auto key = [](const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); };
  int delivered = 0;
  for (int i = 0; i < 240; ++i) {
    auto m = pattern(500 + (i * 997) % 9000, i);  // 1 to 10 fragments
    sent[key(m)] = i;
    ASSERT_TRUE(p.a.send(kp::Channel::Snapshot, m));
    p.step();
    while (auto got = p.b.take(kp::Channel::Snapshot)) {
      EXPECT_EQ(sent.count(key(*got)), 1u) << "corrupt reassembly";
      ++delivered;
    }
  }
  for (int i = 0; i < 120; ++i) {
    p.step();
    while (auto got = p.b.take(kp::Channel::Snapshot)) {
      EXPECT_EQ(sent.count(key(*got)), 1u);
      ++delivered;
    }
  }
  // Duplicated datagrams must not deliver a message twice.
  EXPECT_LE(delivered, 240);
  EXPECT_GT(delivered, 40);  // single-packet messages get through 80% of the time
}

TEST(Connection, ReassemblyIsBoundedAndTimesOut) {
  kp::ConnectionConfig cfg;
  cfg.max_reassemblies = 2;
  Pair p({0, 0, 0, 0, 0, 1}, false);
  p.b = kp::Connection(cfg);
  // Drop every second datagram from a to b: no multi-fragment message can complete.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(p.a.send(kp::Channel::Snapshot, pattern(5000, i)));
  auto datagrams = p.a.update(0.0);
  ASSERT_GE(datagrams.size(), 10u);
  for (size_t i = 0; i < datagrams.size(); i += 2) p.b.receive(datagrams[i], 0.0);
  EXPECT_GT(p.b.drops()[kp::DropReason::ReassemblyFull], 0u);
  EXPECT_FALSE(p.b.take(kp::Channel::Snapshot).has_value());
  // After the timeout the slots are free again and a fresh message completes.
  p.b.update(2.0);
  ASSERT_TRUE(p.a.send(kp::Channel::Snapshot, pattern(5000, 99)));
  for (auto& d : p.a.update(2.0)) p.b.receive(d, 2.0);
  auto m = p.b.take(kp::Channel::Snapshot);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, pattern(5000, 99));
}

TEST(Connection, LargeBlockArrivesIntactUnderLoss) {
  Pair p(bad_link(3));
  // 3 MB of partly compressible bytes, like a state checkpoint.
  std::vector<uint8_t> block(3u << 20);
  auto noise = pattern(block.size() / 4, 5);
  for (size_t i = 0; i < block.size(); ++i) block[i] = i % 4 == 0 ? noise[i / 4] : uint8_t(i / 64);
  ASSERT_TRUE(p.a.send_block(block));
  EXPECT_FALSE(p.a.send_block(block));  // one at a time
  std::optional<std::vector<uint8_t>> got;
  int steps = 0;
  for (; steps < 60 * 60 && !got; ++steps) {
    p.step();
    got = p.b.take_block();
  }
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, block);
  for (int i = 0; i < 60 && p.a.block_in_progress(); ++i) p.step();
  EXPECT_FALSE(p.a.block_in_progress());
  // Flow control: 2 MB/s budget, so roughly compressed-size / 2 MB/s plus loss recovery.
  EXPECT_GT(steps, 10);
}

TEST(Connection, ForgedTamperedAndReplayedPacketsAreDropped) {
  Pair p({0, 0, 0, 0, 0, 1});
  ASSERT_TRUE(p.a.send(kp::Channel::Control, pattern(20, 1)));
  auto ds = p.a.update(0.0);
  ASSERT_EQ(ds.size(), 1u);
  auto tampered = ds[0];
  tampered[kp::kPacketHeaderBytes + 2] ^= 0x40;
  EXPECT_EQ(p.b.receive(tampered, 0.0), kp::DropReason::AuthFailed);
  auto header_tampered = ds[0];
  header_tampered[8] ^= 1;  // the ack field is authenticated as additional data
  EXPECT_EQ(p.b.receive(header_tampered, 0.0), kp::DropReason::AuthFailed);
  EXPECT_EQ(p.b.receive(ds[0], 0.0), kp::DropReason::None);
  EXPECT_EQ(p.b.receive(ds[0], 0.0), kp::DropReason::Replayed);
  EXPECT_EQ(p.b.drops()[kp::DropReason::Replayed], 1u);
  EXPECT_EQ(p.b.drops()[kp::DropReason::AuthFailed], 2u);
  auto m = p.b.take(kp::Channel::Control);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(p.b.take(kp::Channel::Control).has_value());
}

TEST(Connection, RandomBytesNeverCrashOrDeliver) {
  kp::Connection c;
  uint32_t x = 1;
  for (int i = 0; i < 2000; ++i) {
    auto d = pattern(static_cast<size_t>(i % 1300), ++x);
    if (i % 2 == 0 && d.size() >= 5) {  // half of them pass the header check
      d[0] = 5;
      d[1] = static_cast<uint8_t>(kp::kProtocolId);
      d[2] = static_cast<uint8_t>(kp::kProtocolId >> 8);
      d[3] = static_cast<uint8_t>(kp::kProtocolId >> 16);
      d[4] = static_cast<uint8_t>(kp::kProtocolId >> 24);
    }
    c.receive(d, 0.0);
  }
  EXPECT_GT(c.drops().total(), 1000u);
}

TEST(Connection, RttTracksTheLink) {
  // Game traffic both ways every tick, so acks are never held back.
  auto chatty = [](Pair& pair) {
    std::vector<uint8_t> m(20, 1);
    pair.a.send(kp::Channel::Input, m);
    pair.b.send(kp::Channel::Snapshot, m);
    pair.step();
  };
  Pair p({40.0, 0, 0, 0, 0, 9});
  for (int i = 0; i < 300; ++i) chatty(p);
  // 80 ms round trip, plus up to one 1/60 s step of waiting on each side to be read.
  EXPECT_GT(p.a.stats().rtt_ms, 75.0);
  EXPECT_LT(p.a.stats().rtt_ms, 125.0);
  EXPECT_LT(p.a.stats().loss, 0.01);
  Pair q({40.0, 0, 0.25, 0, 0, 9});
  for (int i = 0; i < 1200; ++i) chatty(q);
  // Loss is judged per packet round trip: 1 - 0.75 * 0.75 of acks can go missing, but the
  // 33 ack bits recover nearly all of the return-path losses.
  EXPECT_GT(q.a.stats().loss, 0.1);
  EXPECT_LT(q.a.stats().loss, 0.45);
}

TEST(Connection, HostileDatagramsNeitherCrashNorDisruptAnEstablishedConnection) {
  Pair p({10, 0, 0, 0, 0, 21});
  std::vector<std::vector<uint8_t>> got;
  uint32_t x = 99;
  std::vector<uint8_t> last_good;
  for (int i = 0; i < 300; ++i) {
    p.now += 1.0 / 60.0;
    if (i < 100) {
      ASSERT_TRUE(p.a.send(kp::Channel::Control, pattern(10 + i, i)));
    }
    for (auto& d : p.a.update(p.now)) {
      // Before each good datagram: truncations, bit flips, random bytes, oversize, and a
      // replay of the previous good one.
      for (size_t cut : {size_t{0}, size_t{5}, size_t{13}, d.size() / 2, d.size() - 1}) {
        p.b.receive(std::span(d).first(std::min(cut, d.size())), p.now);
      }
      auto flipped = d;
      ++x;
      flipped[(x * 2654435761u) % flipped.size()] ^= uint8_t(1u << (x % 8));
      p.b.receive(flipped, p.now);
      p.b.receive(pattern(x % 1400, x), p.now);
      p.b.receive(std::vector<uint8_t>(kp::kMaxPacketBytes + 1, 5), p.now);
      if (!last_good.empty()) p.b.receive(last_good, p.now);
      EXPECT_EQ(p.b.receive(d, p.now), kp::DropReason::None);
      last_good = d;
    }
    for (auto& d : p.b.update(p.now)) p.a.receive(d, p.now);
    while (auto m = p.b.take(kp::Channel::Control)) got.push_back(*m);
  }
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(got[i], pattern(10 + i, i)) << i;
  }
  const auto& drops = p.b.drops();
  EXPECT_GT(drops[kp::DropReason::TooSmall], 0u);
  EXPECT_GT(drops[kp::DropReason::TooLarge], 0u);
  EXPECT_GT(drops[kp::DropReason::AuthFailed], 0u);
  EXPECT_GT(drops[kp::DropReason::Replayed], 0u);
  EXPECT_GT(drops[kp::DropReason::WrongProtocolId], 0u);
}
