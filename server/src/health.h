// Whether the server is healthy: not stopping, the tick thread ran within kStallNs, and
// no match dropped a backlog of ticks within kDropWindowNs. /healthz and Agones' Health
// both ask; the tick thread writes the two times, any thread reads them.
#pragma once

#include "metrics.h"

#include <atomic>
#include <cstdint>

namespace keel::server {

class TickHealth {
 public:
  static constexpr int64_t kStallNs = 500'000'000;
  static constexpr int64_t kDropWindowNs = 2'000'000'000;

  /// Tick thread, once per loop.
  void note_loop(int64_t now_ns, const Metrics& metrics) {
    last_loop_ns_.store(now_ns);
    if (uint64_t dropped = metrics.ticks_dropped.load(); dropped != dropped_seen_) {
      dropped_seen_ = dropped;
      last_drop_ns_.store(now_ns);
    }
  }
  /// Any thread.
  bool healthy(int64_t now_ns, bool stopping) const {
    if (stopping) return false;
    return now_ns - last_loop_ns_.load() <= kStallNs && now_ns - last_drop_ns_.load() > kDropWindowNs;
  }

 private:
  std::atomic<int64_t> last_loop_ns_{0};
  std::atomic<int64_t> last_drop_ns_{-kDropWindowNs};
  uint64_t dropped_seen_ = 0;  // tick thread only
};

}  // namespace keel::server
