#include "determinism_command.h"

#include <keel/scene/scene.h>

#include <iostream>

namespace keel::tools {

DeterminismCommand::DeterminismCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("determinism",
                            "check scenes against golden hash chains (one line per scene: `ok SCENE` or "
                            "`mismatch SCENE at tick T: golden H1 got H2`), or write them with --write");
  cmd_->add_option("scenes", options_.scenes, "scene files (JSON or FlatBuffers binary)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd_->add_option("--golden", options_.golden_dir, "folder of goldens: <scene stem>.golden per scene")->required();
  cmd_->add_flag("--write", options_.write, "write (overwrite) the goldens instead of checking them");
  cmd_->add_flag("--match", options_.match,
                 "step each scene as a multi-player Match with recorded inputs (<stem>.match.golden); "
                 "--write records Keel's scripted match");
  ticks_opt_ = cmd_->add_option("--ticks", ticks_, "ticks to step (check: a prefix of the golden, default all; write: default 600)")
                   ->check(CLI::Range(uint64_t(0), uint64_t(1) << 40));
  every_opt_ = cmd_->add_option("--every", every_, "a hash every K ticks (check: a multiple of the golden's; write: default 10)")
                   ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  cmd_->add_option("--game", game_module_,
                   "with --match: the game module (.so) to step instead of the sandbox; its golden names it")
      ->type_name("PATH");
  cmd_->add_option("--threads", options_.threads, "worker threads (results never depend on it)")->check(CLI::Range(1u, 256u));
  cmd_->add_option("--restore-at", options_.restore_at,
                   "also save the state at these ticks, restore it into a fresh world and check the rest of the chain")
      ->delimiter(',');
}

bool DeterminismCommand::selected() const { return cmd_->parsed(); }

int DeterminismCommand::run() {
  if (options_.write && !options_.restore_at.empty()) {
    std::cerr << "keel-sim determinism: --restore-at checks a golden; it does not go with --write\n";
    return 2;
  }
  if (!game_module_.empty()) {
    // The module must also obey the determinism rules: the check below steps it at the
    // given threads and restores it mid-run, like any scene.
    game::RulesRegistry modules;
    if (keel::Status st = modules.add_module(game_module_); !st) {
      std::cerr << "keel-sim determinism: --game: " << st.error().message << "\n";
      return 2;
    }
    options_.rules = *modules.factory(modules.module_game());
    options_.match = true;
  }
  if (ticks_opt_->count() > 0) options_.ticks = ticks_;
  if (every_opt_->count() > 0) options_.every = every_;
  return det::run_determinism(options_, [](const std::string& path) { return scene::load_scene_file(path); });
}

}  // namespace keel::tools
