// The sandbox's visitor input: spawning a shape at a point, dragging a body on a spring,
// the spawn rate and cap, the match-wide gravity switch, and a match of all of them saved,
// restored and re-stepped to the same hashes. The numbers are worked out by hand below.
#include <keel/game/match.h>
#include <keel/games/sandbox.h>
#include "../common/sandbox_scene.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace keel::games {
namespace {

using namespace keel::sim;
using game::InputFrame;
using game::Match;
using game::PlayerEvent;
using game::PlayerInput;
using game::TickInputs;
using R = SandboxRules;

constexpr game::StateRef kGravityMode{0, 1, game::StateType::U32};
constexpr game::StateRef kSpawnedCount{1, 1, game::StateType::U32};
constexpr game::StateRef kSpawned{2, R::kMaxSpawned, game::StateType::U32};
// The player's last spawn counter applied (after fire_cooldown, thrown_count, thrown[8],
// spawn_cooldown).
constexpr game::StateRef kSpawnSeqApplied{3 + R::kMaxBallsPerPlayer, 1, game::StateType::U32};

// The character stands well away from where the tests spawn.
SceneDef flat_scene() { return test_support::flat_ground_scene({Vec3(20, 0, 20)}); }

Match sandbox() { return test_support::sandbox_match(flat_scene()); }

InputFrame visit(const SandboxVisit& v) {
  InputFrame f = sandbox_input(0, 0, 0, false, false);
  set_sandbox_visit(f, v);
  return f;
}

void step_with(Match& m, const InputFrame& f) { m.step(TickInputs{{}, {PlayerInput{1, f}}}); }

Match joined() {
  Match m = sandbox();
  m.step(TickInputs{{PlayerEvent{PlayerEvent::Kind::Join, 1}}, {}});
  return m;
}

BodyState state_of(const Match& m, uint32_t id) { return m.world().body_state(m.world().find_body(id)); }

// The spawn counter a new click of player 1 carries: one past the last applied.
uint32_t next_seq(const Match& m) {
  return (m.find_player(1)->state.get_u32(kSpawnSeqApplied) + 1) & R::kSpawnSeqMax;
}

// Spawns one shape at `at` and returns its id (the newest spawned body).
uint32_t spawn_one(Match& m, uint32_t shape, Vec3 at) {
  step_with(m, visit({.spawn = shape, .spawn_at = at, .spawn_seq = next_seq(m)}));
  const uint32_t n = m.state().get_u32(kSpawnedCount);
  return n == 0 ? 0 : m.state().get_u32(kSpawned, n - 1);
}

// The body is in the world by the time the spawning tick's step ran, with its lowest
// point at the clicked point: a box of half extent 0.25 centred 0.25 above it, a standing
// capsule (radius 0.25, half height 0.25) 0.5 above. One tick of fall from rest at
// 9.81 m/s^2 moves it at most 9.81/3600 = 2.7 mm (the ground holds the box anyway).
TEST(SandboxVisit, SpawnMakesTheChosenShapeAtThePoint) {
  Match m = joined();
  const uint64_t tick = m.tick();
  const uint32_t box = spawn_one(m, R::kSpawnBox, Vec3(1.0f, 0.0f, 2.0f));
  ASSERT_NE(box, 0u);
  EXPECT_EQ(m.tick(), tick + 1);
  std::vector<ColliderDef> cs = m.world().colliders(m.world().find_body(box));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].shape, ShapeType::Box);
  EXPECT_FLOAT_EQ(cs[0].half_extents.x, 0.25f);
  BodyState s = state_of(m, box);
  EXPECT_EQ(s.kind, R::kKindSpawned);
  EXPECT_NEAR(s.position.x, 1.0f, 1e-4f);
  EXPECT_NEAR(s.position.y, 0.25f, 3e-3f);
  EXPECT_NEAR(s.position.z, 2.0f, 1e-4f);
  for (uint32_t i = 0; i < R::kSpawnCooldownTicks; ++i) step_with(m, visit({}));
  const uint32_t capsule = spawn_one(m, R::kSpawnCapsule, Vec3(-3.0f, 5.0f, 0.5f));
  cs = m.world().colliders(m.world().find_body(capsule));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].shape, ShapeType::Capsule);
  s = state_of(m, capsule);
  EXPECT_NEAR(s.position.x, -3.0f, 1e-4f);
  EXPECT_NEAR(s.position.y, 5.5f, 3e-3f);
  EXPECT_NEAR(s.position.z, 0.5f, 1e-4f);
}

// A new click every tick spawns once per 15 ticks: 60 ticks of them make 4 bodies. Past
// 64 spawned bodies the oldest is removed: the count stays 64 and the first id is gone.
TEST(SandboxVisit, SpawnsAreRateLimitedAndCapped) {
  Match m = joined();
  for (int i = 0; i < 60; ++i) {
    step_with(m, visit({.spawn = R::kSpawnSphere, .spawn_at = Vec3(0, 0, 0), .spawn_seq = next_seq(m)}));
  }
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), 4u);
  const uint32_t first = m.state().get_u32(kSpawned, 0);
  const uint32_t bodies_before = m.world().body_count();
  for (uint32_t i = 0; i < (R::kMaxSpawned - 4 + 3) * R::kSpawnCooldownTicks; ++i) {
    // Spread the spawns so they do not pile into one spot.
    const float x = float(i / R::kSpawnCooldownTicks % 8) - 4.0f, z = float(i / R::kSpawnCooldownTicks / 8) - 4.0f;
    step_with(m, visit({.spawn = R::kSpawnBox, .spawn_at = Vec3(x, 0, z), .spawn_seq = next_seq(m)}));
  }
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), R::kMaxSpawned);
  EXPECT_EQ(m.world().body_count(), bodies_before - 4 + R::kMaxSpawned);
  EXPECT_FALSE(m.world().find_body(first).valid());
  uint32_t spawned_in_world = 0;
  for (BodyId b : m.world().bodies()) spawned_in_world += m.world().body_state(b).kind == R::kKindSpawned;
  EXPECT_EQ(spawned_in_world, R::kMaxSpawned);
}

// One click is one body whatever is repeated: the click's frame applied once and then
// repeated by the match for 40 ticks in which the player's input is missing (game-rules.md
// section 2) spawns one box, where a held value would have spawned one every 15 ticks
// (ticks 0, 15 and 30: three). Saved after 20 of those ticks and restored into a fresh
// match, the repeating goes on from the restored state (the last frame and the last
// counter applied are both in it) and still nothing more spawns; both copies keep one hash.
TEST(SandboxVisit, ARepeatedClickSpawnsOnceAcrossMissingInputAndARestore) {
  Match m = joined();
  step_with(m, visit({.spawn = R::kSpawnBox, .spawn_at = Vec3(1, 0, 1), .spawn_seq = 7}));
  ASSERT_EQ(m.state().get_u32(kSpawnedCount), 1u);
  const uint32_t box = m.state().get_u32(kSpawned, 0);
  for (int i = 0; i < 20; ++i) m.step(TickInputs{});  // no input: the click's frame repeats
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), 1u);
  Match restored = sandbox();
  ASSERT_TRUE(restored.restore_state(m.save_state()));
  for (int i = 0; i < 19; ++i) {
    m.step(TickInputs{});
    restored.step(TickInputs{});
  }
  for (const Match* x : {&m, &restored}) {
    EXPECT_EQ(x->state().get_u32(kSpawnedCount), 1u);
    EXPECT_EQ(x->state().get_u32(kSpawned, 0), box);
    EXPECT_EQ(x->find_player(1)->state.get_u32(kSpawnSeqApplied), 7u);
    uint32_t spawned_in_world = 0;
    for (BodyId b : x->world().bodies()) spawned_in_world += x->world().body_state(b).kind == R::kKindSpawned;
    EXPECT_EQ(spawned_in_world, 1u);
  }
  EXPECT_EQ(m.hash(), restored.hash());
  // The next click (a new counter) in the restored match spawns the second body.
  step_with(restored, visit({.spawn = R::kSpawnSphere, .spawn_at = Vec3(-1, 0, 1), .spawn_seq = 8}));
  EXPECT_EQ(restored.state().get_u32(kSpawnedCount), 2u);
}

// A second click inside the cooldown is late, not lost: clicked 5 ticks after the first,
// it spawns when the 15-tick cooldown has run out (the 15th tick after the first spawn),
// and once. The counter wraps: 255 then 0 are two clicks.
TEST(SandboxVisit, AClickInTheCooldownWaitsAndTheCounterWraps) {
  Match m = joined();
  const InputFrame first = visit({.spawn = R::kSpawnBox, .spawn_at = Vec3(1, 0, 1), .spawn_seq = 255});
  const InputFrame second = visit({.spawn = R::kSpawnBox, .spawn_at = Vec3(-1, 0, 1), .spawn_seq = 0});
  step_with(m, first);  // spawns; cooldown 15
  for (int i = 0; i < 4; ++i) step_with(m, first);
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), 1u);
  for (int i = 0; i < 10; ++i) step_with(m, second);  // ticks 5..14 after the first: cooling down
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), 1u);
  step_with(m, second);  // the 15th: the cooldown has counted down to 0 at this apply point
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), 2u);
  for (int i = 0; i < 40; ++i) step_with(m, second);
  EXPECT_EQ(m.state().get_u32(kSpawnedCount), 2u);
}

// A sphere lifted 0.5 m by a critically damped spring (w = 8/s) from rest. In continuous
// time the gap left after t is 0.5 (1 + w t) e^(-w t) = 0.046 m at 0.5 s. Stepped, the
// spring's impulse comes once a tick (dt = 1/60) and gravity in 6 substeps (h = dt/6), so
// per tick: v += (w^2 gap - 2 w v + g) dt, then six times v -= g h, y += v h. Run by hand
// for 30 ticks that leaves a gap of 0.0309 m (the start acceleration, 64 * 0.5 = 32 m/s^2,
// is under the bound). Held, it settles where that map stands still: v = -g dt 15/36 and
// the body 2 g dt (15/36) / w = 0.0170 m above the point. Let go, it falls back to rest
// on the ground at 0.25.
TEST(SandboxVisit, DragPullsTowardTheTargetAndStopsWhenReleased) {
  Match m = joined();
  const uint32_t ball = spawn_one(m, R::kSpawnSphere, Vec3(0, 0, 0));
  for (int i = 0; i < 30; ++i) step_with(m, visit({}));
  const float y0 = state_of(m, ball).position.y;
  EXPECT_NEAR(y0, 0.25f, 0.01f);
  const InputFrame pull = visit({.drag_body = ball, .drag_to = Vec3(0, y0 + 0.5f, 0)});
  for (int i = 0; i < 30; ++i) step_with(m, pull);
  const float gap = y0 + 0.5f - state_of(m, ball).position.y;
  EXPECT_NEAR(gap, 0.0309f, 0.002f);
  EXPECT_LT(gap, 0.5f * 5.0f * std::exp(-4.0f));
  for (int i = 0; i < 60; ++i) step_with(m, pull);
  const float above = 2.0f * 9.81f / 60.0f * (15.0f / 36.0f) / R::kDragOmega;
  EXPECT_NEAR(state_of(m, ball).position.y - (y0 + 0.5f), above, 0.002f);  // held against gravity
  for (int i = 0; i < 60; ++i) step_with(m, visit({}));
  EXPECT_NEAR(state_of(m, ball).position.y, 0.25f, 0.01f);
}

// Dragging a character does nothing: the walking rules own it.
TEST(SandboxVisit, CharactersCannotBeDragged) {
  Match m = joined();
  for (int i = 0; i < 30; ++i) step_with(m, visit({}));
  const uint32_t me = m.find_player(1)->character;
  const Vec3 before = state_of(m, me).position;
  for (int i = 0; i < 30; ++i) step_with(m, visit({.drag_body = me, .drag_to = before + Vec3(0, 5, 0)}));
  EXPECT_NEAR(state_of(m, me).position.y, before.y, 0.01f);
}

// Free fall from rest for 1 s at 60 Hz and 6 substeps (semi-implicit Euler): the drop is
// g * (1/2 + 1/720) = 0.5014 g. Low gravity (0.25 * 9.81) drops 1.230 m; off, nothing; a
// later "keep" changes nothing.
TEST(SandboxVisit, GravitySwitchChangesTheFall) {
  Match m = joined();
  step_with(m, visit({.gravity = 1 + R::kGravityLow}));
  EXPECT_EQ(m.state().get_u32(kGravityMode), uint32_t(R::kGravityLow));
  EXPECT_NEAR(m.world().settings().gravity.y, -9.81f * 0.25f, 1e-6f);
  const uint32_t ball = spawn_one(m, R::kSpawnSphere, Vec3(0, 10, 0));
  const float y0 = state_of(m, ball).position.y;
  const float v0 = state_of(m, ball).linear_velocity.y;  // one tick of fall already
  for (int i = 0; i < 60; ++i) step_with(m, visit({}));
  const float expect = 0.25f * 9.81f * (0.5f + 1.0f / 720.0f) - v0 * 1.0f;
  EXPECT_NEAR(y0 - state_of(m, ball).position.y, expect, 0.01f);
  step_with(m, visit({.gravity = 1 + R::kGravityOff}));
  const BodyState s = state_of(m, ball);
  for (int i = 0; i < 60; ++i) step_with(m, visit({}));
  // Off: it keeps its speed (about 2.5 m/s down), no faster.
  EXPECT_NEAR(state_of(m, ball).linear_velocity.y, s.linear_velocity.y, 1e-4f);
  EXPECT_EQ(m.state().get_u32(kGravityMode), uint32_t(R::kGravityOff));
  EXPECT_FLOAT_EQ(m.world().settings().gravity.y, 0.0f);
}

// A match of every visitor action, stepped twice from the same inputs, gives the same
// hash chain; saved mid-way and restored into a fresh match, it re-steps to the same
// hashes too (the gravity mode and the world's gravity come back with the state).
TEST(SandboxVisit, VisitorMatchReplaysToTheSameHashes) {
  auto script = [](uint64_t t) {
    // A click every 40 ticks from tick 5 (its counter and shape held until the next).
    SandboxVisit v;
    if (t >= 5) {
      const uint32_t click = uint32_t((t - 5) / 40);
      v = {.spawn = 1 + click % 3, .spawn_at = Vec3(float(click % 7) - 3, 0, 1), .spawn_seq = 1 + click};
    }
    if (t > 60 && t < 200) v.drag_body = 3, v.drag_to = Vec3(0, 2, 0);
    if (t == 100) v.gravity = 1 + R::kGravityLow;
    if (t == 220) v.gravity = 1 + R::kGravityOff;
    return visit(v);
  };
  auto run = [&](Match& m, uint64_t from, uint64_t to, std::vector<uint64_t>& hashes) {
    for (uint64_t t = from; t < to; ++t) {
      step_with(m, script(t));
      hashes.push_back(m.hash());
    }
  };
  Match a = joined(), b = joined();
  std::vector<uint64_t> ha, hb, hc;
  run(a, 0, 300, ha);
  run(b, 0, 150, hb);
  const std::vector<uint8_t> saved = b.save_state();
  Match c = sandbox();
  ASSERT_TRUE(c.restore_state(saved));
  hc = hb;
  run(c, 150, 300, hc);
  run(b, 150, 300, hb);
  EXPECT_EQ(ha, hb);
  EXPECT_EQ(ha, hc);
  EXPECT_EQ(c.state().get_u32(kGravityMode), uint32_t(R::kGravityOff));
  EXPECT_EQ(a.state().get_u32(kSpawnedCount), 8u);  // ticks 5, 45, ..., 285
}

}  // namespace
}  // namespace keel::games
