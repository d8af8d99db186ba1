// The state hash's sections (keel/sim/state_hash.h): where a record's bytes split into
// the part a step moves and the part only the API changes, and how digests combine.
// Both ways of computing the hash use these: state/hash.cpp from canonical bytes,
// state/world_hash.cpp from a world with kept digests. Keeping the cuts in one place is
// what keeps the two equal; tests/sim/state_hash_test.cpp checks them against each other
// and against a reference of its own on every tick.
#pragma once

#include "state/state_io.h"

#define XXH_INLINE_ALL  // small records: the call itself would cost as much as the hash
#include <xxhash.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace keel::sim::hash_sections {

/// A byte range [begin, end) inside one record.
struct Range {
  size_t begin, end;
};

/// The magic the world's bytes start with: how the hash of a match's bytes (its own,
/// then its world's) finds where the world begins.
inline constexpr uint8_t kMagic[8] = {'K', 'E', 'E', 'L', 'S', 'T', 'A', 'T'};

/// A live body slot: alive (1), generation (4), then the 200 field bytes of
/// state/state.cpp's visit_body_fields, then its collider list. The fields a step
/// changes are the pose (origin, centre of mass), the two velocities, the gravity scale
/// (a character's controller sets it each tick), sleep time, island and the sleeping
/// flag; every other byte changes only through the API.
inline constexpr size_t kBodySlotFixedBytes = 5 + 200;
inline constexpr Range kBodyMoving[] = {{10, 50}, {62, 86}, {174, 186}, {204, 205}};
inline constexpr size_t kBodyMovingBytes = 77;

/// A live collider slot: alive (1), then its 96 field bytes, the last 24 of which are its
/// fat bounds (the only field a step changes), then its geometry data (hull, mesh or
/// heightfield).
inline constexpr size_t kShapeSlotFixedBytes = 1 + 96;
inline constexpr Range kShapeMoving[] = {{73, 97}};
inline constexpr size_t kShapeMovingBytes = 24;

inline uint64_t little_endian(uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) return v;
  uint64_t out = 0;
  for (int i = 0; i < 8; ++i) out |= ((v >> (8 * i)) & 0xffu) << (8 * (7 - i));
  return out;
}

/// XXH3-64 of a record's bytes outside `moving` (the moving ranges are in order and
/// inside the record).
inline uint64_t fixed_digest(std::span<const uint8_t> record, std::span<const Range> moving) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  size_t at = 0;
  for (const Range& r : moving) {
    XXH3_64bits_update(&state, record.data() + at, r.begin - at);
    at = r.end;
  }
  XXH3_64bits_update(&state, record.data() + at, record.size() - at);
  return XXH3_64bits_digest(&state);
}

/// A live slot's digest: XXH3-64 of its moving bytes (the ranges, one after the other),
/// seeded with the digest of the rest. A dead slot's is XXH3-64 of its bytes.
inline uint64_t slot_digest(uint64_t fixed, std::span<const uint8_t> moving) {
  return XXH3_64bits_withSeed(moving.data(), moving.size(), fixed);
}

/// The moving ranges of a record, copied one after the other into `out` (`n` bytes).
inline void gather_moving(std::span<const uint8_t> record, std::span<const Range> moving, uint8_t* out) {
  for (const Range& r : moving) {
    for (size_t i = r.begin; i < r.end; ++i) *out++ = record[i];
  }
}

/// XXH3-64 of a list of digests, each as a little-endian u64 (`digests` already are).
inline uint64_t list_digest(std::span<const uint64_t> digests) { return XXH3_64bits(digests.data(), digests.size_bytes()); }

/// The sections, in the order the state hash combines them.
enum Section : size_t {
  kHead,        // the bytes before the world (a match's own state), then the world's header
  kBodies,      // list_digest of the body slots' digests
  kBodyFree,    // XXH3-64 of the body free list's bytes (count and slots)
  kShapes,      // list_digest of the collider slots' digests
  kShapeFree,   // XXH3-64 of the collider free list's bytes
  kPairs,       // XXH3-64 of every contact's pair as a little-endian u64 (shape_a << 32 | shape_b)
  kPoints,      // XXH3-64 of the bytes of the contacts that have points, in order
  kTail,        // XXH3-64 of every byte after the contacts (touching pairs to the end)
  kSectionCount
};

/// The state hash from its section digests (little-endian u64s).
inline uint64_t combine(const uint64_t (&sections)[kSectionCount]) { return list_digest(sections); }

}  // namespace keel::sim::hash_sections
