// The keel-replay command line as a function: keel-replay's main() calls it with Keel's
// built-in rules, and a program with its own rules calls it with a registry that holds
// them, getting the same commands, flags and exit codes (docs/replay.md).
#include <keel/replay/commands.h>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <iostream>

namespace keel::replay::cli {

namespace {

void add_range(CLI::App* cmd, std::optional<uint64_t>& from, std::optional<uint64_t>& to) {
  cmd->add_option("--from", from, "first tick");
  cmd->add_option("--to", to, "last tick");
}

void add_threads(CLI::App* cmd, uint32_t& threads) {
  cmd->add_option("--threads", threads, "worker threads for the world (results never depend on it)")
      ->check(CLI::Range(1u, 256u));
}

}  // namespace

int run_cli(int argc, const char* const* argv, const game::RulesRegistry& builtin) {
  CLI::App app{"keel-replay: inspect, verify, seek, compare and repair Keel recordings"};
  app.require_subcommand(1);
  // Options of the whole program may also follow the subcommand (keel-replay verify --game ...).
  app.fallthrough(true);
  std::vector<std::string> modules;
  app.add_option("--game", modules, "a game module (.so) to load: the game a recording names is looked up among them")
      ->type_name("PATH");

  std::string info_rec;
  CLI::App* info = app.add_subcommand("info", "format, build, scene, ticks, players, checkpoints, completeness");
  info->add_option("rec", info_rec, "recording (.krec)")->required();

  VerifyArgs v;
  CLI::App* verify = app.add_subcommand("verify", "re-run the recording and compare every tick's hash");
  verify->add_option("rec", v.rec, "recording (.krec)")->required();
  add_threads(verify, v.threads);
  add_range(verify, v.from, v.to);

  DumpArgs d;
  CLI::App* dump = app.add_subcommand("dump", "the state at a tick as JSON (reached from the nearest checkpoint)");
  dump->add_option("rec", d.rec, "recording (.krec)")->required();
  dump->add_option("--tick", d.tick, "tick to dump")->required();
  dump->add_option("--out", d.out, "write the JSON here instead of stdout");
  add_threads(dump, d.threads);

  DiffArgs f;
  CLI::App* diff = app.add_subcommand("diff", "first differing tick of two recordings (or a desync dump), and which bodies differ");
  diff->add_option("a", f.a, "recording or desync dump")->required();
  diff->add_option("b", f.b, "recording or desync dump")->required();
  diff->add_option("--limit", f.limit, "field rows to print (default 40)");
  add_threads(diff, f.threads);

  std::string rec_in, rec_out;
  CLI::App* recover = app.add_subcommand("recover", "make a cut-short or tail-damaged recording whole again");
  recover->add_option("rec", rec_in, "recording (.krec)")->required();
  recover->add_option("--out", rec_out, "the repaired recording")->required();

  ExportArgs e;
  CLI::App* exp = app.add_subcommand("export", "every body's state per tick as CSV");
  exp->add_option("rec", e.rec, "recording (.krec)")->required();
  exp->add_option("--csv", e.csv, "output CSV file")->required();
  exp->add_option("--every", e.every, "export every K-th tick (default 1)")->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  exp->add_option("--inputs", e.inputs_csv, "also write every applied input as CSV: tick, player, one column per field");
  exp->add_option("--events", e.events_csv, "also write every game event as CSV: tick, event, its payload fields");
  add_range(exp, e.from, e.to);
  add_threads(exp, e.threads);

  ViewArgs w;
  CLI::App* view = app.add_subcommand("view", "write one self-contained HTML page that plays the recording in 3D");
  view->add_option("rec", w.rec, "recording (.krec)")->required();
  view->add_option("--against", w.against, "a second recording of the same match, or a desync dump, to compare with");
  view->add_option("--out", w.out, "the HTML page to write")->required();
  view->add_option("--every", w.every, "draw every K-th tick (default: the densest that fits --max-mb)")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 32));
  view->add_option("--max-mb", w.max_mb, "page size budget in MB (default 19)")->check(CLI::Range(1.0, 2000.0));
  add_threads(view, w.threads);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    return app.exit(err) == 0 ? 0 : kError;
  }
  game::RulesRegistry rules = builtin;
  for (const std::string& m : modules) {
    if (keel::Status st = rules.add_module(m); !st) {
      std::cerr << "error: " << st.error().message << "\n";
      return kError;
    }
  }
  Io io{std::cout, std::cerr, isatty(STDERR_FILENO) == 1, &rules};
  if (*info) return cli::info(info_rec, io);
  if (*verify) return cli::verify(v, io);
  if (*dump) return cli::dump(d, io);
  if (*diff) return cli::diff(f, io);
  if (*recover) return cli::recover(rec_in, rec_out, io);
  if (*view) return cli::view(w, io);
  return cli::export_csv(e, io);
}

}  // namespace keel::replay::cli
