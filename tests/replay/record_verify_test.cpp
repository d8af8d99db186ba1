// Recording and verifying: every scene, a multi-player sandbox session, the header, the
// flush policy, format evolution (unknown chunks skipped, future versions refused).
#include "replay_test_util.h"
#include <keel/games/sandbox.h>

#include <keel/replay/commands.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/replayer.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace keel::replay::test {
namespace {

std::vector<std::string> all_scenes() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(std::string(KEEL_SOURCE_DIR) + "/scenes")) {
    // The scale benchmark scenes (5,050 and 10,000 bodies, 25 to 200 ms a tick) would
    // take minutes here; their bits are the same code as the smaller scenes'. arena_128
    // is arena with twice the kinematic players (keel-netbench --interest only).
    const std::string name = e.path().filename().string();
    if (name == "pyramid_5050.json" || name == "mixed_10000.json" || name == "arena_128.json") continue;
    if (e.path().extension() == ".json") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

int run_verify(const std::string& path, std::string& out, cli::VerifyArgs args = {}) {
  std::ostringstream o, e;
  args.rec = path;
  int code = cli::verify(args, cli::Io{o, e});
  out = o.str() + e.str();
  return code;
}

class EveryScene : public ::testing::TestWithParam<std::string> {};

// 120 ticks with a checkpoint every 50: the command's last line is the contract.
TEST_P(EveryScene, RecordThenVerify) {
  TempDir dir;
  const std::string rec = dir.path("run.krec");
  record(rec, load_scene(GetParam()), 120, false, 50);
  std::string out;
  EXPECT_EQ(run_verify(rec, out), 0) << out;
  EXPECT_EQ(last_line(out), "verified 120 ticks") << out;
  auto r = Recording::open(rec);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->index().finished);
  EXPECT_TRUE(r->index().problems.empty());
  ASSERT_EQ(r->index().checkpoints.size(), 2u);
  EXPECT_EQ(r->index().checkpoints[1].tick, 100u);
  ASSERT_TRUE(r->footer().has_value());
  EXPECT_EQ(r->footer()->checkpoints, r->index().checkpoints);
}

INSTANTIATE_TEST_SUITE_P(Scenes, EveryScene, ::testing::ValuesIn(all_scenes()),
                         [](const auto& info) { return info.param.substr(0, info.param.find('.')); });

TEST(Recording, MultiPlayerSandboxSessionVerifiesAtAnyThreadCount) {
  TempDir dir;
  const std::string rec = dir.path("match.krec");
  record(rec, load_scene("demo.json"), 150, true);
  for (uint32_t threads : {1u, 2u}) {
    std::string out;
    cli::VerifyArgs args;
    args.threads = threads;
    EXPECT_EQ(run_verify(rec, out, args), 0) << out;
    EXPECT_EQ(last_line(out), "verified 150 ticks");
  }
  auto r = Recording::open(rec);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index().players_seen, 3u);
  EXPECT_EQ(r->index().max_players, 3u);
  EXPECT_EQ(r->index().player_events, 5u);
  // The inputs come back exactly as Match::step received them.
  TickCursor c = r->ticks_from_start();
  for (uint64_t t = 0; t <= 150; ++t) {
    auto rec_tick = c.next();
    ASSERT_TRUE(rec_tick);
    ASSERT_EQ(rec_tick->tick, t);
    EXPECT_EQ(rec_tick->inputs, t == 0 ? game::TickInputs{} : scripted_inputs(t)) << "tick " << t;
  }
  EXPECT_FALSE(c.next());
}

TEST(Recording, VerifyRangeStartsFromACheckpoint) {
  TempDir dir;
  const std::string rec = dir.path("match.krec");
  record(rec, load_scene("demo.json"), 150, true);
  std::string out;
  cli::VerifyArgs args;
  args.from = 95;
  args.to = 140;
  EXPECT_EQ(run_verify(rec, out, args), 0) << out;
  EXPECT_EQ(last_line(out), "verified 45 ticks");
  args.to = 151;
  EXPECT_EQ(run_verify(rec, out, args), 2) << out;
}

TEST(Recording, HeaderDescribesTheBuildTheSceneAndTheRules) {
  TempDir dir;
  const std::string rec = dir.path("h.krec");
  record(rec, load_scene("demo.json"), 3, false);
  auto r = Recording::open(rec);
  ASSERT_TRUE(r);
  const Header& h = r->header();
  EXPECT_EQ(h.format_version, kFormatVersion);
  EXPECT_EQ(h.game, "sandbox");
  EXPECT_EQ(h.tick_rate, 60u);
  EXPECT_EQ(h.checkpoint_interval, 30u);
  EXPECT_FALSE(h.compiler.empty());
  EXPECT_NE(h.compiler_flags.find("-ffp-contract=off"), std::string::npos);
  auto scene = scene::parse_scene_binary(h.scene, "embedded");
  ASSERT_TRUE(scene);
  EXPECT_EQ(scene->name, "demo");
  std::ostringstream o, e;
  EXPECT_EQ(cli::info(rec, cli::Io{o, e}), 0);
  EXPECT_NE(o.str().find("complete: yes"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("ticks: 0..3 (3 steps"), std::string::npos) << o.str();
}

// The writer flushes every K ticks: a reader opening the file while the match runs (or
// after the process died) sees every tick up to the last flush.
TEST(Recording, FlushPolicyMakesTicksVisibleBeforeFinish) {
  TempDir dir;
  const std::string rec = dir.path("live.krec");
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  WriterOptions options;
  options.flush_every_ticks = 10;
  auto writer = RecordingWriter::create(rec, *match, options);
  ASSERT_TRUE(writer);
  for (int t = 1; t <= 25; ++t) ASSERT_TRUE(step_and_record(*writer, *match, {}));
  auto live = Recording::open(rec);
  ASSERT_TRUE(live) << live.error().message;
  EXPECT_EQ(live->index().last_tick, 20u);
  EXPECT_FALSE(live->index().finished);
  ASSERT_TRUE(writer->flush());
  EXPECT_EQ(Recording::open(rec)->index().last_tick, 25u);
  // A record out of sequence is refused rather than written.
  match->step({});
  match->step({});
  EXPECT_FALSE(writer->record({}, *match, match->hash()));
}

// The writer observes the host's step: each tick record holds the hash the host computed
// once for that tick, and the recording reads back with exactly those hashes.
TEST(Recording, TickRecordsHoldTheHostsHashOfEachStep) {
  TempDir dir;
  const std::string path = dir.path("hash.krec");
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  auto writer = RecordingWriter::create(path, *match);
  ASSERT_TRUE(writer);
  std::vector<uint64_t> hashes{match->hash()};
  for (uint64_t t = 1; t <= 5; ++t) {
    match->step(scripted_inputs(t));
    hashes.push_back(match->hash());
    ASSERT_TRUE(writer->record(scripted_inputs(t), *match, hashes.back()));
  }
  ASSERT_TRUE(writer->finish());
  auto rec = Recording::open(path);
  ASSERT_TRUE(rec) << rec.error().message;
  TickCursor cursor = rec->ticks_from_start();
  size_t seen = 0;
  while (auto tick = cursor.next()) {
    ASSERT_LT(tick->tick, hashes.size());
    EXPECT_EQ(tick->hash, hashes[tick->tick]) << "tick " << tick->tick;
    ++seen;
  }
  EXPECT_EQ(seen, hashes.size());
}

TEST(Recording, StartsMidMatchWithACheckpoint) {
  TempDir dir;
  const std::string rec = dir.path("mid.krec");
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  for (uint64_t t = 1; t <= 40; ++t) match->step(scripted_inputs(t));
  {
    auto writer = RecordingWriter::create(rec, *match);
    ASSERT_TRUE(writer);
    for (uint64_t t = 41; t <= 80; ++t) ASSERT_TRUE(step_and_record(*writer, *match, scripted_inputs(t)));
  }  // the destructor finishes the file
  std::string out;
  EXPECT_EQ(run_verify(rec, out), 0) << out;
  EXPECT_EQ(last_line(out), "verified 40 ticks");
}

TEST(Recording, UnknownChunkTypesAreSkipped) {
  TempDir dir;
  const std::string rec = dir.path("a.krec");
  record(rec, load_scene("pyramid.json"), 20, false);
  std::vector<uint8_t> file = read_bytes(rec);
  ChunkSpan after = find_chunk(file, ChunkType::Tick, 10);
  std::vector<uint8_t> extra;
  std::vector<uint8_t> payload = {1, 2, 3, 4, 5};
  frame_chunk(uint32_t(77), payload, extra);
  file.insert(file.begin() + std::ptrdiff_t(after.end()), extra.begin(), extra.end());
  // A newer writer's footer would count the chunk in its offsets: rebuild it so.
  ChunkSpan fc = chunks_of(file).back();
  ASSERT_EQ(fc.type, uint32_t(ChunkType::Footer));
  auto footer = decode_footer(std::span<const uint8_t>(file).subspan(fc.payload(), fc.length));
  ASSERT_TRUE(footer);
  for (CheckpointRef& c : footer->checkpoints) {
    if (c.offset > after.offset) c.offset += extra.size();
  }
  file.resize(fc.offset);
  std::vector<uint8_t> footer_payload;
  encode_footer(*footer, footer_payload);
  frame_chunk(ChunkType::Footer, footer_payload, file);
  std::vector<uint8_t> tail = encode_tail(fc.offset);
  file.insert(file.end(), tail.begin(), tail.end());
  const std::string edited = dir.path("b.krec");
  write_bytes(edited, file);
  std::string out;
  EXPECT_EQ(run_verify(edited, out), 0) << out;
  EXPECT_EQ(last_line(out), "verified 20 ticks");
}

TEST(Recording, FutureFormatVersionIsRefusedClearly) {
  TempDir dir;
  const std::string rec = dir.path("a.krec");
  record(rec, load_scene("pyramid.json"), 5, false);
  std::vector<uint8_t> file = read_bytes(rec);
  std::vector<uint8_t> future = encode_preamble(4);  // a sound preamble (its check matches) of version 4
  std::copy(future.begin(), future.end(), file.begin());
  write_bytes(rec, file);
  auto r = Recording::open(rec);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("format version 4 is newer than this build reads (version 3)"), std::string::npos)
      << r.error().message;
  std::string out;
  EXPECT_EQ(run_verify(rec, out), 2);
  EXPECT_NE(out.find("newer"), std::string::npos) << out;
}

// A version 2 file (the sandbox's fixed input fields) is refused by name.
TEST(Recording, VersionTwoIsRefusedClearly) {
  TempDir dir;
  const std::string rec = dir.path("a.krec");
  record(rec, load_scene("pyramid.json"), 5, false);
  std::vector<uint8_t> file = read_bytes(rec);
  std::vector<uint8_t> v2 = encode_preamble(2);
  std::copy(v2.begin(), v2.end(), file.begin());
  write_bytes(rec, file);
  auto r = Recording::open(rec);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("recording format version 2 is older than this build reads (this build reads version 3)"),
            std::string::npos)
      << r.error().message;
}

// A version 1 file (no preamble check, chunks without a frame check) is refused by name.
TEST(Recording, VersionOneIsRefusedClearly) {
  TempDir dir;
  const std::string rec = dir.path("a.krec");
  record(rec, load_scene("pyramid.json"), 5, false);
  std::vector<uint8_t> file = read_bytes(rec);
  std::vector<uint8_t> v1(kRecordingMagic.begin(), kRecordingMagic.end());
  v1.insert(v1.end(), {1, 0, 0, 0, 0, 0, 0, 0});
  // Its header chunk as version 1 framed it: type and length, then the payload.
  v1.insert(v1.end(), file.begin() + 16, file.begin() + 24);
  v1.insert(v1.end(), file.begin() + 28, file.end());
  write_bytes(rec, v1);
  auto r = Recording::open(rec);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("recording format version 1 is older than this build reads (this build reads version 3)"),
            std::string::npos)
      << r.error().message;
}

TEST(Recording, NotARecordingAndUnknownRulesAreRefused) {
  TempDir dir;
  const std::string junk = dir.path("junk.krec");
  write_bytes(junk, {'h', 'e', 'l', 'l', 'o'});
  auto r = Recording::open(junk);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a Keel recording"), std::string::npos);
  Header h;
  h.game = "capture_the_flag";
  h.scene = scene::scene_to_binary(load_scene("demo.json"));
  auto m = make_match(h, "x.krec");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("game \"capture_the_flag\" is not known"), std::string::npos) << m.error().message;
}

TEST(DesyncDump, RoundTripsAndRejectsDamage) {
  TempDir dir;
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  for (uint64_t t = 1; t <= 12; ++t) match->step(scripted_inputs(t));
  const std::string path = dir.path("client.kdsy");
  ASSERT_TRUE(write_desync_dump(path, *match, 0x1234, "client 7"));
  auto d = read_desync_dump(path);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->tick, 12u);
  EXPECT_EQ(d->hash, match->hash());
  EXPECT_EQ(d->expected_hash, 0x1234u);
  EXPECT_EQ(d->note, "client 7");
  EXPECT_EQ(d->state, match->save_state());
  std::vector<uint8_t> bytes = read_bytes(path);
  bytes[bytes.size() / 2] ^= 0x10;
  auto bad = decode_desync_dump(bytes);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("checksum"), std::string::npos);
}

}  // namespace
}  // namespace keel::replay::test

namespace keel::replay::test {
namespace {

// Regenerates the fuzz seed corpus: KEEL_WRITE_FUZZ_SEEDS=tests/fuzz/corpus/replay_reader
// build/bin/keel_replay_tests --gtest_filter=FuzzSeeds.*
TEST(FuzzSeeds, WrittenOnlyWhenAsked) {
  const char* dir = std::getenv("KEEL_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set KEEL_WRITE_FUZZ_SEEDS=DIR to write the seeds";
  const std::string base = std::string(dir) + "/";
  record(base + "sandbox_players.krec", load_scene("demo.json"), 12, true, 5);
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  for (uint64_t t = 1; t <= 6; ++t) match->step(scripted_inputs(t));
  ASSERT_TRUE(write_desync_dump(base + "client.kdsy", *match, 0, "seed"));
}

// A visitor's session: spawns of each shape, a drag and gravity switches, recorded as a
// server records them, verifies tick for tick from the start and from a checkpoint; the
// spawned bodies are in the replayed world where the inputs put them.
TEST(Recording, SandboxVisitorSessionVerifies) {
  using R = games::SandboxRules;
  TempDir dir;
  const std::string rec = dir.path("visit.krec");
  auto visit_inputs = [](uint64_t t) {
    game::TickInputs in;
    if (t == 1) in.events.push_back({game::PlayerEvent::Kind::Join, 5});
    games::SandboxVisit v;
    if (t % 20 == 2) {
      v.spawn = uint32_t(1 + t / 20 % 3), v.spawn_at = sim::Vec3(float(t / 20) - 3.0f, 0.0f, 2.0f);
      v.spawn_seq = uint32_t(1 + t / 20);  // a click: a new counter
    }
    if (t > 40 && t < 90) v.drag_body = 3, v.drag_to = sim::Vec3(0.0f, 3.0f, 0.0f);
    if (t == 50) v.gravity = 1 + R::kGravityLow;
    if (t == 100) v.gravity = 1 + R::kGravityNormal;
    game::InputFrame f = games::sandbox_input(0, 0, 0, false, false);
    games::set_sandbox_visit(f, v);
    if (t > 1) in.inputs.push_back({5, f});
    return in;
  };
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<R>());
  ASSERT_TRUE(match) << match.error().message;
  WriterOptions options;
  options.checkpoint_interval = 30;
  auto writer = RecordingWriter::create(rec, *match, options);
  ASSERT_TRUE(writer) << writer.error().message;
  for (uint64_t t = 1; t <= 120; ++t) ASSERT_TRUE(step_and_record(*writer, *match, visit_inputs(t)));
  ASSERT_TRUE(writer->finish());
  uint32_t spawned = 0;
  for (sim::BodyId b : match->world().bodies()) spawned += match->world().body_state(b).kind == R::kKindSpawned;
  EXPECT_EQ(spawned, 6u);  // ticks 2, 22, ..., 102
  std::string out;
  EXPECT_EQ(run_verify(rec, out, cli::VerifyArgs{}), 0) << out;
  EXPECT_EQ(last_line(out), "verified 120 ticks");
  cli::VerifyArgs from;
  from.from = 60;
  EXPECT_EQ(run_verify(rec, out, from), 0) << out;
}

}  // namespace
}  // namespace keel::replay::test
