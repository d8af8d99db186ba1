// keel-bot --server HOST:PORT [--bots N] [--mode interpolate|predict] [--seconds S]
//          [--loss P] [--duplicate P] [--reorder P] [--latency-ms MS] [--jitter-ms MS]
//          [--summary OUT.json] [--token-key KEYFILE] [--websocket] ...
#include "bot.h"

#include <CLI/CLI.hpp>

#include <signal.h>

#include <atomic>
#include <fstream>
#include <iostream>

namespace {

std::atomic<bool> g_stop{false};  // lock-free, so a signal handler may set it

void on_signal(int) { g_stop.store(true); }

// SIGINT and SIGTERM end the run early with a summary and exit 0. Installed explicitly:
// a shell starts background jobs with SIGINT ignored, which would leave Ctrl-C in a demo
// script without effect on the bots.
void handle_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  keel::bot::BotOptions o;
  std::string mode = "interpolate";
  std::string inputs = "random";
  std::string summary;
  double perturb_at = -1;
  double outage_at = -1;
  CLI::App app{"keel-bot: headless Keel clients for tests and load"};
  app.add_option("--server", o.server, "server address HOST:PORT")->required();
  app.add_flag("--websocket", o.websocket,
               "connect over WebSocket: --server is keel-server's --websocket address (plain ws://)");
  app.add_option("--bots", o.bots, "clients to run in this process")->check(CLI::Range(1u, 1024u));
  app.add_option("--mode", mode, "interpolate or predict")->check(CLI::IsMember({"interpolate", "predict"}));
  app.add_option("--seconds", o.seconds, "how long to run")->check(CLI::Range(0.1, 86400.0));
  app.add_option("--until-event", o.until_event,
                 "past --seconds, run on until some bot has confirmed an event of this type (up to --max-seconds)");
  app.add_option("--max-seconds", o.max_seconds, "the latest end of a run extended by --until-event")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--loss", o.link.loss, "probability a datagram is lost (each way)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--duplicate", o.link.duplicate, "probability a datagram is duplicated")->check(CLI::Range(0.0, 1.0));
  app.add_option("--reorder", o.link.reorder, "probability a datagram is held back")->check(CLI::Range(0.0, 1.0));
  app.add_option("--latency-ms", o.link.latency_ms, "one-way latency")->check(CLI::Range(0.0, 10000.0));
  app.add_option("--jitter-ms", o.link.jitter_ms, "one-way latency varies by +/- this")->check(CLI::Range(0.0, 10000.0));
  app.add_option("--seed", o.seed, "seed of the link conditioner and the random walk");
  app.add_option("--summary", summary, "write the JSON summary here (else stdout)");
  app.add_option("--token-key", o.token_key_file, "mint tokens with this key file (else development mode)");
  app.add_option("--match", o.match_id, "match id in the minted tokens");
  app.add_option("--first-client-id", o.first_client_id, "bot i uses client id FIRST+i")->check(CLI::Range(1ull, 1ull << 62));
  app.add_option("--token-timeout", o.token_timeout, "connection time-out written into tokens (s)")->check(CLI::Range(1u, 3600u));
  app.add_option("--inputs", inputs, "random (random values in range; the sandbox's bots random-walk), script (every field sweeps its range; the sandbox's bots walk a circle) idle, or seek (drive at the nearest body no player controls, from behind it when the game has teams: pushball's ball)")
      ->check(CLI::IsMember({"random", "script", "idle", "seek"}));
  app.add_option("--update-hz", o.update_hz, "client updates per second")->check(CLI::Range(10.0, 2000.0));
  app.add_option("--interp-delay", o.interpolation_delay, "interpolation delay in snapshot intervals (0 = default 3)");
  app.add_option("--max-rollback", o.max_rollback, "rollback window in ticks (0 = default 32)");
  app.add_option("--dump-dir", o.dump_dir, "write desync dumps here");
  app.add_option("--perturb-at", perturb_at, "test hook: bot 0 flips one bit of its state at this second");
  app.add_option("--outage-at", outage_at, "every bot's link drops everything from this second ...");
  app.add_option("--outage-seconds", o.outage_seconds, "... for this long");
  app.add_flag("--quiet", o.quiet, "no progress lines on stderr");
  std::string game_module;
  app.add_option("--game", game_module, "the game module (.so) the server runs: its input layout drives the bots")
      ->type_name("PATH");
  CLI11_PARSE(app, argc, argv);
  if (!game_module.empty()) {
    keel::game::RulesRegistry modules;
    if (keel::Status st = modules.add_module(game_module); !st) {
      std::cerr << "keel-bot: --game: " << st.error().message << "\n";
      return 1;
    }
    o.rules = *modules.factory(modules.module_game());
  }
  o.predict = mode == "predict";
  o.inputs = inputs == "script" ? keel::bot::InputKind::Script
             : inputs == "idle" ? keel::bot::InputKind::Idle
             : inputs == "seek" ? keel::bot::InputKind::Seek
                                : keel::bot::InputKind::RandomWalk;
  if (perturb_at >= 0) o.perturb_at = perturb_at;
  if (outage_at >= 0) o.outage_at = outage_at;
  o.stop = &g_stop;
  handle_stop_signals();
  try {
    nlohmann::json result = keel::bot::run_bots(o);
    std::string text = result.dump(2);
    if (summary.empty()) {
      std::cout << text << "\n";
    } else {
      std::ofstream out(summary);
      out << text << "\n";
      if (!out) {
        std::cerr << "keel-bot: cannot write " << summary << "\n";
        return 1;
      }
    }
    // Stopped by a signal: the summary says how far the bots got; the stop was asked for.
    if (result["stopped"] == "signal") return 0;
    return result["connected"].get<uint32_t>() == o.bots ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "keel-bot: " << e.what() << "\n";
    return 1;
  }
}
