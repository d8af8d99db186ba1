// Deterministic prediction with rollback: the predicted mode's core, free of networking
// so it can be tested with hand-made frames.
//
// Two matches built from the scene the server sent: the *confirmed* match, at the
// newest tick for which every player's applied input is known (restored from the
// server's checkpoint, then stepped only with the server's ServerInputFrames, and
// hash-checked against the server after every tick); and the *predicted* match, the
// confirmed one run ahead to the present with the local player's own inputs and every
// other player repeating its last confirmed input (what the server does with a missing
// input). When a confirmed frame differs from what was predicted for its tick, the
// predicted match is restored from the confirmed one and re-simulated to the present: a
// rollback, whose depth is the ticks re-simulated.
//
// The rollback window bounds the work: the predicted match never runs more than
// `max_rollback_ticks` ahead of the confirmed one. Past it the prediction holds (the
// local view stalls until frames arrive) while inputs keep flowing to the server; if the
// frame chain has a hole the server can no longer fill (it keeps at most
// FrameWindow::kMaxFrames frames), needs_resync() turns true and the client asks for a
// fresh checkpoint (ClientHello{Predict, resync}).
//
// Each match is a game::MatchTimeline, changed only by its step (the confirmed one's,
// which hashes every tick for the check) and by its one restore-and-re-step (the
// predicted one's rebase and run ahead, copying the confirmed state once per rebase);
// both step through Match::step (docs/architecture.md, "The match timeline"), so
// prediction is exact.
#pragma once

#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>
#include <keel/game/match.h>
#include <keel/game/timeline.h>
#include <keel/games/sandbox.h>
#include <keel/game/registry.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace keel::client {

struct PredictionConfig {
  uint32_t max_rollback_ticks = 32;   ///< predicted - confirmed, at most
  uint32_t hash_report_interval = 60; ///< report every Nth confirmed tick's hash as a sample
  std::string dump_dir;               ///< where the first desync of a checkpoint is dumped ("" = nowhere)
  std::string dump_note;              ///< free text written into every dump
  /// Makes the rules both matches step with. They must be the server's rules: the server
  /// sends its state, not its rules, so other rules show only as confirmed ticks that
  /// disagree once the two act differently. Unset: games::SandboxRules, what keel-server runs.
  game::RulesFactory rules;
};

/// The outcome of checking one confirmed tick's hash.
struct HashCheck {
  /// The match tick the hash describes: t + 1 for the frame of tick t (the state after
  /// stepping t), which is what HashReport.tick carries (docs/protocol.md).
  uint64_t tick = 0;
  uint64_t hash = 0;          ///< our hash of the match at `tick`
  uint64_t expected = 0;      ///< the server's, from the frame
  bool mismatch = false;
  bool report = false;        ///< send a HashReport for it (mismatch or sample)
};

struct PredictionStats {
  uint64_t confirmed_ticks = 0;   ///< frames stepped on the confirmed match
  uint64_t hash_checks = 0;
  uint64_t hash_mismatches = 0;
  uint64_t rollbacks = 0;
  uint64_t rollback_ticks = 0;    ///< ticks re-simulated in all
  uint32_t max_rollback_ticks = 0;
  uint32_t last_rollback_ticks = 0;
  uint64_t predicted_ticks = 0;   ///< ticks stepped on the predicted match
  uint64_t stalls = 0;            ///< updates where the window held the prediction back
  uint64_t local_inputs_applied = 0;  ///< confirmed ticks that applied our input
  uint64_t local_inputs_late = 0;     ///< confirmed ticks that applied something else
  uint64_t first_mismatch_tick = 0;   ///< state tick of the first disagreeing hash; 0 = none
  /// Rollbacks whose range — from the first contradicted frame's tick to the tick the
  /// prediction had reached — holds a tick that emitted a game event, in the confirmed
  /// match, in the prediction thrown away or in its re-prediction. A game announces a
  /// change of its declared state (a goal, a kick-off) with an event, so these are the
  /// rollbacks that may have shown the player a score that did not happen, or late.
  uint64_t rollbacks_across_state_changes = 0;
  /// The same rollbacks by event type (GameSpec::events index): a rollback counts once
  /// for each type of event its range held — a goal's count is the rollbacks that
  /// crossed a score change.
  std::array<uint64_t, game::kMaxEventTypes> rollbacks_across_event{};
  uint64_t predicted_event_records = 0;  ///< events reported from predicted steps
  uint64_t confirmed_event_records = 0;  ///< events reported from confirmed steps
  std::string last_dump_path;
};

/// One game event as the client reports it (Client::take_game_events).
struct GameEventRecord {
  /// The match tick after the step that emitted it (what GameEvents.tick carries).
  uint64_t tick = 0;
  game::GameEvent event;
  /// True: from a predicted step (it may yet be contradicted); false: confirmed — the
  /// server's step emitted it (a predicting client's confirmed match, or the server's
  /// GameEvents message for an interpolating one).
  bool predicted = false;
  friend bool operator==(const GameEventRecord&, const GameEventRecord&) = default;
};

class Predictor {
 public:
  /// Builds both matches from `scene` and restores `checkpoint` (Match::save_state of
  /// the server's match at tick `tick`). `local_player` is ConnectionAccept.player_id.
  static keel::Expected<std::unique_ptr<Predictor>> create(const sim::SceneDef& scene,
                                                         std::span<const uint8_t> checkpoint,
                                                         uint64_t tick, uint32_t local_player,
                                                         const PredictionConfig& config);

  /// A confirmed frame (any order; duplicates and ticks already stepped are ignored).
  /// Returns false when it is refused (behind the confirmed tick or too far ahead).
  bool add_confirmed(protocol::InputFrameMessage frame);
  /// The local player's quantised input for `tick` (what was sent to the server).
  void set_local_input(uint64_t tick, const game::InputFrame& input);
  /// Steps every contiguous confirmed frame (checking hashes), rolls back if a frame
  /// contradicts the prediction, then predicts up to `present` (bounded by the window).
  /// Hash checks made are appended to `checks`; when `events` is given, the game events
  /// of the steps made (confirmed: every confirmed tick's, in order; predicted: a tick's
  /// events the first time it is predicted, and after a rollback only when they differ
  /// from what was last reported for that tick).
  void advance(uint64_t present, std::vector<HashCheck>& checks, std::vector<GameEventRecord>* events = nullptr);

  uint64_t confirmed_tick() const { return confirmed_.tick(); }
  uint64_t predicted_tick() const { return predicted_.tick(); }
  /// The newest frame tick held (0 = none beyond the confirmed tick).
  uint64_t newest_frame_tick() const { return pending_.empty() ? 0 : pending_.rbegin()->first; }
  /// True when a hole in the frame chain is older than the server keeps frames for.
  bool needs_resync() const;
  const game::Match& confirmed() const { return confirmed_.match(); }
  const game::Match& predicted() const { return predicted_.match(); }
  /// The predicted state of a body (nullopt when absent).
  std::optional<sim::BodyState> predicted_body(uint32_t id) const;
  const PredictionStats& stats() const { return stats_; }

  /// Test hook: flips the lowest mantissa bit of one dynamic body's position in the
  /// confirmed (and predicted) state, so the next confirmed tick's hash must disagree.
  /// Returns false when the match has no body to perturb.
  bool perturb_for_test();

 private:
  Predictor(game::Match confirmed, game::Match predicted, uint32_t local_player,
            const PredictionConfig& config);
  game::TickInputs predict_inputs(uint64_t tick) const;
  game::InputFrame local_input_at(uint64_t tick) const;
  void step_confirmed(const protocol::InputFrameMessage& frame, std::vector<HashCheck>& checks,
                      std::vector<GameEventRecord>* events);
  /// Runs the predicted match to `target`, from the confirmed state first when `rebase`.
  void predict_to(uint64_t target, bool rebase, std::vector<GameEventRecord>* events);
  void predicted_stepped(const game::Match& after, game::TickInputs& applied, std::vector<GameEventRecord>* events);
  static uint64_t types_of(const std::vector<game::GameEvent>& events);
  uint64_t reported_types_in(uint64_t from, uint64_t to) const;
  void count_rollback_types(uint64_t types);
  void note_local_input(const protocol::InputFrameMessage& frame);
  void write_dump(uint64_t expected_hash);
  void prune(uint64_t tick);

  game::MatchTimeline confirmed_;
  game::MatchTimeline predicted_;
  uint32_t local_player_;
  PredictionConfig config_;
  std::map<uint64_t, protocol::InputFrameMessage> pending_;  // frames past the confirmed tick
  std::map<uint64_t, game::TickInputs> predicted_inputs_;      // what each predicted tick used
  std::map<uint64_t, game::InputFrame> local_inputs_;     // what we sent, by tick
  // The predicted events last reported per tick (after the step), for ticks past the
  // confirmed one: a re-predicted tick reports again only when its events differ.
  std::map<uint64_t, std::vector<game::GameEvent>> reported_;
  // Set by a rollback until its re-prediction passes `rollback_end_`: whether a tick in
  // its range has emitted an event so far, and whether it was counted.
  uint64_t rollback_end_ = 0;
  bool rollback_open_ = false;     // its range is still being re-predicted
  uint64_t rollback_types_ = 0;    // event types (bit per GameSpec::events index) counted for it
  PredictionStats stats_;
};

}  // namespace keel::client
