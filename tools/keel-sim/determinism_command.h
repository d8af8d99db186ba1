// keel-sim determinism: check scenes against golden hash chains, or write the goldens.
// What users run in their own CI on every machine they ship to (docs/determinism.md).
#pragma once

#include <check.h>  // tools/keel-detrun: the checks this command shares with keel-detrun

#include <CLI/CLI.hpp>

#include <cstdint>
#include <vector>

namespace keel::tools {

/// Registers `determinism` on the keel-sim command line; run() after parsing.
class DeterminismCommand {
 public:
  explicit DeterminismCommand(CLI::App& app);
  /// Whether the command line chose this subcommand.
  bool selected() const;
  /// Runs it; returns the process exit code (0 all ok, 1 any mismatch or error).
  int run();

 private:
  CLI::App* cmd_ = nullptr;
  det::DeterminismOptions options_;
  std::string game_module_;
  uint64_t ticks_ = 0;
  uint64_t every_ = 0;
  CLI::Option* ticks_opt_ = nullptr;
  CLI::Option* every_opt_ = nullptr;
};

}  // namespace keel::tools
