#include <keel/protocol/snapshot_stream.h>

#include <algorithm>

namespace keel::protocol {
namespace {

const QuantSnapshot* find_in(const std::deque<QuantSnapshot>& h, uint64_t tick) {
  if (tick == 0) return nullptr;
  auto it = std::lower_bound(h.begin(), h.end(), tick,
                             [](const QuantSnapshot& s, uint64_t t) { return s.tick < t; });
  return it != h.end() && it->tick == tick ? &*it : nullptr;
}

}  // namespace

SnapshotSender::SnapshotSender(const SnapshotConfig& config, size_t history,
                               uint32_t idle_interval)
    : config_(config), history_size_(history), idle_interval_(idle_interval) {}

const QuantSnapshot* SnapshotSender::find(uint64_t tick) const { return find_in(history_, tick); }

void SnapshotSender::on_ack(uint64_t tick) {
  if (tick <= acked_ || find(tick) == nullptr) return;  // stale, duplicate or forged
  acked_older_ = acked_;
  acked_ = tick;
}

std::vector<uint8_t> SnapshotSender::encode(const QuantSnapshot& current) {
  Baselines b{find(acked_), find(acked_older_)};
  // The baseline's age travels in 16 bits; one older than that is as good as none.
  bool full = b.base == nullptr || current.tick - b.base->tick > 65535;
  if (full) b.older = nullptr;
  auto payload = encode_snapshot(current, b, config_);
  // Idle: an unchanged world (same bodies, same values) need not be resent every tick.
  bool unchanged = !full && b.base->bodies == current.bodies;
  if (unchanged && current.tick - last_sent_ < idle_interval_) return {};
  // A full snapshot is large (about 10 kB for 900 bodies): until one is acknowledged,
  // send the next at most every idle_interval ticks rather than every tick.
  if (full && last_full_ != 0 && current.tick - last_full_ < idle_interval_) return {};
  if (full) last_full_ = current.tick;
  last_sent_ = current.tick;
  history_.push_back(current);
  while (history_.size() > history_size_) history_.pop_front();
  flatbuffers::FlatBufferBuilder fbb(payload.size() + 64);
  auto age = static_cast<uint16_t>(full ? 0 : current.tick - b.base->tick);
  auto body = fb::CreateSnapshotDirect(fbb, static_cast<uint32_t>(current.tick), age, &payload);
  return finish_message(fbb, fb::Body::Snapshot, body.Union());
}

SnapshotReceiver::SnapshotReceiver(const SnapshotConfig& config, size_t history)
    : config_(config), history_size_(history) {}

const QuantSnapshot* SnapshotReceiver::find(uint64_t tick) const {
  return find_in(history_, tick);
}

uint64_t expand_tick(uint32_t tick32, uint64_t reference) {
  // The 64-bit tick with these low bits nearest the reference (half a window either way).
  uint64_t candidate = (reference & ~uint64_t{0xffffffff}) | tick32;
  if (candidate > reference && candidate - reference > 0x80000000ull &&
      candidate >= 0x100000000ull) {
    candidate -= 0x100000000ull;
  } else if (candidate < reference && reference - candidate > 0x80000000ull) {
    candidate += 0x100000000ull;
  }
  return candidate;
}

DropReason SnapshotReceiver::receive(const fb::Snapshot& m) {
  uint64_t tick = expand_tick(m.tick(), latest_.tick);
  if (tick <= latest_.tick) return DropReason::Stale;  // reordered or duplicated
  if (m.baseline_age() >= tick) return DropReason::OutOfRange;
  std::span<const uint8_t> payload;
  if (m.payload() != nullptr) payload = {m.payload()->data(), m.payload()->size()};
  Baselines b;
  if (m.baseline_age() != 0) {
    b.base = find(tick - m.baseline_age());
    if (b.base == nullptr) return DropReason::Stale;
    uint64_t older = snapshot_older_tick(payload, b.base->tick);
    b.older = find(older);
  }
  QuantSnapshot decoded;
  DropReason r = decode_snapshot(payload, tick, b, config_, decoded);
  if (r != DropReason::None) return r;
  latest_ = decoded;
  history_.push_back(std::move(decoded));
  while (history_.size() > history_size_) history_.pop_front();
  return DropReason::None;
}

}  // namespace keel::protocol
