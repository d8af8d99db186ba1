#include <keel/protocol/link_sim.h>

#include <algorithm>

namespace keel::protocol {

LinkSimulator::LinkSimulator(const LinkConfig& config)
    : config_(config), state_(config.seed ^ 0x9e3779b97f4a7c15ull) {}

double LinkSimulator::uniform() {
  // splitmix64: tiny, well mixed, and the same on every platform.
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

void LinkSimulator::send(std::span<const uint8_t> datagram, double now) {
  if (uniform() < config_.loss) return;
  enqueue(datagram, now);
  if (uniform() < config_.duplicate) enqueue(datagram, now);
}

void LinkSimulator::enqueue(std::span<const uint8_t> datagram, double now) {
  double delay = config_.latency_ms + uniform() * config_.jitter_ms;
  // Held back by up to a few base delays plus 30 ms, so it lands behind later packets.
  if (uniform() < config_.reorder) delay += 30.0 + uniform() * (2.0 * config_.latency_ms + 30.0);
  queue_.push_back({now + delay / 1000.0, order_++, {datagram.begin(), datagram.end()}});
}

std::vector<std::vector<uint8_t>> LinkSimulator::receive(double now) {
  std::vector<Item> due;
  std::vector<Item> rest;
  for (auto& item : queue_) (item.deliver_at <= now ? due : rest).push_back(std::move(item));
  queue_ = std::move(rest);
  std::sort(due.begin(), due.end(), [](const Item& a, const Item& b) {
    return a.deliver_at != b.deliver_at ? a.deliver_at < b.deliver_at : a.order < b.order;
  });
  std::vector<std::vector<uint8_t>> out;
  out.reserve(due.size());
  for (auto& item : due) out.push_back(std::move(item.bytes));
  return out;
}

}  // namespace keel::protocol
