// keel::server::Server — the authoritative match host: UDP sockets (IPv4 and IPv6), one
// session per client, matches stepped at a fixed tick on a oneTBB pool, recordings, desync
// dumps, metrics and graceful shutdown. docs/operations.md is the operator's guide and
// docs/protocol.md ("Session") the contract with clients.
//
// Threads: one I/O thread receives datagrams, runs the handshake and routes each connected
// datagram to its match's inbox (it never touches a match); one tick thread schedules due
// matches onto the pool, where each match drains its inbox, steps, records and sends. A
// step therefore never waits for the network and the network never waits for a step.
#pragma once

#include <keel/server/config.h>
#include <keel/base/expected.h>
#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace keel::server {

/// Makes the rules of a new match. Servers with their own game rules pass their own
/// factory; the default is games::SandboxRules (what keel-replay knows how to re-run).
using RulesFactory = std::function<std::unique_ptr<game::Rules>()>;

/// A copy of the server's counters (the numbers /metrics serves).
struct ServerCounters {
  uint64_t packets_in = 0;
  uint64_t packets_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t matches = 0;  ///< running now
  uint64_t players = 0;  ///< connected now (spectators included)
  uint64_t spectators = 0;  ///< of them, admitted with a spectator token
  uint64_t ticks = 0;    ///< stepped, all matches
  uint64_t ticks_late = 0;
  uint64_t ticks_dropped = 0;  ///< backlog dropped after a stall
  /// Largest |ticks stepped + dropped - elapsed x rate| any match has had when it stepped
  /// (keel_tick_schedule_error_ticks): the server's own, exact measure of its clock.
  double tick_schedule_error = 0;
  uint64_t desyncs = 0;
  uint64_t hash_checks = 0;    ///< hash reports that matched
  uint64_t inputs_missing = 0; ///< player-ticks stepped with the repeat-last rule
  uint64_t views_clamped = 0;  ///< input view stamps from the future or past any history, clamped
  std::map<std::string, uint64_t> drops;  ///< by reason (drop.h names plus server reasons)
  uint64_t drop(const std::string& reason) const {
    auto it = drops.find(reason);
    return it == drops.end() ? 0 : it->second;
  }
};

class Server {
 public:
  /// Loads the scene and the token key, checks the options. Nothing is bound yet.
  static keel::Expected<std::unique_ptr<Server>> create(const ServerOptions& options,
                                                      RulesFactory rules = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds the sockets (and the metrics endpoint), creates the start-up match and starts
  /// the I/O and tick threads.
  keel::Status start();
  /// Asks the server to stop: stop admitting, finish the tick in progress, send every
  /// client Disconnect{ServerShuttingDown}, finish the recordings. Safe from any thread.
  void request_stop();
  /// Blocks until the server has stopped (after request_stop, a signal or
  /// --stop-after-ticks); returns the process exit code (0 on a clean stop).
  int wait();
  /// start(), SIGINT/SIGTERM handling, wait(): what keel-server's main runs.
  int run();

  /// "host:port" of each bound socket (the real port when bound to port 0).
  std::vector<std::string> bound_addresses() const;
  /// The "host:port" strings a connect token may name to be accepted here: each
  /// --public-address (else each bound address that is not 0.0.0.0 or [::]), plus the
  /// GameServer's address and port once Agones reported them.
  std::vector<std::string> token_addresses() const;
  /// "host:port" of the metrics endpoint ("" when off).
  std::string metrics_address() const;
  /// "host:port" of the --web page endpoint ("" when off).
  std::string web_address() const;
  /// The --websocket listener's address as bound, "host:port"; "" without one.
  std::string websocket_address() const;
  ServerCounters counters() const;
  /// Prometheus text, as /metrics serves it.
  std::string metrics_text() const;
  /// Every recording written (or being written) so far.
  std::vector<std::string> recordings() const;
  /// The tick of the start-up match.
  uint64_t primary_tick() const;

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// keel-server's whole main: parse the command line, create, run. A custom server
/// (server/examples/) calls it with its own rules.
int server_main(int argc, const char* const* argv, RulesFactory rules = {});

}  // namespace keel::server
