// The Match: joins, leaves, inputs driving characters, the repeat-last rule, and
// bit-exact save/restore of players plus world.
#include <keel/sim/match.h>

#include <gtest/gtest.h>

#include <cmath>

namespace keel::sim {
namespace {

SceneDef flat_scene() {
  SceneDef s;
  s.name = "flat";
  BodyDef ground;
  ground.id = 1;
  ground.motion = MotionType::Static;
  ground.position = Vec3(0, -0.5f, 0);
  ColliderDef box;
  box.shape = ShapeType::Box;
  box.half_extents = Vec3(50, 0.5f, 50);
  ground.colliders.push_back(box);
  s.bodies.push_back(ground);
  s.spawn_points.push_back(Transform{Vec3(0, 0, 0), identity_quat()});
  s.spawn_points.push_back(Transform{Vec3(5, 0, 0), identity_quat()});
  return s;
}

TickInputs join(uint32_t p) { return TickInputs{{PlayerEvent{PlayerEvent::Kind::Join, p}}, {}}; }

TEST(Match, JoinSpawnsCharacterAtSpawnPointAndLeaveRemovesIt) {
  Match m = std::move(*Match::create(flat_scene()));
  m.step(join(7));
  m.step(join(3));
  ASSERT_EQ(m.players().size(), 2u);
  EXPECT_EQ(m.players()[0].player, 3u);  // sorted by player id
  const PlayerSlot* p7 = m.find_player(7);
  ASSERT_NE(p7, nullptr);
  BodyState s = m.world().body_state(m.world().find_body(p7->character));
  EXPECT_NEAR(s.position.x, 0.0f, 1e-4f);  // first joiner takes spawn point 0
  uint32_t body = p7->character;
  m.step(TickInputs{{PlayerEvent{PlayerEvent::Kind::Leave, 7}}, {}});
  EXPECT_EQ(m.find_player(7), nullptr);
  EXPECT_FALSE(m.world().find_body(body).valid());
}

// Yaw 0 looks along -Z: move_z = 1 walks at 4 m/s along -Z; after 1 s about 4 m.
TEST(Match, InputDrivesOnlyTheSendersCharacter) {
  Match m = std::move(*Match::create(flat_scene()));
  m.step(TickInputs{{{PlayerEvent::Kind::Join, 1}, {PlayerEvent::Kind::Join, 2}}, {}});
  for (int i = 0; i < 30; ++i) m.step({});  // settle on the floor
  Vec3 start1 = m.world().body_state(m.world().find_body(m.find_player(1)->character)).position;
  Vec3 start2 = m.world().body_state(m.world().find_body(m.find_player(2)->character)).position;
  InputFrame walk;
  walk.move_z = 1.0f;
  for (int i = 0; i < 60; ++i) m.step(TickInputs{{}, {PlayerInput{1, walk}}});
  Vec3 end1 = m.world().body_state(m.world().find_body(m.find_player(1)->character)).position;
  Vec3 end2 = m.world().body_state(m.world().find_body(m.find_player(2)->character)).position;
  EXPECT_NEAR(end1.z - start1.z, -4.0f, 0.1f);
  EXPECT_NEAR(end1.x - start1.x, 0.0f, 0.01f);
  EXPECT_NEAR(glm::length(end2 - start2), 0.0f, 0.01f);
}

TEST(Match, MissingInputRepeatsTheLastOne) {
  Match m = std::move(*Match::create(flat_scene()));
  m.step(join(1));
  InputFrame walk;
  walk.move_x = 1.0f;
  m.step(TickInputs{{}, {PlayerInput{1, walk}}});
  m.step({});
  EXPECT_EQ(m.find_player(1)->last_input, walk);
}

TEST(Match, SanitizeClampsForgedFrames) {
  InputFrame f;
  f.move_x = 3.0f;
  f.move_z = 4.0f;
  f.look_yaw = std::nanf("");
  f.buttons = 0xffffffffu;
  EXPECT_FALSE(sanitize(f));
  EXPECT_NEAR(f.move_x, 0.6f, 1e-6f);
  EXPECT_NEAR(f.move_z, 0.8f, 1e-6f);
  EXPECT_EQ(f.look_yaw, 0.0f);
  EXPECT_EQ(f.buttons, kKnownButtons);
  InputFrame wrap;
  wrap.look_yaw = 7.0f;  // 7 - 2 pi = 0.7168
  sanitize(wrap);
  EXPECT_NEAR(wrap.look_yaw, 7.0f - 6.2831853f, 1e-5f);
  InputFrame ok;
  EXPECT_TRUE(sanitize(ok));
}

TEST(Match, FireThrowsRateLimitedBallsAndCapsThem) {
  Match m = std::move(*Match::create(flat_scene()));
  m.step(join(1));
  InputFrame fire;
  fire.buttons = kButtonFire;
  for (int i = 0; i < 400; ++i) m.step(TickInputs{{}, {PlayerInput{1, fire}}});
  // One ball per 20 ticks, at most 8 alive.
  EXPECT_EQ(m.find_player(1)->thrown.size(), SandboxRules::kMaxBallsPerPlayer);
  EXPECT_EQ(m.world().body_count(), 1u + 1u + SandboxRules::kMaxBallsPerPlayer);
}

TEST(Match, SaveRestoreReproducesPlayersAndWorld) {
  Match a = std::move(*Match::create(flat_scene()));
  a.step(join(4));
  a.step(join(9));
  InputFrame f;
  f.move_x = 0.5f;
  f.look_yaw = 1.0f;
  f.buttons = kButtonFire | kButtonJump;
  for (int i = 0; i < 50; ++i) a.step(TickInputs{{}, {PlayerInput{4, f}}});
  std::vector<uint8_t> saved = a.save_state();
  Match b = std::move(*Match::create(flat_scene()));
  ASSERT_TRUE(b.restore_state(saved));
  EXPECT_EQ(b.hash(), a.hash());
  for (int i = 0; i < 50; ++i) {
    TickInputs in{{}, {PlayerInput{9, f}}};
    if (i == 20) in.events.push_back(PlayerEvent{PlayerEvent::Kind::Leave, 4});
    a.step(in);
    b.step(in);
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << a.tick();
  }
  std::vector<uint8_t> bad(saved.begin(), saved.begin() + 30);
  EXPECT_FALSE(b.restore_state(bad));
}

}  // namespace
}  // namespace keel::sim
