#include "match_host.h"

#include <keel/protocol/game_events.h>

#include <keel/protocol/messages.h>
#include <keel/scene/scene.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>
#include <sstream>

namespace keel::server {

namespace kp = keel::protocol;

namespace {

// How far back hash reports are checked, and how often a state is kept to rebuild the
// match at a reported tick for a desync dump (at most this many seconds to re-step).
constexpr uint32_t kHashHistorySeconds = 5;
constexpr uint32_t kMaxDumpsPerMatch = 16;
// Datagrams one source may have waiting in a match's inbox (see post()).
constexpr uint32_t kInboxPerSource = 64;

// --match-seed N gives every match that seed (tests, reproducing a reported match);
// otherwise each match draws its own from the system's entropy.
uint64_t match_seed(const ServerOptions& options) {
  if (options.match_seed != 0) return options.match_seed;
  std::random_device device;
  uint64_t seed = 0;
  while (seed == 0) seed = (uint64_t(device()) << 32) ^ device();
  return seed;
}

std::string utc_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// Hash reports are checked this far back; a saved state every second lets a desync dump
// rebuild any remembered tick by re-stepping at most one second of inputs.
game::TimelineHistory history_for(uint32_t tick_rate) {
  return game::TimelineHistory{kHashHistorySeconds * tick_rate, tick_rate, kHashHistorySeconds + 1};
}

kp::InterestConfig interest_config(const ServerOptions& options) {
  kp::InterestConfig c;
  c.budget_bytes_per_second = options.client_kbps * 125.0;
  c.radius = options.interest_radius;
  return c;
}

}  // namespace

keel::Expected<std::shared_ptr<MatchHost>> MatchHost::create(uint64_t id, const MatchSettings& settings,
                                                            HostServices services, Now now,
                                                            bool persistent) {
  std::unique_ptr<game::Rules> rules = services.rules ? services.rules() : std::make_unique<games::SandboxRules>();
  // Each match its own random sequence (recorded in its header, so replays draw the same).
  auto match = game::Match::create(*settings.scene, std::move(rules), match_seed(services.options));
  if (!match) return keel::Error{"match " + std::to_string(id) + ": " + match.error().message};
  std::shared_ptr<MatchHost> host(new MatchHost(id, std::move(*match), settings, services, now, persistent));
  keel::Status st = host->open_recording();
  if (!st) return st.error();
  return host;
}

MatchHost::MatchHost(uint64_t id, game::Match match, const MatchSettings& settings, HostServices services,
                     Now now, bool persistent)
    : id_(id),
      timeline_(std::move(match), history_for(settings.scene->settings.tick_rate)),
      match_(timeline_.match()),
      scene_(*settings.scene),
      scene_path_(settings.scene_path),
      max_players_(settings.max_players),
      scene_binary_(keel::scene::scene_to_binary(scene_)),
      snapshot_config_(kp::SnapshotConfig::for_scene(scene_)),
      interest_config_(interest_config(services.options)),
      scene_description_(kp::WorldDescription::from_scene(scene_)),
      description_(scene_description_),
      services_(std::move(services)),
      connection_config_(client_connection_config(services_.options, services_.metrics)),
      persistent_(persistent),
      tick_rate_(scene_.settings.tick_rate),
      origin_ns_(now.ns),
      first_tick_(match_.tick()),
      snapshot_every_(std::max<uint32_t>(1, scene_.settings.tick_rate /
                                                std::max<uint32_t>(1, services_.options.snapshot_rate))),
      empty_since_ns_(now.ns) {
  services_.metrics.matches.fetch_add(1);
  services_.metrics.matches_started.fetch_add(1);
  observe_steps();
  now_s_ = now.s();
  // Bodies the rules made in on_start are the match's from its first tick.
  (void)kp::update_description(description_, match_);
}

MatchHost::~MatchHost() { leave_running_count(); }

// keel_matches counts matches still running: a match leaves it when it is shut down, even
// while something (the server's start-up match handle) still holds it.
void MatchHost::leave_running_count() {
  if (counted_running_) services_.metrics.matches.fetch_sub(1);
  counted_running_ = false;
}

keel::Status MatchHost::open_recording() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(services_.options.record_dir, ec);
  std::string base = services_.options.record_dir + "/match-" + std::to_string(id_) + "-" + utc_stamp();
  recording_path_ = base + ".krec";
  for (int n = 2; fs::exists(recording_path_, ec); ++n) recording_path_ = base + "-" + std::to_string(n) + ".krec";
  replay::WriterOptions opts;
  opts.metadata = {{"match_id", std::to_string(id_)},
                   {"scene", scene_path_},
                   {"started_utc", utc_stamp()},
                   {"server", "keel-server"}};
  opts.game_module = fs::path(services_.game_origin.module_path).filename().string();
  opts.game_build_id = services_.game_origin.build_id;
  auto w = replay::RecordingWriter::create(recording_path_, match_, opts);
  if (!w) return keel::Error{"cannot record to " + recording_path_ + ": " + w.error().message};
  writer_.emplace(std::move(*w));
  services_.log.info("match_started", {{"match", id_}, {"scene", scene_.name}, {"game", match_.spec().name},
                                       {"seed", replay::hex_hash(match_.seed())},
                                       {"tick_rate", tick_rate_}, {"max_players", max_players_},
                                       {"recording", recording_path_}});
  return {};
}

void MatchHost::post(Datagram d) {
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  // Bounded: a flood costs the flooder's datagrams, never the server's memory. Each
  // source may fill only kInboxPerSource of it between two runs of the match (a run
  // comes every tick; an honest client sends a few datagrams a tick), so a flood from
  // one address cannot crowd out another player's packets.
  size_t cap = 1024 + 256 * static_cast<size_t>(session_count_.load());
  uint32_t& mine = inbox_per_source_[{d.socket, d.from}];
  if (inbox_.size() >= cap || mine >= kInboxPerSource) {
    services_.metrics.drop(ServerDrop::InboxFull);
    return;
  }
  ++mine;
  inbox_.push_back(std::move(d));
}

void MatchHost::release(const Router::Key& key) {
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  releases_.push_back(key);
}

void MatchHost::admit(Admission a) {
  session_count_.fetch_add(1);
  if (a.client.role == kp::ClientRole::Spectator) spectator_count_.fetch_add(1);
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  admissions_.push_back(std::move(a));
}

int64_t MatchHost::next_due_ns() const { return due_ns(scheduled_.load()); }

int64_t MatchHost::due_ns(uint64_t k) const {
  // Integer arithmetic: tick k's due time never drifts, however long the match runs.
  // Rounded up, to the first nanosecond at which step_due counts tick k as due
  // (elapsed x rate >= k): a wake-up at the rounded-down time would find nothing to step.
  return origin_ns_ + static_cast<int64_t>((k * 1'000'000'000ull + tick_rate_ - 1) / tick_rate_);
}

bool MatchHost::ended(Now now) const {
  if (over()) return true;
  // Spectators alone do not keep a match going: with its players gone it ends after the
  // grace, and they are told it is over.
  if (persistent_ || player_count() != 0) return false;
  return now.ns - empty_since_ns_ > static_cast<int64_t>(services_.options.empty_match_grace * 1e9);
}

void MatchHost::run(Now now) {
  const auto started = std::chrono::steady_clock::now();
  run_once(now);
  services_.metrics.observe_run_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
}

void MatchHost::run_once(Now now) {
  std::vector<Datagram> inbox;
  std::vector<Admission> admissions;
  std::vector<Router::Key> releases;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    inbox.swap(inbox_);
    inbox_per_source_.clear();
    admissions.swap(admissions_);
    releases.swap(releases_);
  }
  now_s_ = now.s();
  take_releases(releases);
  // Datagrams that came before an admission go to the sessions they came for: a session
  // being replaced (its client reconnected from the same address) takes its last
  // packets, a Disconnect among them, before its successor opens; with the same token
  // the successor would accept them too. A new client's own first packets wait for its
  // session.
  std::vector<Datagram*> for_new;
  for (Datagram& d : inbox) {
    bool admitting = std::any_of(admissions.begin(), admissions.end(), [&](const Admission& a) {
      return a.socket == d.socket && a.from == d.from;
    });
    if (admitting && find_session(d.socket, d.from) == nullptr) for_new.push_back(&d);
    else receive(d, now);
  }
  take_admissions(admissions, now);
  for (Datagram* d : for_new) receive(*d, now);
  expire_sessions(now);
  step_due(now);
  for (Session& s : sessions_) advance_sync(s);
  send_snapshots();
  send_frames();
  flush_connections(now);
  remove_closed();
  if (std::any_of(sessions_.begin(), sessions_.end(), [](const Session& s) { return !s.spectator; })) {
    empty_since_ns_ = now.ns;
  }
}

void MatchHost::step_due(Now now) {
  const uint64_t period_ns = 1'000'000'000ull / tick_rate_;
  if (now.ns < origin_ns_ || over()) return;
  uint64_t due_count = static_cast<uint64_t>(now.ns - origin_ns_) * tick_rate_ / 1'000'000'000ull + 1;
  uint64_t k = scheduled_.load();
  if (due_count <= k) return;
  uint64_t behind = due_count - k;
  uint32_t max_catch_up = std::max<uint32_t>(1, services_.options.max_catch_up_ticks);
  if (behind > max_catch_up) {
    // A stall longer than the catch-up bound: step the bound, drop the rest, so clients
    // see a short jump instead of a long fast-forward.
    uint64_t dropped = behind - max_catch_up;
    services_.metrics.ticks_dropped.fetch_add(dropped);
    services_.log.warn("tick_backlog_dropped", {{"match", id_}, {"tick", match_.tick()},
                                                {"dropped", dropped}, {"behind", behind}});
    k += dropped;
    dropped_ += dropped;
    behind = max_catch_up;
  }
  const uint64_t stop_at = persistent_ ? services_.options.stop_after_ticks : 0;
  for (uint64_t i = 0; i < behind; ++i, ++k) {
    // --stop-after-ticks N: the start-up match ends at exactly tick N, whatever the timing.
    if (stop_at != 0 && match_.tick() >= stop_at) break;
    if (now.ns - due_ns(k) > static_cast<int64_t>(period_ns)) services_.metrics.ticks_late.fetch_add(1);
    auto t0 = std::chrono::steady_clock::now();
    const bool stepped = guarded("step", [&] { step_one(); });
    auto t1 = std::chrono::steady_clock::now();
    services_.metrics.observe_tick_ms(std::chrono::duration<double, std::milli>(t1 - t0).count());
    bool ended = !stepped;
    if (stepped && !guarded("match_over", [&] { ended = check_over(); })) ended = true;
    if (ended) break;
  }
  scheduled_.store(k);
  if (!over() && (stop_at == 0 || match_.tick() < stop_at)) measure_schedule(now);
}

// A game's hooks are code the server did not write (a module): one that throws ends its
// own match — told to its clients and logged — and never the server or another match.
// The match's state after a throw is not one any peer can reproduce, so it steps no more.
bool MatchHost::guarded(const char* what, const std::function<void()>& run) {
  std::string why;
  try {
    run();
    return true;
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "an exception that is not a std::exception";
  }
  over_reason_ = ("the game's rules failed at tick " + std::to_string(match_.tick()) + ": " + why).substr(0, 200);
  over_.store(true);
  services_.log.error("match_aborted_rules_failed", {{"match", id_}, {"tick", match_.tick()}, {"in", what},
                                                     {"error", why.substr(0, 200)}});
  return false;
}

bool MatchHost::check_over() {
  // A world that produced a NaN or an overflowing number ends here, at the tick it did,
  // with the body named: clients would otherwise be sent (and predict from) garbage. The
  // match then ends as an over match does: clients told, recording finished.
  if (std::optional<sim::BodyFault> fault = match_.world().first_non_finite_body()) {
    std::ostringstream value;
    value << fault->value;
    over_reason_ = "the world is no longer finite at tick " + std::to_string(match_.tick()) + ": body " +
                   std::to_string(fault->body) + " " + fault->field + " = " + value.str();
    over_.store(true);
    services_.log.error("match_aborted_non_finite", {{"match", id_}, {"tick", match_.tick()}, {"body", fault->body},
                                                     {"field", fault->field}, {"value", value.str()}});
    return true;
  }
  std::optional<std::string> reason = match_.rules().match_over(match_);
  if (!reason) return false;
  // Untrusted length: a custom rule set's reason goes into log lines, so it is bounded.
  over_reason_ = reason->substr(0, 200);
  over_.store(true);
  services_.log.info("match_over", {{"match", id_}, {"tick", match_.tick()}, {"reason", over_reason_}});
  return true;
}

// The server's own figure for the clock: how far the ticks the match has stepped or
// dropped are from elapsed x rate, read at the time this run stepped with. Dropped ticks
// count as scheduled (the documented rule after a stall); ticks are counted from the
// match itself, not from the schedule's bookkeeping, so a step lost or doubled shows.
void MatchHost::measure_schedule(Now now) {
  double elapsed_ticks = static_cast<double>(now.ns - origin_ns_) * 1e-9 * tick_rate_;
  double handled = static_cast<double>(match_.tick() - first_tick_ + dropped_);
  services_.metrics.observe_schedule_error(handled - elapsed_ticks);
}

kp::fb::DenyReason MatchHost::end_reason() const {
  return over() ? kp::fb::DenyReason::MatchOver : kp::fb::DenyReason::Unknown;
}

namespace {
// Sessions against player ids, for equal_range.
struct PlayerOrder {
  bool operator()(const Session* s, uint32_t player) const { return s->player < player; }
  bool operator()(uint32_t player, const Session* s) const { return player < s->player; }
};
}  // namespace

game::TickInputs MatchHost::build_inputs() {
  game::TickInputs in;
  in.events = std::move(pending_events_);
  pending_events_.clear();
  for (const game::PlayerEvent& e : in.events) {
    auto it = std::lower_bound(present_.begin(), present_.end(), e.player);
    bool here = it != present_.end() && *it == e.player;
    if (e.kind == game::PlayerEvent::Kind::Join && !here) {
      present_.insert(it, e.player);
    } else if (e.kind == game::PlayerEvent::Kind::Leave && here) {
      present_.erase(it);
    }
  }
  const uint64_t tick = match_.tick();
  // The open sessions by player (stable: in session order within a player), so that each
  // present player finds its own without a pass over every session: a big match has as
  // many sessions as players.
  std::vector<Session*> open;
  open.reserve(sessions_.size());
  for (Session& s : sessions_) {
    if (s.state != SessionState::Closed && !s.spectator) open.push_back(&s);
  }
  std::stable_sort(open.begin(), open.end(), [](const Session* a, const Session* b) { return a->player < b->player; });
  for (uint32_t player : present_) {
    // A player without a frame for this tick gets the match's one rule's, written out so
    // that the recording and the frame stream hold every present player's frame.
    game::PlayerInput input = game::missing_input(match_, in.events, player);
    bool fresh = false;
    auto [first, last] = std::equal_range(open.begin(), open.end(), player, PlayerOrder{});
    for (auto at = first; at != last; ++at) {
      Session& s = **at;
      auto it = s.inputs.find(tick);
      if (it != s.inputs.end()) {
        input.frame = it->second.frame;
        input.view = it->second.view;
        fresh = true;
      }
      s.inputs.erase(s.inputs.begin(), s.inputs.upper_bound(tick));
    }
    if (!fresh) services_.metrics.inputs_missing.fetch_add(1);
    in.inputs.push_back(input);
  }
  return in;
}

// What observes each step, in this order: the recording, the tick counter, the frame
// stream for predicting clients. Registered once; each reads the step's one hash.
void MatchHost::observe_steps() {
  timeline_.observe([this](const game::TimelineStep& step) { record_step(step); });
  timeline_.observe([this](const game::TimelineStep&) { services_.metrics.ticks.fetch_add(1); });
  timeline_.observe([this](const game::TimelineStep& step) {
    kp::InputFrameMessage frame{step.from_tick, step.hash, step.applied};
    for (Session& s : sessions_) {
      if (s.frames_on && s.state != SessionState::Closed) s.frames.add(frame);
    }
  });
}

void MatchHost::record_step(const game::TimelineStep& step) {
  if (!writer_ || recording_failed_) return;
  if (keel::Status st = writer_->record(step.applied, step.after, step.hash); !st) {
    // The match goes on (players are mid-game); the operator is told loudly.
    recording_failed_ = true;
    services_.log.error("recording_failed", {{"match", id_}, {"path", recording_path_},
                                             {"error", st.error().message}});
  }
}

void MatchHost::step_one() {
  const game::TickInputs inputs = build_inputs();
  const game::StepResult stepped = timeline_.step(inputs);
  send_description_changes();
  send_game_events();
  tick_.store(stepped.tick);
  hash_.store(stepped.hash);
  uint32_t present = static_cast<uint32_t>(present_.size());
  players_.store(present);
  // Stop-after-ticks counts the start-up match's ticks (the tick thread watches tick()).
}

// The step's game events go to every playing client on the reliable channel, once and in
// tick order; a client that is still syncing has not seen the match yet and gets the
// events from the tick it starts playing at.
void MatchHost::send_game_events() {
  if (match_.events().empty()) return;
  const std::vector<uint8_t> message = kp::encode_game_events(match_.spec(), match_.tick(), match_.events());
  for (Session& s : sessions_) {
    if (s.state == SessionState::Playing) send_control(s, message);
  }
}

// Queued on the control channel before this tick's snapshot, so a client normally learns
// of a body before its first pose; the client holds poses of bodies it does not know yet
// (docs/protocol.md, "World description").
void MatchHost::send_description_changes() {
  kp::DescriptionChanges changes = kp::update_description(description_, match_);
  if (changes.empty()) return;
  bool any = false;
  for (const Session& s : sessions_) any = any || (s.described && s.state != SessionState::Closed);
  if (!any) return;
  for (const std::vector<uint8_t>& message : kp::encode_description_changes(match_.tick(), changes)) {
    for (Session& s : sessions_) {
      if (s.described) send_control(s, message);
    }
  }
}

void MatchHost::send_description_catch_up(Session& s) {
  kp::DescriptionChanges changes = kp::description_difference(scene_description_, description_);
  for (const std::vector<uint8_t>& message : kp::encode_description_changes(match_.tick(), changes)) {
    send_control(s, message);
  }
  s.described = true;
}

void MatchHost::write_desync_dump(Session& s, uint64_t tick, uint64_t server_hash, uint64_t reported) {
  if (dumps_ >= kMaxDumpsPerMatch || s.dumps >= 2) return;  // hostile reports cannot fill the disk
  auto blank = game::Match::create(scene_, services_.rules ? services_.rules() : std::make_unique<games::SandboxRules>(),
                                   match_.seed());
  if (!blank) return;
  // The timeline's newest saved state at or before `tick`, re-stepped with its inputs.
  std::optional<game::Match> rebuilt = timeline_.rebuild(tick, std::move(*blank));
  if (!rebuilt || rebuilt->hash() != server_hash) {
    services_.log.error("desync_dump_rebuild_failed", {{"match", id_}, {"tick", tick}});
    return;
  }
  std::string path = recording_path_.substr(0, recording_path_.size() - 5) + ".desync-t" +
                     std::to_string(tick) + "-p" + std::to_string(s.player) + replay::kDesyncDumpExtension;
  std::string note = "keel-server match " + std::to_string(id_) + ": player " + std::to_string(s.player) +
                     " (" + s.address + ") reported hash " + replay::hex_hash(reported) + " for tick " +
                     std::to_string(tick) + "; this is the server's state; recording " + recording_path_;
  keel::Status st = replay::write_desync_dump(path, *rebuilt, server_hash, note);
  if (!st) {
    services_.log.error("desync_dump_failed", {{"match", id_}, {"path", path}, {"error", st.error().message}});
    return;
  }
  ++dumps_;
  ++s.dumps;
  services_.log.warn("desync_dump_written", {{"match", id_}, {"player", s.player}, {"path", path}});
}

void MatchHost::send_snapshots() {
  uint64_t tick = match_.tick();
  if (tick == 0 || tick < last_snapshot_tick_ + snapshot_every_) return;
  last_snapshot_tick_ = tick;
  bool any = false;
  for (const Session& s : sessions_) any = any || s.state == SessionState::Playing;
  if (!any) return;
  std::vector<sim::BodyState> bodies = kp::snapshot_bodies(match_.world());
  std::sort(bodies.begin(), bodies.end(), [](const sim::BodyState& a, const sim::BodyState& b) { return a.id < b.id; });
  kp::QuantSnapshot quant = kp::quantize(bodies, tick, snapshot_config_);
  change_stamps_.update(quant);
  full_forms_.update(quant, snapshot_config_);
  std::vector<sim::Vec3> positions;
  positions.reserve(bodies.size());
  for (const sim::BodyState& b : bodies) positions.push_back(b.position);
  // Shared by every client of this snapshot: the ids the rules weigh, and with an
  // interest radius the bodies bucketed so each client looks only at those near it.
  std::vector<uint32_t> ids;
  ids.reserve(quant.bodies.size());
  for (const kp::QuantBody& b : quant.bodies) ids.push_back(b.id);
  std::optional<kp::InterestGrid> grid;
  if (interest_config_.radius > 0.0f) {
    grid.emplace();
    grid->build(positions, interest_config_.radius);
  }
  // The rules are asked on this thread, one client after another (a game's hooks need
  // not be thread-safe); each client's sender then encodes on its own, reading only the
  // shared snapshot, so the clients are shared by the encoders' threads, and sent in
  // session order after.
  size_t jobs = 0;
  for (Session& s : sessions_) {
    if (s.state != SessionState::Playing) continue;
    // A client that cannot keep up gets fewer snapshots, never a stalled server; each
    // one holds what the budget allows now, the most relevant bodies first.
    if (s.budget_bytes <= 0) {
      services_.metrics.snapshots_skipped.fetch_add(1);
      continue;
    }
    if (jobs == snapshot_jobs_.size()) snapshot_jobs_.emplace_back();
    SnapshotJob& job = snapshot_jobs_[jobs++];
    job.session = &s;
    if (!guarded("relevance", [&] { relevance_for(s, ids, job.relevance, job.viewer); })) return;
  }
  const kp::InterestGrid* shared_grid = grid ? &*grid : nullptr;
  encoders_.run(jobs, [&](size_t i) {
    SnapshotJob& job = snapshot_jobs_[i];
    kp::InterestFrame frame{&quant, positions, job.relevance, job.viewer, shared_grid, change_stamps_.stamps(),
                            &full_forms_, change_stamps_.body_set()};
    job.message = job.session->snapshots.encode(frame, job.session->budget_bytes);
  });
  for (size_t i = 0; i < jobs; ++i) {
    SnapshotJob& job = snapshot_jobs_[i];
    if (job.message.empty()) continue;
    if (job.session->conn.send(kp::Channel::Snapshot, job.message)) services_.metrics.snapshots_sent.fetch_add(1);
  }
}

// The viewer is the player's character (PlayerSlot::character); a client without one is
// a spectator and sees every body alike. The rules' weights are checked: anything but a
// finite weight >= 0 counts as 0.
void MatchHost::relevance_for(const Session& s, std::span<const uint32_t> ids,
                              std::vector<kp::BodyRelevance>& out, std::optional<sim::Vec3>& viewer) const {
  viewer.reset();
  out.assign(ids.size(), kp::BodyRelevance{});
  // A spectator sees every body alike, whatever player holds its id: the rules are asked
  // for players only.
  if (s.spectator) return;
  if (const game::PlayerSlot* slot = match_.find_player(s.player); slot != nullptr && slot->character != 0) {
    sim::BodyId body = match_.world().find_body(slot->character);
    if (match_.world().is_valid(body)) viewer = match_.world().body_state(body).position;
  }
  match_.rules().relevance(match_, s.player, ids, out);
  for (kp::BodyRelevance& r : out) {
    if (!std::isfinite(r.weight) || r.weight < 0.0f) r.weight = 0.0f;
  }
}

void MatchHost::send_frames() {
  for (Session& s : sessions_) {
    if (s.state != SessionState::Playing || !s.predict || !s.frames_on) continue;
    for (const auto& m : s.frames.messages()) s.conn.send(kp::Channel::Frames, m);
  }
}

void MatchHost::flush_connections(Now now) {
  for (Session& s : sessions_) {
    if (s.state == SessionState::Closed) continue;
    const double budget_rate = s.kbps * 125.0;  // bytes per second
    double dt = std::max(0.0, now.s() - s.bucket_time);
    s.bucket_time = now.s();
    s.budget_bytes = std::min(budget_rate * 0.25, s.budget_bytes + dt * budget_rate);
    s.rate_tokens = std::min<double>(services_.options.max_packets_per_second,
                                     s.rate_tokens + dt * services_.options.max_packets_per_second);
    for (const auto& d : s.conn.update(now.s())) {
      if (!may_send(s, d.size())) continue;  // reliable data in it is resent later
      services_.sender.send(s.socket, s.endpoint, d);
      // Every datagram is charged, with its IPv4/UDP header (what snapshot_wire_bytes
      // counts); the debt is bounded, so a large block (the scene, a checkpoint) delays
      // snapshots by at most a quarter of a second of budget after it.
      s.budget_bytes = std::max(-budget_rate * 0.25, s.budget_bytes - double(d.size() + 28));
      s.bytes_sent += d.size();
      bytes_sent_.fetch_add(d.size(), std::memory_order_relaxed);
    }
  }
}

void MatchHost::shutdown(Now now, kp::fb::DenyReason reason) {
  now_s_ = now.s();
  for (Session& s : sessions_) {
    if (s.state != SessionState::Closed) {
      close(s, reason == kp::fb::DenyReason::MatchOver ? "match_over" : "server_stopping", reason);
    }
  }
  remove_closed();
  if (writer_) {
    keel::Status st = writer_->finish();
    if (!st) {
      services_.log.error("recording_finish_failed", {{"match", id_}, {"path", recording_path_},
                                                      {"error", st.error().message}});
    }
    nlohmann::json fields = {{"match", id_}, {"ticks", match_.tick()}, {"recording", recording_path_}};
    if (over()) fields["over"] = over_reason_;
    services_.log.info("match_ended", fields);
    writer_.reset();
  }
  leave_running_count();
}

}  // namespace keel::server
