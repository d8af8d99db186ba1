// Golden hash chains: the per-tick hashes a scene (or a recorded match) must reproduce on
// every compiler, optimisation level, thread count and CPU. docs/determinism.md is the
// user's reference; this is the file format.
//
// A golden is a text file, one record per line, '#' starts a comment line:
//
//   keel-golden 2                  format and version (always the first line; world chains
//                                  of version 1 read the same)
//   scene scenes/pile.json         the scene it was written from (informational)
//   kind world                     `world`, or `match RULES` for a recorded match
//   ticks 600                      ticks stepped
//   every 10                       a hash every this many ticks
//   input 0 join 1                 match only: the recorded inputs, by tick (see below)
//   input 12 frame 1 0.5 -1 0.75 2
//   tick 0 2f1b0c...               the hash at every multiple of `every`, 0 to `ticks`
//
// The `tick T HASH` lines are exactly what `keel-sim run SCENE --hash-every 10` prints, so
// a golden can be compared against a plain run with diff. Hashes are the state hash
// (keel/sim/state_hash.h: XXH3-64 over blocks) of the canonical state (World::hash, or
// Match::hash for a match), 16 lowercase hex digits.
//
// Recorded inputs: all `input T ...` lines with the same T form the TickInputs passed to
// Match::step when the match is at tick T: `join P` and `leave P` events in file order,
// then `frame P CODE...`: the game's quantised input codes (keel/game/layout.h), as the
// match applies them (missing trailing codes are 0). A player with no frame at a tick
// repeats its last one, which is Match's own rule, so the file lists only changes.
#pragma once

#include <keel/base/expected.h>
#include <keel/game/match.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace keel::det {

/// What a golden chain hashes.
enum class ChainKind : uint8_t {
  World,  ///< a bare World built from the scene, stepped with no inputs
  Match,  ///< a Match built from the scene, stepped with recorded inputs
};

struct Golden {
  static constexpr uint32_t kFormatVersion = 2;  ///< 2: match frames are the game's input codes

  std::string scene;   ///< the scene file named when it was written (informational)
  ChainKind kind = ChainKind::World;
  std::string rules;   ///< Match only: Rules::name() of the rules it was recorded with
  uint64_t ticks = 0;
  uint64_t every = 0;
  /// Match only: inputs by the tick at which they are applied; ticks absent get none.
  std::map<uint64_t, game::TickInputs> inputs;
  /// hashes[i] is the hash at tick i * every, for i = 0 .. ticks / every.
  std::vector<uint64_t> hashes;
};

/// Limits for reading an untrusted golden file: far above any real chain.
struct GoldenLimits {
  static constexpr uint64_t kMaxTicks = 100'000'000;
  static constexpr uint64_t kMaxHashes = 1'000'000;
  static constexpr uint32_t kMaxPlayer = 1'000'000'000;
  static constexpr uint64_t kMaxFileBytes = 256ull << 20;
};

/// The text of a golden file.
std::string format_golden(const Golden& golden);

/// Parses a golden; every error names `source` and the line, e.g.
/// "tests/golden/pile.golden:7: tick 20: expected 16 lowercase hex digits".
keel::Expected<Golden> parse_golden(std::string_view text, const std::string& source);

keel::Expected<Golden> read_golden(const std::string& path);
keel::Status write_golden(const std::string& path, const Golden& golden);

/// "0123456789abcdef": 16 lowercase hex digits, as keel-sim prints hashes.
std::string hex_hash(uint64_t hash);

}  // namespace keel::det
