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

  /// Input fields, in layout order, and the button bits.
  static constexpr uint32_t kMove = 0;     ///< stick, 127 steps per unit
  static constexpr uint32_t kLookYaw = 1;  ///< angle, 16 bits; 0 looks along -Z
  static constexpr uint32_t kButtons = 2;  ///< buttons jump, fire
  static constexpr uint32_t kJump = 0;
  static constexpr uint32_t kFire = 1;

  /// The sandbox's spec: its input layout, its per-player state (fire_cooldown,
  /// thrown_count, thrown[8]), no events.
  static game::GameSpec make_spec();

  game::GameSpec spec() const override { return make_spec(); }
  void on_join(game::Match& match, game::PlayerSlot& slot) override;
  void on_leave(game::Match& match, game::PlayerSlot& slot) override;
  void apply_input(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& frame) override;
};

/// An input frame of the sandbox from numbers (what a bot or a client builds).
game::InputFrame sandbox_input(float move_x, float move_forward, float look_yaw, bool jump, bool fire);

/// Registers the games linked into Keel's programs ("sandbox").
void register_builtin_games(game::RulesRegistry& registry);
game::RulesRegistry builtin_games();

}  // namespace keel::games
