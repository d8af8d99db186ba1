// keel-replay — inspect, verify, seek, compare and repair Keel recordings (.krec).
// The command line is a contract (docs/architecture.md, "Conventions"); flags may grow, never change. It lives
// in keel::replay::cli::run_cli (replay/tool/src/commands/run_cli.cpp) so that tests, and
// programs with their own rules, run exactly what this tool runs.
#include <keel/replay/commands.h>
#include <keel/replay/replayer.h>

int main(int argc, char** argv) {
  return keel::replay::cli::run_cli(argc, argv, keel::replay::builtin_rules());
}
