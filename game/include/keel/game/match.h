// keel::game::Match — the unit the server, a predicting client and the replay tool all
// step: a world, its player slots, the game's declared state, and the rules that turn
// input frames into world changes. It is changed only by Match::step(inputs); that is
// what makes replay and prediction exact (docs/architecture.md, "The Match invariant").
#pragma once

#include <keel/game/rules.h>
#include <keel/sim/defs.h>
#include <keel/base/expected.h>
#include <keel/sim/query.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace keel::game {

/// A player joining or leaving, applied at the start of a tick before inputs.
struct PlayerEvent {
  enum class Kind : uint8_t { Join = 0, Leave = 1 };
  Kind kind = Kind::Join;
  uint32_t player = 0;  ///< the player's id (the server's client id)

  friend bool operator==(const PlayerEvent&, const PlayerEvent&) = default;
};

/// What a player was looking at when its input was sampled: the world `lag` ticks before
/// the tick its frame is applied at, `fraction`/256 of the way on to the tick after (the
/// client's interpolation). The default, lag 0, is the present. Match::step clamps it into
/// the history the match holds (docs/game-rules.md, "Lag compensation").
struct ViewStamp {
  uint16_t lag = 0;
  uint8_t fraction = 0;
  friend bool operator==(const ViewStamp&, const ViewStamp&) = default;
};

struct PlayerInput {
  PlayerInput() = default;
  PlayerInput(uint32_t player_id, const InputFrame& input, ViewStamp seen = {})
      : player(player_id), frame(input), view(seen) {}

  uint32_t player = 0;
  InputFrame frame;
  ViewStamp view;  ///< what the player saw when it sampled `frame`

  friend bool operator==(const PlayerInput&, const PlayerInput&) = default;
};

/// Everything that is applied to a match in one tick: joins and leaves, then one input
/// frame per present player (sorted by player id). This is exactly what a recording
/// stores per tick and what the server sends to predicting clients.
struct TickInputs {
  std::vector<PlayerEvent> events;
  std::vector<PlayerInput> inputs;

  friend bool operator==(const TickInputs&, const TickInputs&) = default;
};

/// A player slot: who it is, the body it controls and its declared state.
struct PlayerSlot {
  uint32_t player = 0;
  uint32_t character = 0;    ///< user id of the body the player controls (0 = none); set by the rules
  uint32_t spawn_index = 0;  ///< joins so far modulo the scene's spawn points
  InputFrame last_input;     ///< the last frame applied
  ViewStamp view;            ///< the view of the last frame applied, clamped (repeated with it)
  StateValues state;         ///< the game's per-player fields (GameSpec::state.player)
};

/// Limits that keep a match bounded whatever its inputs say.
inline constexpr uint32_t kMaxPlayersPerMatch = 256;
inline constexpr uint32_t kMaxTimers = 256;
inline constexpr uint32_t kMaxPendingBodyChanges = 1024;

/// One body's pose in a tick of the match's pose history.
struct PastPose {
  uint32_t body_id = 0;
  sim::Vec3 position{0.0f};
  sim::Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  friend bool operator==(const PastPose&, const PastPose&) = default;
};

/// Every movable body's pose at the end of one tick, by body id.
struct PoseFrame {
  uint64_t tick = 0;
  std::vector<PastPose> poses;
  friend bool operator==(const PoseFrame&, const PoseFrame&) = default;
};

/// Bytes the pose history holds per body per tick (a u32 id, 3 + 4 floats).
inline constexpr uint32_t kPastPoseBytes = 32;

class Match {
 public:
  /// Builds a match from a scene and the game's rules; refuses a spec that fails
  /// GameSpec::validate, and rules that throw from spec() or on_start. (A hook that
  /// throws from step() propagates: the host decides; keel-server ends that match.)
  /// `seed` starts the match's random generator (with the game's name): a host gives
  /// each match its own and records it (keel-server does, in the recording's header);
  /// 0 is the default every tool uses when none is asked for.
  static Expected<Match> create(const sim::SceneDef& scene, std::unique_ptr<Rules> rules, uint64_t seed = 0);

  Match(Match&&) noexcept;
  Match& operator=(Match&&) noexcept;
  ~Match();

  /// The one step function, in this order: joins and leaves (as listed); due timers;
  /// before_step; spawns and destroys asked so far; each player's input (sanitised, its
  /// last when none came); spawns and destroys; the world's step; after_step; spawns
  /// and destroys.
  void step(const TickInputs& inputs);

  uint64_t tick() const { return world_.tick(); }
  /// Sets the world's worker threads; never changes results.
  void set_threads(uint32_t threads) { world_.set_threads(threads); }
  /// Steps the world on a pool the host shares between matches (sim::World::use_worker_pool;
  /// null: the world's own threads); kept through restore. Never changes results.
  void use_worker_pool(std::shared_ptr<sim::WorkerPool> pool) { world_.use_worker_pool(std::move(pool)); }
  const sim::World& world() const { return world_; }
  /// Mutable access for Rules implementations (only ever called from inside a hook).
  sim::World& world_for_rules() { return world_; }
  const std::vector<PlayerSlot>& players() const { return players_; }
  const PlayerSlot* find_player(uint32_t player) const;
  PlayerSlot* find_player_for_rules(uint32_t player);
  const Rules& rules() const { return *rules_; }
  const GameSpec& spec() const { return spec_; }
  const Layout& input_layout() const { return spec_.input; }
  const sim::SceneDef& scene() const { return scene_; }

  // --- the game's state (all of it in the state bytes) ---
  StateValues& state() { return state_; }
  const StateValues& state() const { return state_; }
  /// The match's random generator (SplitMix64, in the state bytes): the next 32 bits.
  uint32_t random_u32();
  /// A uniform integer in [0, bound) (bound >= 1), without modulo bias.
  uint32_t random_below(uint32_t bound);
  /// Starts (or restarts) timer `timer` to fire `ticks` steps from now (ticks >= 1; 0 is
  /// taken as 1). At most kMaxTimers run at once; past that the call does nothing and
  /// returns false.
  bool set_timer(uint32_t timer, uint32_t ticks);
  void cancel_timer(uint32_t timer);
  /// Steps until the timer fires (1 = during the next step), or 0 when it is not set.
  uint64_t timer_remaining(uint32_t timer) const;
  /// Every running timer as (id, the world tick at whose step it fires), by id; and the
  /// random generator's state (what a state diff compares).
  std::vector<std::pair<uint32_t, uint64_t>> timers() const;
  uint64_t random_state() const { return random_; }
  /// The seed the match was created with (what a recording's header stores).
  uint64_t seed() const { return seed_; }

  // --- bodies the rules create and remove ---
  /// Asks for a body; it is added at the next apply point of this step (before the
  /// inputs, before the world steps, at the end of the step). Returns the user id the
  /// body will have (def.id is replaced by a fresh one), or 0 past kMaxPendingBodyChanges.
  /// A hook that needs the body at once (to attach a character controller) adds it to
  /// world_for_rules() itself, with an id from next_body_id().
  uint32_t spawn(sim::BodyDef def);
  /// Asks for a body to be removed at the next apply point (unknown ids are ignored).
  void destroy(uint32_t body_user_id);
  /// Picks a fresh user id for a body the rules create (deterministic: above every id in
  /// use, counted in the saved state).
  uint32_t next_body_id();
  /// The game's label of a body (BodyDef::kind, kept by the world with the body): the
  /// scene's for scene bodies, the def's for spawns and for bodies a hook added itself,
  /// or what set_body_kind said last; 0 when none or when the body is not in the world.
  /// It is state (saved, hashed and restored), so a checkpoint, a desync dump and a
  /// predicting client's restored match all know what their bodies are.
  uint32_t body_kind(uint32_t body_user_id) const;
  /// Relabels a body. State like any other change: call it from the game's hooks only.
  void set_body_kind(uint32_t body_user_id, uint32_t kind);

  // --- lag compensation (docs/game-rules.md, "Lag compensation") ---
  /// Queries "as this player saw the world": against the poses of the tick its frame's
  /// view names (interpolated by its fraction), for the player's frame being applied now.
  /// Static bodies are where they are; a movable body is where it was then, and bodies
  /// that did not exist then are left out. A view of lag 0 (the present, and always when
  /// the game keeps no history or `player` is not in the match) is the plain query on the
  /// world as it is. Deterministic: the same verdict on the server, in a replay and in a
  /// predicting client, whatever was restored when.
  std::optional<sim::QueryHit> raycast_as_seen(uint32_t player, const sim::Vec3& origin, const sim::Vec3& direction,
                                               float max_distance, const sim::QueryFilter& filter = {}) const;
  std::optional<sim::QueryHit> shape_cast_as_seen(uint32_t player, const sim::QueryShape& shape,
                                                  const sim::Transform& start, const sim::Vec3& direction,
                                                  float max_distance, const sim::QueryFilter& filter = {}) const;
  std::vector<sim::OverlapHit> overlap_as_seen(uint32_t player, const sim::QueryShape& shape,
                                               const sim::Transform& pose, const sim::QueryFilter& filter = {}) const;
  /// The tick a player's current view names (tick() - lag) and its fraction; the present
  /// for a player not in the match.
  std::pair<uint64_t, uint8_t> view_of(uint32_t player) const;
  /// The poses a view sees (the posed list the *_as_seen queries use), by body id.
  std::vector<sim::PosedBody> poses_seen(const ViewStamp& view) const;
  /// The pose history, oldest first; its newest frame is this tick's (the state after the
  /// last step). Empty when the game keeps none (GameSpec::pose_history_ticks = 0).
  const std::deque<PoseFrame>& pose_history() const { return history_; }
  /// The oldest lag a view may have now: ticks of history held before the present.
  uint32_t max_view_lag() const { return history_.empty() ? 0 : uint32_t(history_.size() - 1); }
  /// Clamps a view into the history held now (lag at most max_view_lag(); the present
  /// has no fraction). Returns true when it was already inside.
  bool clamp_view(ViewStamp& view) const;

  // --- events ---
  /// Emits an event of type `type` (GameSpec::events index) with its payload
  /// (sanitised against the type's layout). At most kMaxEventsPerTick a tick; past
  /// that, or for an unknown type, the call does nothing and returns false.
  bool emit(uint32_t type, const Values& payload);
  /// The events the last step emitted, in emission order.
  const std::vector<GameEvent>& events() const { return events_; }

  /// Canonical bytes of the whole match: the game's state, players, then the world.
  std::vector<uint8_t> save_state() const;
  /// Replaces the match's state (the scene and rules stay as they are).
  Status restore_state(std::span<const uint8_t> bytes);
  /// The state hash (keel/sim/state_hash.h) of save_state(), without building it: the
  /// match's own bytes are hashed ahead of the world's cached block digests.
  uint64_t hash() const;

 private:
  /// The state bytes ahead of the world's (save_state() is these, then the world's).
  void write_own_state(std::vector<uint8_t>& out) const;
  struct Timer {
    uint32_t id = 0;
    uint64_t due = 0;  // the world tick at whose step it fires
  };
  struct BodyChange {
    bool spawn = true;
    uint32_t id = 0;
    sim::BodyDef def;
  };

  Match(sim::SceneDef scene, sim::World world, std::unique_ptr<Rules> rules, GameSpec spec);
  static Expected<Match> create_unguarded(const sim::SceneDef& scene, std::unique_ptr<Rules> rules, uint64_t seed);
  void join(uint32_t player);
  void leave(uint32_t player);
  void fire_timers();
  void apply_body_changes();
  uint64_t next_fire_tick() const;  // the world tick of the next step that fires timers
  void record_poses();  // appends this tick's poses to the history, dropping the oldest
  void write_history(std::vector<uint8_t>& out) const;
  /// history_bytes_ = every frame of history_ in its canonical bytes (after a restore).
  void rebuild_history_bytes();
  bool read_history(std::span<const uint8_t> bytes, size_t& at, std::deque<PoseFrame>& out) const;

  sim::SceneDef scene_;
  sim::World world_;
  std::unique_ptr<Rules> rules_;
  GameSpec spec_;
  uint64_t spec_hash_ = 0;           // spec_hash(spec_), first in the state bytes
  std::vector<PlayerSlot> players_;  // sorted by player id
  StateValues state_;
  std::vector<Timer> timers_;        // sorted by id
  uint64_t random_ = 0;
  uint64_t seed_ = 0;                // not state: what create() was given
  uint32_t next_body_id_ = 1;
  uint32_t joins_ = 0;  // players ever joined: picks spawn points round-robin
  // State when the game keeps one (GameSpec::pose_history_ticks): the poses of the last
  // pose_history_ticks + 1 ticks, oldest first, the newest this tick's. A joining client
  // or a replay restored from a checkpoint needs it to judge the next second's shots as
  // the server does, so it travels in the state bytes and the hash covers it.
  std::deque<PoseFrame> history_;
  // Not state: each frame of history_ in its canonical bytes (tick, count, poses), written
  // once when the frame is recorded: frames never change after, and the state is
  // written (and hashed) every tick, so the ring costs a copy instead of a field-by-field
  // pass over every pose of every frame.
  std::deque<std::vector<uint8_t>> history_bytes_;
  // Not state: body changes waiting for the next apply point (empty between steps) and
  // the events of the last step (outputs of a step, recorded and sent, never read back).
  std::vector<BodyChange> pending_;
  std::vector<GameEvent> events_;
  // Not state either: true inside step() until the world has stepped (false between
  // steps), so "ticks steps from now" means the same from every hook.
  bool before_world_step_ = false;
};

}  // namespace keel::game
