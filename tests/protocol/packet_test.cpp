// Packet header, sequence arithmetic and ack bookkeeping, including wrap-around at 65536.
#include <keel/protocol/link_sim.h>
#include <keel/protocol/packet.h>

#include <gtest/gtest.h>

#include <array>
#include <set>

namespace kp = keel::protocol;

TEST(Sequence, GreaterThanWrapsAround) {
  EXPECT_TRUE(kp::sequence_greater_than(1, 0));
  EXPECT_TRUE(kp::sequence_greater_than(0, 65535));
  EXPECT_TRUE(kp::sequence_greater_than(10, 65530));
  EXPECT_FALSE(kp::sequence_greater_than(65530, 10));
  EXPECT_FALSE(kp::sequence_greater_than(5, 5));
  EXPECT_TRUE(kp::sequence_less_than(65535, 0));
}

TEST(Sequence, ExpandFindsTheNearestCounter) {
  EXPECT_EQ(kp::expand_sequence(5, 0), 5u);
  EXPECT_EQ(kp::expand_sequence(2, 65534), 65538u);       // wrapped forwards
  EXPECT_EQ(kp::expand_sequence(65534, 65538), 65534u);   // late packet from before the wrap
  EXPECT_EQ(kp::expand_sequence(65535, 3 * 65536 + 1), 3 * 65536 - 1u);
  EXPECT_EQ(kp::expand_sequence(100, 3 * 65536 + 50), 3 * 65536 + 100u);
}

TEST(Header, RoundTripAndRejections) {
  kp::PacketHeader h{kp::PacketType::Connected, 65535, 12, 0xdeadbeef};
  std::array<uint8_t, kp::kPacketHeaderBytes> bytes{};
  kp::write_header(h, bytes);
  kp::PacketHeader back;
  ASSERT_EQ(kp::read_header(bytes, back), kp::DropReason::None);
  EXPECT_EQ(back.sequence, 65535);
  EXPECT_EQ(back.ack, 12);
  EXPECT_EQ(back.ack_bits, 0xdeadbeefu);
  EXPECT_EQ(kp::read_header(std::span(bytes).first(12), back), kp::DropReason::TooSmall);
  auto wrong = bytes;
  wrong[2] ^= 1;
  EXPECT_EQ(kp::read_header(wrong, back), kp::DropReason::WrongProtocolId);
  wrong = bytes;
  wrong[0] = 77;
  EXPECT_EQ(kp::read_header(wrong, back), kp::DropReason::UnknownPacketType);
  std::vector<uint8_t> huge(kp::kMaxPacketBytes + 1, 0);
  std::copy(bytes.begin(), bytes.end(), huge.begin());
  EXPECT_EQ(kp::read_header(huge, back), kp::DropReason::TooLarge);
}

TEST(ReceivedPackets, AckBitsAcrossWrapAround) {
  kp::ReceivedPackets rp;
  // Receive every sequence from 65500 to 11 (wrapping), except the multiples of 3.
  std::set<uint16_t> got;
  for (uint32_t i = 65500; i < 65536 + 12; ++i) {
    auto s = static_cast<uint16_t>(i);
    if (s % 3 == 0) continue;
    EXPECT_TRUE(rp.record(s));
    got.insert(s);
  }
  EXPECT_FALSE(rp.record(10));  // duplicate
  EXPECT_EQ(rp.ack(), 11);
  std::vector<uint16_t> acked;
  kp::acked_sequences(rp.ack(), rp.ack_bits(), acked);
  // The window 65515 .. 10 straddles the wrap; 11 of its 32 are multiples of 3.
  EXPECT_EQ(acked.size(), 1 + 21u);
  for (uint16_t s : acked) EXPECT_TRUE(got.count(s)) << s;
  for (uint32_t i = 1; i <= 32; ++i) {
    auto s = static_cast<uint16_t>(11 - i);
    bool in = std::find(acked.begin(), acked.end(), s) != acked.end();
    EXPECT_EQ(in, got.count(s) == 1) << s;
  }
}

TEST(ReceivedPackets, OldEntriesDoNotAliasAfterAJump) {
  kp::ReceivedPackets rp;
  rp.record(10);
  rp.record(9);
  // Jump forward by exactly the buffer size: slot 1034 % 1024 == 10, and 1033 shares 9's.
  rp.record(1034);
  EXPECT_EQ(rp.ack_bits() & 1u, 0u);  // 1033 was never received
}

TEST(ReplayWindow, RejectsRepeatsAndTooOld) {
  kp::ReplayWindow w;
  EXPECT_FALSE(w.is_replay(1000));
  w.accept(1000);
  EXPECT_TRUE(w.is_replay(1000));
  EXPECT_FALSE(w.is_replay(999));
  w.accept(999);
  EXPECT_TRUE(w.is_replay(999));
  EXPECT_TRUE(w.is_replay(1000 - kp::ReplayWindow::kWindow));
  EXPECT_FALSE(w.is_replay(5000));
  w.accept(5000);
  EXPECT_TRUE(w.is_replay(1000));  // now far behind the window
}

TEST(LinkSimulator, SameSeedSameDeliveries) {
  auto run = [](uint64_t seed) {
    kp::LinkSimulator link({30, 20, 0.2, 0.1, 0.2, seed});
    std::vector<std::vector<uint8_t>> out;
    for (int t = 0; t < 300; ++t) {
      link.send(std::vector<uint8_t>{uint8_t(t), uint8_t(t >> 8)}, t / 60.0);
      for (auto& d : link.receive(t / 60.0)) out.push_back(d);
    }
    return out;
  };
  auto a = run(4), b = run(4), c = run(5);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Loss, duplication and reordering all happened.
  EXPECT_LT(a.size(), 300u * 11 / 10);
  bool reordered = false;
  for (size_t i = 1; i < a.size(); ++i) {
    reordered |= (a[i][0] | a[i][1] << 8) < (a[i - 1][0] | a[i - 1][1] << 8);
  }
  EXPECT_TRUE(reordered);
}
