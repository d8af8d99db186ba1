// zstd for checkpoint state bytes (libzstd-dev). Checkpoints are the bulk of a recording
// and canonical state compresses well (zeros, repeated floats, sorted ids).
#pragma once

#include <keel/base/expected.h>

#include <cstdint>
#include <span>
#include <vector>

namespace keel::replay::detail {

/// Compresses `in` at a fast level; returns false (and leaves `out` alone) on failure.
bool zstd_compress(std::span<const uint8_t> in, std::vector<uint8_t>& out);
/// Decompresses a frame that must expand to exactly `raw_size` bytes.
keel::Expected<std::vector<uint8_t>> zstd_decompress(std::span<const uint8_t> in, uint64_t raw_size);

}  // namespace keel::replay::detail
