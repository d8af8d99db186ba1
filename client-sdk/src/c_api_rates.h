// Byte rates over a sliding window, for keel_client_get_link_stats: the C API samples the
// client's byte counters after each update, so a caller that polls rarely still reads a
// rate over about the last second rather than since its last call.
#pragma once

#include <cstdint>
#include <deque>

namespace keel::client {

class ByteRateWindow {
 public:
  /// Records the counters at `now` (seconds, the caller's clock). Samples closer than
  /// kSpacing to the previous one are skipped, so the window holds at most about
  /// kWindow / kSpacing + 2 of them however often it is fed.
  void sample(double now, uint64_t sent, uint64_t received) {
    if (!samples_.empty() && now < samples_.back().time + kSpacing) return;
    samples_.push_back({now, sent, received});
    while (samples_.size() > 2 && samples_[1].time <= now - kWindow) samples_.pop_front();
  }
  double kbps_sent() const { return rate(&Sample::sent); }
  double kbps_received() const { return rate(&Sample::received); }

  static constexpr double kWindow = 1.0;    // seconds
  static constexpr double kSpacing = 0.05;  // seconds

 private:
  struct Sample {
    double time;
    uint64_t sent;
    uint64_t received;
  };
  double rate(uint64_t Sample::*field) const {
    if (samples_.size() < 2) return 0.0;
    const Sample& a = samples_.front();
    const Sample& b = samples_.back();
    const double dt = b.time - a.time;
    if (!(dt > 0.0) || b.*field < a.*field) return 0.0;
    return double(b.*field - a.*field) * 8.0 / 1000.0 / dt;
  }
  std::deque<Sample> samples_;
};

}  // namespace keel::client
