// keel-sim run: step a scene (or a saved state) headless and print its hash chain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace keel::tools {

struct RunOptions {
  std::string scene;                 // scene file, or empty with `state`
  std::string state;                 // saved state to continue from
  uint64_t ticks = 600;              // ticks to step
  uint32_t threads = 1;
  uint64_t hash_every = 60;          // 0 = only the final line
  bool timing = false;
  bool sleep = true;
  uint32_t bots = 0;                 // with --record: scripted players driving the match                 // --sleep off keeps every body awake (benchmarks)
  std::string dump_final;            // JSON of every body after the last tick
  std::optional<uint64_t> save_at;   // absolute tick at which to save
  std::string state_out;
  std::string record;                // --record: write a recording (.krec) of the run
  bool match = false;                // --match: step a Match (as --record does) and print its hashes
  std::string game_module;           // --game: with --record, the game module the match runs (default: the sandbox)
};

/// Runs the command; returns the process exit code (0 ok, 1 bad input or I/O error).
int run_simulation(const RunOptions& options);

}  // namespace keel::tools
