// splitmix64: the same pseudo-random numbers from a seed on every machine and standard
// library (std's distributions differ between them), for tests that draw their cases.
#pragma once

#include <cstdint>

namespace keel::test_support {

struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (n >= 1; the bias of % is far below what a test cares about).
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }
  /// Uniform in [0, 1): the top 53 bits.
  double unit() { return double(next() >> 11) / 9007199254740992.0; }
  /// Uniform in [lo, hi).
  float range(float lo, float hi) { return float(lo + (hi - lo) * unit()); }
};

}  // namespace keel::test_support
