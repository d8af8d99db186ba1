// Comparing two match states body by body and field by field: what `keel-replay diff`
// prints once it has found the first tick whose hashes differ.
#pragma once

#include <keel/game/match.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace keel::replay {

/// Distance between two floats in units in the last place: how many representable
/// floats lie between them (0 = identical bits; +0 and -0 are 1 apart). NaNs count as
/// the largest distance.
uint64_t ulp_distance(float a, float b);

/// One scalar of one body that differs.
struct FieldDiff {
  uint32_t body = 0;
  std::string field;  ///< "position.x", "rotation.w", "linear_velocity.z", ...
  float a = 0.0f;
  float b = 0.0f;
  double difference() const { return double(b) - double(a); }
  uint64_t ulps = 0;
};

struct StateDiff {
  std::vector<uint32_t> only_in_a;  ///< body ids
  std::vector<uint32_t> only_in_b;
  /// Ordered by |b - a| (largest first), then ULPs, then body id and field name.
  std::vector<FieldDiff> fields;
  /// Differences that are not one scalar: sleep state, motion type, player slots.
  std::vector<std::string> other;
  /// The game's own fields that differ, by their declared names: "match state
  /// score[1]: 2 vs 3", "player 7 state charge: 10 vs 12", "player 7 last input
  /// move: (0, 1) vs (0.5, 1)".
  std::vector<std::string> game_state;
  /// First byte at which the canonical states differ (nullopt: identical bytes).
  std::optional<size_t> first_byte;

  /// True when the canonical bytes are identical.
  bool identical() const { return !first_byte.has_value(); }
  /// Bodies named by any difference, most different first.
  std::vector<uint32_t> bodies() const;
};

/// Compares every body (by user id), the game's declared state and every player slot of
/// two matches.
StateDiff diff_states(const game::Match& a, const game::Match& b);

}  // namespace keel::replay
