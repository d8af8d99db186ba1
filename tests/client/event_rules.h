// A game with events for the client tests: the weightless balls of BallRules, plus an
// event each time a ball crosses into another 1.5 m strip of the floor (strips across z, the way testing::walk moves it), counted in the
// match's declared state. Which strips a ball crosses, and when, depends on every
// player's inputs, so a mispredicted remote input mispredicts events too.
#pragma once

#include "../common/ball_rules.h"

#include <keel/game/match.h>

#include <cmath>

namespace keel::client::testing {

class StripRules final : public game::Rules {
 public:
  static constexpr uint32_t kCross = 0;        ///< the event type
  static constexpr uint32_t kPlayer = 0, kStrip = 1;  ///< its payload fields
  static constexpr float kStripWidth = 1.5f;
  static constexpr game::StateRef kCrossings{0, 1, game::StateType::U32};  ///< global
  static constexpr game::StateRef kLastStrip{0, 1, game::StateType::I32};  ///< per player

  game::GameSpec spec() const override {
    game::GameSpec s = balls_.spec();
    s.name = "strips";
    s.state.global.add("crossings", game::StateType::U32);
    s.state.player.add("strip", game::StateType::I32);
    game::EventType cross;
    cross.name = "cross";
    cross.payload.add_int("player", 0, 1000);
    cross.payload.add_int("strip", -1000, 1000);
    s.events.push_back(cross);
    return s;
  }
  void on_join(game::Match& match, game::PlayerSlot& slot) override {
    balls_.on_join(match, slot);
    slot.state.set_i32(kLastStrip, strip_of(match, slot));
  }
  void on_leave(game::Match& match, game::PlayerSlot& slot) override { balls_.on_leave(match, slot); }
  void apply_input(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& in) override {
    balls_.apply_input(match, slot, in);
  }
  void after_step(game::Match& match) override {
    const game::Layout& payload = match.spec().events[kCross].payload;
    for (const game::PlayerSlot& slot : match.players()) {
      game::PlayerSlot& s = *match.find_player_for_rules(slot.player);
      const int32_t strip = strip_of(match, s);
      if (strip == s.state.get_i32(kLastStrip)) continue;
      s.state.set_i32(kLastStrip, strip);
      match.state().set_u32(kCrossings, match.state().get_u32(kCrossings) + 1);
      game::Values v;
      payload.set_integer(v, kPlayer, int32_t(s.player));
      payload.set_integer(v, kStrip, strip);
      match.emit(kCross, v);
    }
  }

 private:
  static int32_t strip_of(const game::Match& match, const game::PlayerSlot& slot) {
    sim::BodyId b = match.world().find_body(slot.character);
    if (!match.world().is_valid(b)) return 0;
    return int32_t(std::floor(match.world().body_state(b).position.z / kStripWidth));
  }
  test_support::BallRules balls_{"strips", 2.0f, 0.0f};
};

}  // namespace keel::client::testing
