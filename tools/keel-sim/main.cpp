// keel-sim — run a scene headless, for tests, benchmarks and determinism checks.
// The command line is a contract (docs/architecture.md, "Conventions"); flags may grow, never change.
#include "determinism_command.h"
#include "run_command.h"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"keel-sim: step a Keel scene headless and print its per-tick state hashes"};
  app.require_subcommand(1);

  keel::tools::RunOptions run;
  uint64_t save_at = 0;
  CLI::App* cmd = app.add_subcommand("run", "step a scene (or a saved state) and print hashes");
  cmd->add_option("scene", run.scene, "scene file (JSON or FlatBuffers binary)")->check(CLI::ExistingFile);
  auto* state_opt = cmd->add_option("--state", run.state, "continue from a saved state instead of a scene")
                        ->check(CLI::ExistingFile);
  cmd->add_option("--ticks", run.ticks, "ticks to step (default 600)")->check(CLI::Range(uint64_t(0), uint64_t(1) << 40));
  cmd->add_option("--threads", run.threads, "worker threads (results never depend on it)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--hash-every", run.hash_every, "print `tick T HASH` when T is a multiple of K (0: only the final line; default 60)");
  std::string sleep_mode = "on";
  cmd->add_option("--sleep", sleep_mode, "on (default) or off: off keeps every body awake (for benchmarks)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_flag("--timing", run.timing, "print step time statistics");
  cmd->add_option("--dump-final", run.dump_final, "write every body's final state as JSON");
  auto* save_opt = cmd->add_option("--save-at", save_at, "absolute tick at which to save the state");
  auto* out_opt = cmd->add_option("--state-out", run.state_out, "where --save-at writes the state");
  save_opt->needs(out_opt);
  out_opt->needs(save_opt);
  auto* record_opt =
      cmd->add_option("--record", run.record, "write a recording (.krec) of the run for keel-replay (needs SCENE)");
  cmd->add_flag("--match", run.match,
                "step the scene as a match (the sandbox, or --game) without recording it, and print the match's "
                "hashes (Match::hash) instead of the world's");
  auto* bots_opt = cmd->add_option("--bots", run.bots, "with --record or --match: this many scripted players join and play the match")
                       ->check(CLI::Range(0u, 64u));
  auto* game_opt =
      cmd->add_option("--game", run.game_module, "with --record or --match: the game module (.so) the match runs (default: the sandbox)")
          ->type_name("PATH");

  keel::tools::DeterminismCommand determinism(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (determinism.selected()) return determinism.run();
  if (run.scene.empty() == run.state.empty()) {
    std::cerr << "keel-sim run: give exactly one of SCENE or --state STATE.bin\n";
    return 2;
  }
  (void)state_opt;
  if ((bots_opt->count() > 0 || game_opt->count() > 0) && record_opt->count() == 0 && !run.match) {
    std::cerr << "keel-sim run: --bots and --game need --record or --match\n";
    return 2;
  }
  if (save_opt->count() > 0) run.save_at = save_at;
  run.sleep = sleep_mode == "on";
  return keel::tools::run_simulation(run);
}
