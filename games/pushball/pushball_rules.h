// Pushball: two teams of pushers (dynamic spheres) shove a ball into the other team's
// goal. A game module built against the game headers alone (keel/game/module.h); the
// numbers below are the whole of its tuning, so a test or a bot can read them.
#pragma once

#include <keel/game/match.h>
#include <keel/game/rules.h>
#include <keel/sim/math.h>

#include <cstdint>
#include <optional>
#include <string>

namespace keel::games::pushball {

// --- the pitch (metres; y is up, the floor's top is y = 0) ---
/// The goal zones: a ball whose centre is inside the box scores. Goal 0 (at -x) is the
/// one team 0 defends, so a ball in it scores for team 1, and the other way round.
inline constexpr float kGoalDepthStart = 13.5f;  ///< |x| where a goal zone begins
inline constexpr float kGoalDepthEnd = 15.0f;    ///< |x| of the end wall
inline constexpr float kGoalHalfWidth = 3.0f;    ///< |z| of a goal zone's sides
inline constexpr float kGoalHeight = 3.0f;       ///< y of a goal zone's top
/// A ball below this height left the pitch; it is put back at the centre without a goal.
inline constexpr float kFallHeight = -5.0f;

// --- the bodies ---
inline constexpr uint32_t kBalls = 1;
inline constexpr float kBallRadius = 0.4f;
inline constexpr float kBallMass = 8.0f;  ///< kg
/// Body kinds (BodyDef::kind) for clients that draw the match: the ball and the pushers.
inline constexpr uint32_t kKindPusher = 1;
inline constexpr uint32_t kKindBall = 2;
inline constexpr float kPusherRadius = 0.5f;
inline constexpr float kPusherMass = 60.0f;  ///< kg
/// Where a pusher spawns when the scene has no spawn points: |x| from the centre line.
inline constexpr float kDefaultSpawnX = 8.0f;

// --- driving and pushing ---
inline constexpr float kDriveSpeed = 6.0f;   ///< m/s at full stick
inline constexpr float kBoostSpeed = 9.0f;   ///< m/s at full stick with boost held
inline constexpr float kDriveAccel = 30.0f;  ///< m/s^2: how fast a pusher reaches the wished velocity
/// Ticks of holding `charge` for a full push; holding longer adds nothing.
inline constexpr uint32_t kMaxCharge = 60;
/// The impulse (N s) of a full push on each ball within kPushRange, along the aim.
inline constexpr float kPushImpulse = 96.0f;
/// A fraction of the push goes upwards, so a pushed ball hops rather than grinds.
inline constexpr float kPushLift = 0.15f;
/// Centre to centre, metres: how close a ball must be to be pushed.
inline constexpr float kPushRange = 1.6f;
/// Centre to centre, metres: a pusher this close to a ball after a step touched it.
inline constexpr float kTouchRange = kPusherRadius + kBallRadius + 0.1f;

// --- the round ---
inline constexpr uint32_t kGoalsToWin = 3;
inline constexpr uint32_t kRoundSeconds = 180;  ///< the round clock, at the scene's tick rate
/// Ticks between a ball's reset at the centre and its kick-off.
inline constexpr uint32_t kKickoffDelay = 60;
inline constexpr float kKickoffSpeed = 2.0f;  ///< m/s
/// Kick-off directions: the circle cut into this many, one drawn with random_below.
inline constexpr uint32_t kKickoffDirections = 16;
/// Timer ids: timer kKickoffTimer + i kicks off ball i.
inline constexpr uint32_t kKickoffTimer = 1;

// --- the input layout, in declaration order ---
inline constexpr uint32_t kDrive = 0;  ///< stick, 64 steps: x strafes right, y drives along the aim
inline constexpr uint32_t kAim = 1;    ///< angle, 12 bits: heading in the floor plane, 0 = +x, pi/2 = +z
inline constexpr uint32_t kBoost = 2;  ///< bool: drive at kBoostSpeed
inline constexpr uint32_t kPush = 3;   ///< buttons {charge}
inline constexpr uint32_t kCharge = 0; ///< the button: hold to charge, release to push
inline constexpr uint32_t kDriveSteps = 64;
inline constexpr uint32_t kAimBits = 12;

// --- the declared state (handles in declaration order; make_spec declares the fields) ---
namespace global {
inline constexpr game::StateRef kScore{0, 2, game::StateType::I32};  ///< goals of team 0, team 1
inline constexpr game::StateRef kTicksLeft{2, 1, game::StateType::U32};
inline constexpr game::StateRef kRound{3, 1, game::StateType::U32};   ///< kick-offs so far
inline constexpr game::StateRef kJoined{4, 1, game::StateType::U32};  ///< players ever joined
inline constexpr game::StateRef kOver{5, 1, game::StateType::Bool};
inline constexpr game::StateRef kWinner{6, 1, game::StateType::I32};  ///< -1 for a draw
inline constexpr game::StateRef kBall{7, kBalls, game::StateType::U32};        ///< body ids
inline constexpr game::StateRef kLastTouch{7 + kBalls, kBalls, game::StateType::I32};  ///< player id or -1
}  // namespace global
namespace player {
inline constexpr game::StateRef kTeam{0, 1, game::StateType::I32};
inline constexpr game::StateRef kChargeTicks{1, 1, game::StateType::U32};
inline constexpr game::StateRef kPusher{2, 1, game::StateType::U32};  ///< body id
}  // namespace player

// --- the events, in declaration order, and their payload fields ---
inline constexpr uint32_t kGoalEvent = 0;      ///< {team, scorer, ball}
inline constexpr uint32_t kKickoffEvent = 1;   ///< {ball, direction, round}
inline constexpr uint32_t kRoundOverEvent = 2; ///< {winner}
inline constexpr uint32_t kGoalTeam = 0, kGoalScorer = 1, kGoalBall = 2;
inline constexpr uint32_t kKickoffBall = 0, kKickoffDirection = 1, kKickoffRound = 2;
inline constexpr uint32_t kRoundOverWinner = 0;
/// Payload ints hold body and player ids up to this (larger ids are clamped to it).
inline constexpr int32_t kMaxIdInPayload = (1 << 24) - 2;

/// The game's declaration: input, state, events and body bounds.
game::GameSpec make_spec();
/// Null when make_spec() validates and agrees with the handles above, else what is wrong.
const char* self_check();
/// "team 0 wins 3-1" or "draw 2-2" from the two scores (inline: a test or a tool can
/// word a result as the module does without loading it).
inline std::string result_text(int32_t score0, int32_t score1) {
  if (score0 == score1) return "draw " + std::to_string(score0) + "-" + std::to_string(score1);
  const bool first = score0 > score1;
  return std::string("team ") + (first ? "0" : "1") + " wins " + std::to_string(first ? score0 : score1) + "-" +
         std::to_string(first ? score1 : score0);
}

class PushballRules final : public game::Rules {
 public:
  game::GameSpec spec() const override { return make_spec(); }
  void on_start(game::Match& match) override;
  void on_join(game::Match& match, game::PlayerSlot& slot) override;
  void on_leave(game::Match& match, game::PlayerSlot& slot) override;
  void on_timer(game::Match& match, uint32_t timer) override;
  void apply_input(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& frame) override;
  void after_step(game::Match& match) override;
  std::optional<std::string> match_over(const game::Match& match) const override;
};

}  // namespace keel::games::pushball
