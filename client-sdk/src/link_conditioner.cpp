#include <keel/client/link_conditioner.h>

#include <algorithm>

namespace keel::client {

protocol::LinkConfig to_link_config(const LinkImpairment& link, uint64_t seed) {
  // The simulator adds a one-sided uniform [0, jitter); "latency ± jitter" starts
  // jitter lower and spans twice as wide.
  protocol::LinkConfig c;
  double jitter = std::max(0.0, link.jitter_ms);
  c.latency_ms = std::max(0.0, link.latency_ms - jitter);
  c.jitter_ms = std::min(2.0 * jitter, link.latency_ms + jitter);
  c.loss = std::clamp(link.loss, 0.0, 1.0);
  c.duplicate = std::clamp(link.duplicate, 0.0, 1.0);
  c.reorder = std::clamp(link.reorder, 0.0, 1.0);
  c.seed = seed;
  return c;
}

ConditionedTransport::ConditionedTransport(std::unique_ptr<Transport> inner,
                                           const LinkConditionerConfig& config)
    : inner_(std::move(inner)),
      up_(to_link_config(config.up, config.seed * 2 + 1)),
      down_(to_link_config(config.down, config.seed * 2 + 2)) {}

void ConditionedTransport::flush_up(double now) {
  for (auto& d : up_.receive(now)) {
    ++link_stats_.up_out;
    inner_->send(d, now);
  }
}

void ConditionedTransport::send(std::span<const uint8_t> datagram, double now) {
  ++stats_.datagrams_sent;
  stats_.bytes_sent += datagram.size();
  ++link_stats_.up_in;
  if (in_outage(now)) {
    ++link_stats_.outage_dropped;
  } else {
    up_.send(datagram, now);
  }
  flush_up(now);
}

void ConditionedTransport::receive(std::vector<std::vector<uint8_t>>& out, double now, size_t max) {
  flush_up(now);
  scratch_.clear();
  inner_->receive(scratch_, now, max);
  for (auto& d : scratch_) {
    ++link_stats_.down_in;
    if (in_outage(now)) {
      ++link_stats_.outage_dropped;
      continue;
    }
    down_.send(d, now);
  }
  for (auto& d : down_.receive(now)) {
    ++link_stats_.down_out;
    ++stats_.datagrams_received;
    stats_.bytes_received += d.size();
    out.push_back(std::move(d));
  }
}

}  // namespace keel::client
