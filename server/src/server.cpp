// The server: what it is made of, its two threads and how it starts and stops (see
// server.h). The parts, each in its own file:
//   front_door.cpp       the UDP sockets and the handshake (I/O thread)
//   websocket_listener.cpp  --websocket: clients over WebSocket, as one more socket (I/O thread)
//   match_scheduler.cpp  admissions, the matches and their tasks on the arena (tick thread)
//   metrics_endpoint.cpp /metrics and /healthz (I/O thread)
//   web_endpoint.cpp     --web: the browser page and its development tokens (I/O thread)
//   agones_link.cpp      the Agones sidecar (its own thread)
//   status_line.cpp      the operator's status line (tick thread)
// One tick of a match is MatchHost::run (match_host.cpp).
#include <keel/server/server.h>

#include "agones_link.h"
#include "front_door.h"
#include "health.h"
#include "log.h"
#include "match_host.h"
#include "match_scheduler.h"
#include "metrics.h"
#include "metrics_endpoint.h"
#include "router.h"
#include "status_line.h"
#include "web_endpoint.h"

#include <keel/scene/scene.h>
#include <keel/protocol/token.h>
#include <keel/game/registry.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace keel::server {

namespace kp = keel::protocol;
namespace fb = keel::protocol::fb;

struct Server::Impl {
  // log_file: the opened --log-file (owned), or null for stderr.
  Impl(const ServerOptions& o, LogLevel level, std::FILE* file, bool tty)
      : options(o),
        log(level, o.log_json, file ? file : stderr, stderr),
        front_door(io, options, token_key, log, metrics, router,
                   [this](Admission&& a) { return scheduler->enqueue(std::move(a)); },
                   [this] { return now().ns * 1e-9; }),
        endpoint(io, options, log, metrics, [this] { return trouble(); }),
        web(io, options, token_key, log,
            [this] {
              return options.websocket_public_address.empty() ? front_door.websocket_address()
                                                              : options.websocket_public_address;
            }),
        agones(options, flag_settings, log, metrics,
               {[this] { return health.healthy(now().ns, stop_requested.load()); },
                [this](const std::string& address) { front_door.accept_token_address(address); },
                [this] { scheduler->wake(); }}),
        status(options, log, metrics, tty),
        log_file(file) {}
  ~Impl() {
    if (log_file) std::fclose(log_file);
  }

  ServerOptions options;
  MatchSettings flag_settings;  // from the flags; never changes after create()
  kp::TokenKey token_key{};
  bool development = false;
  RulesFactory rules;
  game::GameOrigin game_origin;
  Logger log;
  Metrics metrics;
  Router router;
  TickHealth health;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  std::atomic<bool> stop_requested{false};

  asio::io_context io;
  std::optional<asio::signal_set> signals;
  // Made once the sockets are bound (matches send through them), before the I/O and
  // Agones threads start, which is what makes the parts' calls into it safe; declared
  // ahead of them so that it outlives the Agones thread.
  std::unique_ptr<MatchScheduler> scheduler;
  FrontDoor front_door;
  MetricsEndpoint endpoint;
  WebEndpoint web;
  AgonesLink agones;
  StatusLine status;
  std::thread io_thread, tick_thread;

  std::mutex done_mutex;
  std::condition_variable done;
  std::atomic<bool> stopped{false};
  int exit_code = 0;
  std::FILE* log_file;

  Now now() const {
    return Now{std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - epoch).count()};
  }
  HostServices services() {
    return HostServices{options, log, metrics, front_door.sender(), router, rules, game_origin};
  }
  // What /healthz reports: empty when healthy.
  std::string trouble() const {
    if (stop_requested.load()) return "stopping";
    if (!health.healthy(now().ns, false)) return "ticks late";
    return "";
  }

  void tick_loop();
  bool stop_after_ticks_reached();
  void shutdown();
  void print_recordings();
};

// --- tick thread ---------------------------------------------------------------------------

void Server::Impl::tick_loop() {
  if (scheduler->primary()) scheduler->primary()->start_clock(now());
  while (!stop_requested.load()) {
    Now t = now();
    health.note_loop(t.ns, metrics);
    if (agones.allocation_over(t)) {
      stop_requested.store(true);
      break;
    }
    if (auto allocated = agones.take_settings()) scheduler->use_settings(std::move(*allocated));
    scheduler->run_once(t);
    if (stop_after_ticks_reached()) {
      stop_requested.store(true);
      break;
    }
    if (scheduler->primary()) status.update(t, *scheduler->primary());
    scheduler->wait(t, [this] { return stop_requested.load(); });
  }
  shutdown();
}

// --stop-after-ticks counts the start-up match's ticks. A start-up match its rules ended
// will never reach N ticks: the server stops then too.
bool Server::Impl::stop_after_ticks_reached() {
  const std::shared_ptr<MatchHost>& primary = scheduler->primary();
  if (options.stop_after_ticks == 0 || !primary) return false;
  if (primary->tick() < options.stop_after_ticks && !primary->over()) return false;
  log.info("stop_after_ticks", {{"ticks", primary->tick()}, {"match_over", primary->over()}});
  return true;
}

void Server::Impl::shutdown() {
  front_door.stop_admitting();
  scheduler->wait_idle();  // the tick in progress finishes
  const uint64_t final_tick = scheduler->primary_tick();
  const size_t ended = scheduler->end_all(fb::DenyReason::ServerShuttingDown);
  log.info("server_stopped", {{"ticks", final_tick}, {"matches", ended}});
  print_recordings();
  // The Disconnects just queued go out before each WebSocket's close frame.
  front_door.close_websockets(1.0);
  // Agones: the recordings are final; tell the sidecar this GameServer is done.
  agones.shut_down();
  endpoint.stop();
  web.stop();
  io.stop();
  {
    std::lock_guard<std::mutex> lock(done_mutex);
    stopped.store(true);
  }
  done.notify_all();
}

void Server::Impl::print_recordings() {
  std::vector<std::string> paths = scheduler->recordings();
  status.clear();
  std::string text = "keel-server: stopped. Recordings (" + std::to_string(paths.size()) + ") in " + options.record_dir + ":\n";
  for (const auto& p : paths) text += "  " + p + "\n";
  // A module's game is re-run only with that module: the command names it.
  const std::string game = options.game_module.empty() ? "" : " --game " + options.game_module;
  if (!paths.empty()) text += "Verify a recording with:\n  keel-replay" + game + " verify " + paths.front() + "\n";
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// --- Server --------------------------------------------------------------------------------

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_->tick_thread.joinable() || impl_->io_thread.joinable()) {
    request_stop();
    wait();
  }
}

keel::Expected<std::unique_ptr<Server>> Server::create(const ServerOptions& options, RulesFactory rules) {
  keel::Status st = validate(options);
  if (!st) return st.error();
  LogLevel level = LogLevel::Info;
  parse_log_level(options.log_level, level);
  std::FILE* log_file = nullptr;
  if (!options.log_file.empty()) {
    log_file = std::fopen(options.log_file.c_str(), "a");
    if (!log_file) return keel::Error{"--log-file " + options.log_file + ": " + std::strerror(errno)};
  }
  // In place on a terminal, unless JSON log lines share it (they would be torn up).
  const bool logs_on_stderr = options.log_file.empty();
  const bool tty = options.live_status || (isatty(STDERR_FILENO) != 0 && !(options.log_json && logs_on_stderr));
  auto impl = std::make_unique<Impl>(options, level, log_file, tty);
  impl->rules = std::move(rules);
  if (!options.game_module.empty()) {
    // --game: the module's game replaces the program's own (sandbox or a custom server's).
    game::RulesRegistry modules;
    if (keel::Status loaded = modules.add_module(options.game_module); !loaded) return keel::Error{"--game: " + loaded.error().message};
    auto factory = modules.factory(modules.module_game());
    if (!factory) return factory.error();
    impl->rules = *factory;
    impl->game_origin = modules.origin(modules.module_game());
  }
  impl->metrics.client_memory.set_limit(options.clients_memory_bytes);
  auto agones_env = AgonesOptions::from_environment();
  if (!agones_env) return agones_env.error();
  st = check_token_addresses(options, options.agones || agones_env->has_value());
  if (!st) return st.error();
  auto scene = keel::scene::load_scene_file(options.scene_path);
  if (!scene) return scene.error();
  if (options.tick_rate != 0) scene->settings.tick_rate = options.tick_rate;
  if (options.step_threads != 0) scene->settings.threads = options.step_threads;
  impl->flag_settings = {std::make_shared<const sim::SceneDef>(std::move(*scene)), options.scene_path,
                         options.max_players};
  if (options.token_key_path.empty()) {
    impl->token_key = kp::development_token_key();
    impl->development = true;
  } else {
    auto key = kp::load_token_key(options.token_key_path);
    if (!key) return keel::Error{"--token-key: " + key.error().message};
    impl->token_key = *key;
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

keel::Status Server::start() {
  Impl& m = *impl_;
  keel::Status st = m.front_door.bind();
  if (!st) return st;
  st = m.endpoint.start();
  if (!st) return st;
  st = m.web.start();
  if (!st) return st;
  const uint32_t threads = m.options.threads ? m.options.threads : std::max(1u, std::thread::hardware_concurrency());
  m.scheduler = std::make_unique<MatchScheduler>(m.services(), m.flag_settings, [&m] { return m.now(); });
  st = m.scheduler->start(threads);
  if (!st) return st;
  if (m.development) {
    m.log.warn("insecure_development_mode",
               {{"why", "no --token-key: anyone can mint tokens with the well-known development key"},
                {"allowed", "loopback binds only"}});
  }
  nlohmann::json binds = m.front_door.bound_addresses(), token_addresses = m.front_door.token_addresses();
  m.log.info("server_started", {{"bind", binds}, {"token_addresses", token_addresses}, {"scene", m.options.scene_path},
                                {"tick_rate", m.flag_settings.scene->settings.tick_rate},
                                {"snapshot_rate", m.options.snapshot_rate}, {"threads", threads},
                                {"record", m.options.record_dir}, {"metrics", m.endpoint.address()}, {"web", m.web.address()},
                                {"websocket", m.front_door.websocket_address()}});
  m.health.note_loop(m.now().ns, m.metrics);
  st = m.agones.start();
  if (!st) return st;
  m.front_door.start_receiving();
  m.io_thread = std::thread([&m] {
    auto guard = asio::make_work_guard(m.io);
    m.io.run();
  });
  m.tick_thread = std::thread([&m] { m.tick_loop(); });
  return {};
}

void Server::request_stop() {
  impl_->stop_requested.store(true);
  if (impl_->scheduler) impl_->scheduler->wake();
}

int Server::wait() {
  Impl& m = *impl_;
  {
    std::unique_lock<std::mutex> lock(m.done_mutex);
    m.done.wait(lock, [&] { return m.stopped.load() || !m.tick_thread.joinable(); });
  }
  if (m.tick_thread.joinable()) m.tick_thread.join();
  if (m.io_thread.joinable()) m.io_thread.join();
  return m.exit_code;
}

int Server::run() {
  Impl& m = *impl_;
  m.signals.emplace(m.io, SIGINT, SIGTERM);
  m.signals->async_wait([this](const asio::error_code& ec, int sig) {
    if (ec) return;
    impl_->log.info("signal", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}, {"action", "stopping"}});
    request_stop();
  });
  keel::Status st = start();
  if (!st) {
    std::fprintf(stderr, "keel-server: %s\n", st.error().message.c_str());
    return 1;
  }
  return wait();
}

std::vector<std::string> Server::bound_addresses() const { return impl_->front_door.bound_addresses(); }
std::string Server::metrics_address() const { return impl_->endpoint.address(); }
std::string Server::web_address() const { return impl_->web.address(); }
std::string Server::websocket_address() const { return impl_->front_door.websocket_address(); }

std::vector<std::string> Server::token_addresses() const {
  return impl_->front_door.token_addresses();
}
ServerCounters Server::counters() const { return impl_->metrics.snapshot(); }
std::string Server::metrics_text() const { return impl_->metrics.prometheus_text(); }

std::vector<std::string> Server::recordings() const {
  return impl_->scheduler ? impl_->scheduler->recordings() : std::vector<std::string>{};
}

uint64_t Server::primary_tick() const {
  return impl_->scheduler ? impl_->scheduler->primary_tick() : 0;
}

int server_main(int argc, const char* const* argv, RulesFactory rules) {
  ParsedCommandLine parsed = parse_command_line(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exit_code == 0 ? stdout : stderr);
    return parsed.exit_code;
  }
  auto server = Server::create(*parsed.options, std::move(rules));
  if (!server) {
    // A scene or key file that does not load is a bad flag value, like any other.
    std::fprintf(stderr, "keel-server: %s\n", server.error().message.c_str());
    return 2;
  }
  return (*server)->run();
}

}  // namespace keel::server
