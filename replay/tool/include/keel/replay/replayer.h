// Re-running a recording: the match is rebuilt from the header's scene and rules, reaches
// any tick from the nearest checkpoint at or before it, and is stepped with the recorded
// inputs only through its game::MatchTimeline — the same step, and the same hash, the
// server ran.
#pragma once

#include <keel/replay/reader.h>
#include <keel/base/expected.h>
#include <keel/game/match.h>
#include <keel/game/timeline.h>
#include <keel/games/sandbox.h>
#include <keel/game/registry.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace keel::replay {

/// Keel's built-in rules (games::builtin_games()), made once: what every replay
/// function uses when it is given no registry.
const game::RulesRegistry& builtin_rules();

/// The rules a recording names, looked up in `rules` (nullptr: the built-in rules), or
/// an error for rules the registry does not know. A user's own rules reach the replay
/// tool through a registry (docs/replay.md, "Recordings of your own rules").
keel::Expected<std::unique_ptr<game::Rules>> make_rules(const std::string& name,
                                                      const game::RulesRegistry* rules = nullptr);

/// A match built from a header: its scene (FlatBuffers binary, verified) and its game
/// (from `rules`; nullptr: the built-in games). Refused when the game's spec is not the
/// one the header stores, or the header names a module build other than the one
/// registered. The match is at tick 0 as the scene describes it.
keel::Expected<game::Match> make_match(const Header& header, const std::string& source_name,
                                     const game::RulesRegistry* rules = nullptr);

struct ReplayOptions {
  uint32_t threads = 1;  ///< World::set_threads; never changes results
  /// Where the recording's rules are looked up; nullptr: the built-in rules. Must outlive
  /// the call that takes these options.
  const game::RulesRegistry* rules = nullptr;
};

/// A match being re-run through a recording.
class Replay {
 public:
  /// The match at `tick`, reached from the nearest usable checkpoint at or before it (or
  /// the start), stepping the ticks between without comparing them. Fails if the
  /// recording does not reach `tick`.
  static keel::Expected<Replay> start(const Recording& rec, uint64_t tick, const ReplayOptions& options = {});

  uint64_t tick() const { return timeline_.tick(); }
  const game::Match& match() const { return timeline_.match(); }
  /// Moves the match out; the replay must not be used afterwards.
  game::Match release() { return timeline_.release(); }
  /// The hash the recording holds for the current tick.
  uint64_t recorded_hash() const { return recorded_hash_; }
  /// The replayed match's hash at the current tick (made once, by the step or the start).
  uint64_t replayed_hash() const { return replayed_hash_; }
  /// The inputs the current tick was stepped with (empty at the starting tick).
  const game::TickInputs& inputs() const { return inputs_; }
  /// The game events the recording holds for the current tick (empty at the starting
  /// tick); after step() the match's own events() should equal them.
  const std::vector<game::GameEvent>& recorded_events() const { return recorded_events_; }
  /// Steps one tick with the recorded inputs; false when the usable ticks end.
  bool step();
  /// The tick the replay started from (a checkpoint's, or the recording's first).
  uint64_t base_tick() const { return base_tick_; }
  /// Checkpoints that could not be used (damaged, or not matching their tick), and why.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Why the last step() returned false, if the recording has ticks it could not read.
  const std::vector<std::string>& cursor_problems() const { return cursor_.problems(); }

 private:
  Replay(game::Match match, TickCursor cursor);
  /// The next recorded tick's inputs, when it follows the match's tick (a gap or the end:
  /// false); its recorded hash and events become the current ones.
  bool take_next(const game::Match& before, game::TickInputs& out);
  /// Steps to `tick` without hashing the ticks between; false when the recording ends first.
  bool seek(uint64_t tick);

  game::MatchTimeline timeline_;
  TickCursor cursor_;
  uint64_t recorded_hash_ = 0;
  uint64_t replayed_hash_ = 0;
  uint64_t base_tick_ = 0;
  game::TickInputs inputs_;
  std::vector<game::GameEvent> recorded_events_;
  std::vector<std::string> warnings_;
};

/// The outcome of verify().
struct VerifyResult {
  uint64_t verified = 0;  ///< ticks stepped and matched (the range's length)
  std::optional<uint64_t> diverged_at;
  uint64_t recorded = 0;  ///< at diverged_at
  uint64_t replayed = 0;
  /// At diverged_at the hashes agree but the game events the step emitted differ from
  /// the recorded ones (the game's events depend on something outside its state).
  bool events_differ = false;
  std::string error;      ///< set when the range could not be re-run at all
  std::vector<std::string> warnings;
  /// Damage was found (the index's problems, a checkpoint that does not decode or
  /// restore): the ticks that remain may all verify, but the file is not sound.
  bool damaged = false;
  /// The runs of ticks re-run and matched (one per segment the range touches).
  std::vector<TickRange> verified_ranges;
};

struct VerifyOptions {
  uint32_t threads = 1;
  std::optional<uint64_t> from;  ///< default: the first tick
  std::optional<uint64_t> to;    ///< default: the last usable tick
  /// Called now and then with (ticks done, ticks total); for a progress bar.
  std::function<void(uint64_t, uint64_t)> progress;
  /// Where the recording's rules are looked up; nullptr: the built-in rules.
  const game::RulesRegistry* rules = nullptr;
};

/// Re-runs ticks [from, to] and compares every tick's hash with the recording's: the
/// state at `from` first, then each tick stepped. The state hash covers the whole match,
/// so ticks before `from` need no comparison of their own. A recording with gaps is
/// re-run segment by segment, each from the checkpoint it starts with; `verified`
/// counts the steps of all of them.
VerifyResult verify(const Recording& rec, const VerifyOptions& options);

}  // namespace keel::replay
