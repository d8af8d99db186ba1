// A link conditioner: wraps a Transport and passes every datagram, in both directions,
// through a simulated link (protocol::LinkSimulator: latency, jitter, loss, duplication,
// reordering, seeded), so a real client over a real socket can be tested against, or a
// user can reproduce, a bad network. Time is passed in: a datagram held back is released
// by the next send/receive call at or after its delivery time.
#pragma once

#include <keel/client/transport.h>
#include <keel/protocol/link_sim.h>

#include <cstdint>
#include <memory>

namespace keel::client {

/// One direction's impairments. Latency is `latency_ms ± jitter_ms` (uniform), so
/// "80 ± 30 ms" is {80, 30}; loss, duplicate and reorder are probabilities in [0, 1].
struct LinkImpairment {
  double latency_ms = 0;
  double jitter_ms = 0;
  double loss = 0;
  double duplicate = 0;
  double reorder = 0;
  bool any() const { return latency_ms > 0 || jitter_ms > 0 || loss > 0 || duplicate > 0 || reorder > 0; }
};

struct LinkConditionerConfig {
  LinkImpairment up;    ///< client -> server
  LinkImpairment down;  ///< server -> client
  uint64_t seed = 1;    ///< the same seed gives the same drops and delays
  /// Both directions the same.
  static LinkConditionerConfig symmetric(const LinkImpairment& link, uint64_t seed = 1) {
    return {link, link, seed};
  }
};

/// What the conditioner did, per direction.
struct LinkConditionerStats {
  uint64_t up_in = 0, up_out = 0;      ///< datagrams offered / delivered, client -> server
  uint64_t down_in = 0, down_out = 0;  ///< datagrams offered / delivered, server -> client
  uint64_t outage_dropped = 0;         ///< dropped by set_outage
};

/// Converts an impairment to the simulator's config (its jitter is one-sided).
protocol::LinkConfig to_link_config(const LinkImpairment& link, uint64_t seed);

class ConditionedTransport final : public Transport {
 public:
  ConditionedTransport(std::unique_ptr<Transport> inner, const LinkConditionerConfig& config);

  void send(std::span<const uint8_t> datagram, double now) override;
  void receive(std::vector<std::vector<uint8_t>>& out, double now, size_t max) override;
  const TransportStats& stats() const override { return stats_; }

  /// Drops everything in both directions until `until` (a cable pulled out): for
  /// time-out and reconnect tests.
  void set_outage(double from, double until) { outage_from_ = from; outage_until_ = until; }
  const LinkConditionerStats& link_stats() const { return link_stats_; }

 private:
  bool in_outage(double now) const { return now >= outage_from_ && now < outage_until_; }
  void flush_up(double now);

  std::unique_ptr<Transport> inner_;
  protocol::LinkSimulator up_;
  protocol::LinkSimulator down_;
  double outage_from_ = 0;
  double outage_until_ = 0;
  TransportStats stats_;  // as the client sees it (before the link)
  LinkConditionerStats link_stats_;
  std::vector<std::vector<uint8_t>> scratch_;
};

}  // namespace keel::client
