// Bounds the work handshakes can cost the I/O thread. Every connection request costs a
// token decryption; without a bound, one host sending valid-looking requests as fast as
// it can would spend the I/O thread on them and delay every connected player's packets.
// Malformed handshakes never get here (check_handshake_shape drops them first, without
// spending any allowance). Two token buckets decide: one per source network and one for
// the whole server. Over either, the datagram is dropped and counted
// (handshake_rate_limited) before any cryptography runs.
//
// A source network is an IPv4 /24 or an IPv6 /64 (IPv4-mapped IPv6 addresses count as
// IPv4): ports, and the addresses of one network, are free to an attacker. The table of
// networks is bounded and cannot be reset from outside: when it is full, only buckets
// that have refilled completely (idle: they hold no information) are forgotten, at most
// one sweep every sweep_interval; a network that finds no room shares one overflow bucket
// with every other such network. A flooding network therefore keeps its empty bucket,
// and flooding from many networks earns no fresh bucket either.
#pragma once

#include "net.h"

#include <array>
#include <cstdint>
#include <map>

namespace keel::server {

class HandshakeLimiter {
 public:
  struct Limits {
    double per_source_per_second = 20;  ///< a client needs 2-3 per connection attempt
    double per_source_burst = 40;
    double overflow_per_second = 20;    ///< shared by networks that found the table full
    double overflow_burst = 40;
    double total_per_second = 2000;     ///< whole server
    double total_burst = 4000;
    size_t max_sources = 8192;          ///< networks tracked
    double sweep_interval = 0.5;        ///< s between sweeps for idle buckets when full
  };
  /// An IPv4 /24 or IPv6 /64, as 16 bytes (IPv4: ::ffff:a.b.c.0).
  using Prefix = std::array<uint8_t, 16>;
  static Prefix prefix_of(const asio::ip::address& address);

  HandshakeLimiter() : HandshakeLimiter(Limits{}) {}
  explicit HandshakeLimiter(const Limits& limits);
  /// Whether a handshake datagram from `source` at `now` (seconds) may be processed.
  bool allow(const asio::ip::address& source, double now);
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
  Bucket* bucket_for(const Prefix& prefix, double now);
  void forget_idle(double now);

  Limits limits_;
  Bucket total_;
  Bucket overflow_;
  std::map<Prefix, Bucket> sources_;
  double last_sweep_ = -1e9;
};

}  // namespace keel::server
