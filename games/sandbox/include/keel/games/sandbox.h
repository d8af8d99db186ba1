// The sandbox game keel-server runs by default: each player walks a capsule character
// through the character controller (keel/sim/character.h) and throws balls. It is an
// ordinary game on the game layer (keel/game/rules.h), linked into Keel's programs so
// they run it without a module.
#pragma once

#include <keel/game/registry.h>
#include <keel/game/rules.h>

namespace keel::games {

/// The move vector (a stick, in the look frame: x right, y forward), turned into the
/// world by the look yaw and scaled to kWalkSpeed, is the character's wished velocity;
/// the jump button jumps at kJumpSpeed from the ground. The fire button throws a ball
/// (rate-limited per player, at most kMaxBallsPerPlayer alive; the oldest is removed
/// first).
///
/// A visitor (game-rules.md section 12) has five more fields, all neutral at
/// code 0 so a player that never sets them plays as before:
///  - spawn_seq + spawn + spawn_at: a box, sphere or capsule dropped with its lowest point
///    at spawn_at (the point the visitor clicked on the ground), once each time spawn_seq
///    (a wrapping 8-bit counter, one step per click) differs from the last one applied to
///    the player (declared player state): a repeated or late frame spawns nothing more.
///    At most one spawn per kSpawnCooldownTicks per player, and at most kMaxSpawned spawned
///    bodies in the match: past that the oldest spawned body is removed first.
///  - drag_body + drag_to: while drag_body names a dynamic body (not a character), that
///    body is pulled toward drag_to by a critically damped spring, its acceleration
///    bounded by kDragMaxAccel; drag_body 0 (the default) lets go.
///  - gravity: "keep" (the default) leaves the match's gravity alone; "normal", "off",
///    "low" and "high" set it for the whole match to 1, 0, 0.25 or 2 times the scene's.
///    The mode is declared match state; the world's gravity follows it.
class SandboxRules final : public game::Rules {
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
  /// Body kinds (BodyDef::kind) the sandbox labels its bodies with, for clients that
  /// draw them: a player's capsule and a thrown ball.
  static constexpr uint32_t kKindCharacter = 1;
  static constexpr uint32_t kKindBall = 2;
  static constexpr uint32_t kKindSpawned = 3;  ///< a visitor's box, sphere or capsule

  static constexpr uint32_t kSpawnCooldownTicks = 15;  ///< 4 spawns a second at 60 Hz
  static constexpr uint32_t kMaxSpawned = 64;          ///< spawned bodies alive in a match
  static constexpr float kSpawnSize = 0.25f;           ///< m: half extent, radius, capsule half height
  static constexpr float kSpawnDensity = 500.0f;       ///< kg/m^3
  static constexpr float kDragOmega = 8.0f;            ///< rad/s: the spring's natural frequency
  static constexpr float kDragMaxAccel = 60.0f;        ///< m/s^2: the most a drag accelerates a body
  /// The box spawn_at and drag_to live in (m), and their step per axis.
  static constexpr float kAreaHalf = 32.0f;
  static constexpr float kAreaLow = -2.0f;
  static constexpr float kAreaHigh = 30.0f;
  static constexpr float kAreaStep = 1.0f / 16.0f;

  /// Input fields, in layout order, and the button bits.
  static constexpr uint32_t kMove = 0;     ///< stick, 127 steps per unit
  static constexpr uint32_t kLookYaw = 1;  ///< angle, 16 bits; 0 looks along -Z
  static constexpr uint32_t kButtons = 2;  ///< buttons jump, fire
  static constexpr uint32_t kJump = 0;
  static constexpr uint32_t kFire = 1;
  static constexpr uint32_t kSpawn = 3;     ///< enum none, box, sphere, capsule
  static constexpr uint32_t kSpawnAt = 4;   ///< point3 in the area, 1/16 m
  static constexpr uint32_t kDragBody = 5;  ///< int: a body id, 0 = not dragging
  static constexpr uint32_t kDragTo = 6;    ///< point3 in the area, 1/16 m
  static constexpr uint32_t kGravity = 7;   ///< enum keep, normal, off, low, high
  static constexpr uint32_t kSpawnSeq = 8;  ///< int [0, kSpawnSeqMax]: a click's counter
  static constexpr uint32_t kSpawnSeqMax = 255;  ///< spawn_seq wraps from here to 0
  /// Spawn shapes (the spawn field's values) and gravity modes (the gravity field's
  /// values less one; the match state's gravity_mode).
  enum SpawnShape : uint32_t { kSpawnNone = 0, kSpawnBox = 1, kSpawnSphere = 2, kSpawnCapsule = 3 };
  enum GravityMode : uint32_t { kGravityNormal = 0, kGravityOff = 1, kGravityLow = 2, kGravityHigh = 3 };
  /// The scale of the scene's gravity each mode sets.
  static float gravity_scale(uint32_t mode);

  /// The sandbox's spec: its input layout, its per-player state (fire_cooldown,
  /// thrown_count, thrown[8], spawn_cooldown, spawn_seq_applied), its match state (gravity_mode,
  /// spawned_count, spawned[64]), no events.
  static game::GameSpec make_spec();

  game::GameSpec spec() const override { return make_spec(); }
  void on_join(game::Match& match, game::PlayerSlot& slot) override;
  void on_leave(game::Match& match, game::PlayerSlot& slot) override;
  void apply_input(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& frame) override;

 private:
  /// Spawning, dragging and the gravity switch (before the walking, which they never change).
  static void apply_visit(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& frame);
};

/// A visitor's actions for one frame (the fields past the walking ones).
struct SandboxVisit {
  uint32_t spawn = SandboxRules::kSpawnNone;
  sim::Vec3 spawn_at{0.0f};
  uint32_t drag_body = 0;
  sim::Vec3 drag_to{0.0f};
  uint32_t gravity = 0;  ///< 0 keep, else GravityMode + 1
  uint32_t spawn_seq = 0;  ///< the click counter: a spawn happens when it changes (wraps at 256)
};

/// Writes a visitor's actions into a sandbox frame (rounded to the steps, clamped).
void set_sandbox_visit(game::InputFrame& frame, const SandboxVisit& visit);

/// An input frame of the sandbox from numbers (what a bot or a client builds).
game::InputFrame sandbox_input(float move_x, float move_forward, float look_yaw, bool jump, bool fire);

/// Registers the games linked into Keel's programs ("sandbox").
void register_builtin_games(game::RulesRegistry& registry);
game::RulesRegistry builtin_games();

}  // namespace keel::games
