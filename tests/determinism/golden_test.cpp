// The golden-chain checks behind `keel-sim determinism` and keel-detrun: the file format,
// and that a check passes on an unchanged world, names the first differing tick when a
// golden disagrees, and covers thread counts, prefixes and save/restore.
#include <check.h>
#include <golden.h>
#include <match_script.h>

#include <keel/games/sandbox.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace keel::det {
namespace {

sim::BodyDef box(uint32_t id, sim::MotionType motion, sim::Vec3 pos, sim::Vec3 half) {
  sim::BodyDef b;
  b.id = id;
  b.motion = motion;
  b.position = pos;
  sim::ColliderDef c;
  c.shape = sim::ShapeType::Box;
  c.half_extents = half;
  b.colliders.push_back(c);
  return b;
}

/// A ground, a short stack and a ball falling onto it; spawn points for a match.
sim::SceneDef small_scene() {
  sim::SceneDef s;
  s.name = "small";
  s.bodies.push_back(box(1, sim::MotionType::Static, {0, -0.5f, 0}, {20, 0.5f, 20}));
  for (uint32_t i = 0; i < 3; ++i) s.bodies.push_back(box(2 + i, sim::MotionType::Dynamic, {0, 0.5f + float(i), 0}, {0.5f, 0.5f, 0.5f}));
  sim::BodyDef ball;
  ball.id = 10;
  ball.position = {0.2f, 5.0f, 0.1f};
  ball.colliders.push_back(sim::ColliderDef{});
  s.bodies.push_back(ball);
  s.spawn_points.push_back({{3, 0, 0}, sim::identity_quat()});
  s.spawn_points.push_back({{-3, 0, 2}, sim::identity_quat()});
  return s;
}

class GoldenCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("keel_golden_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Runs the checks on "small.json" (the loader ignores the path); returns the output.
  std::string run(DeterminismOptions o, int expected_exit) {
    o.scenes = {"small.json"};
    o.golden_dir = dir_.string();
    ::testing::internal::CaptureStdout();
    const int exit_code = run_determinism(o, [](const std::string&) -> keel::Expected<sim::SceneDef> { return small_scene(); });
    std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(exit_code, expected_exit) << out;
    return out;
  }

  std::string golden_file(bool match) const { return golden_path(dir_.string(), "small.json", match); }

  /// Replaces the hash on the `tick T` line.
  void corrupt_tick(bool match, uint64_t tick) {
    std::ifstream in(golden_file(match));
    std::stringstream text;
    std::string line;
    const std::string prefix = "tick " + std::to_string(tick) + " ";
    while (std::getline(in, line)) text << (line.rfind(prefix, 0) == 0 ? prefix + "0123456789abcdef" : line) << "\n";
    in.close();
    std::ofstream(golden_file(match)) << text.str();
  }

  std::filesystem::path dir_;
};

DeterminismOptions writing(uint64_t ticks, bool match = false) {
  DeterminismOptions o;
  o.write = true;
  o.match = match;
  o.ticks = ticks;
  return o;
}

TEST_F(GoldenCheck, WrittenChainChecksAtEveryThreadCountAndAfterRestore) {
  EXPECT_EQ(run(writing(120), 0), "wrote " + golden_file(false) + " (120 ticks, every 10)\n");
  for (uint32_t threads : {1u, 2u, 4u, 8u}) {
    DeterminismOptions o;
    o.threads = threads;
    o.restore_at = {7, 64, 119};
    EXPECT_EQ(run(o, 0), "ok small.json\n") << "threads " << threads;
  }
}

TEST_F(GoldenCheck, MismatchNamesTheFirstDifferingTick) {
  run(writing(120), 0);
  auto golden = read_golden(golden_file(false));
  ASSERT_TRUE(golden);
  corrupt_tick(false, 50);
  corrupt_tick(false, 90);
  EXPECT_EQ(run({}, 1), "mismatch small.json at tick 50: golden 0123456789abcdef got " + hex_hash(golden->hashes[5]) + "\n");
  // A prefix that ends before the damage still passes: each hash is checked exactly.
  DeterminismOptions prefix;
  prefix.ticks = 40;
  EXPECT_EQ(run(prefix, 0), "ok small.json\n");
  // So does a run restored inside the undamaged prefix.
  DeterminismOptions restored;
  restored.ticks = 40;
  restored.restore_at = {13};
  EXPECT_EQ(run(restored, 0), "ok small.json\n");
}

TEST_F(GoldenCheck, TimingFollowsTheCheckWithOneTimePerStep) {
  run(writing(120), 0);
  DeterminismOptions o;
  o.timing = true;
  o.ticks = 90;
  o.restore_at = {30};  // the re-stepped chain after a restore is not timed again
  const std::string out = run(o, 0);
  ASSERT_EQ(out.rfind("ok small.json\ntiming small.json ticks=90 step_ms_mean=", 0), 0u) << out;
  double mean = -1, p50 = -1, p95 = -1, max = -1;
  ASSERT_EQ(std::sscanf(out.c_str() + out.find("step_ms_mean="), "step_ms_mean=%lf step_ms_p50=%lf step_ms_p95=%lf step_ms_max=%lf",
                        &mean, &p50, &p95, &max), 4) << out;
  EXPECT_GT(max, 0.0);  // 90 steps of a falling stack take some time
  EXPECT_LE(p50, p95);
  EXPECT_LE(p95, max);
  EXPECT_LE(mean, max);
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
  // A mismatch prints no timing: the chain stopped early.
  corrupt_tick(false, 50);
  EXPECT_EQ(run(o, 1).find("timing"), std::string::npos);
}

TEST_F(GoldenCheck, OptionsOutsideTheGoldenAreErrors) {
  EXPECT_EQ(run({}, 1), "error small.json: no golden " + golden_file(false) + " (write one with --write)\n");
  run(writing(60), 0);
  DeterminismOptions too_long;
  too_long.ticks = 70;
  EXPECT_NE(run(too_long, 1).find("covers 60 ticks, fewer than --ticks 70"), std::string::npos);
  DeterminismOptions odd_every;
  odd_every.every = 15;
  EXPECT_NE(run(odd_every, 1).find("--every must be a multiple of it"), std::string::npos);
  DeterminismOptions every20;
  every20.every = 20;
  EXPECT_EQ(run(every20, 0), "ok small.json\n");
  DeterminismOptions late_restore;
  late_restore.restore_at = {60};
  EXPECT_NE(run(late_restore, 1).find("--restore-at 60 is not below"), std::string::npos);
  DeterminismOptions as_match;
  as_match.match = true;
  EXPECT_NE(run(as_match, 1).find("no golden"), std::string::npos);
}

TEST_F(GoldenCheck, RecordedMatchReplaysItsOwnInputs) {
  run(writing(400, true), 0);
  auto golden = read_golden(golden_file(true));
  ASSERT_TRUE(golden);
  EXPECT_EQ(golden->kind, ChainKind::Match);
  EXPECT_EQ(golden->rules, "sandbox");
  EXPECT_EQ(golden->inputs, scripted_match_inputs(400, games::SandboxRules::make_spec().input));
  DeterminismOptions o;
  o.match = true;
  o.threads = 4;
  o.restore_at = {45, 301, 350};
  EXPECT_EQ(run(o, 0), "ok small.json\n");

  // The check reads the recorded inputs, not the script: change one and the chain breaks
  // at the first hash after it.
  Golden edited = *golden;
  game::TickInputs& first = edited.inputs.begin()->second;
  ASSERT_FALSE(first.inputs.empty());
  first.inputs[0].frame.code[0] = first.inputs[0].frame.code[0] == 254 ? 253 : 254;  // move x: +1 or -1
  ASSERT_TRUE(write_golden(golden_file(true), edited));
  DeterminismOptions check;
  check.match = true;
  const std::string out = run(check, 1);
  EXPECT_EQ(out.rfind("mismatch small.json at tick 10: golden ", 0), 0u) << out;
}

TEST(MatchScript, CoversJoinsLeavesForgedAndAbsentPlayers) {
  const auto inputs = scripted_match_inputs(600, games::SandboxRules::make_spec().input);
  EXPECT_EQ(inputs, scripted_match_inputs(600, games::SandboxRules::make_spec().input));
  size_t joins = 0, leaves = 0, frames = 0;
  bool forged = false, absent = false;
  for (const auto& [tick, in] : inputs) {
    for (const auto& e : in.events) (e.kind == game::PlayerEvent::Kind::Join ? joins : leaves)++;
    for (size_t i = 0; i < in.inputs.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(in.inputs[i - 1].player, in.inputs[i].player) << "tick " << tick;
      }
      game::InputFrame f = in.inputs[i].frame;
      forged = forged || !games::SandboxRules::make_spec().input.sanitize(f);
      absent = absent || in.inputs[i].player == 9;
      ++frames;
    }
  }
  EXPECT_GE(joins, 6u);
  EXPECT_GE(leaves, 3u);
  EXPECT_GT(frames, 100u);
  EXPECT_TRUE(forged);
  EXPECT_TRUE(absent);
}

TEST(GoldenFormat, RoundTripsExactly) {
  Golden g;
  g.scene = "scenes/with space.json";
  g.kind = ChainKind::Match;
  g.rules = "sandbox";
  g.ticks = 20;
  g.every = 10;
  g.inputs[0].events.push_back({game::PlayerEvent::Kind::Join, 3});
  game::InputFrame f;
  f.code = {13, 0, 65535, 3, 0, 16777215};
  g.inputs[0].inputs.push_back({3, f});
  g.inputs[7].events.push_back({game::PlayerEvent::Kind::Leave, 3});
  g.hashes = {0, 0xffffffffffffffffull, 0x0123456789abcdefull};
  auto back = parse_golden(format_golden(g), "x");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->scene, g.scene);
  EXPECT_EQ(back->kind, g.kind);
  EXPECT_EQ(back->rules, g.rules);
  EXPECT_EQ(back->ticks, g.ticks);
  EXPECT_EQ(back->every, g.every);
  EXPECT_EQ(back->inputs, g.inputs);
  EXPECT_EQ(back->hashes, g.hashes);
}

TEST(GoldenFormat, ErrorsNameTheFileAndLine) {
  const std::string head = "keel-golden 1\nscene s.json\nkind world\nticks 20\nevery 10\n";
  struct Case {
    std::string text;
    std::string error;
  } cases[] = {
      {"golden 1\n", "g:1: not a Keel golden file"},
      {"keel-golden 3\n", "g:1: golden format version 3 is not supported"},
      {"keel-golden 1\nkind match sandbox\n", "g:2: a version 1 match golden holds the sandbox's old fixed input fields"},
      {"keel-golden 1\nkind world\ntick 0 0000000000000000\n", "g:3: the header needs kind, ticks and every"},
      {head + "tick 0 0000000000000000\ntick 20 0000000000000000\n", "g:7: expected \"tick 10 ...\""},
      {head + "tick 0 0000000000000000\ntick 10 00000000000000\n", "g:7: tick 10: expected 16 lowercase hex digits"},
      {head + "tick 0 0000000000000000\ntick 10 ABCDEF0000000000\n", "g:7: tick 10: expected 16 lowercase hex"},
      {head + "input 0 join 1\n", "g:6: input lines belong to \"kind match\" goldens only"},
      {head + "tick 0 0000000000000000\n", "g:6: the chain has 1 tick lines, 3 expected"},
      {head + "tick 0 0000000000000000\nticks 30\n", "g:7: header line \"ticks\" after the first input or tick line"},
      {"keel-golden 2\nkind match sandbox\nticks 20\nevery 10\ninput 5 frame 2 0 0 0 0\ninput 5 frame 1 0 0 0 0\n",
       "g:6: tick 5: frames must be sorted by player"},
      {"keel-golden 2\nkind match sandbox\nticks 20\nevery 10\ninput 20 join 1\n", "g:5: input tick 20 is out of order"},
      {"keel-golden 2\nkind match sandbox\nticks 20\nevery 10\ninput 5 frame 2 0 x\n", "g:5: tick 5: frame codes do not parse"},
      {"keel-golden 1\nkind world\nticks 20\nevery 0\n", "g:4: every must be an integer in 1.."},
  };
  for (const Case& c : cases) {
    auto g = parse_golden(c.text, "g");
    ASSERT_FALSE(g) << c.text;
    EXPECT_EQ(g.error().message.rfind(c.error, 0), 0u) << g.error().message;
  }
}

}  // namespace
}  // namespace keel::det
