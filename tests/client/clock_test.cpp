// Clock sync: the server tick estimate and the input lead.
#include <keel/client/clock.h>

#include <gtest/gtest.h>

#include <cmath>

namespace keel::client {
namespace {

TEST(ClockSync, RunsAtTheTickRateFromTheAccept) {
  ClockSync c;
  c.start(1000, 60, 5.0);
  EXPECT_DOUBLE_EQ(c.server_tick(5.0), 1000.0);
  EXPECT_DOUBLE_EQ(c.server_tick(6.0), 1060.0);
}

TEST(ClockSync, ConvergesOnTheServerThroughJitter) {
  // The server is truly at tick 60 * t + 500; packets take 50 ms +/- 20 ms one way and
  // the RTT is measured as 100 ms.
  ClockSync c;
  c.start(450, 60, 0.0);  // a poor start: 50 ticks behind
  c.set_link(0.1, 0.01, 0.0);
  uint64_t state = 7;
  auto rnd = [&] { state = state * 6364136223846793005ull + 1442695040888963407ull; return (state >> 11) * (1.0 / 9007199254740992.0); };
  double worst = 0;
  for (int i = 1; i <= 600; ++i) {
    double now = i / 60.0;
    double delay = 0.03 + 0.04 * rnd();
    double sent_at = now - delay;
    c.observe(static_cast<uint64_t>(60 * sent_at + 500), now);
    if (i > 300) worst = std::max(worst, std::fabs(c.server_tick(now) - (60 * now + 500)));
  }
  EXPECT_LT(worst, 2.5);  // within ~2 ticks of the truth despite +/- 1.2 ticks of jitter
  EXPECT_EQ(c.jumps(), 0u);  // 50 ticks is under the 1 s snap threshold at 60 Hz
}

TEST(ClockSync, JumpsOnlyWhenFarOff) {
  ClockSync c;
  c.start(0, 60, 0.0);
  c.observe(60, 1.0);  // the first observation is taken whole (not a jump)
  EXPECT_EQ(c.jumps(), 0u);
  c.observe(10'000, 1.0);
  EXPECT_EQ(c.jumps(), 1u);
  EXPECT_NEAR(c.server_tick(1.0), 10'000.0, 1e-9);
}

TEST(ClockSync, LeadFollowsHalfRttPlusJitterSmoothly) {
  ClockConfig cfg;
  ClockSync c(cfg);
  c.start(0, 60, 0.0);
  EXPECT_NEAR(c.lead_ticks(), cfg.safety_ticks, 1e-9);
  // The first RTT sample (200 ms, jitter 10 ms) sets the lead at once:
  // (0.1 + 2 * 0.01) * 60 + 1 = 8.2 ticks.
  c.set_link(0.2, 0.01, 1.0 / 60);
  EXPECT_NEAR(c.target_lead_ticks(), 8.2, 1e-9);
  EXPECT_NEAR(c.lead_ticks(), 8.2, 1e-9);
  // Then the route changes: RTT 400 ms -> target 14.2, reached smoothly.
  double prev = c.lead_ticks();
  double max_step = 0;
  for (int i = 2; i <= 600; ++i) {
    c.set_link(0.4, 0.01, i / 60.0);
    max_step = std::max(max_step, c.lead_ticks() - prev);
    prev = c.lead_ticks();
  }
  EXPECT_NEAR(c.lead_ticks(), 14.2, 0.01);
  EXPECT_LT(max_step, 0.5);  // no tick-sized jumps in the input tick
  // And back down, more slowly.
  for (int i = 601; i <= 660; ++i) c.set_link(0.2, 0.01, i / 60.0);
  EXPECT_GT(c.lead_ticks(), 8.2 + 6.0 * 0.3);  // after 1 s still more than ~37% of the gap
  // Input tick = floor(estimate + lead).
  EXPECT_EQ(c.input_tick(10.0), static_cast<uint64_t>(std::floor(c.server_tick(10.0) + c.lead_ticks())));
}

TEST(ClockSync, IgnoresNonsenseLinkFigures) {
  ClockSync c;
  c.start(0, 60, 0.0);
  c.set_link(std::nan(""), -1, 1.0);
  EXPECT_EQ(c.rtt(), 0.0);
  c.set_link(1e9, 1e9, 2.0);
  EXPECT_LE(c.lead_ticks(), ClockConfig{}.max_lead_ticks);
}

}  // namespace
}  // namespace keel::client
