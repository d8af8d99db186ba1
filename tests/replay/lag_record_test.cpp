// A recorded match of lag-compensated shots: the view stamps go into the tick records, the
// pose history into the checkpoints, and the replay re-judges every shot the same way —
// re-run from the start, and from a checkpoint it seeks to.
#include "replay_test_util.h"
#include "../game/lag_rules.h"

#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>
#include <keel/replay/writer.h>
#include <keel/game/registry.h>

#include <gtest/gtest.h>

namespace keel::replay::test {
namespace {

using namespace game::lagtest;

constexpr uint32_t kShooter = 3;
constexpr uint64_t kTicks = 150;

game::RulesRegistry lag_registry() {
  game::RulesRegistry r;
  r.add([] { return std::make_unique<LagRules>(); });
  return r;
}

// Tick t's inputs: the shooter joins at tick 0 and, every 5 ticks from tick 40, fires
// 6 ticks behind with a sub-tick fraction; even shots aim where it saw the target, odd
// ones a metre beside it.
game::TickInputs inputs_for(const game::Match& m) {
  game::TickInputs in;
  const uint64_t t = m.tick();
  if (t == 0) in.events.push_back({game::PlayerEvent::Kind::Join, kShooter});
  const bool firing = t >= 40 && t % 5 == 0;
  if (!firing) {
    in.inputs.push_back({kShooter, shot(m.input_layout(), 0.0f, false)});
    return in;
  }
  const uint64_t k = (t - 40) / 5;
  const game::ViewStamp view{6, uint8_t(k * 37 % 256)};
  const float seen = float(t - view.lag) + float(view.fraction) / 256.0f;
  const float aim = kTargetStartX + seen * kTargetSpeed / 60.0f + (k % 2 == 1 ? 1.0f : 0.0f);
  in.inputs.push_back({kShooter, shot(m.input_layout(), aim), view});
  return in;
}

struct Recorded {
  uint32_t hits = 0, misses = 0;
  uint64_t final_hash = 0;
};

Recorded record(const std::string& path) {
  auto match = game::Match::create(crossing_scene(), std::make_unique<LagRules>());
  EXPECT_TRUE(match) << match.error().message;
  WriterOptions options;
  options.checkpoint_interval = 50;
  auto writer = RecordingWriter::create(path, *match, options);
  EXPECT_TRUE(writer) << writer.error().message;
  while (match->tick() < kTicks) {
    const game::TickInputs in = inputs_for(*match);
    match->step(in);
    EXPECT_TRUE(writer->record(in, *match, match->hash()));
  }
  EXPECT_TRUE(writer->finish());
  return {match->state().get_u32(kHits), match->state().get_u32(kMisses), match->hash()};
}

TEST(LagRecording, ShotsReplayToTheSameVerdicts) {
  TempDir dir;
  const std::string path = dir.path("lagshot.krec");
  const Recorded original = record(path);
  EXPECT_EQ(original.hits, 11u);  // ticks 40, 45, ..., 145: 22 shots, every other one aimed
  EXPECT_EQ(original.misses, 11u);

  auto rec = Recording::open(path);
  ASSERT_TRUE(rec) << rec.error().message;
  const game::RulesRegistry rules = lag_registry();
  VerifyOptions vo;
  vo.rules = &rules;
  const VerifyResult v = verify(*rec, vo);
  EXPECT_TRUE(v.error.empty()) << v.error;
  EXPECT_FALSE(v.diverged_at.has_value()) << "diverged at " << *v.diverged_at;
  EXPECT_FALSE(v.damaged);
  EXPECT_EQ(v.verified, kTicks);

  // Seek past the checkpoint at tick 100: the replay restores it (with the history of
  // ticks 40..100 inside) and judges the shots of ticks 100..145 as the server did.
  ReplayOptions ro;
  ro.rules = &rules;
  auto replay = Replay::start(*rec, 101, ro);
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_EQ(replay->base_tick(), 100u);
  ASSERT_EQ(replay->match().pose_history().size(), 61u);
  uint32_t shots = 0;
  while (replay->step()) {
    ASSERT_EQ(replay->match().hash(), replay->recorded_hash()) << "at tick " << replay->tick();
    ASSERT_EQ(replay->match().events(), replay->recorded_events()) << "at tick " << replay->tick();
    for (const game::PlayerInput& pi : replay->inputs().inputs) {
      if (!replay->match().input_layout().boolean(pi.frame, kFire)) continue;
      EXPECT_EQ(pi.view.lag, 6u) << "the recorded view, at tick " << replay->tick();
      ++shots;
    }
  }
  EXPECT_EQ(shots, 9u);  // ticks 105 .. 145
  EXPECT_EQ(replay->tick(), kTicks);
  EXPECT_EQ(replay->match().state().get_u32(kHits), original.hits);
  EXPECT_EQ(replay->match().state().get_u32(kMisses), original.misses);
  EXPECT_EQ(replay->match().hash(), original.final_hash);
}

TEST(LagRecording, TickRecordsCarryViewsAndStayUnchangedWithout) {
  TickRecord t;
  t.tick = 9;
  t.hash = 42;
  game::InputFrame f;
  f.code[0] = 5;
  t.inputs.inputs.push_back({1, f});
  t.inputs.inputs.push_back({2, f, game::ViewStamp{6, 128}});
  std::vector<uint8_t> with;
  encode_tick(t, with);
  auto back = decode_tick(with);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->inputs, t.inputs);
  // Without a view stamp the bytes are what they were before view stamps: no trailer.
  t.inputs.inputs[1].view = {};
  std::vector<uint8_t> without;
  encode_tick(t, without);
  EXPECT_EQ(with.size(), without.size() + 4 + 7);
  // A stamp naming an input that is not there is refused.
  std::vector<uint8_t> bad = with;
  bad[bad.size() - 7] = 2;  // input index 2 of 2
  EXPECT_FALSE(decode_tick(bad));
}

}  // namespace
}  // namespace keel::replay::test
