// keel::server::ServerOptions — everything keel-server can be told, from flags or a
// config file (docs/operations.md lists each one with its default and range).
#pragma once

#include <keel/base/expected.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace keel::server {

struct ServerOptions {
  std::string scene_path;                         ///< --scene (required)
  std::string game_module;                        ///< --game: a game module (.so) to host instead of the sandbox
  std::vector<std::string> bind{"127.0.0.1:7777"};  ///< --bind, repeatable: IPv4 or [IPv6]:port
  /// --public-address: the "host:port" connect tokens name for this server, when it is
  /// not the bind address (behind NAT, or bound to 0.0.0.0). One per --bind, in order.
  /// Under Agones the GameServer's address is accepted as well.
  std::vector<std::string> public_address;
  /// --websocket HOST:PORT: also accept clients over WebSocket (RFC 6455, plain ws://; TLS
  /// is a reverse proxy's job), one Keel datagram per binary message. Empty = off.
  std::string websocket;
  /// --websocket-public-address: the "host:port" connect tokens name for the WebSocket
  /// listener, when it is not its bind address (bound to 0.0.0.0, or behind a proxy).
  std::string websocket_public_address;
  uint32_t websocket_max_connections = 1024;   ///< --websocket-max-connections open at once
  uint32_t websocket_max_per_address = 16;     ///< --websocket-max-per-address from one source IP
  double websocket_handshake_timeout = 5.0;    ///< --websocket-handshake-timeout s for the HTTP upgrade
  double websocket_idle_timeout = 15.0;        ///< --websocket-idle-timeout s without a message
  uint32_t websocket_max_messages_per_second = 400;  ///< --websocket-max-messages-per-second per connection
  std::string record_dir = "recordings";  ///< --record
  uint64_t stop_after_ticks = 0;          ///< --stop-after-ticks: 0 = run until signalled
  uint64_t match_seed = 0;                ///< --match-seed: every match's random seed; 0 = a fresh one per match
  std::string metrics_bind;               ///< --metrics HOST:PORT; empty = no HTTP endpoint
  /// --web HOST:PORT: the browser page (docs/browser.md) and its development token
  /// endpoint, which hands a connect token for the WebSocket listener to anyone who asks.
  /// Needs --websocket. Empty = off.
  std::string web_bind;
  /// --web-remote-tokens: let --web bind an address that is not loopback. Off by default:
  /// a real deployment's matchmaker issues tokens, to players it has authenticated.
  bool web_remote_tokens = false;
  /// --web-client DIR: the wasm32 client's files the page loads (keel_web_client.js, .wasm,
  /// .mjs and its two libraries; scripts/build-web-client.sh writes DIR). Needs --web.
  /// Empty = the page stops at the WebSocket.
  std::string web_client_dir;
  std::string token_key_path;             ///< --token-key; empty = development mode
  uint64_t match_id = 0;                  ///< --match-id: the match created at start-up
  uint32_t max_matches = 16;              ///< --max-matches, the start-up match included
  uint32_t max_players = 16;              ///< --max-players per match
  uint32_t max_spectators = 16;           ///< --max-spectators per match (0: none admitted)
  uint32_t max_packets_per_second = 300;  ///< --max-packets-per-second per client
  double idle_timeout = 10.0;             ///< --idle-timeout s: caps the token's time-out
  double empty_match_grace = 10.0;        ///< --empty-match-grace s before an empty match ends
  uint32_t snapshot_rate = 30;            ///< --snapshot-rate per second
  uint32_t tick_rate = 0;                 ///< --tick-rate: 0 = the scene's (30, 60 or 120)
  uint32_t max_catch_up_ticks = 5;        ///< --max-catch-up-ticks after a stall
  uint32_t client_kbps = 256;             ///< --client-kbps: per-client send budget (snapshots fill it)
  float interest_radius = 0.0f;           ///< --interest-radius m around a player's character; 0 = none
  /// Largest large block (uncompressed) a client may send; 0 (the default) refuses every
  /// client block fragment unread (block_refused). Only a game that reads client blocks
  /// turns this on; Keel itself never needs one.
  size_t client_block_bytes = 0;
  /// Bytes the server holds for one client at most (partial messages, out-of-order
  /// control messages); a client block's bytes come on top (docs/security.md).
  size_t client_memory_bytes = 512u << 10;
  /// Bytes the server holds for all clients together.
  size_t clients_memory_bytes = 64u << 20;
  uint32_t threads = 0;                   ///< --threads stepping matches; 0 = all cores
  /// --step-threads: worker threads each match's world steps with (one big match on
  /// several cores); 0 = the scene's setting. Never changes a result (docs/determinism.md).
  uint32_t step_threads = 0;
  bool log_json = false;                  ///< --log-json
  std::string log_level = "info";         ///< --log-level debug|info|warn|error
  double status_interval = 1.0;           ///< --status-interval s between status lines; 0 = off
  /// --log-file: log lines are appended here instead of stderr, which then shows only the
  /// live status line (when it is a terminal, or with --live-status).
  std::string log_file;
  /// --live-status: redraw the status line in place on stderr even when stderr is not a
  /// terminal (a demo script, a terminal multiplexer's pipe).
  bool live_status = false;
  /// --agones: Ready / Health / Allocated / Shutdown with the Agones SDK sidecar
  /// (agones.h); also on whenever AGONES_SDK_HTTP_PORT is set.
  bool agones = false;
  /// --agones-port: the GameServer port (spec.ports[].name) whose host port, with
  /// status.address, is what connect tokens name under Agones.
  std::string agones_port = "game";
};

/// Outcome of reading a command line: options to run with, or an exit code and the text
/// to print (help: 0 on stdout; a bad flag or value: 2 on stderr).
struct ParsedCommandLine {
  std::optional<ServerOptions> options;
  int exit_code = 0;
  std::string message;
};

/// Parses keel-server's flags (and --config FILE, whose keys are the flag names without
/// dashes) with CLI11, then checks the values that depend on each other.
ParsedCommandLine parse_command_line(int argc, const char* const* argv);

/// Checks values a flag parser cannot: bind addresses parse, development mode binds
/// loopback only, counts are in range. The message names the flag.
keel::Status validate(const ServerOptions& options);

/// A bind address tokens cannot name (0.0.0.0 or [::]) needs --public-address, unless
/// Agones supplies the address (`agones_on`: --agones or AGONES_SDK_HTTP_PORT).
keel::Status check_token_addresses(const ServerOptions& options, bool agones_on);

}  // namespace keel::server
