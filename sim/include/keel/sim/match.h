// keel::sim::Match — the unit the server, a predicting client and the replay tool all
// step: a world, its player slots, and the rules that turn input frames into world
// changes. It is changed only by Match::step(inputs); that is what makes replay and
// prediction exact (docs/architecture.md, "The Match invariant").
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/expected.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace keel::sim {

/// Buttons of an input frame.
enum Button : uint32_t {
  kButtonJump = 1u << 0,
  kButtonFire = 1u << 1,  ///< sandbox rules: throw a ball in the look direction
};
inline constexpr uint32_t kKnownButtons = kButtonJump | kButtonFire;

/// One player's input for one tick. Protocol encodes it; the match validates it again
/// (sanitize) so that no input, however forged, can make a step misbehave.
struct InputFrame {
  float move_x = 0.0f;    ///< desired movement, in the player's look frame: +x right
  float move_z = 0.0f;    ///< +z forward; (move_x, move_z) has length <= 1
  float look_yaw = 0.0f;  ///< radians about +Y; 0 looks along -Z
  uint32_t buttons = 0;

  friend bool operator==(const InputFrame&, const InputFrame&) = default;
};

/// Clamps an input frame into its valid range: non-finite numbers become 0, the move
/// vector is shortened to length 1, yaw is wrapped into [-pi, pi), unknown buttons are
/// cleared. Returns true when the frame was already valid.
bool sanitize(InputFrame& frame);

/// A player joining or leaving, applied at the start of a tick before inputs.
struct PlayerEvent {
  enum class Kind : uint8_t { Join = 0, Leave = 1 };
  Kind kind = Kind::Join;
  uint32_t player = 0;  ///< the player's id (the server's client id)

  friend bool operator==(const PlayerEvent&, const PlayerEvent&) = default;
};

struct PlayerInput {
  uint32_t player = 0;
  InputFrame frame;

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

/// A player slot: who it is and which body it drives.
struct PlayerSlot {
  uint32_t player = 0;
  uint32_t character = 0;  ///< user id of the character body (0 = none)
  uint32_t spawn_index = 0;
  InputFrame last_input;   ///< the last frame applied
  uint32_t fire_cooldown = 0;  ///< ticks until the fire button works again
  std::vector<uint32_t> thrown;  ///< user ids of balls this player threw, oldest first
};

class Match;

/// The game rules: how input frames drive a player's character, what buttons do, how
/// players spawn. Implementations must be deterministic (docs/determinism.md) and keep all of
/// their state in the match (players, world) or in save/restore.
class Rules {
 public:
  virtual ~Rules() = default;
  /// A short name, recorded in recordings and checked when a recording is replayed.
  virtual std::string name() const = 0;
  /// Called when a player joins; typically spawns its character.
  virtual void on_join(Match& match, PlayerSlot& slot) = 0;
  /// Called when a player leaves, before its slot is freed; removes what it owns.
  virtual void on_leave(Match& match, PlayerSlot& slot) = 0;
  /// Applies one (sanitized) input frame to a player's character, before the world steps.
  virtual void apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame) = 0;
  /// The end condition, asked after every step: a reason (for logs and clients' tools)
  /// once the match is over, nullopt while it goes on. It must be a function of the
  /// match's state alone, so a replay or a predicting client reaches the same verdict at
  /// the same tick. keel-server ends the match the tick it first says so: it tells the
  /// clients and finishes the recording. The default never ends a match (sandbox).
  virtual std::optional<std::string> match_over(const Match& match) const {
    (void)match;
    return std::nullopt;
  }
};

/// The sandbox rules keel-server ships: each player drives a capsule character through
/// the character controller (keel/sim/character.h): the move vector, turned into the world
/// by the look yaw and scaled to kWalkSpeed, is its wished velocity and the jump button
/// jumps at kJumpSpeed from the ground. The fire button throws a ball (rate-limited per
/// player, at most kMaxBallsPerPlayer alive; the oldest is removed first).
class SandboxRules final : public Rules {
 public:
  static constexpr float kWalkSpeed = 4.0f;        ///< m/s
  static constexpr float kJumpSpeed = 5.0f;        ///< m/s
  static constexpr float kBallSpeed = 15.0f;       ///< m/s
  static constexpr float kBallRadius = 0.15f;      ///< m
  static constexpr uint32_t kFireCooldownTicks = 20;
  static constexpr uint32_t kMaxBallsPerPlayer = 8;
  static constexpr float kCharacterRadius = 0.4f;
  static constexpr float kCharacterHalfHeight = 0.5f;
  static constexpr float kCharacterMass = 80.0f;

  std::string name() const override { return "sandbox"; }
  void on_join(Match& match, PlayerSlot& slot) override;
  void on_leave(Match& match, PlayerSlot& slot) override;
  void apply_input(Match& match, PlayerSlot& slot, const InputFrame& frame) override;
};

/// Limits that keep a match bounded whatever its inputs say.
inline constexpr uint32_t kMaxPlayersPerMatch = 256;

class Match {
 public:
  /// Builds a match from a scene. `rules` defaults to SandboxRules.
  static Expected<Match> create(const SceneDef& scene, std::unique_ptr<Rules> rules = nullptr);

  Match(Match&&) noexcept;
  Match& operator=(Match&&) noexcept;
  ~Match();

  /// The one step function: applies events, then inputs, then steps the world one tick.
  /// Inputs for players not in the match are ignored; frames are sanitized first.
  void step(const TickInputs& inputs);

  uint64_t tick() const { return world_.tick(); }
  /// Sets the world's worker threads; never changes results.
  void set_threads(uint32_t threads) { world_.set_threads(threads); }
  const World& world() const { return world_; }
  /// Mutable access for Rules implementations (only ever called from inside step()).
  World& world_for_rules() { return world_; }
  const std::vector<PlayerSlot>& players() const { return players_; }
  const PlayerSlot* find_player(uint32_t player) const;
  const Rules& rules() const { return *rules_; }
  const SceneDef& scene() const { return scene_; }

  /// Canonical bytes of the whole match: players, then the world.
  std::vector<uint8_t> save_state() const;
  /// Replaces the match's state (the scene and rules stay as they are).
  Status restore_state(std::span<const uint8_t> bytes);
  /// XXH3-64 of save_state().
  uint64_t hash() const;

  /// Picks a fresh user id for a body the rules create (deterministic: above every id
  /// in use, counted in the saved state).
  uint32_t next_body_id();

 private:
  Match(SceneDef scene, World world, std::unique_ptr<Rules> rules);
  void join(uint32_t player);
  void leave(uint32_t player);

  SceneDef scene_;
  World world_;
  std::unique_ptr<Rules> rules_;
  std::vector<PlayerSlot> players_;  // sorted by player id
  uint32_t next_body_id_ = 1;
  uint32_t joins_ = 0;  // players ever joined: picks spawn points round-robin
};

}  // namespace keel::sim
