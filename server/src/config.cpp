#include <keel/server/config.h>

#include "log.h"
#include "net.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <sstream>

namespace keel::server {
namespace {

void add_flags(CLI::App& app, ServerOptions& o) {
  app.add_option("--scene", o.scene_path, "scene file (JSON or KSCN binary) every match is built from")->required();
  app.add_option("--match-seed", o.match_seed,
                 "seed of every match's random generator (recorded); default: a fresh one per match");
  app.add_option("--game", o.game_module, "game module (.so, docs/game-rules.md) every match runs; default: the sandbox")
      ->type_name("PATH");
  app.add_option("--bind", o.bind, "UDP address to listen on, repeatable: 127.0.0.1:7777, [::1]:7777")
      ->default_str("127.0.0.1:7777");
  app.add_option("--public-address", o.public_address,
                 "address connect tokens name for each --bind (when not the bind address)");
  app.add_option("--websocket", o.websocket,
                 "also accept clients over WebSocket (plain ws://) on this TCP address: 127.0.0.1:7778 (default: off)");
  app.add_option("--websocket-public-address", o.websocket_public_address,
                 "address connect tokens name for the WebSocket listener (when not its bind address)");
  app.add_option("--websocket-max-connections", o.websocket_max_connections, "WebSocket connections open at once")
      ->default_val(1024)->check(CLI::Range(1u, 65536u));
  app.add_option("--websocket-max-per-address", o.websocket_max_per_address,
                 "WebSocket connections open at once from one source IP address")
      ->default_val(16)->check(CLI::Range(1u, 65536u));
  app.add_option("--websocket-handshake-timeout", o.websocket_handshake_timeout,
                 "seconds a WebSocket connection may take to finish its HTTP upgrade")
      ->default_val(5.0)->check(CLI::Range(0.1, 60.0));
  app.add_option("--websocket-idle-timeout", o.websocket_idle_timeout,
                 "seconds without a message before a WebSocket connection is closed")
      ->default_val(15.0)->check(CLI::Range(0.5, 3600.0));
  app.add_option("--websocket-max-messages-per-second", o.websocket_max_messages_per_second,
                 "messages per WebSocket connection per second; more are dropped")
      ->default_val(400)->check(CLI::Range(10u, 100000u));
  app.add_option("--record", o.record_dir, "directory recordings are written to")->default_str("recordings");
  app.add_option("--stop-after-ticks", o.stop_after_ticks,
                 "stop cleanly once the start-up match has stepped N ticks (0 = run until signalled)");
  app.add_option("--metrics", o.metrics_bind,
                 "HOST:PORT of the HTTP endpoint serving /metrics and /healthz (exactly that address: [::] is IPv6 only)");
  app.add_option("--web", o.web_bind,
                 "HOST:PORT of the browser page and its development token endpoint (loopback only; needs --websocket)");
  app.add_flag("--web-remote-tokens", o.web_remote_tokens,
               "let --web bind an address that is not loopback: anyone who reaches it gets a connect token");
  app.add_option("--web-client", o.web_client_dir,
                 "folder of the wasm32 client's files the --web page loads (scripts/build-web-client.sh writes it)");
  app.add_option("--token-key", o.token_key_path, "token key file (keel-token keygen); without it: development mode");
  app.add_option("--match-id", o.match_id, "id of the match created at start-up")->default_val(0);
  app.add_option("--max-matches", o.max_matches, "matches at once, the start-up match included")
      ->default_val(16)->check(CLI::Range(1u, 4096u));
  app.add_option("--max-spectators", o.max_spectators,
                 "spectators per match (tokens minted with the spectator role; not counted as players)")
      ->capture_default_str();
  app.add_option("--max-players", o.max_players, "players per match")
      ->default_val(16)->check(CLI::Range(1u, 256u));
  app.add_option("--max-packets-per-second", o.max_packets_per_second, "per client; more are dropped")
      ->default_val(300)->check(CLI::Range(10u, 100000u));
  app.add_option("--idle-timeout", o.idle_timeout, "seconds of silence before a client is dropped (caps the token's)")
      ->default_val(10.0)->check(CLI::Range(0.5, 3600.0));
  app.add_option("--empty-match-grace", o.empty_match_grace, "seconds an on-demand match lives without players")
      ->default_val(10.0)->check(CLI::Range(0.0, 86400.0));
  app.add_option("--snapshot-rate", o.snapshot_rate, "snapshots per second per client")
      ->default_val(30)->check(CLI::Range(1u, 120u));
  app.add_option("--tick-rate", o.tick_rate, "ticks per second: 30, 60 or 120 (default: the scene's)")
      ->check(CLI::IsMember({0u, 30u, 60u, 120u}));
  app.add_option("--max-catch-up-ticks", o.max_catch_up_ticks, "ticks stepped at once after a stall; the rest are dropped")
      ->default_val(5)->check(CLI::Range(1u, 120u));
  app.add_option("--client-kbps", o.client_kbps,
                 "send budget per client in kbit/s (IPv4/UDP headers counted); each snapshot holds the most relevant bodies that fit")
      ->default_val(256)->check(CLI::Range(16u, 1000000u));
  app.add_option("--interest-radius", o.interest_radius,
                 "metres around a player's character beyond which bodies leave its interest; 0 = no radius")
      ->default_val(0.0f)->check(CLI::Range(0.0f, 100000.0f));
  app.add_option("--threads", o.threads, "threads stepping matches (0 = one per core)")
      ->default_val(0)->check(CLI::Range(0u, 256u));
  app.add_option("--step-threads", o.step_threads,
                 "worker threads each match's world steps with (0 = the scene's); results are the same at any count")
      ->default_val(0)->check(CLI::Range(0u, 64u));
  app.add_flag("--log-json", o.log_json, "log JSON lines instead of human-readable lines");
  app.add_option("--log-level", o.log_level, "debug, info, warn or error")
      ->default_val("info")->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app.add_option("--status-interval", o.status_interval, "seconds between status lines (0 = none)")
      ->default_val(1.0)->check(CLI::Range(0.0, 3600.0));
  app.add_option("--log-file", o.log_file,
                 "append log lines to FILE instead of stderr (stderr keeps the live status line)");
  app.add_flag("--live-status", o.live_status,
               "redraw the status line in place on stderr even when it is not a terminal");
  app.add_flag("--agones", o.agones,
               "talk to the Agones SDK sidecar (also on when AGONES_SDK_HTTP_PORT is set)");
  app.add_option("--agones-port", o.agones_port,
                 "name of the GameServer port whose host port connect tokens name under Agones")
      ->default_str("game");
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ServerOptions o;
  CLI::App app{"keel-server: hosts Keel matches over UDP (and WebSocket), records every match"};
  app.set_config("--config", "", "read options from FILE (TOML: flag names without dashes, e.g. max-players = 8)");
  add_flags(app, o);
  ParsedCommandLine result;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    int code = app.exit(e, out, err);
    result.exit_code = code == 0 ? 0 : 2;
    result.message = code == 0 ? out.str() : "keel-server: " + err.str();
    return result;
  }
  keel::Status st = validate(o);
  if (!st) {
    result.exit_code = 2;
    result.message = "keel-server: " + st.error().message + "\n";
    return result;
  }
  result.options = std::move(o);
  return result;
}

keel::Status validate(const ServerOptions& o) {
  if (o.scene_path.empty()) return keel::Error{"--scene is required"};
  if (o.bind.empty()) return keel::Error{"--bind: at least one address is required"};
  if (!o.public_address.empty() && o.public_address.size() != o.bind.size()) {
    return keel::Error{"--public-address: give one per --bind (" + std::to_string(o.bind.size()) + ")"};
  }
  for (const std::string& b : o.bind) {
    auto e = parse_endpoint(b);
    if (!e) return keel::Error{"--bind " + b + ": not an address; use 127.0.0.1:7777 or [::1]:7777"};
    if (o.token_key_path.empty() && !is_loopback(e->address())) {
      return keel::Error{"--bind " + b + ": without --token-key the server runs in development mode "
                        "(anyone can mint tokens) and binds loopback addresses only; "
                        "make a key with keel-token keygen and pass --token-key"};
    }
  }
  for (const std::string& p : o.public_address) {
    if (!parse_endpoint(p)) return keel::Error{"--public-address " + p + ": not an address"};
  }
  if (!o.websocket.empty()) {
    auto e = parse_endpoint(o.websocket);
    if (!e) return keel::Error{"--websocket " + o.websocket + ": not an address; use 127.0.0.1:7778 or [::1]:7778"};
    if (o.token_key_path.empty() && !is_loopback(e->address())) {
      return keel::Error{"--websocket " + o.websocket + ": without --token-key the server runs in development mode "
                        "and listens on loopback addresses only; make a key with keel-token keygen and pass --token-key"};
    }
  }
  if (!o.websocket_public_address.empty()) {
    if (o.websocket.empty()) return keel::Error{"--websocket-public-address: needs --websocket"};
    auto e = parse_endpoint(o.websocket_public_address);
    if (!e || e->port() == 0) {
      return keel::Error{"--websocket-public-address " + o.websocket_public_address + ": not an address to reach"};
    }
  }
  if (!o.metrics_bind.empty()) {
    auto e = parse_endpoint(o.metrics_bind);
    if (!e) return keel::Error{"--metrics " + o.metrics_bind + ": not an address; use 127.0.0.1:9100"};
  }
  if (!o.web_bind.empty()) {
    auto e = parse_endpoint(o.web_bind);
    if (!e) return keel::Error{"--web " + o.web_bind + ": not an address; use 127.0.0.1:8080"};
    if (o.websocket.empty()) return keel::Error{"--web: needs --websocket HOST:PORT (the page joins over WebSocket)"};
    if (!is_loopback(e->address()) && !o.web_remote_tokens) {
      return keel::Error{"--web " + o.web_bind + ": the page's token endpoint hands a connect token to anyone who asks, "
                        "so --web binds loopback addresses only (a real deployment's matchmaker issues tokens); "
                        "pass --web-remote-tokens to serve tokens on " + o.web_bind + " anyway"};
    }
  } else if (o.web_remote_tokens) {
    return keel::Error{"--web-remote-tokens: needs --web"};
  } else if (!o.web_client_dir.empty()) {
    return keel::Error{"--web-client: needs --web"};
  }
  const bool port_name_ok =
      !o.agones_port.empty() && o.agones_port.size() <= 63 &&
      std::all_of(o.agones_port.begin(), o.agones_port.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!port_name_ok) return keel::Error{"--agones-port: a port name of 1 to 63 letters, digits, - _ or ."};
  if (o.record_dir.empty()) return keel::Error{"--record: the directory must not be empty"};
  LogLevel level;
  if (!parse_log_level(o.log_level, level)) return keel::Error{"--log-level " + o.log_level + ": use debug, info, warn or error"};
  if (o.tick_rate != 0 && o.tick_rate != 30 && o.tick_rate != 60 && o.tick_rate != 120) {
    return keel::Error{"--tick-rate " + std::to_string(o.tick_rate) + ": use 30, 60 or 120"};
  }
  if (o.client_kbps < 16) {
    return keel::Error{"--client-kbps " + std::to_string(o.client_kbps) + ": use at least 16 (a snapshot with a few bodies)"};
  }
  if (!std::isfinite(o.interest_radius) || o.interest_radius < 0.0f) {
    return keel::Error{"--interest-radius: metres >= 0 (0 = no radius)"};
  }
    if (o.snapshot_rate == 0 || o.max_players == 0 || o.max_matches == 0) {
    return keel::Error{"--snapshot-rate, --max-players and --max-matches must be at least 1"};
  }
  return {};
}

keel::Status check_token_addresses(const ServerOptions& o, bool agones_on) {
  if (!o.websocket.empty() && o.websocket_public_address.empty() && !agones_on) {
    auto e = parse_endpoint(o.websocket);
    if (e && e->address().is_unspecified()) {
      return keel::Error{"--websocket " + o.websocket + ": connect tokens name the address clients reach the server at, "
                        "which " + o.websocket + " is not; pass --websocket-public-address HOST:PORT, or run under Agones"};
    }
  }
  if (!o.public_address.empty() || agones_on) return {};
  for (const std::string& b : o.bind) {
    auto e = parse_endpoint(b);
    if (e && e->address().is_unspecified()) {
      return keel::Error{"--bind " + b + ": connect tokens name the address clients reach the server at, "
                        "which " + b + " is not; pass --public-address HOST:PORT (one per --bind), or run under Agones"};
    }
  }
  return {};
}

}  // namespace keel::server
