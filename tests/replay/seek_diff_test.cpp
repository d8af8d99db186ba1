// Seeking (dump via a checkpoint = the state simulated from the start), state diffs, and
// diff naming the one body a test perturbed, between recordings and with a desync dump.
#include "replay_test_util.h"
#include <keel/games/sandbox.h>

#include <keel/replay/commands.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/replayer.h>
#include <keel/replay/state_diff.h>

#include <cstdlib>
#include <sstream>

namespace keel::replay::test {
namespace {

constexpr uint32_t kPerturbedBody = 9;  // a sphere of the demo scene

// The match at `tick` stepped from the start with the recorded inputs, no checkpoint used.
game::Match simulate_from_start(const Recording& rec, uint64_t tick) {
  auto m = make_match(rec.header(), rec.name());
  EXPECT_TRUE(m);
  TickCursor c = rec.ticks_from_start();
  c.next();  // tick 0: the starting state
  while (m->tick() < tick) {
    auto t = c.next();
    EXPECT_TRUE(t);
    m->step(t->inputs);
  }
  return std::move(*m);
}

TEST(Seek, DumpViaCheckpointEqualsSimulationFromStart) {
  TempDir dir;
  const std::string rec_path = dir.path("m.krec");
  record(rec_path, load_scene("demo.json"), 140, true, 30);
  auto rec = Recording::open(rec_path);
  ASSERT_TRUE(rec);
  for (uint64_t tick : {0u, 29u, 30u, 31u, 100u, 137u}) {
    auto replay = Replay::start(*rec, tick);
    ASSERT_TRUE(replay) << replay.error().message;
    EXPECT_EQ(replay->base_tick(), tick / 30 * 30) << tick;
    game::Match direct = simulate_from_start(*rec, tick);
    EXPECT_EQ(replay->match().save_state(), direct.save_state()) << "tick " << tick;
    EXPECT_EQ(replay->match().hash(), replay->recorded_hash());
  }
  // The command's JSON names the tick and every body; the tick beyond the end fails.
  std::ostringstream o, e;
  ASSERT_EQ(cli::dump(cli::DumpArgs{rec_path, 100, "", 1}, cli::Io{o, e}), 0) << e.str();
  EXPECT_NE(o.str().find("\"tick\": 100"), std::string::npos);
  EXPECT_NE(o.str().find("\"reached_from_tick\": 90"), std::string::npos);
  EXPECT_EQ(cli::dump(cli::DumpArgs{rec_path, 141, "", 1}, cli::Io{o, e}), 2);
}

TEST(StateDiff, UlpDistance) {
  EXPECT_EQ(ulp_distance(1.0f, 1.0f), 0u);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1u);
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 1u);
  EXPECT_EQ(ulp_distance(-1.0f, std::nextafter(-1.0f, -2.0f)), 1u);
  EXPECT_EQ(ulp_distance(std::nextafter(0.0f, 1.0f), std::nextafter(0.0f, -1.0f)), 3u);
}

// Records the scripted session; in the second copy body 9's velocity is nudged right
// after tick `at` is stepped, before it is recorded (a bit flip on one machine).
void record_pair(const std::string& a, const std::string& b, uint64_t at, uint64_t ticks = 90,
                 uint32_t interval = 30, float nudge = 0.001f, const std::string& dump = {}) {
  record(a, load_scene("demo.json"), ticks, true, interval);
  record(b, load_scene("demo.json"), ticks, true, interval, [&](uint64_t t, game::Match& match) {
    if (t != at) return;
    sim::World& w = match.world_for_rules();
    sim::BodyId body = w.find_body(kPerturbedBody);
    sim::Vec3 v = w.body_state(body).linear_velocity;
    v.y = nudge > 0.0f ? v.y + nudge : std::nextafter(v.y, 1e9f);  // nudge 0: one ULP
    w.set_linear_velocity(body, v);
    if (!dump.empty()) {
      ASSERT_TRUE(write_desync_dump(dump, match, 0, "client 11, example"));
    }
  });
}

TEST(Diff, NamesThePerturbedBodyBetweenTwoRecordings) {
  TempDir dir;
  const std::string a = dir.path("a.krec"), b = dir.path("b.krec");
  record_pair(a, b, 60);
  std::ostringstream o, e;
  EXPECT_EQ(cli::diff(cli::DiffArgs{a, b, 1, 40}, cli::Io{o, e}), 1) << e.str();
  const std::string out = o.str();
  EXPECT_NE(out.find("first differing tick: 60"), std::string::npos) << out;
  EXPECT_EQ(out.find("inputs first differ"), std::string::npos) << out;
  EXPECT_NE(out.find("fields that differ: 1 in 1 bodies"), std::string::npos) << out;
  EXPECT_NE(out.find("  9        linear_velocity.y"), std::string::npos) << out;

  // The same through the API: only body 9, only its vertical velocity, by 0.001 m/s.
  auto ra = Recording::open(a), rb = Recording::open(b);
  auto sa = Replay::start(*ra, 60), sb = Replay::start(*rb, 60);
  ASSERT_TRUE(sa && sb);
  StateDiff d = diff_states(sa->match(), sb->match());
  ASSERT_EQ(d.bodies(), std::vector<uint32_t>{kPerturbedBody});
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_NEAR(d.fields[0].difference(), 0.001, 1e-6);
  EXPECT_GT(d.fields[0].ulps, 0u);
}

TEST(Diff, NamesThePerturbedBodyAgainstADesyncDump) {
  TempDir dir;
  const std::string a = dir.path("a.krec");
  record(a, load_scene("demo.json"), 60, true, 30);
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  for (uint64_t t = 1; t <= 45; ++t) match->step(scripted_inputs(t));
  sim::World& w = match->world_for_rules();
  sim::BodyId body = w.find_body(kPerturbedBody);
  sim::Transform pose{w.body_state(body).position + sim::Vec3(0.002f, 0.0f, 0.0f), w.body_state(body).rotation};
  w.set_transform(body, pose);
  const std::string dump = dir.path("client.kdsy");
  ASSERT_TRUE(write_desync_dump(dump, *match, 0, "test client"));
  std::ostringstream o, e;
  EXPECT_EQ(cli::diff(cli::DiffArgs{a, dump, 1, 40}, cli::Io{o, e}), 1) << e.str();
  EXPECT_NE(o.str().find("first differing tick: 45"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("desync dump at tick 45"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("  9        position.x"), std::string::npos) << o.str();
}

TEST(Diff, IdenticalRecordingsHaveNoDifference) {
  TempDir dir;
  const std::string a = dir.path("a.krec"), b = dir.path("b.krec");
  record(a, load_scene("pyramid.json"), 30, false);
  record(b, load_scene("pyramid.json"), 30, false);
  std::ostringstream o, e;
  EXPECT_EQ(cli::diff(cli::DiffArgs{a, b, 1, 40}, cli::Io{o, e}), 0);
  EXPECT_NE(o.str().find("no difference: every hash matches through tick 30"), std::string::npos) << o.str();
}

TEST(Export, CsvHasOneRowPerBodyPerTick) {
  TempDir dir;
  const std::string rec = dir.path("a.krec"), csv = dir.path("a.csv");
  record(rec, load_scene("demo.json"), 20, true, 30);
  std::ostringstream o, e;
  cli::ExportArgs args;
  args.rec = rec;
  args.csv = csv;
  args.every = 10;
  ASSERT_EQ(cli::export_csv(args, cli::Io{o, e}), 0) << e.str();
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "tick,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz,sleeping");
  size_t rows = 0;
  while (std::getline(in, line)) ++rows;
  // demo: 16 bodies; players join at ticks 1, 5 and 20 (ticks 0, 10 and 20 exported).
  EXPECT_EQ(rows, 16u + 18u + 19u);
}

}  // namespace
}  // namespace keel::replay::test

namespace keel::replay::test {
namespace {

// The worked example of docs/replay.md: KEEL_REPLAY_EXAMPLE_DIR=/tmp/desync
// build/bin/keel_replay_tests --gtest_filter=Example.* writes server.krec, client.krec
// (player 7's character one ULP further along x after tick 200), client-200.kdsy (the client's
// state at tick 200) and crashed.krec (server.krec cut short mid-chunk).
TEST(Example, DesyncInvestigationFiles) {
  const char* dir = std::getenv("KEEL_REPLAY_EXAMPLE_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set KEEL_REPLAY_EXAMPLE_DIR=DIR to write the example";
  const std::string base = std::string(dir) + "/";
  record(base + "server.krec", load_scene("demo.json"), 600, true, 120);
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  WriterOptions options;
  options.checkpoint_interval = 120;
  auto writer = RecordingWriter::create(base + "client.krec", *match, options);
  ASSERT_TRUE(writer);
  for (uint64_t t = 1; t <= 600; ++t) {
    game::TickInputs in = scripted_inputs(t);
    match->step(in);
    if (t == 200) {  // player 7's character (body 17) one ULP further along x
      sim::World& w = match->world_for_rules();
      sim::BodyId body = w.find_body(17);
      sim::BodyState s = w.body_state(body);
      s.position.x = std::nextafter(s.position.x, 1e9f);
      w.set_transform(body, sim::Transform{s.position, s.rotation});
      ASSERT_TRUE(write_desync_dump(base + "client-200.kdsy", *match, 0, "client 7, example"));
    }
    ASSERT_TRUE(writer->record(in, *match, match->hash()));
  }
  ASSERT_TRUE(writer->finish());
  std::vector<uint8_t> bytes = read_bytes(base + "server.krec");
  bytes.resize(bytes.size() * 2 / 3);
  write_bytes(base + "crashed.krec", bytes);
}

}  // namespace

// A character grounded in one match and jumping in the other is named in `other`.
TEST(Diff, NamesACharacterGroundedInOnlyOneState) {
  auto a = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  auto b = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(a && b);
  game::TickInputs join{{game::PlayerEvent{game::PlayerEvent::Kind::Join, 1}}, {}};
  a->step(join);
  b->step(join);
  for (int t = 0; t < 60; ++t) {  // the spawn point is 1 m up: land first
    a->step({});
    b->step({});
  }
  const game::InputFrame jump = games::sandbox_input(0.0f, 0.0f, 0.0f, true, false);
  a->step({});
  b->step(game::TickInputs{{}, {game::PlayerInput{1, jump}}});
  StateDiff d = diff_states(*a, *b);
  const std::string body = "body " + std::to_string(a->find_player(1)->character);
  bool named = false;
  std::string all;
  for (const std::string& line : d.other) {
    named = named || line == body + ": grounded true vs false";
    all += line + "\n";
  }
  EXPECT_TRUE(named) << all;
  // The game's own fields are named by their declared names.
  EXPECT_NE(std::find(d.game_state.begin(), d.game_state.end(), "player 1 last input buttons: - vs jump"),
            d.game_state.end());
}

// A game field that differs — here the sandbox's per-player fire cooldown, set by hand
// in one match as a damaged peer would — changes the hash, and the diff names the field
// by its declared name with both values.
TEST(Diff, NamesTheGameStateFieldThatDiffers) {
  auto a = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  auto b = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(a && b);
  game::TickInputs join{{game::PlayerEvent{game::PlayerEvent::Kind::Join, 4}}, {}};
  a->step(join);
  b->step(join);
  ASSERT_EQ(a->hash(), b->hash());
  std::vector<uint8_t> state = b->save_state();
  // The field in b's state bytes: magic 8, version 4, spec hash 8, next body id 4, joins
  // 4, random 8, timer count 4 (no timers), the match fields (gravity_mode 4,
  // spawned_count 4, spawned[64] 256), player count 4; then the slot: player 4, character
  // 4, spawn index 4, fourteen input codes 56, and fire_cooldown first.
  const size_t at = 8 + 4 + 8 + 4 + 4 + 8 + 4 + (4 + 4 + 256) + 4 + 4 + 4 + 4 + 56;
  ASSERT_EQ(state[at], 0);
  state[at] = 17;
  ASSERT_TRUE(b->restore_state(state));
  EXPECT_NE(a->hash(), b->hash());
  StateDiff d = diff_states(*a, *b);
  ASSERT_EQ(d.game_state.size(), 1u);
  EXPECT_EQ(d.game_state[0], "player 4 state fire_cooldown: 0 vs 17");
}

}  // namespace keel::replay::test
