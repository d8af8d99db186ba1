// Union-find over indices whose roots are the lowest index of their set: a set is named
// by its members alone (never by the order they were joined in), and sets come in the
// order of their lowest member. Islands for sleep and parts of the solve are built on it.
#pragma once

#include <cstdint>
#include <vector>

namespace keel::sim {

/// The root of i's set (halving the path on the way).
inline uint32_t find_root(std::vector<uint32_t>& parent, uint32_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/// Joins the sets of a and b under the lower of their roots.
inline void join_sets(std::vector<uint32_t>& parent, uint32_t a, uint32_t b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a < b) parent[b] = a;
  else if (b < a) parent[a] = b;
}

}  // namespace keel::sim
