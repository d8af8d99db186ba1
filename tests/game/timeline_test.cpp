// MatchTimeline: one step and one hash per tick, observers that see exactly that, a
// bounded history, the one rule for a missing input, and restore-and-re-step giving the
// bits of the uninterrupted run.
#include <keel/game/timeline.h>
#include <keel/games/sandbox.h>
#include "../common/sandbox_scene.h"

#include <gtest/gtest.h>

namespace keel::games {
namespace {

using namespace keel::sim;
using game::Match;
using game::MatchTimeline;
using game::PlayerEvent;
using game::PlayerInput;
using game::TickInputs;

Match sandbox(const SceneDef& scene) { return test_support::sandbox_match(scene); }

SceneDef flat_scene() { return test_support::flat_ground_scene({Vec3(0, 0, 0)}); }

// Player 7 joins at tick 0 and walks forward, turning a little every tick; at tick 10
// it jumps and fires. Every tick differs, so a re-step that skipped or doubled one shows.
TickInputs inputs_for(uint64_t tick) {
  TickInputs in;
  if (tick == 0) in.events.push_back(PlayerEvent{PlayerEvent::Kind::Join, 7});
  in.inputs.push_back(PlayerInput(7, sandbox_input(0.0f, 1.0f, 0.01f * float(tick), tick == 10, tick == 10)));
  return in;
}

TEST(MatchTimeline, StepHashesOnceAndObserversSeeThatStep) {
  MatchTimeline t(sandbox(flat_scene()));
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (from tick, hash)
  t.observe([&](const game::TimelineStep& s) {
    EXPECT_EQ(s.after.tick(), s.from_tick + 1);
    EXPECT_EQ(s.applied, inputs_for(s.from_tick));
    seen.emplace_back(s.from_tick, s.hash);
  });
  for (uint64_t k = 0; k < 5; ++k) {
    game::StepResult r = t.step(inputs_for(k));
    EXPECT_EQ(r.tick, k + 1);
    EXPECT_EQ(r.hash, t.match().hash());
  }
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[4].first, 4u);
  EXPECT_EQ(seen[4].second, t.match().hash());
}

TEST(MatchTimeline, HistoryIsBoundedAndRebuildGivesTheSameBits) {
  // Hashes of the last 8 ticks; a state every 5 ticks, 2 of them kept.
  MatchTimeline t(sandbox(flat_scene()), game::TimelineHistory{8, 5, 2});
  std::vector<uint64_t> hashes(1, t.match().hash());  // by state tick
  for (uint64_t k = 0; k < 23; ++k) hashes.push_back(t.step(inputs_for(k)).hash);
  // Tick 23 now: hashes of states 16..23 are held, 15 is not.
  EXPECT_FALSE(t.hash_at(15).has_value());
  ASSERT_TRUE(t.hash_at(16).has_value());
  EXPECT_EQ(*t.hash_at(16), hashes[16]);
  EXPECT_EQ(*t.hash_at(23), hashes[23]);
  EXPECT_FALSE(t.hash_at(24).has_value());
  // Saved states at 15 and 20; inputs back to tick 15.
  EXPECT_EQ(t.inputs_at(14), nullptr);
  ASSERT_NE(t.inputs_at(15), nullptr);
  EXPECT_EQ(*t.inputs_at(15), inputs_for(15));
  for (uint64_t tick : {15u, 17u, 20u, 23u}) {
    std::optional<Match> again = t.rebuild(tick, sandbox(flat_scene()));
    ASSERT_TRUE(again.has_value()) << tick;
    EXPECT_EQ(again->tick(), tick);
    EXPECT_EQ(again->hash(), hashes[tick]) << tick;
  }
  EXPECT_FALSE(t.rebuild(14, sandbox(flat_scene())).has_value());
}

TEST(MatchTimeline, RestoreAndStepEqualsTheUninterruptedRun) {
  MatchTimeline straight(sandbox(flat_scene()));
  std::vector<uint8_t> at6;
  for (uint64_t k = 0; k < 20; ++k) {
    if (k == 6) at6 = straight.match().save_state();
    straight.step(inputs_for(k));
  }
  MatchTimeline other(sandbox(flat_scene()));
  uint32_t stepped = 0;
  game::Restep how;
  how.inputs = [](const Match& before, TickInputs& out) {
    out = inputs_for(before.tick());
    return true;
  };
  how.stepped = [&](const Match&, TickInputs&) { ++stepped; };
  ASSERT_TRUE(other.restore_and_step(at6, 20, how));
  EXPECT_EQ(stepped, 14u);
  EXPECT_EQ(other.tick(), 20u);
  EXPECT_EQ(other.match().hash(), straight.match().hash());
  // Inputs that run out stop the re-step where they end; a damaged state is refused
  // and leaves the match as it was.
  how.inputs = [](const Match& before, TickInputs& out) {
    if (before.tick() >= 9) return false;
    out = inputs_for(before.tick());
    return true;
  };
  ASSERT_TRUE(other.restore_and_step(at6, 20, how));
  EXPECT_EQ(other.tick(), 9u);
  std::vector<uint8_t> damaged(at6.begin(), at6.begin() + 10);
  EXPECT_FALSE(other.restore_and_step(damaged, 20, how));
  EXPECT_EQ(other.tick(), 9u);
}

TEST(MatchTimeline, MissingInputRepeatsTheLastFrameExceptForAJoiner) {
  MatchTimeline t(sandbox(flat_scene()));
  for (uint64_t k = 0; k < 3; ++k) t.step(inputs_for(k));
  const PlayerInput repeated = game::missing_input(t.match(), {}, 7);
  EXPECT_EQ(repeated.player, 7u);
  EXPECT_EQ(repeated.frame, inputs_for(2).inputs[0].frame);
  // Joining this tick (even again) or unknown: the zero frame.
  const PlayerEvent rejoin{PlayerEvent::Kind::Join, 7};
  EXPECT_EQ(game::missing_input(t.match(), std::span(&rejoin, 1), 7).frame, game::InputFrame{});
  EXPECT_EQ(game::missing_input(t.match(), {}, 9).frame, game::InputFrame{});
  // Match::step applies the same rule to a player its inputs leave out.
  MatchTimeline left_out(sandbox(flat_scene()));
  for (uint64_t k = 0; k < 3; ++k) left_out.step(inputs_for(k));
  TickInputs explicit_repeat;
  explicit_repeat.inputs.push_back(repeated);
  EXPECT_EQ(t.step(explicit_repeat).hash, left_out.step(TickInputs{}).hash);
}

}  // namespace
}  // namespace keel::games
