// Clock synchronisation: where the server's tick is now, and how far ahead of it the
// client must send its inputs so they arrive just before the server steps them.
//
// The estimate starts from ConnectionAccept.server_tick and runs at the tick rate on the
// client's clock. Every frame or snapshot of tick T received at time `now` is an
// observation "the server is at about T + RTT/2 now". The first one is taken whole;
// after it the estimate moves a fraction of the way towards each observation (it jumps
// only when it is off by more than a second, e.g. after a stall), so jitter does not
// make it twitch. The input lead covers half the
// RTT, the jitter and a safety margin; it takes its target at the first RTT sample, then
// follows it with a time constant (four times quicker growing than shrinking), so the
// input tick advances smoothly: it may slow or speed up but never goes back.
#pragma once

#include <cstdint>

namespace keel::client {

struct ClockConfig {
  double safety_ticks = 1.0;      ///< margin added to the lead
  double jitter_factor = 2.0;     ///< lead covers this many times the measured jitter
  double correction = 0.1;        ///< fraction of an observation's error taken at once
  double lead_time_constant = 1.0;  ///< s for a shrinking lead to close ~63% of a gap (growing: /4)
  double max_lead_ticks = 100;    ///< the server refuses inputs further ahead (120)
  double snap_seconds = 1.0;      ///< an estimate off by more than this jumps
};

class ClockSync {
 public:
  explicit ClockSync(const ClockConfig& config = {}) : config_(config) {}

  /// Starts the estimate at `server_tick` (ConnectionAccept) at local time `now`.
  void start(uint64_t server_tick, uint32_t tick_rate, double now);
  bool started() const { return started_; }
  /// The server was at `tick` when it sent something that arrived at `now`.
  void observe(uint64_t tick, double now);
  /// Round-trip time and jitter (seconds) from the connection; `now` drives smoothing.
  void set_link(double rtt_seconds, double jitter_seconds, double now);

  /// Estimated server tick at local time `now` (fractional).
  double server_tick(double now) const;
  /// The current input lead in ticks, and the lead it is moving towards.
  double lead_ticks() const { return lead_; }
  double target_lead_ticks() const;
  /// The tick a client should produce input for at `now`: floor(server_tick + lead).
  uint64_t input_tick(double now) const;
  uint32_t tick_rate() const { return tick_rate_; }
  double rtt() const { return rtt_; }
  double jitter() const { return jitter_; }
  /// Observations that moved the estimate by a jump rather than smoothly.
  uint64_t jumps() const { return jumps_; }

 private:
  ClockConfig config_;
  bool started_ = false;
  uint32_t tick_rate_ = 60;
  double anchor_tick_ = 0;  // estimate at anchor_time_
  double anchor_time_ = 0;
  double rtt_ = 0;
  double jitter_ = 0;
  double lead_ = 0;
  double lead_time_ = 0;
  bool have_rtt_ = false;
  bool observed_ = false;
  uint64_t jumps_ = 0;
};

}  // namespace keel::client
