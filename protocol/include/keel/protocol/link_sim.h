// A simulated one-way network link for tests and benchmarks: latency, jitter, loss,
// duplication and reordering, driven by a seeded generator of our own (std::
// distributions differ between standard libraries; this must not), with time passed in.
// Client SDK and server tests reuse it to run both ends in one process without sleeps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace keel::protocol {

struct LinkConfig {
  double latency_ms = 0;   ///< one-way base delay
  double jitter_ms = 0;    ///< uniform extra delay in [0, jitter_ms)
  double loss = 0;         ///< probability a datagram is dropped
  double duplicate = 0;    ///< probability a datagram is delivered twice
  double reorder = 0;      ///< probability a datagram is held back behind later ones
  uint64_t seed = 1;
};

class LinkSimulator {
 public:
  explicit LinkSimulator(const LinkConfig& config);
  /// Puts a datagram on the link at time `now` (seconds).
  void send(std::span<const uint8_t> datagram, double now);
  /// Takes every datagram whose delivery time is <= now, in delivery order.
  std::vector<std::vector<uint8_t>> receive(double now);
  size_t in_flight() const { return queue_.size(); }
  const LinkConfig& config() const { return config_; }
  /// A uniform number in [0, 1) from the link's generator.
  double uniform();

 private:
  struct Item {
    double deliver_at;
    uint64_t order;  // ties broken by send order, so runs are reproducible
    std::vector<uint8_t> bytes;
  };
  void enqueue(std::span<const uint8_t> datagram, double now);

  LinkConfig config_;
  uint64_t state_;
  uint64_t order_ = 0;
  std::vector<Item> queue_;
};

}  // namespace keel::protocol
