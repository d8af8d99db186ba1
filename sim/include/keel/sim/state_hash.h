// The state hash: what World::hash() and Match::hash() report, what recordings, desync
// dumps and peers compare, as a function of canonical state bytes alone.
//
// The bytes are read as the canonical state writes them (docs/determinism.md, "The state
// hash", has the definition in full) and cut into sections: the head (whatever precedes
// the world's bytes, a match's own state, then the world's header with the tick), the
// body slots, the body free list, the collider slots, their free list, the contacts'
// pairs, the contacts that have points, and everything after the contacts. A body or
// collider slot's digest is XXH3-64 of the bytes a step moves (a body's pose, velocities,
// sleep time, island and sleeping flag; a collider's fat bounds) seeded with XXH3-64 of
// the rest of the slot; a section of slots is XXH3-64 of its slots' digests; the state
// hash is XXH3-64 of the eight section digests. The world's bytes begin at the first
// "KEELSTAT" from which they read as a state; bytes that hold none hash as XXH3-64 of
// them all.
//
// Why sections: a world computes the same value from its arrays without writing its
// state, keeping each slot's digest of what only the API changes and reusing the digest
// of a body that did not move (asleep or static), so a hash costs what changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace keel::sim {

/// The state hash of canonical bytes (a world's save_state(), a match's).
uint64_t state_hash(std::span<const uint8_t> bytes);

}  // namespace keel::sim
