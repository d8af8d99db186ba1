// keel::game::Rules — a game on Keel: what its players send (the input layout), what it
// keeps (its state layout), what it tells clients (its event types) and the hooks that
// run inside the match's one step. docs/game-rules.md walks through writing one.
#pragma once

#include <keel/game/layout.h>
#include <keel/game/state.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace keel::game {

class Match;
struct PlayerSlot;

/// One kind of event a game emits, with its payload declared like an input layout.
struct EventType {
  std::string name;  ///< [a-z0-9_], unique among the game's events
  Layout payload;
  friend bool operator==(const EventType&, const EventType&) = default;
};

inline constexpr uint32_t kMaxEventTypes = 64;
inline constexpr uint32_t kMaxEventsPerTick = 64;
/// The longest pose history a game may keep: 4 s at the highest tick rate (120 Hz).
inline constexpr uint32_t kMaxPoseHistoryTicks = 480;

/// One event a step emitted: its type (index into GameSpec::events) and payload codes.
struct GameEvent {
  uint32_t type = 0;
  Values payload;
  friend bool operator==(const GameEvent&, const GameEvent&) = default;
};

/// Everything a game declares about itself. It must not change for the life of the
/// Rules object; every program checks that a recording's spec equals its game's.
struct GameSpec {
  std::string name;      ///< what a recording and a module are named by, e.g. "sandbox"
  uint32_t version = 1;  ///< raised whenever the game's rules change what a step does
  Layout input;
  StateLayout state;
  std::vector<EventType> events;
  /// Bounds on the bodies a game creates, which size the largest checkpoint a
  /// recording accepts: scene bodies + per_player * players + extra.
  uint32_t max_bodies_per_player = 16;
  uint32_t max_extra_bodies = 0;
  /// Ticks of pose history the match keeps for lag-compensated queries
  /// (Match::raycast_as_seen and the others; docs/game-rules.md, "Lag compensation"):
  /// 0 = none (the queries see the present), else at least the scene's tick rate (one
  /// second; Match::create refuses less) and at most kMaxPoseHistoryTicks.
  uint32_t pose_history_ticks = 0;

  /// validate() on every layout, plus the name and the event bounds.
  Status validate() const;
  /// The index of an event type by name, or events.size().
  uint32_t find_event(std::string_view event_name) const;
  friend bool operator==(const GameSpec&, const GameSpec&) = default;
};

/// Canonical bytes of a spec (stored in recording headers; its XXH3 identifies the spec).
void write_spec(const GameSpec& spec, std::vector<uint8_t>& out);
Expected<GameSpec> read_spec(std::span<const uint8_t> bytes);
uint64_t spec_hash(const GameSpec& spec);

/// What one body is worth to one client, for the server's interest management
/// (docs/game-rules.md, "Relevance"). Host-side only: never state, never hashed.
struct BodyInterest {
  float weight = 1.0f;  ///< 0: the client is not sent the body; else scales its priority
  bool always = false;  ///< relevant at any distance (beyond the interest radius too)
};

/// The game rules. Every hook runs inside Match::step (or Match::create for on_start)
/// in the order docs/architecture.md gives. Hooks must be deterministic
/// (docs/determinism.md) and keep every piece of state in the match — its declared
/// state, its player slots, its world — never in the Rules object, which a predicting
/// client, a replay and the server each hold their own copy of.
class Rules {
 public:
  virtual ~Rules();
  /// The game's declaration; called once when a match is made.
  virtual GameSpec spec() const = 0;
  /// Once, when a match is created at tick 0 (start timers, seed state).
  virtual void on_start(Match& match);
  /// A player joined (its slot's state is zero); typically spawns what it controls.
  virtual void on_join(Match& match, PlayerSlot& slot);
  /// A player is leaving (before its slot is freed); removes what it owns.
  virtual void on_leave(Match& match, PlayerSlot& slot);
  /// A timer set with Match::set_timer is due.
  virtual void on_timer(Match& match, uint32_t timer);
  /// Every tick, after joins, leaves and timers, before any input.
  virtual void before_step(Match& match);
  /// One player's sanitised input for this tick (its own, or its last when none came).
  virtual void apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame);
  /// Every tick, after the world stepped (contacts, positions and sensors are current).
  virtual void after_step(Match& match);
  /// The end condition, asked after every step: a reason once the match is over, nullopt
  /// while it goes on. A function of the match's state alone, so a replay and a
  /// predicting client reach it at the same tick.
  virtual std::optional<std::string> match_over(const Match& match) const;
  /// Interest management, asked by the server only (never inside a step, never part of
  /// the match's state): for each of `bodies` (user ids, ascending), how much it matters
  /// to `viewer`'s client (a player id). `out` holds the default, weight 1, on entry.
  virtual void relevance(const Match& match, uint32_t viewer, std::span<const uint32_t> bodies,
                         std::span<BodyInterest> out) const;
};

}  // namespace keel::game
