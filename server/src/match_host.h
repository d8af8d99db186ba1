// A hosted match: the game::Match, its sessions, its recording and its tick schedule.
//
// Only the match's own task touches its state (run(), then shutdown() once no task is
// running); the I/O thread and the tick thread hand it datagrams and admitted clients
// through a small mutex-guarded inbox. One tick (step_one) steps the match's
// game::MatchTimeline with one TickInputs, which hashes it once; the recording and the
// frame stream to predicting clients observe that step, and the desync checks read the
// timeline's history, so what is applied is exactly what is recorded and what predicting
// clients receive.
#pragma once

#include "log.h"
#include "metrics.h"
#include "net.h"
#include "parallel_jobs.h"
#include "router.h"
#include "session.h"

#include <keel/protocol/handshake.h>
#include <keel/protocol/world_description.h>
#include <keel/replay/writer.h>
#include <keel/server/config.h>
#include <keel/server/server.h>
#include <keel/game/match.h>
#include <keel/game/timeline.h>

#include <atomic>
#include <functional>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace keel::server {

struct Datagram {
  uint32_t socket = 0;
  Udp::endpoint from;
  std::vector<uint8_t> bytes;
  /// A handshake response resent by a session's client (bytes empty): it earns the
  /// session this many more bytes of send allowance while the client is unproven.
  size_t earned = 0;
};

struct Admission {
  protocol::AcceptedClient client;
  uint32_t socket = 0;
  Udp::endpoint from;
  uint64_t route = 0;          ///< the Router id of the session's route
  size_t handshake_bytes = 0;  ///< the response datagram's size: the first send allowance
};

/// What every match shares with the server (all thread-safe).
struct HostServices {
  const ServerOptions& options;
  Logger& log;
  Metrics& metrics;
  const DatagramSender& sender;
  Router& router;
  RulesFactory rules;          ///< empty: the sandbox
  game::GameOrigin game_origin;  ///< the module the rules come from (recorded in the header)
};

/// What a new match is made with: the flags' settings, or those an Agones allocation
/// carried (docs/operations.md, "Agones").
struct MatchSettings {
  std::shared_ptr<const sim::SceneDef> scene;  ///< tick rate already applied
  std::string scene_path;                      ///< written into the recording's metadata
  uint32_t max_players = 16;
};

/// The clock a match runs on: nanoseconds and seconds since the server started.
struct Now {
  int64_t ns = 0;
  double s() const { return static_cast<double>(ns) * 1e-9; }
};

class MatchHost : public std::enable_shared_from_this<MatchHost> {
 public:
  static keel::Expected<std::shared_ptr<MatchHost>> create(uint64_t id, const MatchSettings& settings,
                                                          HostServices services, Now now,
                                                          bool persistent);
  ~MatchHost();

  // --- I/O thread ---
  /// Queues a datagram for the match's next run (dropped and counted when full).
  void post(Datagram d);

  // --- tick thread ---
  void admit(Admission a);
  /// The session at `key` was replaced by a fresh handshake routed elsewhere: it closes
  /// at the match's next run, silently (the address now belongs to the new session).
  void release(const Router::Key& key);
  /// Sessions open or admitted (for the players-per-match limit).
  uint32_t session_count() const { return session_count_.load(); }
  /// Sessions admitted with a spectator token (part of session_count(), none a player).
  uint32_t spectator_count() const { return spectator_count_.load(); }
  uint32_t player_count() const { return session_count_.load() - spectator_count_.load(); }
  uint32_t max_players() const { return max_players_; }
  bool due(Now now) const { return !over() && now.ns >= next_due_ns(); }
  /// Starts the tick schedule at `now` (before the first run; creation may precede the
  /// tick thread's start by a while, which must not count as a stall).
  void start_clock(Now now) {
    origin_ns_ = now.ns;
    empty_since_ns_ = now.ns;
  }
  int64_t next_due_ns() const;
  /// When tick k (counted from the origin) is due.
  int64_t due_ns(uint64_t k) const;
  /// Over by its rules, or non-persistent and empty for longer than the grace period.
  bool ended(Now now) const;
  /// The rules said the match is over (Rules::match_over); it steps no more.
  bool over() const { return over_.load(); }
  std::atomic<bool> running{false};

  // --- the match's task ---
  /// Drains the inbox, steps the ticks that are due, sends, and closes timed-out sessions.
  void run(Now now);
  /// After the last run: every client gets Disconnect{reason}; the recording is finished.
  void shutdown(Now now, protocol::fb::DenyReason reason);
  /// What clients are told when the match ends on its own: MatchOver when its rules ended
  /// it, else (an empty match past its grace period) Unknown.
  protocol::fb::DenyReason end_reason() const;

  // --- anyone (status line, tests) ---
  uint64_t id() const { return id_; }
  const std::string& recording_path() const { return recording_path_; }
  uint64_t tick() const { return tick_.load(); }
  uint64_t last_hash() const { return hash_.load(); }
  uint32_t players() const { return players_.load(); }
  uint64_t bytes_sent() const { return bytes_sent_.load(); }

 private:
  MatchHost(uint64_t id, game::Match match, const MatchSettings& settings, HostServices services,
            Now now, bool persistent);
  keel::Status open_recording();
  void leave_running_count();
  void run_once(Now now);

  // Sessions (match_sessions.cpp).
  void take_admissions(std::vector<Admission>& admissions, Now now);
  void take_releases(const std::vector<Router::Key>& releases);
  bool may_send(Session& s, size_t bytes);
  void open_session(Admission& a, Now now);
  static protocol::ConnectionConfig client_connection_config(const ServerOptions& options,
                                                             Metrics& metrics);
  void receive(Datagram& d, Now now);
  void handle_control(Session& s, std::span<const uint8_t> bytes);
  void handle_input(Session& s, std::span<const uint8_t> bytes);
  void on_hello(Session& s, const protocol::fb::ClientHello& hello);
  void on_hash_report(Session& s, const protocol::fb::HashReport& report);
  void close(Session& s, const std::string& reason, std::optional<protocol::fb::DenyReason> tell);
  void expire_sessions(Now now);
  void remove_closed();
  void advance_sync(Session& s);
  void send_control(Session& s, std::vector<uint8_t> message);
  void broadcast_event(protocol::fb::MatchEventKind kind, uint32_t player);
  Session* find_session(uint32_t socket, const Udp::endpoint& from);

  // Ticks and streams (match_host.cpp).
  void step_due(Now now);
  void step_one();
  bool check_over();
  void measure_schedule(Now now);
  game::TickInputs build_inputs();
  void observe_steps();
  void record_step(const game::TimelineStep& step);
  void send_snapshots();
  /// What the rules say each snapshot body is worth to `s`'s client, and where it stands.
  void relevance_for(const Session& s, std::span<const uint32_t> ids,
                     std::vector<protocol::BodyRelevance>& out, std::optional<sim::Vec3>& viewer) const;
  void send_frames();
  void send_game_events();
  /// Bodies the step added or removed, to every described client (BodyAdded/Removed).
  void send_description_changes();
  /// What a client holding the scene's description needs to hold the match's now.
  void send_description_catch_up(Session& s);
  /// Runs `run`; when it throws, ends the match with the reason and logs it (false).
  bool guarded(const char* what, const std::function<void()>& run);
  void flush_connections(Now now);
  void write_desync_dump(Session& s, uint64_t tick, uint64_t server_hash, uint64_t reported);
  std::optional<uint64_t> hash_at(uint64_t tick) const { return timeline_.hash_at(tick); }

  uint64_t id_;
  // The match and its recent history (hashes for hash reports, inputs and a state every
  // second for desync dumps); only step_one steps it. match_ is the timeline's match,
  // read everywhere else.
  game::MatchTimeline timeline_;
  const game::Match& match_;
  const sim::SceneDef scene_;
  const std::string scene_path_;
  const uint32_t max_players_;
  std::vector<uint8_t> scene_binary_;
  protocol::SnapshotConfig snapshot_config_;
  protocol::InterestConfig interest_config_;  // every client's, before its hello's own cap
  // The scene's bodies as the scene block describes them, and every body of the match now
  // (scene bodies as the scene describes them, later ones from the world).
  protocol::WorldDescription scene_description_;
  protocol::WorldDescription description_;
  HostServices services_;
  protocol::ConnectionConfig connection_config_;  // every client's, with the memory bounds
  bool persistent_;
  uint32_t tick_rate_;

  std::optional<replay::RecordingWriter> writer_;
  std::string recording_path_;
  bool recording_failed_ = false;

  // Schedule: tick k (counted from origin) is due at origin + k / rate.
  int64_t origin_ns_;
  std::atomic<uint64_t> scheduled_{0};  // ticks stepped or skipped since origin
  uint64_t first_tick_;                 // the match's tick at origin
  uint64_t dropped_ = 0;                // ticks skipped since origin
  std::atomic<bool> over_{false};
  bool counted_running_ = true;  // in keel_matches until shut down
  std::string over_reason_;             // Rules::match_over's reason, once over
  uint32_t snapshot_every_;
  uint64_t last_snapshot_tick_ = 0;
  // One client's snapshot of this round: what the rules said (asked on the match's own
  // thread), then the message its sender encoded (on any of encoders_' threads). Kept
  // from round to round for their memory.
  struct SnapshotJob {
    Session* session = nullptr;
    std::vector<protocol::BodyRelevance> relevance;
    std::optional<sim::Vec3> viewer;
    std::vector<uint8_t> message;
  };
  std::vector<SnapshotJob> snapshot_jobs_;
  // When each body's quantised value last changed, followed once a snapshot for every
  // client's sender (a shortcut for "unchanged since what the client holds").
  protocol::ChangeStamps change_stamps_;
  // Every body's full form, written once a snapshot and copied by each client's sender.
  protocol::FullForms full_forms_;
  // The clients' snapshots are encoded on as many threads as the world steps with.
  ParallelJobs encoders_{scene_.settings.threads};

  std::deque<Session> sessions_;  // deque: references stay valid as sessions are added
  std::vector<game::PlayerEvent> pending_events_;
  std::vector<uint32_t> present_;  // players in the match after the last step, sorted
  std::vector<uint8_t> message_buffer_;  // the message being handled (its memory reused)
  int64_t empty_since_ns_;
  std::atomic<uint32_t> session_count_{0};
  std::atomic<uint32_t> spectator_count_{0};
  uint32_t dumps_ = 0;
  double now_s_ = 0;  // the current run's time, for sends outside flush_connections

  std::mutex inbox_mutex_;
  std::vector<Datagram> inbox_;
  // Datagrams in inbox_ per source, so one source's flood fills only its own share and
  // never drops another player's packets (cleared with each drain).
  std::map<std::pair<uint32_t, Udp::endpoint>, uint32_t> inbox_per_source_;
  std::vector<Admission> admissions_;
  std::vector<Router::Key> releases_;

  std::atomic<uint64_t> tick_{0};
  std::atomic<uint64_t> hash_{0};
  std::atomic<uint32_t> players_{0};
  std::atomic<uint64_t> bytes_sent_{0};
};

}  // namespace keel::server
