// keel-bot: N headless clients in one process, for tests and load (docs/client-sdk.md).
#pragma once

#include <keel/client/link_conditioner.h>
#include <keel/game/registry.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace keel::bot {

enum class InputKind { RandomWalk, Script, Idle, Seek };

struct BotOptions {
  std::string server;                 ///< HOST:PORT
  bool websocket = false;             ///< --websocket: server is keel-server's WebSocket listener
  uint32_t bots = 1;
  bool predict = false;
  double seconds = 10;
  /// When set, the run goes on past `seconds` until some bot has confirmed an event of
  /// this type (a goal), and ends at `max_seconds` at the latest.
  std::string until_event;
  double max_seconds = 0;             ///< s; 0 = seconds (no extension)
  client::LinkImpairment link;        ///< the same both ways
  uint64_t seed = 1;
  std::string token_key_file;         ///< "" = development key
  uint64_t match_id = 1;
  uint64_t first_client_id = 1;       ///< bot i is client first_client_id + i
  uint32_t token_timeout = 10;        ///< s, written into minted tokens
  InputKind inputs = InputKind::RandomWalk;
  double update_hz = 250;
  double interpolation_delay = 0;     ///< snapshot intervals; 0 = default
  uint32_t max_rollback = 0;          ///< ticks; 0 = default
  std::string dump_dir;               ///< desync dumps ("" = none)
  std::optional<double> perturb_at;   ///< s: bot 0 flips a bit of its state (test hook)
  std::optional<double> outage_at;    ///< s: every bot's link goes dead ...
  double outage_seconds = 3;          ///< ... for this long
  bool quiet = false;
  /// The game the server runs (its input layout drives the inputs; predicting bots step
  /// it): empty, the sandbox. keel-bot's --game loads a module into it.
  game::RulesFactory rules;
  /// When set and true (a signal handler sets it), the run ends early with a summary.
  const std::atomic<bool>* stop = nullptr;
};

/// Runs the bots for options.seconds (longer, up to max_seconds, while until_event has
/// not been confirmed) — or until options.stop, or until the server has
/// closed every bot (it shut down, or the match is over: nothing would follow) — and
/// returns the summary (see docs/client-sdk.md).
/// Throws std::runtime_error on a setup error (bad address, key file).
nlohmann::json run_bots(const BotOptions& options);

}  // namespace keel::bot
