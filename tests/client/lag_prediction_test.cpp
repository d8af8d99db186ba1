// A predicting client of a lag-compensated game: it joins from the server's checkpoint
// (the pose history inside it), steps the server's frames with their view stamps, and
// judges every shot as the server did — every confirmed hash agrees, from the first tick
// after the checkpoint, when the shots already reach back into ticks it never stepped.
#include "../game/lag_rules.h"

#include <keel/client/prediction.h>

#include <gtest/gtest.h>

namespace keel::client {
namespace {

using namespace game::lagtest;

constexpr uint32_t kLocal = 1;
constexpr uint32_t kShooter = 2;

TEST(LagPrediction, AClientJoiningFromACheckpointJudgesShotsAsTheServer) {
  auto server = game::Match::create(crossing_scene(), std::make_unique<LagRules>());
  ASSERT_TRUE(server) << server.error().message;
  game::Match& m = *server;
  const game::Layout& l = m.input_layout();
  auto step = [&](bool fire_now) {
    game::TickInputs in;
    if (m.tick() == 0) in.events = {{game::PlayerEvent::Kind::Join, kLocal}, {game::PlayerEvent::Kind::Join, kShooter}};
    // The shooter aims where it saw the target 6 ticks and a half back.
    const game::ViewStamp view{6, 128};
    const float seen = float(m.tick()) - 6.0f + 0.5f;
    const float aim = kTargetStartX + seen * kTargetSpeed / 60.0f;
    in.inputs = {{kLocal, shot(l, 0.0f, false)}, {kShooter, shot(l, aim, fire_now), view}};
    const uint64_t t = m.tick();
    m.step(in);
    return protocol::InputFrameMessage{t, m.hash(), in};
  };
  for (int i = 0; i < 40; ++i) step(false);
  PredictionConfig cfg;
  cfg.rules = [] { return std::make_unique<LagRules>(); };
  auto p = Predictor::create(m.scene(), m.save_state(), m.tick(), kLocal, cfg);
  ASSERT_TRUE(p) << p.error().message;
  std::vector<protocol::InputFrameMessage> frames;
  for (int i = 0; i < 60; ++i) frames.push_back(step(i % 3 == 0));  // a shot every third tick
  ASSERT_EQ(m.state().get_u32(kHits), 20u);  // every one where the shooter saw the target
  std::vector<HashCheck> checks;
  for (size_t i = 0; i < frames.size(); ++i) {
    (*p)->set_local_input(frames[i].tick, shot(l, 0.0f, false));
    ASSERT_TRUE((*p)->add_confirmed(frames[i]));
    (*p)->advance(frames[i].tick + 3, checks);
  }
  EXPECT_EQ((*p)->stats().hash_mismatches, 0u);
  EXPECT_EQ(checks.size(), 60u);
  EXPECT_EQ((*p)->confirmed().state().get_u32(kHits), 20u);
  EXPECT_EQ((*p)->confirmed().hash(), m.hash());
}

}  // namespace
}  // namespace keel::client
