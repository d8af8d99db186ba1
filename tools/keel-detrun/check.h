// Checking scenes against golden hash chains, and writing the goldens: the one
// implementation behind `keel-sim determinism` and the cross-compiled `keel-detrun`.
#pragma once

#include <keel/game/registry.h>
#include <keel/sim/defs.h>
#include <keel/base/expected.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace keel::det {

/// Reads a scene file into a SceneDef. keel-sim passes protocol's loader (JSON or
/// binary); keel-detrun passes a binary-only reader that needs no JSON parser.
using SceneLoader = std::function<keel::Expected<sim::SceneDef>(const std::string& path)>;

struct DeterminismOptions {
  std::vector<std::string> scenes;
  std::string golden_dir;
  bool write = false;  ///< write goldens instead of checking against them
  /// Step each scene as a Match with recorded inputs (DIR/<stem>.match.golden) instead
  /// of a bare World (DIR/<stem>.golden). --write records the scripted match.
  bool match = false;
  /// Ticks to step. Checking: any prefix of the golden (default: all of it), which is
  /// still exact. Writing: default 600.
  std::optional<uint64_t> ticks;
  /// Compare (or write) a hash every this many ticks. Checking: a multiple of the
  /// golden's (default: the golden's). Writing: default 10.
  std::optional<uint64_t> every;
  uint32_t threads = 1;
  /// Checking: also save the state at each of these ticks, restore it into a fresh world
  /// (or match), check that it saves back to the same bytes and that stepping on from it
  /// reproduces the golden chain to the end.
  std::vector<uint64_t> restore_at;
  /// Checking: also time each step of the first chain and print a `timing` line after
  /// the scene's result (how the wasm32 runner's speed is compared with native builds).
  bool timing = false;
  /// The game a match steps (--match); empty: the sandbox. A golden names its game and
  /// is checked only with that game.
  game::RulesFactory rules;
};

inline constexpr uint64_t kDefaultGoldenTicks = 600;
inline constexpr uint64_t kDefaultGoldenEvery = 10;

/// DIR/<stem>.golden, or DIR/<stem>.match.golden: the stem of scenes/pile.json and of
/// a binary scenes/pile.kscn are both "pile", so either form checks the same golden.
std::string golden_path(const std::string& dir, const std::string& scene, bool match);

/// Checks (or writes) every scene in turn, printing one line per scene to stdout:
///   ok SCENE
///   mismatch SCENE at tick T: golden H1 got H2 [(after restoring the state saved at tick R)]
///   error SCENE: MESSAGE            (no golden, a bad scene or golden, an I/O error)
///   wrote PATH (N ticks, every K)
///   timing SCENE ticks=N step_ms_mean=.. step_ms_p50=.. step_ms_p95=.. step_ms_max=..
///                                   (after a checked scene's line, with `timing`)
/// A scene that mismatches stops at its first differing tick; the others still run.
/// Progress goes to stderr when it is a terminal. Returns 0 when every scene passed (or
/// was written), 1 otherwise.
int run_determinism(const DeterminismOptions& options, const SceneLoader& load);

}  // namespace keel::det
