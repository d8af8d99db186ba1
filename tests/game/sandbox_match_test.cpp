// The sandbox on the game layer: joins, leaves, inputs driving characters, the
// repeat-last rule, sanitising, and bit-exact save/restore of players, their declared
// state and the world.
#include <keel/game/match.h>
#include <keel/games/sandbox.h>
#include "../common/sandbox_scene.h"
#include <keel/sim/character.h>
#include <keel/sim/state_hash.h>

#include <keel/sim/worker_pool.h>

#include <gtest/gtest.h>

#include <cmath>

namespace keel::games {
namespace {

using namespace keel::sim;
using game::InputFrame;
using game::Match;
using game::PlayerEvent;
using game::PlayerInput;
using game::PlayerSlot;
using game::TickInputs;

Match sandbox(const SceneDef& scene) { return test_support::sandbox_match(scene); }

InputFrame input(float x, float forward, float yaw = 0.0f, bool jump = false, bool fire = false) {
  return sandbox_input(x, forward, yaw, jump, fire);
}

// The sandbox keeps the balls a player threw in its declared per-player state.
uint32_t balls_of(const PlayerSlot& p) { return p.state.get_u32(game::StateRef{1, 1, game::StateType::U32}); }

SceneDef flat_scene() { return test_support::flat_ground_scene({Vec3(0, 0, 0), Vec3(5, 0, 0)}); }

TickInputs join(uint32_t p) { return TickInputs{{PlayerEvent{PlayerEvent::Kind::Join, p}}, {}}; }

TEST(Match, JoinSpawnsCharacterAtSpawnPointAndLeaveRemovesIt) {
  Match m = sandbox(flat_scene());
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
  Match m = sandbox(flat_scene());
  m.step(TickInputs{{{PlayerEvent::Kind::Join, 1}, {PlayerEvent::Kind::Join, 2}}, {}});
  for (int i = 0; i < 30; ++i) m.step({});  // settle on the floor
  Vec3 start1 = m.world().body_state(m.world().find_body(m.find_player(1)->character)).position;
  Vec3 start2 = m.world().body_state(m.world().find_body(m.find_player(2)->character)).position;
  InputFrame walk = input(0.0f, 1.0f);
  for (int i = 0; i < 60; ++i) m.step(TickInputs{{}, {PlayerInput{1, walk}}});
  Vec3 end1 = m.world().body_state(m.world().find_body(m.find_player(1)->character)).position;
  Vec3 end2 = m.world().body_state(m.world().find_body(m.find_player(2)->character)).position;
  EXPECT_NEAR(end1.z - start1.z, -4.0f, 0.1f);
  EXPECT_NEAR(end1.x - start1.x, 0.0f, 0.01f);
  EXPECT_NEAR(glm::length(end2 - start2), 0.0f, 0.01f);
}

TEST(Match, MissingInputRepeatsTheLastOne) {
  Match m = sandbox(flat_scene());
  m.step(join(1));
  InputFrame walk = input(1.0f, 0.0f);
  m.step(TickInputs{{}, {PlayerInput{1, walk}}});
  m.step({});
  EXPECT_EQ(m.find_player(1)->last_input, walk);
}

// The layout's sanitising, by hand: a stick code of (3, 4) units shrinks into the disc
// along its direction (0.6, 0.8 -> codes 76 and 102 above the 127 offset), a yaw code past
// 16 bits wraps, buttons past jump and fire are cleared, codes past the layout are zeroed.
TEST(Match, SanitizeClampsForgedFrames) {
  const game::Layout layout = SandboxRules::make_spec().input;
  InputFrame f;
  f.code[0] = 127 + 3 * 127;  // clamped to 254 first: x = 127 units
  f.code[1] = 127 + 4 * 127;  // y = 127 units: (127, 127) is outside the disc
  f.code[2] = 65536 + 5;
  f.code[3] = 0xffffffffu;
  f.code[14] = 9;  // past the 14 components
  EXPECT_FALSE(layout.sanitize(f));
  const Vec3 stick = layout.stick(f, SandboxRules::kMove);
  EXPECT_NEAR(stick.x, 0.7071f, 2.0f / 127);  // (1, 1) shortened to length 1
  EXPECT_NEAR(stick.y, 0.7071f, 2.0f / 127);
  EXPECT_LE(stick.x * stick.x + stick.y * stick.y, 1.0f + 2.0f / 127);
  EXPECT_EQ(f.code[2], 5u);
  EXPECT_EQ(f.code[3], 3u);
  EXPECT_EQ(f.code[14], 0u);
  InputFrame ok = input(0.0f, 0.0f);
  EXPECT_TRUE(layout.sanitize(ok));
}

TEST(Match, FireThrowsRateLimitedBallsAndCapsThem) {
  Match m = sandbox(flat_scene());
  m.step(join(1));
  InputFrame fire = input(0.0f, 0.0f, 0.0f, false, true);
  for (int i = 0; i < 400; ++i) m.step(TickInputs{{}, {PlayerInput{1, fire}}});
  // One ball per 20 ticks, at most 8 alive.
  EXPECT_EQ(balls_of(*m.find_player(1)), SandboxRules::kMaxBallsPerPlayer);
  EXPECT_EQ(m.world().body_count(), 1u + 1u + SandboxRules::kMaxBallsPerPlayer);
}

TEST(Match, SaveRestoreReproducesPlayersAndWorld) {
  Match a = sandbox(flat_scene());
  a.step(join(4));
  a.step(join(9));
  InputFrame f = input(0.5f, 0.0f, 1.0f, true, true);
  for (int i = 0; i < 50; ++i) a.step(TickInputs{{}, {PlayerInput{4, f}}});
  std::vector<uint8_t> saved = a.save_state();
  Match b = sandbox(flat_scene());
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

// A host's shared worker pool (sim::WorkerPool) stays the match's through a restore, and a
// match stepping on it keeps the hashes of one stepping on its own thread.
TEST(Match, RestoreKeepsTheHostsWorkerPool) {
  auto pool = std::make_shared<sim::WorkerPool>(2);
  Match a = sandbox(flat_scene());
  Match b = sandbox(flat_scene());
  b.use_worker_pool(pool);
  a.step(join(4));
  b.step(join(4));
  ASSERT_TRUE(b.restore_state(a.save_state()));
  EXPECT_EQ(b.world().worker_pool(), pool);
  InputFrame f = input(0.5f, 0.0f, 1.0f, true, true);
  for (int i = 0; i < 30; ++i) {
    a.step(TickInputs{{}, {PlayerInput{4, f}}});
    b.step(TickInputs{{}, {PlayerInput{4, f}}});
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << a.tick();
  }
}

// Match::hash() hashes the match's own bytes ahead of the world's kept digests:
// it must be the state hash of save_state() on every tick, while the world falls, lies
// dormant (no players, every box asleep: its digests kept), wakes as players join and
// throw balls, and after players leave and a restore.
TEST(Match, HashIsTheStateHashOfItsBytesEveryTick) {
  SceneDef scene = flat_scene();
  for (uint32_t i = 0; i < 40; ++i) {
    BodyDef box;
    box.id = 100 + i;
    box.position = Vec3(float(i % 8) * 1.2f - 4.0f, 0.5f + float(i / 8) * 1.0f, 8.0f);
    ColliderDef c;
    c.shape = ShapeType::Box;
    c.half_extents = Vec3(0.5f);
    box.colliders.push_back(c);
    scene.bodies.push_back(box);
  }
  Match a = sandbox(scene);
  auto check = [](const Match& m, const char* when) {
    ASSERT_EQ(m.hash(), sim::state_hash(m.save_state())) << when << " at tick " << m.tick();
  };
  for (int i = 0; i < 400; ++i) {
    a.step({});
    check(a, "no players");
  }
  EXPECT_GT(a.save_state().size(), size_t{16384});  // forty bodies and their contacts
  const InputFrame f = input(0.5f, 1.0f, 0.3f, false, true);
  for (int i = 0; i < 200; ++i) {
    TickInputs in{{}, {PlayerInput{4, f}}};
    if (i == 0) in.events.push_back(PlayerEvent{PlayerEvent::Kind::Join, 4});
    if (i == 30) in.events.push_back(PlayerEvent{PlayerEvent::Kind::Join, 9});
    if (i == 120) in.events.push_back(PlayerEvent{PlayerEvent::Kind::Leave, 9});
    a.step(in);
    check(a, "playing");
  }
  Match b = sandbox(scene);
  ASSERT_TRUE(b.restore_state(a.save_state()));
  check(b, "restored");
  EXPECT_EQ(b.hash(), a.hash());
  for (int i = 0; i < 100; ++i) {
    a.step({});
    b.step({});
    check(b, "after the restore");
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << a.tick();
  }
}

// The players' characters go through the controller: yaw pi/2 turns "forward" to -X, a
// 0.3 m step in the way is climbed (feet at 0.30 m), and jump works from the ground only:
// a 5 m/s jump rises 5^2 / (2 9.81) = 1.27 m.
TEST(Match, PlayersDriveCharacterControllers) {
  SceneDef scene = flat_scene();
  BodyDef step;
  step.id = 2;
  step.motion = MotionType::Static;
  step.position = Vec3(-3 - 5, 0.15f, 0);  // face at x = -3
  ColliderDef box;
  box.shape = ShapeType::Box;
  box.half_extents = Vec3(5, 0.15f, 5);
  step.colliders.push_back(box);
  scene.bodies.push_back(step);
  Match m = sandbox(scene);
  m.step(join(1));
  const BodyId body = m.world().find_body(m.find_player(1)->character);
  EXPECT_TRUE(is_character(m.world(), body));
  for (int i = 0; i < 10; ++i) m.step({});
  EXPECT_TRUE(character_status(m.world(), body).grounded);
  InputFrame walk = input(0.0f, 1.0f, 1.5707963f);
  for (int i = 0; i < 90; ++i) m.step(TickInputs{{}, {PlayerInput{1, walk}}});
  const float feet_offset = SandboxRules::kCharacterHalfHeight + SandboxRules::kCharacterRadius;
  BodyState s = m.world().body_state(body);
  EXPECT_LT(s.position.x, -3.0f - SandboxRules::kCharacterRadius);
  EXPECT_NEAR(s.position.z, 0.0f, 0.01f);
  EXPECT_NEAR(s.position.y - feet_offset, 0.30f, 0.01f);
  InputFrame jump = input(0.0f, 0.0f, 0.0f, true);
  const float y0 = s.position.y;
  m.step(TickInputs{{}, {PlayerInput{1, jump}}});
  float top = y0;
  for (int i = 0; i < 80; ++i) {
    m.step(TickInputs{{}, {PlayerInput{1, jump}}});  // held: no second jump in the air
    top = std::max(top, m.world().body_state(body).position.y);
    if (character_status(m.world(), body).grounded) break;
  }
  EXPECT_NEAR(top - y0, 1.274f, 0.02f * 1.274f);
}

// A player's frame is the first input naming it, whatever the order of the inputs: in
// player order (the server's; a binary search) and shuffled (a full search) the match
// steps to the same bits, and a second input for a player is ignored either way.
TEST(Match, InputsInAnyOrderApplyTheFirstFrameOfEachPlayer) {
  Match sorted = sandbox(flat_scene());
  Match shuffled = sandbox(flat_scene());
  for (uint32_t p : {2u, 4u, 9u}) {
    sorted.step(join(p));
    shuffled.step(join(p));
  }
  for (int t = 0; t < 30; ++t) {
    TickInputs a, b;
    a.inputs = {PlayerInput(2, input(1, 0)), PlayerInput(4, input(0, 1)), PlayerInput(4, input(-1, 0)),
                PlayerInput(9, input(0, -1))};
    b.inputs = {PlayerInput(9, input(0, -1)), PlayerInput(4, input(0, 1)), PlayerInput(2, input(1, 0)),
                PlayerInput(4, input(-1, 0))};
    sorted.step(a);
    shuffled.step(b);
    ASSERT_EQ(sorted.hash(), shuffled.hash()) << "tick " << t;
  }
  // Player 4 walked forward (+z in the look frame), the ignored second frame would have
  // sent it along -x.
  const PlayerSlot* p4 = sorted.find_player(4);
  ASSERT_NE(p4, nullptr);
  EXPECT_EQ(p4->last_input, input(0, 1));
}

}  // namespace
}  // namespace keel::games
