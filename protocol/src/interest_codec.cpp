// The PartialSnapshot payload (BitWriter order), docs/protocol.md "Partial snapshots":
//   left:  count (tiered, <= kMaxLeavesPerMessage), then ids ascending: the first in 32
//          bits, each next as (gap - 1) tiered
//   bodies: count (tiered, <= kMaxBodiesPerMessage), then per body, ids ascending coded
//          as the left ids: has_baseline:1, and
//            has_baseline: age (tiered, 1 .. kMaxBaselineAge: ticks back to the body's
//                          baseline), then the body as a delta against it
//            else:         the body in full
// Tiered code: 0 + 2 bits, 10 + 4, 110 + 8, 111 + 32.
#include "interest_codec.h"

#include "body_bits.h"

namespace keel::protocol {
namespace {

using body_bits::read_tiered;
using body_bits::write_tiered;

void write_id(BitWriter& w, uint32_t id, uint32_t previous, bool first) {
  if (first) w.write_bits(id, 32);
  else write_tiered(w, id - previous - 1);
}

// Ascending ids, refusing a gap that passes 2^32 - 1.
uint32_t read_id(BitReader& r, uint32_t previous, bool first) {
  if (first) return r.read_bits(32);
  uint64_t id = uint64_t{previous} + 1 + read_tiered(r);
  if (id > 0xffffffffull) r.fail();
  return static_cast<uint32_t>(id);
}

}  // namespace

std::vector<uint8_t> encode_partial(uint64_t tick, std::span<const PartialEntry> bodies,
                                    std::span<const uint32_t> left, const SnapshotConfig& config) {
  BitWriter w;
  // About a full body's bytes each: one allocation for most messages.
  w.reserve(16 + 4 * left.size() + 16 * bodies.size());
  const size_t full_bits = body_bits::full_bits(config);
  write_tiered(w, static_cast<uint32_t>(left.size()));
  for (size_t i = 0; i < left.size(); ++i) write_id(w, left[i], i ? left[i - 1] : 0, i == 0);
  write_tiered(w, static_cast<uint32_t>(bodies.size()));
  for (size_t i = 0; i < bodies.size(); ++i) {
    const PartialEntry& e = bodies[i];
    write_id(w, e.value->id, i ? bodies[i - 1].value->id : 0, i == 0);
    w.write_bool(e.baseline != nullptr);
    if (e.baseline == nullptr) {
      if (e.form != nullptr) w.write_words(e.form, full_bits);
      else body_bits::write_full(w, *e.value, config);
      continue;
    }
    write_tiered(w, static_cast<uint32_t>(tick - e.baseline_tick));
    body_bits::write_delta(w, *e.value, *e.baseline, config);
  }
  return w.finish();
}

DropReason decode_partial(std::span<const uint8_t> payload, uint64_t tick, const SnapshotConfig& config,
                          const BaselineLookup& baseline, PartialUpdate& out) {
  out.tick = tick;
  out.bodies.clear();
  out.left.clear();
  out.full.clear();
  if (!config.valid()) return DropReason::OutOfRange;
  BitReader r(payload);
  uint32_t n_left = read_tiered(r);
  if (n_left > InterestLimits::kMaxLeavesPerMessage) return DropReason::OutOfRange;
  for (uint32_t i = 0; i < n_left && r.ok(); ++i) out.left.push_back(read_id(r, i ? out.left.back() : 0, i == 0));
  uint32_t n_bodies = read_tiered(r);
  if (n_bodies > InterestLimits::kMaxBodiesPerMessage) return DropReason::OutOfRange;
  bool missing = false;
  for (uint32_t i = 0; i < n_bodies && r.ok(); ++i) {
    QuantBody b;
    b.id = read_id(r, i ? out.bodies.back().id : 0, i == 0);
    bool ok = true;
    if (!r.read_bool()) {
      ok = body_bits::read_full(r, b, config);
      out.full.push_back(b.id);
    } else {
      uint32_t age = read_tiered(r);
      if (age == 0 || age > InterestLimits::kMaxBaselineAge || age >= tick) r.fail();
      const QuantBody* base = r.ok() ? baseline(b.id, tick - age) : nullptr;
      // Without its baseline the body's bits still parse (against a zero body), so the
      // rest of the payload is checked, but the message cannot be used.
      QuantBody zero;
      zero.id = b.id;
      missing = missing || base == nullptr;
      ok = body_bits::read_delta(r, base ? *base : zero, b, config) || base == nullptr;
    }
    if (!ok) r.fail();
    out.bodies.push_back(b);
  }
  if (!r.ok()) return DropReason::OutOfRange;
  if (!r.at_end()) return DropReason::MalformedPayload;
  // A body both left and updated in one message is not something a sender makes.
  for (size_t i = 0, j = 0; i < out.left.size() && j < out.bodies.size();) {
    if (out.left[i] == out.bodies[j].id) return DropReason::OutOfRange;
    out.left[i] < out.bodies[j].id ? ++i : ++j;
  }
  return missing ? DropReason::Stale : DropReason::None;
}

}  // namespace keel::protocol
