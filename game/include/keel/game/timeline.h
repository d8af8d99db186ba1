// keel::game::MatchTimeline — one match and a bounded history of it: the unit keel-server's
// match host, a predicting client and the replay tool all step. `step(inputs)` is
// Match::step followed by the tick's one hash; the history keeps what a desync check or
// a rebuild needs (hashes, applied inputs, a saved state now and then); whoever else
// cares about a tick — a recording, a frame stream, a desync checker — observes it
// through a callback or reads the history, and never steps the match itself.
//
// Besides step(), the one other way a timeline's match changes is restore_and_step: a
// saved state restored and then stepped forward with inputs from a caller. That is the
// rollback of a predicting client, the seek of a replay and the rebuild of a server's
// desync dump, written once (docs/architecture.md, "The match timeline").
#pragma once

#include <keel/base/expected.h>
#include <keel/game/match.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace keel::game {

/// The one rule for a present player without a frame this tick: a player who joins in
/// this tick's `events` (or has no slot) starts from the zero frame and the present view;
/// any other repeats its slot's last applied frame and, with it, its view. Match::step
/// applies the same rule to a player its inputs leave out; keel-server writes the frame
/// into the tick's inputs (so the recording and the frame stream hold every frame
/// explicitly) and a predicting client guesses the other players' frames, both from here.
PlayerInput missing_input(const Match& match, std::span<const PlayerEvent> events, uint32_t player);

/// How much history a timeline keeps. All zero (the default): none; the timeline is
/// then a match plus its one hash per step.
struct TimelineHistory {
  uint32_t hash_ticks = 0;   ///< the newest this many ticks' (state tick, hash) pairs
  uint32_t state_every = 0;  ///< a saved state at every tick that is a multiple (0: none)
  uint32_t states_kept = 0;  ///< saved states kept, newest; inputs are kept back to the oldest
};

/// One tick a timeline stepped, as its observers see it.
struct TimelineStep {
  uint64_t from_tick = 0;      ///< the tick stepped (the state tick before the step)
  const TickInputs& applied;   ///< exactly what Match::step received
  const Match& after;          ///< the match after the step, with the events it emitted
  uint64_t hash = 0;           ///< after.hash(), computed once
};

/// What step() returns: the state tick after the step and its hash.
struct StepResult {
  uint64_t tick = 0;
  uint64_t hash = 0;
};

/// Where restore_and_step takes its inputs: for each tick stepped, `inputs` fills the
/// TickInputs for the match as it stands (false: there are none, stop there);
/// `stepped`, when set, is told after each step and may keep (move out) what was applied.
struct Restep {
  std::function<bool(const Match& before, TickInputs& out)> inputs;
  std::function<void(const Match& after, TickInputs& applied)> stepped;
};

class MatchTimeline {
 public:
  using Observer = std::function<void(const TimelineStep&)>;

  explicit MatchTimeline(Match match, TimelineHistory history = {});

  MatchTimeline(MatchTimeline&&) noexcept = default;
  MatchTimeline& operator=(MatchTimeline&&) noexcept = default;

  /// Steps the match once with `inputs`, hashes it once, appends the tick to the
  /// history, then tells every observer in the order they were added.
  StepResult step(const TickInputs& inputs);

  /// Observers are told of every step() (not of restore_and_step's re-steps: those
  /// re-run ticks the observers have seen, or that no one may see yet).
  void observe(Observer observer) { observers_.push_back(std::move(observer)); }

  /// Restores `state` (none: continues from the match as it is) and steps until the
  /// match reaches `to_tick` or `how.inputs` has no more; no hash is made on the way.
  /// The history restarts at the state reached. A refused state leaves the match as it
  /// was and returns the error.
  Status restore_and_step(std::span<const uint8_t> state, uint64_t to_tick, const Restep& how);
  /// Restores `state` and steps nothing (a checkpoint, a resync).
  Status restore(std::span<const uint8_t> state) { return restore_and_step(state, 0, Restep{}); }

  /// Rebuilds the match at `tick` into `scratch` (a match of the same scene and rules):
  /// from the newest saved state at or before it, re-stepping the inputs the history
  /// holds. Nullopt when the history does not reach back to `tick`.
  std::optional<Match> rebuild(uint64_t tick, Match scratch) const;

  const Match& match() const { return match_; }
  /// The match for what is neither state nor a step (its worker threads, a test's hook).
  Match& match_for_host() { return match_; }
  /// Moves the match out; the timeline must not be used afterwards.
  Match release() { return std::move(match_); }
  uint64_t tick() const { return match_.tick(); }

  /// The hash of the match at state tick `tick`, when the history holds it.
  std::optional<uint64_t> hash_at(uint64_t tick) const;
  /// The inputs tick `tick` was stepped with, when the history holds them.
  const TickInputs* inputs_at(uint64_t tick) const;

 private:
  void remember(uint64_t from_tick, uint64_t hash, const TickInputs& inputs);
  void restart_history();

  Match match_;
  TimelineHistory limits_;
  std::deque<std::pair<uint64_t, uint64_t>> hashes_;             // (state tick, hash)
  std::deque<std::pair<uint64_t, TickInputs>> inputs_;           // (tick stepped from, inputs)
  std::deque<std::pair<uint64_t, std::vector<uint8_t>>> saved_;  // (tick, save_state)
  std::vector<Observer> observers_;
};

}  // namespace keel::game
