// The keel-replay subcommands as functions, so that tests (and a server's admin
// endpoint) run exactly what the command line runs. Each returns the process exit code
// and writes only to the streams it is given. docs/replay.md shows them in use.
#pragma once

#include <keel/game/registry.h>
#include <keel/games/sandbox.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace keel::replay::cli {

/// What a command works with: it writes results to `out`, diagnostics and progress to
/// `err`, and rebuilds a recording's match with rules from `rules`.
struct Io {
  std::ostream& out;
  std::ostream& err;
  bool progress = false;  ///< draw a progress bar on `err` (keel-replay: when it is a terminal)
  /// The rules a recording may name; nullptr: Keel's built-in rules. A program with its
  /// own rules passes a registry holding them (see run_cli).
  const game::RulesRegistry* rules = nullptr;
};

/// Exit codes shared by every command.
enum Exit : int {
  kOk = 0,
  kDiffers = 1,   ///< verify: diverged; diff: the sides differ; recover: nothing recovered
  kError = 2,     ///< unreadable input, bad arguments, I/O failure; verify: the file is damaged
  kPartial = 3,   ///< recover: some data was lost; verify: sound but incomplete (no clean close, or gaps)
};

/// info REC: format version, build, scene, ticks, duration, players, checkpoints, and
/// whether the file is complete.
int info(const std::string& rec, Io io);

struct VerifyArgs {
  std::string rec;
  uint32_t threads = 1;
  std::optional<uint64_t> from;
  std::optional<uint64_t> to;
};
/// verify: last line `verified N ticks` (0: a sound, finished file, every tick matched),
/// `diverged at tick T: recorded H1 replayed H2` (1), `damaged: ...` (2, naming the first
/// damaged byte offset and tick) or `incomplete: ...` (3: not closed cleanly, or gaps).
int verify(const VerifyArgs& args, Io io);

struct DumpArgs {
  std::string rec;
  uint64_t tick = 0;
  std::string out;  ///< empty: JSON to io.out
  uint32_t threads = 1;
};
/// dump: the match state at a tick as JSON, reached from the nearest checkpoint.
int dump(const DumpArgs& args, Io io);

struct DiffArgs {
  std::string a;  ///< a recording or a desync dump
  std::string b;
  uint32_t threads = 1;
  uint32_t limit = 40;  ///< field rows printed (all are counted)
};
/// diff: the first tick whose hashes differ, then the bodies and fields that differ there.
int diff(const DiffArgs& args, Io io);

/// recover REC --out FIXED: exit 0 nothing lost, 3 some lost, 1 nothing recoverable.
int recover(const std::string& rec, const std::string& out, Io io);

struct ExportArgs {
  std::string rec;
  std::string csv;
  std::optional<uint64_t> from;
  std::optional<uint64_t> to;
  uint64_t every = 1;
  uint32_t threads = 1;
  std::string inputs_csv;  ///< --inputs: also every applied input, one column per declared field
  std::string events_csv;  ///< --events: also every game event, with its payload by field name
};
/// export --csv: one row per body per exported tick (tick, body, position, rotation,
/// linear and angular velocity, sleeping); --inputs and --events: the inputs each tick
/// was stepped with and the game events it emitted, by the game's declared names.
int export_csv(const ExportArgs& args, Io io);

struct ViewArgs {
  std::string rec;
  std::string against;  ///< optional: a second recording of the same match, or a desync dump
  std::string out;      ///< the HTML page to write
  uint64_t every = 0;   ///< draw every K-th tick; 0 = the smallest K that fits max_mb
  double max_mb = 19.0; ///< page size budget in MB (10^6 bytes)
  uint32_t threads = 1;
};
/// view: one self-contained HTML page that plays the recording in 3D (docs/replay.md).
int view(const ViewArgs& args, Io io);

/// The whole keel-replay command line (every subcommand, its flags and exit codes),
/// rebuilding matches with rules from `rules`. keel-replay passes Keel's built-in rules;
/// a program with its own rules passes a registry that also holds them:
///   int main(int argc, char** argv) {
///     auto rules = keel::games::builtin_games().add([] { return std::make_unique<MyRules>(); });
///     return keel::replay::cli::run_cli(argc, argv, rules);
///   }
/// A recording that names rules the registry lacks is an error (exit 2) naming them.
int run_cli(int argc, const char* const* argv, const game::RulesRegistry& rules);

}  // namespace keel::replay::cli
