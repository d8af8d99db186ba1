// The server's two threads and their hand-offs (see server.h): the I/O thread owns the
// sockets, the handshakes and the HTTP endpoint; the tick thread owns the set of
// matches, admits clients into them and schedules due matches onto the oneTBB arena.
#include <keel/server/server.h>
#include <keel/server/agones.h>

#include "handshake_limiter.h"
#include "http.h"
#include "log.h"
#include "match_host.h"
#include "metrics.h"
#include "net.h"
#include "router.h"

#include <keel/protocol/handshake.h>
#include <keel/scene/scene.h>
#include <keel/protocol/token.h>
#include <keel/game/registry.h>
#include <keel/replay/format.h>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

namespace keel::server {

namespace kp = keel::protocol;
namespace fb = keel::protocol::fb;

struct Server::Impl {
  ServerOptions options;
  MatchSettings flag_settings;  // from the flags; never changes after create()
  MatchSettings settings;       // tick thread: what new matches are made with
  kp::TokenKey token_key{};
  bool development = false;
  RulesFactory rules;
  game::GameOrigin game_origin;
  Logger log;
  Metrics metrics;
  Router router;

  asio::io_context io;
  std::vector<Udp::socket> sockets;
  std::vector<std::unique_ptr<kp::ServerHandshake>> handshakes;
  HandshakeLimiter handshake_limiter;  // I/O thread only
  std::vector<std::string> addresses;  // bound, "host:port" (the real port for port 0)
  mutable std::mutex token_addresses_mutex;  // a copy of what the handshakes accept
  std::vector<std::string> token_addresses;
  void accept_token_address(const std::string& address);
  std::unique_ptr<DatagramSender> sender;
  std::unique_ptr<HttpServer> http;
  std::string metrics_address;
  std::optional<asio::signal_set> signals;
  std::thread io_thread, tick_thread;

  std::unique_ptr<tbb::global_control> tbb_limit;
  std::unique_ptr<tbb::task_arena> arena;
  std::atomic<int> in_flight{0};

  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> admitting{true};
  std::atomic<bool> stopped{false};
  int exit_code = 0;

  std::mutex wake_mutex;
  std::condition_variable wake;
  std::mutex pending_mutex;
  std::vector<Admission> pending;

  mutable std::mutex matches_mutex;  // guards `matches` and `recordings` for readers
  std::map<uint64_t, std::shared_ptr<MatchHost>> matches;
  std::vector<std::string> recordings;
  std::shared_ptr<MatchHost> primary;

  std::mutex done_mutex;
  std::condition_variable done;

  // Health: healthy = not stopping, the tick thread ran within kHealthStallNs, and no
  // match dropped a backlog of ticks within kHealthDropWindowNs (/healthz and Agones'
  // Health both ask). The tick thread keeps the two times.
  static constexpr int64_t kHealthStallNs = 500'000'000;
  static constexpr int64_t kHealthDropWindowNs = 2'000'000'000;
  std::atomic<int64_t> last_loop_ns{0};
  std::atomic<int64_t> last_drop_ns{-kHealthDropWindowNs};
  uint64_t dropped_seen = 0;  // tick thread only
  bool healthy() const;

  // Agones (agones.h): on with --agones or AGONES_SDK_HTTP_PORT. After an allocation, the
  // server ends once it has had players and then none for --empty-match-grace seconds.
  std::unique_ptr<AgonesClient> agones;
  std::atomic<bool> allocated{false};
  bool had_players = false;
  int64_t empty_since_ns = -1;
  std::string agones_address;  // Agones thread: the GameServer address tokens may name
  std::mutex allocated_settings_mutex;
  std::optional<MatchSettings> allocated_settings;  // Agones thread -> tick thread
  keel::Status start_agones();
  void on_agones_report(const AgonesGameServer& gs);
  void on_agones_allocated(const AgonesGameServer& gs);
  std::optional<MatchSettings> settings_from_allocation(const AgonesGameServer& gs);
  void take_allocated_settings();
  void watch_allocation(Now now);

  // log_file: the opened --log-file (owned), or null for stderr.
  Impl(const ServerOptions& o, LogLevel level, std::FILE* file)
      : options(o), log(level, o.log_json, file ? file : stderr, stderr), log_file(file) {}
  ~Impl() {
    if (log_file) std::fclose(log_file);
  }
  std::FILE* log_file;

  Now now() const {
    return Now{std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - epoch).count()};
  }
  HostServices services() { return HostServices{options, log, metrics, *sender, router, rules, game_origin}; }

  keel::Status bind_sockets();
  void receive_next(uint32_t socket);
  void on_datagram(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes);
  void on_handshake(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes);
  keel::Status start_http();
  HttpResponse http_handler(const std::string& path);

  void tick_loop();
  void admit_pending(Now now);
  void admit(Admission& a, Now now);
  void deny(const Admission& a, fb::DenyReason reason, const std::string& why);
  void schedule(Now now);
  void end_finished_matches(Now now);
  void wait_idle();
  void shutdown();
  void status_line(Now now);
  void print_recordings();
  void wake_tick() { wake.notify_all(); }

  // Status line bookkeeping (tick thread).
  int64_t last_status_ns = 0, last_status_logged_ns = 0;
  uint64_t last_status_bytes_out = 0, last_status_bytes_in = 0;
  bool tty = false;  // the status line is redrawn in place on stderr
  std::string status_text(Now now_t);
};

// --- sockets -------------------------------------------------------------------------------

keel::Status Server::Impl::bind_sockets() {
  std::vector<int> fds;
  for (size_t i = 0; i < options.bind.size(); ++i) {
    Udp::endpoint at = *parse_endpoint(options.bind[i]);
    Udp::socket s(io);
    asio::error_code ec;
    s.open(at.protocol(), ec);
    // One socket per family: [::] must not also claim IPv4, or 0.0.0.0 beside it fails.
    if (!ec && at.address().is_v6()) s.set_option(asio::ip::v6_only(true), ec);
    if (!ec) s.bind(at, ec);
    if (ec) return keel::Error{"--bind " + options.bind[i] + ": " + ec.message()};
    s.set_option(asio::socket_base::receive_buffer_size(4 << 20), ec);  // best effort
    s.set_option(asio::socket_base::send_buffer_size(4 << 20), ec);
    Udp::endpoint bound = s.local_endpoint();
    // What tokens must name: --public-address, else the bound address. No client reaches
    // 0.0.0.0 or [::], so such a socket accepts no token until Agones reports the
    // GameServer's address (create() refuses it otherwise).
    std::string token_address = !options.public_address.empty() ? options.public_address[i]
                                : bound.address().is_unspecified() ? std::string()
                                                                   : format_endpoint(bound);
    addresses.push_back(format_endpoint(bound));
    handshakes.push_back(std::make_unique<kp::ServerHandshake>(token_key, token_address));
    if (!token_address.empty()) {
      std::lock_guard lock(token_addresses_mutex);
      if (std::find(token_addresses.begin(), token_addresses.end(), token_address) == token_addresses.end()) {
        token_addresses.push_back(token_address);
      }
    }
    fds.push_back(s.native_handle());
    sockets.push_back(std::move(s));
  }
  sender = std::make_unique<DatagramSender>(std::move(fds), metrics);
  return {};
}

void Server::Impl::receive_next(uint32_t socket) {
  // One receive buffer per socket, larger than any valid datagram so oversize ones are
  // seen (and counted) instead of silently truncated.
  struct Buffer {
    std::vector<uint8_t> bytes = std::vector<uint8_t>(65536);
    Udp::endpoint from;
  };
  auto buf = std::make_shared<Buffer>();
  sockets[socket].async_receive_from(asio::buffer(buf->bytes), buf->from,
                                     [this, socket, buf](const asio::error_code& ec, size_t n) {
                                       if (ec == asio::error::operation_aborted) return;
                                       if (!ec) on_datagram(socket, buf->from, {buf->bytes.data(), n});
                                       if (sockets[socket].is_open()) receive_next(socket);
                                     });
}

void Server::Impl::on_datagram(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes) {
  metrics.packets_in.fetch_add(1, std::memory_order_relaxed);
  metrics.bytes_in.fetch_add(bytes.size(), std::memory_order_relaxed);
  if (bytes.size() < kp::kPacketHeaderBytes) {
    metrics.drop(kp::DropReason::TooSmall);
    return;
  }
  if (bytes.size() > kp::kMaxPacketBytes) {
    metrics.drop(kp::DropReason::TooLarge);
    return;
  }
  // The header check is cheap and settles most garbage before any lookup.
  kp::PacketHeader header;
  kp::DropReason r = kp::read_header(bytes, header);
  if (r != kp::DropReason::None) {
    metrics.drop(r);
    return;
  }
  if (bytes[0] == static_cast<uint8_t>(kp::PacketType::Connected)) {
    auto host = router.find({socket, from});
    if (!host) {
      metrics.drop(ServerDrop::UnknownAddress);
      return;
    }
    host->post(Datagram{socket, from, std::vector<uint8_t>(bytes.begin(), bytes.end())});
    return;
  }
  on_handshake(socket, from, bytes);
}

void Server::Impl::on_handshake(uint32_t socket, const Udp::endpoint& from, std::span<const uint8_t> bytes) {
  if (!admitting.load()) {
    metrics.drop(ServerDrop::NotAdmitting);
    return;
  }
  // Malformed handshakes are dropped before they spend any allowance: a flood of them
  // must not use up the rate that real players' handshakes need.
  kp::DropReason shape = kp::check_handshake_shape(bytes);
  if (shape != kp::DropReason::None) {
    metrics.drop(shape);
    return;
  }
  const double t = now().ns * 1e-9;
  const bool allowed = from.address().is_loopback() ? handshake_limiter.allow_unlimited_source(t)
                                                     : handshake_limiter.allow(from.address(), t);
  if (!allowed) {
    metrics.drop(ServerDrop::HandshakeRateLimited);
    return;
  }
  uint64_t unix_now = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
  std::string address = format_endpoint(from);
  kp::ServerHandshake& hs = *handshakes[socket];
  if (bytes[0] == static_cast<uint8_t>(kp::PacketType::ConnectionRequest)) {
    std::vector<uint8_t> reply;
    kp::DropReason r = hs.on_request(bytes, address, unix_now, reply);
    metrics.drop(r);
    if (r == kp::DropReason::None) sender->send(socket, from, reply);
    else log.debug("handshake_dropped", {{"address", address}, {"reason", kp::to_string(r)}});
    return;
  }
  if (bytes[0] == static_cast<uint8_t>(kp::PacketType::ConnectionResponse)) {
    Admission a;
    kp::DropReason r = hs.on_response(bytes, address, unix_now, a.client);
    metrics.drop(r);
    if (r == kp::DropReason::ChallengeReused) {
      // Each challenge admits once. A resend from a session's own client (its
      // ConnectionAccept may be lost) earns that session the bytes to answer it.
      if (auto host = router.find({socket, from})) host->post(Datagram{socket, from, {}, bytes.size()});
      return;
    }
    if (r != kp::DropReason::None) {
      log.debug("handshake_dropped", {{"address", address}, {"reason", kp::to_string(r)}});
      return;
    }
    a.socket = socket;
    a.from = from;
    a.handshake_bytes = bytes.size();
    {
      std::lock_guard<std::mutex> lock(pending_mutex);
      if (pending.size() >= 1024) {
        metrics.drop(ServerDrop::InboxFull);
        return;
      }
      pending.push_back(std::move(a));
    }
    wake_tick();
    return;
  }
  metrics.drop(kp::DropReason::TypeNotAllowed);  // challenges and denies go server-to-client only
}

// --- HTTP ----------------------------------------------------------------------------------

// Descriptors the HTTP endpoint leaves for everything else: each match's recording (and
// a desync dump beside it), plus the Agones SDK's connections, the log file and the odd
// file a match opens. The connection cap comes down to keep them free, so a flood of
// scrapers can never stop a new match from opening its recording.
uint64_t reserved_descriptors(const ServerOptions& o) { return 2ull * o.max_matches + 16; }

keel::Status Server::Impl::start_http() {
  if (options.metrics_bind.empty()) return {};
  Udp::endpoint at = *parse_endpoint(options.metrics_bind);
  HttpLimits limits;
  const uint64_t reserve = reserved_descriptors(options);
  if (std::optional<uint64_t> free = free_descriptors()) {
    const uint64_t room = *free > reserve ? *free - reserve : 0;
    if (room < limits.max_connections) {
      // At least one, so /healthz still answers; the backoff covers the rest.
      limits.max_connections = static_cast<uint32_t>(std::max<uint64_t>(room, 1));
      log.warn("http_connection_cap_lowered", {{"cap", limits.max_connections},
                                               {"free_descriptors", *free},
                                               {"reserved_for_matches", reserve},
                                               {"hint", "raise the open-files limit (ulimit -n)"}});
    }
  }
  http = std::make_unique<HttpServer>(io, [this](const std::string& path) { return http_handler(path); }, log,
                                      limits);
  std::string err = http->start(asio::ip::tcp::endpoint(at.address(), at.port()));
  if (!err.empty()) return keel::Error{"--metrics " + options.metrics_bind + ": " + err};
  auto e = http->local_endpoint();
  metrics_address = format_endpoint(Udp::endpoint(e.address(), e.port()));
  return {};
}

HttpResponse Server::Impl::http_handler(const std::string& path) {
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8", metrics.prometheus_text() + http->prometheus_text()};
  }
  if (path == "/healthz") {
    if (stop_requested.load()) return {503, "text/plain", "stopping\n"};
    if (!healthy()) return {503, "text/plain", "ticks late\n"};
    return {200, "text/plain", "ok\n"};
  }
  return {404, "text/plain", "not found: try /metrics or /healthz\n"};
}

bool Server::Impl::healthy() const {
  if (stop_requested.load()) return false;
  int64_t t = now().ns;
  return t - last_loop_ns.load() <= kHealthStallNs && t - last_drop_ns.load() > kHealthDropWindowNs;
}

// --- Agones --------------------------------------------------------------------------------

keel::Status Server::Impl::start_agones() {
  auto env = AgonesOptions::from_environment();
  if (!env) return keel::Error{env.error().message};
  if (!options.agones && !env->has_value()) return {};
  AgonesOptions agones_options = env->has_value() ? **env : AgonesOptions{};
  agones = std::make_unique<AgonesClient>(
      agones_options, [this] { return healthy(); },
      [this](const AgonesGameServer& gs) { on_agones_allocated(gs); },
      [this](const std::string& what) { log.warn("agones", {{"error", what}}); },
      [this](const AgonesGameServer& gs) { on_agones_report(gs); });
  agones->start();
  log.info("agones_enabled", {{"sidecar", agones_options.host + ":" + std::to_string(agones_options.port)}});
  return {};
}

void Server::Impl::accept_token_address(const std::string& address) {
  {
    std::lock_guard lock(token_addresses_mutex);
    if (std::find(token_addresses.begin(), token_addresses.end(), address) != token_addresses.end()) return;
    token_addresses.push_back(address);
  }
  // The handshakes belong to the I/O thread.
  asio::post(io, [this, address] {
    for (auto& hs : handshakes) {
      if (!hs->accept_address(address)) log.warn("token_address_refused", {{"address", address}, {"why", "too many addresses"}});
    }
  });
}

// Agones thread: the address and host port clients are told to reach this GameServer at
// (the allocation's address and port) is what the matchmaker's tokens name.
void Server::Impl::on_agones_report(const AgonesGameServer& gs) {
  auto address = agones_public_address(gs, options.agones_port);
  if (!address) {
    if (agones_address.empty()) log.debug("agones_address_pending", {{"why", address.error().message}});
    return;
  }
  if (*address == agones_address) return;
  agones_address = *address;
  accept_token_address(*address);
  log.info("agones_address", {{"address", *address}, {"port_name", options.agones_port}});
}

// Agones thread: the allocation's settings are checked and its scene loaded here, off the
// tick thread; matches created from now on use them.
void Server::Impl::on_agones_allocated(const AgonesGameServer& gs) {
  nlohmann::json labels = gs.labels, annotations = gs.annotations;
  log.info("agones_allocated", {{"gameserver", gs.name}, {"labels", labels}, {"annotations", annotations}});
  if (auto s = settings_from_allocation(gs)) {
    std::lock_guard lock(allocated_settings_mutex);
    allocated_settings = std::move(*s);
  }
  allocated.store(true);
  wake_tick();
}

std::optional<MatchSettings> Server::Impl::settings_from_allocation(const AgonesGameServer& gs) {
  AllocationSettings read = read_allocation_settings(gs, options.max_players);
  for (const auto& [key, why] : read.refused) {
    log.warn("agones_setting_refused", {{"key", key}, {"why", why}, {"kept", "the flags' value"}});
  }
  if (!read.scene && !read.max_players && !read.tick_rate) return std::nullopt;
  MatchSettings out = flag_settings;
  if (read.scene) {
    // A bare file name (checked) in the directory of --scene: an allocation picks among
    // the scenes the operator installed, never an arbitrary path.
    std::string path = (std::filesystem::path(options.scene_path).parent_path() / *read.scene).string();
    auto scene = keel::scene::load_scene_file(path);
    if (!scene) {
      log.warn("agones_setting_refused", {{"key", kAgonesSceneKey}, {"why", scene.error().message}, {"kept", options.scene_path}});
    } else {
      if (options.tick_rate != 0) scene->settings.tick_rate = options.tick_rate;
      out.scene = std::make_shared<const sim::SceneDef>(std::move(*scene));
      out.scene_path = path;
    }
  }
  if (read.tick_rate && *read.tick_rate != out.scene->settings.tick_rate) {
    auto scene = std::make_shared<sim::SceneDef>(*out.scene);
    scene->settings.tick_rate = *read.tick_rate;
    out.scene = std::move(scene);
  }
  if (read.max_players) out.max_players = *read.max_players;
  log.info("agones_match_settings", {{"scene", out.scene_path}, {"tick_rate", out.scene->settings.tick_rate},
                                     {"max_players", out.max_players}, {"applies_to", "matches created from now on"}});
  return out;
}

void Server::Impl::take_allocated_settings() {
  std::lock_guard lock(allocated_settings_mutex);
  if (!allocated_settings) return;
  settings = std::move(*allocated_settings);
  allocated_settings.reset();
}

void Server::Impl::watch_allocation(Now t) {
  if (!agones || !allocated.load()) return;
  uint64_t players = metrics.snapshot().players;
  if (players > 0) {
    had_players = true;
    empty_since_ns = -1;
    return;
  }
  if (!had_players) return;
  if (empty_since_ns < 0) empty_since_ns = t.ns;
  if (t.ns - empty_since_ns > static_cast<int64_t>(options.empty_match_grace * 1e9)) {
    log.info("agones_match_over", {{"action", "stopping; Shutdown follows"}});
    stop_requested.store(true);
  }
}

// --- tick thread ---------------------------------------------------------------------------

void Server::Impl::deny(const Admission& a, fb::DenyReason reason, const std::string& why) {
  sender->send(a.socket, a.from, kp::build_deny(reason));
  log.info("client_denied", {{"address", a.client.address}, {"match", a.client.match_id},
                             {"reason", fb::EnumNameDenyReason(reason)}, {"why", why}});
}

void Server::Impl::admit(Admission& a, Now now) {
  if (a.client.client_id > 0xffffffffull) {
    deny(a, fb::DenyReason::TokenInvalid, "client id does not fit a 32-bit player id");
    return;
  }
  // Every admission comes from a fresh challenge (each is accepted once), so an address
  // that has a session already is a client that restarted or reconnected: the new
  // session replaces the old one (MatchHost::open_session tells a second handshake of
  // the same connection attempt apart).
  Router::Key key{a.socket, a.from};
  std::shared_ptr<MatchHost> routed = router.find(key);
  std::shared_ptr<MatchHost> host;
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    auto it = matches.find(a.client.match_id);
    if (it != matches.end()) host = it->second;
  }
  if (!host) {
    if (matches.size() >= options.max_matches) {
      deny(a, fb::DenyReason::ServerFull, "--max-matches reached");
      return;
    }
    auto created = MatchHost::create(a.client.match_id, settings, services(), now, false);
    if (!created) {
      log.error("match_create_failed", {{"match", a.client.match_id}, {"error", created.error().message}});
      deny(a, fb::DenyReason::MatchNotFound, created.error().message);
      return;
    }
    host = *created;
    std::lock_guard<std::mutex> lock(matches_mutex);
    matches[a.client.match_id] = host;
    recordings.push_back(host->recording_path());
  }
  if (host->over()) {
    // Ended by its rules and about to be finalised: nothing left to join.
    deny(a, fb::DenyReason::MatchOver, "the match is over");
    return;
  }
  // A replacement in the same match frees its old seat as it opens.
  if (host->session_count() >= host->max_players() && routed != host) {
    deny(a, fb::DenyReason::ServerFull, "--max-players reached in this match");
    return;
  }
  auto [route, before] = router.assign(key, host);
  if (before && before != host) before->release(key);
  a.route = route;
  host->admit(std::move(a));
}

void Server::Impl::admit_pending(Now now) {
  std::vector<Admission> batch;
  {
    std::lock_guard<std::mutex> lock(pending_mutex);
    batch.swap(pending);
  }
  for (Admission& a : batch) admit(a, now);
}

void Server::Impl::schedule(Now now) {
  std::vector<std::shared_ptr<MatchHost>> due;
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    for (auto& [id, host] : matches) {
      if (!host->running.load() && host->due(now)) due.push_back(host);
    }
  }
  for (auto& host : due) {
    host->running.store(true);
    in_flight.fetch_add(1);
    arena->enqueue([this, host] {
      // Acquire what the tick thread released with running = true (and, before that,
      // what the match's previous task released with running = false): the hand-off is
      // then explicit in C++ terms, not only inside TBB's queue.
      (void)host->running.load(std::memory_order_acquire);
      host->run(this->now());
      host->running.store(false);
      in_flight.fetch_sub(1);
      wake_tick();
    });
  }
}

void Server::Impl::end_finished_matches(Now now) {
  std::vector<std::shared_ptr<MatchHost>> ended;
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    for (auto it = matches.begin(); it != matches.end();) {
      if (!it->second->running.load() && it->second->ended(now)) {
        ended.push_back(it->second);
        it = matches.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& host : ended) host->shutdown(now, host->end_reason());
}

void Server::Impl::tick_loop() {
  if (primary) primary->start_clock(now());
  while (!stop_requested.load()) {
    Now t = now();
    last_loop_ns.store(t.ns);
    if (uint64_t dropped = metrics.ticks_dropped.load(); dropped != dropped_seen) {
      dropped_seen = dropped;
      last_drop_ns.store(t.ns);
    }
    watch_allocation(t);
    take_allocated_settings();
    admit_pending(t);
    end_finished_matches(t);
    schedule(t);
    // A start-up match its rules ended will never reach N ticks: stop then too.
    if (options.stop_after_ticks > 0 && primary &&
        (primary->tick() >= options.stop_after_ticks || primary->over())) {
      log.info("stop_after_ticks", {{"ticks", primary->tick()}, {"match_over", primary->over()}});
      stop_requested.store(true);
      break;
    }
    status_line(t);
    int64_t next = t.ns + 2'000'000;  // at most 2 ms between looks (admissions, finished tasks)
    {
      std::lock_guard<std::mutex> lock(matches_mutex);
      for (auto& [id, host] : matches) {
        if (!host->running.load()) next = std::min(next, host->next_due_ns());
      }
    }
    std::unique_lock<std::mutex> lock(wake_mutex);
    wake.wait_until(lock, epoch + std::chrono::nanoseconds(next), [&] {
      if (stop_requested.load()) return true;
      std::lock_guard<std::mutex> p(pending_mutex);
      return !pending.empty();
    });
  }
  shutdown();
}

void Server::Impl::wait_idle() {
  while (in_flight.load() > 0) {
    std::unique_lock<std::mutex> lock(wake_mutex);
    wake.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void Server::Impl::shutdown() {
  admitting.store(false);
  wait_idle();  // the tick in progress finishes
  Now t = now();
  std::vector<std::shared_ptr<MatchHost>> all;
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    for (auto& [id, host] : matches) all.push_back(host);
  }
  uint64_t final_tick = primary ? primary->tick() : 0;
  for (auto& host : all) host->shutdown(t, fb::DenyReason::ServerShuttingDown);
  log.info("server_stopped", {{"ticks", final_tick}, {"matches", all.size()}});
  print_recordings();
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    matches.clear();
  }
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    primary.reset();
  }
  // Agones: the recordings are final; tell the sidecar this GameServer is done.
  if (agones) agones->request_shutdown(1.0);
  if (http) http->stop();
  io.stop();
  {
    std::lock_guard<std::mutex> lock(done_mutex);
    stopped.store(true);
  }
  done.notify_all();
}

void Server::Impl::status_line(Now now_t) {
  if (options.status_interval <= 0 || !primary) return;
  const int64_t interval = static_cast<int64_t>(options.status_interval * 1e9);
  // A log gets a status line every ten intervals; a live line is redrawn every interval
  // (and, when the log goes to its own file, the log still gets its every-ten line).
  const bool draw = tty && now_t.ns - last_status_ns >= interval;
  const bool write = (!tty || !options.log_file.empty()) && now_t.ns - last_status_logged_ns >= 10 * interval;
  if (!draw && !write) return;
  std::string text = status_text(now_t);
  if (draw) log.status("keel-server: " + text);
  if (write) {
    last_status_logged_ns = now_t.ns;
    log.info("status", {{"line", text}});
  }
}

// tick, players, matches, kbit/s out and in since the previous line, and the start-up
// match's last state hash.
std::string Server::Impl::status_text(Now now_t) {
  double dt = std::max(1e-9, (now_t.ns - last_status_ns) * 1e-9);
  uint64_t out = metrics.bytes_out.load(), in = metrics.bytes_in.load();
  double kbps_out = (out - last_status_bytes_out) * 8.0 / 1000.0 / dt;
  double kbps_in = (in - last_status_bytes_in) * 8.0 / 1000.0 / dt;
  last_status_ns = now_t.ns;
  last_status_bytes_out = out;
  last_status_bytes_in = in;
  char buf[256];
  std::snprintf(buf, sizeof buf, "tick %llu  players %llu  matches %llu  out %.0f kbit/s  in %.0f kbit/s  hash %s",
                static_cast<unsigned long long>(primary->tick()),
                static_cast<unsigned long long>(metrics.players.load()),
                static_cast<unsigned long long>(metrics.matches.load()), kbps_out, kbps_in,
                replay::hex_hash(primary->last_hash()).c_str());
  return buf;
}

void Server::Impl::print_recordings() {
  std::vector<std::string> paths;
  {
    std::lock_guard<std::mutex> lock(matches_mutex);
    paths = recordings;
  }
  if (tty) log.status("");
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
  auto impl = std::make_unique<Impl>(options, level, log_file);
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
  impl->flag_settings = {std::make_shared<const sim::SceneDef>(std::move(*scene)), options.scene_path,
                         options.max_players};
  impl->settings = impl->flag_settings;
  if (options.token_key_path.empty()) {
    impl->token_key = kp::development_token_key();
    impl->development = true;
  } else {
    auto key = kp::load_token_key(options.token_key_path);
    if (!key) return keel::Error{"--token-key: " + key.error().message};
    impl->token_key = *key;
  }
  // In place on a terminal, unless JSON log lines share it (they would be torn up).
  const bool logs_on_stderr = options.log_file.empty();
  impl->tty = options.live_status || (isatty(STDERR_FILENO) != 0 && !(options.log_json && logs_on_stderr));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

keel::Status Server::start() {
  Impl& m = *impl_;
  keel::Status st = m.bind_sockets();
  if (!st) return st;
  st = m.start_http();
  if (!st) return st;
  uint32_t threads = m.options.threads ? m.options.threads : std::max(1u, std::thread::hardware_concurrency());
  // The arena's workers come from TBB's global pool, which by default keeps one core for
  // the calling thread; the tick thread never joins in, so allow one more.
  m.tbb_limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads + 1);
  m.arena = std::make_unique<tbb::task_arena>(static_cast<int>(threads), 0);
  auto primary = MatchHost::create(m.options.match_id, m.settings, m.services(), m.now(), true);
  if (!primary) return primary.error();
  m.primary = *primary;
  m.matches[m.options.match_id] = m.primary;
  m.recordings.push_back(m.primary->recording_path());
  if (m.development) {
    m.log.warn("insecure_development_mode",
               {{"why", "no --token-key: anyone can mint tokens with the well-known development key"},
                {"allowed", "loopback binds only"}});
  }
  nlohmann::json binds = m.addresses, token_addresses = m.token_addresses;
  m.log.info("server_started", {{"bind", binds}, {"token_addresses", token_addresses}, {"scene", m.options.scene_path},
                                {"tick_rate", m.settings.scene->settings.tick_rate},
                                {"snapshot_rate", m.options.snapshot_rate}, {"threads", threads},
                                {"record", m.options.record_dir}, {"metrics", m.metrics_address}});
  m.last_loop_ns.store(m.now().ns);
  st = m.start_agones();
  if (!st) return st;
  for (uint32_t i = 0; i < m.sockets.size(); ++i) m.receive_next(i);
  m.io_thread = std::thread([&m] {
    auto guard = asio::make_work_guard(m.io);
    m.io.run();
  });
  m.tick_thread = std::thread([&m] { m.tick_loop(); });
  return {};
}

void Server::request_stop() {
  impl_->stop_requested.store(true);
  impl_->wake_tick();
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

std::vector<std::string> Server::bound_addresses() const { return impl_->addresses; }
std::string Server::metrics_address() const { return impl_->metrics_address; }

std::vector<std::string> Server::token_addresses() const {
  std::lock_guard lock(impl_->token_addresses_mutex);
  return impl_->token_addresses;
}
ServerCounters Server::counters() const { return impl_->metrics.snapshot(); }
std::string Server::metrics_text() const { return impl_->metrics.prometheus_text(); }

std::vector<std::string> Server::recordings() const {
  std::lock_guard<std::mutex> lock(impl_->matches_mutex);
  return impl_->recordings;
}

uint64_t Server::primary_tick() const {
  std::lock_guard<std::mutex> lock(impl_->matches_mutex);
  return impl_->primary ? impl_->primary->tick() : 0;
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
