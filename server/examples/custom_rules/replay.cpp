// keel-hover-replay: keel-replay that also knows the hover rules, so it verifies, dumps,
// diffs and views what keel-hover-server records (keel-replay itself refuses those
// recordings: it knows only Keel's built-in rules). Same commands, flags and exit codes.
#include "hover_rules.h"

#include <keel/replay/commands.h>

int main(int argc, char** argv) {
  return keel::replay::cli::run_cli(argc, argv, hover::rules_registry());
}
