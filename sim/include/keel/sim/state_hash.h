// The state hash: what World::hash() and Match::hash() report, what recordings, desync
// dumps and peers compare, as a function of canonical state bytes alone.
//
// The bytes are cut into blocks of kStateHashBlock bytes counted back from their end (the
// first block holds the rest: 1 to kStateHashBlock bytes), each block is hashed with
// XXH3-64, and the state hash is XXH3-64 of those digests, first to last, each as a
// little-endian u64. Empty bytes hash as XXH3-64 of nothing.
//
// Why blocks, and why from the end: a world whose bodies all sleep changes nothing but its
// tick from one step to the next, and the tick sits in the first bytes. Counted from the
// end, every later block keeps its bytes and its place, so the world hashes its first
// block and the cached digests of the others instead of serialising and hashing all of
// its state. A match's bytes are its own followed by its world's, so the world's blocks
// are the match's last blocks whatever the match writes ahead of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace keel::sim {

inline constexpr size_t kStateHashBlock = 4096;

/// The state hash of canonical bytes (a world's save_state(), a match's).
uint64_t state_hash(std::span<const uint8_t> bytes);

}  // namespace keel::sim
