#include "handshake_limiter.h"

#include <algorithm>

namespace keel::server {

HandshakeLimiter::HandshakeLimiter(const Limits& limits) : limits_(limits) {
  total_.tokens = limits_.total_burst;
}

bool HandshakeLimiter::take(Bucket& b, double rate, double burst, double now) {
  b.tokens = std::min(burst, b.tokens + std::max(0.0, now - b.time) * rate);
  b.time = now;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

void HandshakeLimiter::forget_idle(double now) {
  // A bucket that would have refilled completely holds no information: drop those. If
  // every tracked source is busy, start over rather than grow without bound (a flood
  // from more addresses than max_sources is what the global bucket is for).
  double refill = limits_.per_source_burst / limits_.per_source_per_second;
  std::erase_if(sources_, [&](const auto& entry) { return now - entry.second.time >= refill; });
  if (sources_.size() >= limits_.max_sources) sources_.clear();
}

bool HandshakeLimiter::allow(const std::string& source_ip, double now) {
  auto it = sources_.find(source_ip);
  if (it == sources_.end()) {
    if (sources_.size() >= limits_.max_sources) forget_idle(now);
    it = sources_.emplace(source_ip, Bucket{limits_.per_source_burst, now}).first;
  }
  if (!take(it->second, limits_.per_source_per_second, limits_.per_source_burst, now)) return false;
  return take(total_, limits_.total_per_second, limits_.total_burst, now);
}

bool HandshakeLimiter::allow_unlimited_source(double now) {
  return take(total_, limits_.total_per_second, limits_.total_burst, now);
}

}  // namespace keel::server
