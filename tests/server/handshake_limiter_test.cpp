// The handshake limiter: per-address and whole-server token buckets (numbers by hand).
#include "handshake_limiter.h"

#include <gtest/gtest.h>

#include <string>

namespace keel::server {
namespace {

int allowed_in_burst(HandshakeLimiter& limiter, const std::string& ip, int tries, double now) {
  int n = 0;
  for (int i = 0; i < tries; ++i) n += limiter.allow(ip, now);
  return n;
}

TEST(HandshakeLimiter, OneAddressGetsItsBurstThenItsRate) {
  HandshakeLimiter limiter;  // 20/s per address, burst 40
  EXPECT_EQ(allowed_in_burst(limiter, "10.0.0.1", 100, 0.0), 40);
  // Half a second later: 10 more tokens.
  EXPECT_EQ(allowed_in_burst(limiter, "10.0.0.1", 100, 0.5), 10);
  // Another address is not affected by the first one's flood.
  EXPECT_EQ(allowed_in_burst(limiter, "10.0.0.2", 3, 0.5), 3);
}

TEST(HandshakeLimiter, TheWholeServerHasACeiling) {
  HandshakeLimiter::Limits limits;
  limits.total_per_second = 100;
  limits.total_burst = 50;
  HandshakeLimiter limiter(limits);
  int allowed = 0;
  for (int i = 0; i < 200; ++i) allowed += limiter.allow("10.1.0." + std::to_string(i), 0.0);
  EXPECT_EQ(allowed, 50);
  // 0.1 s later the global bucket has 10 tokens again.
  allowed = 0;
  for (int i = 0; i < 200; ++i) allowed += limiter.allow("10.2.0." + std::to_string(i), 0.1);
  EXPECT_EQ(allowed, 10);
}

TEST(HandshakeLimiter, UnlimitedSourcesStillCountTowardTheCeiling) {
  HandshakeLimiter::Limits limits;
  limits.total_burst = 100;
  HandshakeLimiter limiter(limits);
  int allowed = 0;
  for (int i = 0; i < 150; ++i) allowed += limiter.allow_unlimited_source(0.0);
  EXPECT_EQ(allowed, 100);  // far past one address's 40, stopped by the server's 100
  EXPECT_FALSE(limiter.allow("10.0.0.9", 0.0));
}

TEST(HandshakeLimiter, TrackedAddressesStayBounded) {
  HandshakeLimiter::Limits limits;
  limits.max_sources = 64;
  limits.total_per_second = 1e9;
  limits.total_burst = 1e9;
  HandshakeLimiter limiter(limits);
  for (int i = 0; i < 10000; ++i) {
    EXPECT_TRUE(limiter.allow("172.16." + std::to_string(i / 256) + "." + std::to_string(i % 256), i * 1e-3));
    ASSERT_LE(limiter.tracked_sources(), 64u);
  }
}

}  // namespace
}  // namespace keel::server
