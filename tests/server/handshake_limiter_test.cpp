// The handshake limiter: per-network and whole-server token buckets (numbers by hand).
#include "handshake_limiter.h"

#include <gtest/gtest.h>

#include <string>

namespace keel::server {
namespace {

asio::ip::address ip(const std::string& text) { return asio::ip::make_address(text); }

int allowed_in_burst(HandshakeLimiter& limiter, const std::string& address, int tries, double now) {
  int n = 0;
  for (int i = 0; i < tries; ++i) n += limiter.allow(ip(address), now);
  return n;
}

TEST(HandshakeLimiter, OneNetworkGetsItsBurstThenItsRate) {
  HandshakeLimiter limiter;  // 20/s per network, burst 40
  EXPECT_EQ(allowed_in_burst(limiter, "10.0.0.1", 100, 0.0), 40);
  // Half a second later: 10 more tokens.
  EXPECT_EQ(allowed_in_burst(limiter, "10.0.0.1", 100, 0.5), 10);
  // Another network is not affected by the first one's flood.
  EXPECT_EQ(allowed_in_burst(limiter, "10.0.1.2", 3, 0.5), 3);
}

TEST(HandshakeLimiter, AddressesOfOneIpv4Slash24OrIpv6Slash64ShareABucket) {
  HandshakeLimiter limiter;
  // Another address of the same /24 (or the same address IPv4-mapped) is the same
  // network: changing the last octet earns no fresh burst.
  EXPECT_EQ(allowed_in_burst(limiter, "192.0.2.1", 30, 0.0), 30);
  EXPECT_EQ(allowed_in_burst(limiter, "192.0.2.200", 30, 0.0), 10);
  EXPECT_EQ(allowed_in_burst(limiter, "::ffff:192.0.2.9", 5, 0.0), 0);
  EXPECT_EQ(allowed_in_burst(limiter, "192.0.3.1", 5, 0.0), 5);
  // IPv6: the low 64 bits are the attacker's to choose.
  EXPECT_EQ(allowed_in_burst(limiter, "2001:db8::1", 25, 0.0), 25);
  EXPECT_EQ(allowed_in_burst(limiter, "2001:db8::ffff:1234:5678:9abc", 25, 0.0), 15);
  EXPECT_EQ(allowed_in_burst(limiter, "2001:db8:0:1::1", 5, 0.0), 5);
  EXPECT_EQ(HandshakeLimiter::prefix_of(ip("10.9.8.7")), HandshakeLimiter::prefix_of(ip("::ffff:10.9.8.1")));
  EXPECT_NE(HandshakeLimiter::prefix_of(ip("10.9.8.7")), HandshakeLimiter::prefix_of(ip("10.9.9.7")));
}

TEST(HandshakeLimiter, TheWholeServerHasACeiling) {
  HandshakeLimiter::Limits limits;
  limits.total_per_second = 100;
  limits.total_burst = 50;
  HandshakeLimiter limiter(limits);
  int allowed = 0;
  for (int i = 0; i < 200; ++i) allowed += limiter.allow(ip("10.1." + std::to_string(i) + ".1"), 0.0);
  EXPECT_EQ(allowed, 50);
  // 0.1 s later the global bucket has 10 tokens again.
  allowed = 0;
  for (int i = 0; i < 200; ++i) allowed += limiter.allow(ip("10.2." + std::to_string(i) + ".1"), 0.1);
  EXPECT_EQ(allowed, 10);
}

TEST(HandshakeLimiter, UnlimitedSourcesStillCountTowardTheCeiling) {
  HandshakeLimiter::Limits limits;
  limits.total_burst = 100;
  HandshakeLimiter limiter(limits);
  int allowed = 0;
  for (int i = 0; i < 150; ++i) allowed += limiter.allow_unlimited_source(0.0);
  EXPECT_EQ(allowed, 100);  // far past one network's 40, stopped by the server's 100
  EXPECT_FALSE(limiter.allow(ip("10.0.0.9"), 0.0));
}

HandshakeLimiter::Limits small_table() {
  HandshakeLimiter::Limits limits;
  limits.max_sources = 64;
  limits.total_per_second = 1e9;
  limits.total_burst = 1e9;
  return limits;
}

TEST(HandshakeLimiter, TrackedNetworksStayBounded) {
  HandshakeLimiter limiter(small_table());
  for (int i = 0; i < 10000; ++i) {
    limiter.allow(ip("172." + std::to_string(16 + i / 256 % 16) + "." + std::to_string(i % 256) + ".1"), i * 1e-3);
    ASSERT_LE(limiter.tracked_sources(), 64u);
  }
}

TEST(HandshakeLimiter, AFloodOfNewNetworksResetsNoBucket) {
  // The attacker's own network spends its burst; then it sends from 10,000 other networks
  // within the same second, hoping the table forgets its empty bucket. It cannot: only
  // full buckets are forgotten, and networks that find the table full share one overflow
  // bucket (burst 40, 20/s), so the 10,000 get about 40 + 20 x 1 s between them.
  HandshakeLimiter limiter(small_table());
  EXPECT_EQ(allowed_in_burst(limiter, "198.51.100.7", 100, 0.0), 40);
  int others = 0;
  for (int i = 0; i < 10000; ++i) {
    others += limiter.allow(ip("10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".1"), i * 1e-4);
  }
  // The first 63 networks found room in the table. When it is full, a sweep (at most
  // every 0.5 s) forgets the buckets that have refilled: at 0.5 s those 63 (one token
  // each, refilled in 0.05 s), so 63 more get room; the attacker's, half refilled, stays.
  // Everyone else shared the overflow bucket: 40 + 20/s x 1 s.
  EXPECT_LE(others, 2 * 63 + 40 + 21);
  EXPECT_GE(others, 2 * 63 + 40);
  // 1 s after its burst the attacker's network has earned exactly 20 tokens, no more.
  EXPECT_EQ(allowed_in_burst(limiter, "198.51.100.99", 100, 1.0), 20);
}

TEST(HandshakeLimiter, IdleNetworksMakeRoomForNewOnes) {
  HandshakeLimiter limiter(small_table());
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(limiter.allow(ip("10.3." + std::to_string(i) + ".1"), 0.0));
  EXPECT_EQ(limiter.tracked_sources(), 64u);
  // Every one of them has refilled after 0.05 s (one token at 20/s), so a new network
  // gets a bucket of its own — its full burst of 40, not the overflow's share.
  EXPECT_EQ(allowed_in_burst(limiter, "10.4.0.1", 100, 1.0), 40);
  EXPECT_EQ(allowed_in_burst(limiter, "10.5.0.1", 100, 1.0), 40);
}

}  // namespace
}  // namespace keel::server
