#include <keel/client/clock.h>

#include <algorithm>
#include <cmath>

namespace keel::client {

void ClockSync::start(uint64_t server_tick, uint32_t tick_rate, double now) {
  started_ = true;
  tick_rate_ = tick_rate == 0 ? 60 : tick_rate;
  anchor_tick_ = static_cast<double>(server_tick);
  anchor_time_ = now;
  lead_ = target_lead_ticks();
  lead_time_ = now;
}

double ClockSync::server_tick(double now) const {
  return anchor_tick_ + (now - anchor_time_) * tick_rate_;
}

void ClockSync::observe(uint64_t tick, double now) {
  if (!started_) return;
  double observed = static_cast<double>(tick) + 0.5 * rtt_ * tick_rate_;
  double estimate = server_tick(now);
  double error = observed - estimate;
  anchor_time_ = now;
  if (!observed_) {
    // The accept's tick was sent half a round trip ago (and the RTT was not known yet):
    // the first real observation replaces it.
    observed_ = true;
    anchor_tick_ = observed;
    return;
  }
  if (std::fabs(error) > config_.snap_seconds * tick_rate_) {
    anchor_tick_ = observed;  // a stall or a first real sample: take it whole
    ++jumps_;
    return;
  }
  // Late packets make observations low, never high: catch up quickly, slow down gently.
  double k = error > 0 ? std::min(1.0, 2.0 * config_.correction) : config_.correction;
  anchor_tick_ = estimate + k * error;
}

double ClockSync::target_lead_ticks() const {
  double t = (0.5 * rtt_ + config_.jitter_factor * jitter_) * tick_rate_ + config_.safety_ticks;
  return std::clamp(t, 0.0, config_.max_lead_ticks);
}

void ClockSync::set_link(double rtt_seconds, double jitter_seconds, double now) {
  if (std::isfinite(rtt_seconds) && rtt_seconds >= 0) rtt_ = std::min(rtt_seconds, 5.0);
  if (std::isfinite(jitter_seconds) && jitter_seconds >= 0) jitter_ = std::min(jitter_seconds, 5.0);
  double dt = std::max(0.0, now - lead_time_);
  lead_time_ = now;
  double target = target_lead_ticks();
  if (!have_rtt_ && rtt_ > 0) {
    // The first RTT sample: before it the lead only had its safety margin, and every
    // input sent with it would be late, so take the target at once.
    have_rtt_ = true;
    lead_ = target;
    return;
  }
  // First-order follow: smooth, and fast enough to track a changing route in seconds.
  // Growing is quicker than shrinking: a lead too short costs late inputs, one too long
  // only a little responsiveness.
  double tau = config_.lead_time_constant * (target > lead_ ? 0.25 : 1.0);
  double alpha = tau > 0 ? 1.0 - std::exp(-dt / tau) : 1.0;
  lead_ += (target - lead_) * alpha;
}

uint64_t ClockSync::input_tick(double now) const {
  double t = server_tick(now) + lead_;
  return t <= 0 ? 0 : static_cast<uint64_t>(std::floor(t));
}

}  // namespace keel::client
