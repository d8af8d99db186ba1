#include "handshake_limiter.h"

#include <algorithm>

namespace keel::server {

HandshakeLimiter::HandshakeLimiter(const Limits& limits) : limits_(limits) {
  total_.tokens = limits_.total_burst;
  overflow_.tokens = limits_.overflow_burst;
}

HandshakeLimiter::Prefix HandshakeLimiter::prefix_of(const asio::ip::address& address) {
  Prefix p{};
  if (address.is_v4() || (address.is_v6() && address.to_v6().is_v4_mapped())) {
    auto v4 = address.is_v4() ? address.to_v4().to_bytes()
                              : asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_bytes();
    p[10] = 0xff;
    p[11] = 0xff;
    std::copy(v4.begin(), v4.begin() + 3, p.begin() + 12);  // a /24
    return p;
  }
  auto v6 = address.to_v6().to_bytes();
  std::copy(v6.begin(), v6.begin() + 8, p.begin());  // a /64
  return p;
}

bool HandshakeLimiter::take(Bucket& b, double rate, double burst, double now) {
  b.tokens = std::min(burst, b.tokens + std::max(0.0, now - b.time) * rate);
  b.time = now;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

void HandshakeLimiter::forget_idle(double now) {
  // A bucket that would have refilled completely is the same as a fresh one: forgetting
  // it loses nothing. Busy buckets are never forgotten, so no flood can reset itself.
  std::erase_if(sources_, [&](const auto& entry) {
    return entry.second.tokens + (now - entry.second.time) * limits_.per_source_per_second >=
           limits_.per_source_burst;
  });
  last_sweep_ = now;
}

HandshakeLimiter::Bucket* HandshakeLimiter::bucket_for(const Prefix& prefix, double now) {
  auto it = sources_.find(prefix);
  if (it != sources_.end()) return &it->second;
  // Full: sweep for idle buckets, but not on every datagram (a sweep walks the table).
  if (sources_.size() >= limits_.max_sources && now - last_sweep_ >= limits_.sweep_interval) forget_idle(now);
  if (sources_.size() >= limits_.max_sources) return nullptr;
  return &sources_.emplace(prefix, Bucket{limits_.per_source_burst, now}).first->second;
}

bool HandshakeLimiter::allow(const asio::ip::address& source, double now) {
  Bucket* b = bucket_for(prefix_of(source), now);
  bool ok = b != nullptr ? take(*b, limits_.per_source_per_second, limits_.per_source_burst, now)
                         : take(overflow_, limits_.overflow_per_second, limits_.overflow_burst, now);
  if (!ok) return false;
  return take(total_, limits_.total_per_second, limits_.total_burst, now);
}

bool HandshakeLimiter::allow_unlimited_source(double now) {
  return take(total_, limits_.total_per_second, limits_.total_burst, now);
}

}  // namespace keel::server
