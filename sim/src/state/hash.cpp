// The state hash (keel/sim/state_hash.h): XXH3-64 over the XXH3-64 digests of blocks of the
// canonical state counted back from its end.
//
// World::hash_after serialises the world into a buffer it keeps (no allocation once it has
// grown), hashes the blocks, and keeps their digests. The digests stay valid until the
// World is reached for change (World::ImplPtr) by anything but a dormant step, which
// changes only the tick; the tick sits in the cached head, so a dormant world's hash is its
// head with the tick patched in plus the digests it already has: a few kilobytes hashed,
// nothing serialised.
#include <keel/sim/state_hash.h>
#include <keel/sim/world.h>

#include "state/state_io.h"
#include "world_impl.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack: no allocation per hash
#include <xxhash.h>

#include <bit>
#include <cstring>

namespace keel::sim {

namespace {

constexpr size_t kBlock = kStateHashBlock;
constexpr size_t kTickEnd = kStateTickOffset + 8;

uint64_t little_endian(uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) return v;
  uint64_t out = 0;
  for (int i = 0; i < 8; ++i) out |= ((v >> (8 * i)) & 0xffu) << (8 * (7 - i));
  return out;
}

// Bytes before the first whole block, counted back from the end: 1..kBlock (0 when empty).
size_t first_block_size(size_t n) { return n == 0 ? 0 : n - (n - 1) / kBlock * kBlock; }

// Appends the digests of `bytes` cut into blocks that end at its end.
void digest_blocks(std::span<const uint8_t> bytes, std::vector<uint64_t>& out) {
  size_t at = 0;
  for (size_t len = first_block_size(bytes.size()); at < bytes.size(); at += len, len = kBlock) {
    out.push_back(little_endian(XXH3_64bits(bytes.data() + at, len)));
  }
}

// XXH3-64 of the little-endian digests of two runs of blocks, one after the other.
uint64_t combine(std::span<const uint64_t> first, std::span<const uint64_t> then) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, first.data(), first.size_bytes());
  XXH3_64bits_update(&state, then.data(), then.size_bytes());
  return XXH3_64bits_digest(&state);
}

// Serialises the world and cuts it: the head runs to the first block boundary after the
// tick (so the tick is always in it), and every whole block after it is digested.
void rebuild(const WorldImpl& world, StateDigests& d) {
  StateWriter w(d.bytes, 0);
  write_state(world, w, StateSource::DerivedShortcuts);
  w.finish();
  const std::span<const uint8_t> all = d.bytes;
  size_t head = first_block_size(all.size());
  while (head < kTickEnd && head < all.size()) head += kBlock;
  head = std::min(head, all.size());
  d.head.assign(all.begin(), all.begin() + ptrdiff_t(head));
  d.blocks.clear();
  digest_blocks(all.subspan(head), d.blocks);
  d.valid = true;
}

// The tick is the only state a dormant step changes: written into the head where the
// canonical bytes hold it.
void patch_tick(const WorldImpl& world, StateDigests& d) {
  if (d.head.size() < kTickEnd) return;  // (a state is never this short)
  const uint64_t tick = little_endian(world.tick);
  std::memcpy(d.head.data() + kStateTickOffset, &tick, 8);
}

}  // namespace

uint64_t state_hash(std::span<const uint8_t> bytes) {
  std::vector<uint64_t> digests;
  digests.reserve(bytes.size() / kBlock + 1);
  digest_blocks(bytes, digests);
  return XXH3_64bits(digests.data(), digests.size() * 8);
}

void World::ImplPtr::mark_changed() {
  if (p_) p_->digests.valid = false;
}

uint64_t World::hash() const { return hash_after({}); }

uint64_t World::hash_after(std::span<const uint8_t> prefix) const {
  const WorldImpl& world = *impl_;
  StateDigests& d = world.digests;
  if (d.valid) patch_tick(world, d);
  else rebuild(world, d);
  // The prefix and the head end on a block boundary of the whole; cut them together.
  d.front.clear();
  d.front.insert(d.front.end(), prefix.begin(), prefix.end());
  d.front.insert(d.front.end(), d.head.begin(), d.head.end());
  d.front_blocks.clear();
  digest_blocks(d.front, d.front_blocks);
  return combine(d.front_blocks, d.blocks);
}

}  // namespace keel::sim
