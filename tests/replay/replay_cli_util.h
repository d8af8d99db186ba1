// Running the keel-replay command line in-process with a given registry of games, as a
// program with its own games does, and capturing what it prints.
#pragma once

#include <keel/game/registry.h>
#include <keel/replay/commands.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace keel::replay::test {

/// cli::run_cli with `args` (the program name is added) and `games`; `out` gets stdout
/// then stderr. Returns the exit code.
inline int run(std::vector<std::string> args, const game::RulesRegistry& games, std::string& out) {
  args.insert(args.begin(), "keel-replay");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream o, e;
  std::streambuf* old_out = std::cout.rdbuf(o.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(e.rdbuf());
  int code = cli::run_cli(int(argv.size()), argv.data(), games);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  out = o.str() + e.str();
  return code;
}

}  // namespace keel::replay::test
