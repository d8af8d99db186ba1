// Bounds the work handshakes can cost the I/O thread. Every connection request costs a
// token decryption; without a bound, one host sending valid-looking requests as fast as
// it can would spend the I/O thread on them and delay every connected player's packets.
// Two token buckets decide: one per source IP address (ports are free to an attacker, so
// they do not count) and one for the whole server. Over either, the datagram is dropped
// and counted (handshake_rate_limited) before any cryptography runs.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace keel::server {

class HandshakeLimiter {
 public:
  struct Limits {
    double per_source_per_second = 20;  ///< a client needs 2-3 per connection attempt
    double per_source_burst = 40;
    double total_per_second = 2000;     ///< whole server
    double total_burst = 4000;
    size_t max_sources = 8192;          ///< tracked addresses; idle ones are forgotten first
  };

  HandshakeLimiter() : HandshakeLimiter(Limits{}) {}
  explicit HandshakeLimiter(const Limits& limits);
  /// Whether a handshake datagram from `source_ip` at `now` (seconds) may be processed.
  bool allow(const std::string& source_ip, double now);
  /// The same for a source that gets no bucket of its own (loopback: local bots and load
  /// tests share one address, and no remote host can send from it); the server-wide
  /// bucket still applies.
  bool allow_unlimited_source(double now);
  size_t tracked_sources() const { return sources_.size(); }

 private:
  struct Bucket {
    double tokens = 0;
    double time = 0;
  };
  static bool take(Bucket& b, double rate, double burst, double now);
  void forget_idle(double now);

  Limits limits_;
  Bucket total_;
  std::unordered_map<std::string, Bucket> sources_;
};

}  // namespace keel::server
