// Damaged recordings: a flipped bit in a hash, an input or a checkpoint is reported at
// its tick; a file cut short anywhere recovers every complete tick.
#include "replay_test_util.h"

#include <keel/replay/commands.h>
#include <keel/replay/recover.h>
#include <keel/replay/replayer.h>

#include <random>
#include <sstream>

namespace keel::replay::test {
namespace {

struct Fixture : ::testing::Test {
  TempDir dir;
  std::string original = dir.path("match.krec");
  std::string damaged = dir.path("damaged.krec");
  std::vector<uint8_t> file;

  void SetUp() override {
    record(original, load_scene("demo.json"), 120, true, 30);
    file = read_bytes(original);
  }
  VerifyResult verify_damaged() {
    write_bytes(damaged, file);
    auto r = Recording::open(damaged);
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return verify(*r, VerifyOptions{});
  }
};

cli::VerifyArgs verify_args(const std::string& path) {
  cli::VerifyArgs args;
  args.rec = path;
  return args;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& l : lines) {
    if (l.find(what) != std::string::npos) return true;
  }
  return false;
}

// A recording whose hash is wrong but whose chunk is intact (what a diverged machine
// writes): verify names that tick, the recorded and the replayed hash.
TEST_F(Fixture, FlippedHashBitIsADivergenceAtThatTick) {
  ChunkSpan c = find_chunk(file, ChunkType::Tick, 57);
  uint64_t true_hash = le64(&file[c.payload() + 8]);
  file[c.payload() + 8 + 3] ^= 0x04;
  fix_checksum(file, c);
  VerifyResult r = verify_damaged();
  ASSERT_TRUE(r.diverged_at.has_value()) << r.error;
  EXPECT_EQ(*r.diverged_at, 57u);
  EXPECT_EQ(r.replayed, true_hash);
  EXPECT_EQ(r.recorded, true_hash ^ (uint64_t(0x04) << 24));
  std::ostringstream o, e;
  EXPECT_EQ(cli::verify(verify_args(damaged), cli::Io{o, e}), 1);
  EXPECT_EQ(o.str(), "diverged at tick 57: recorded " + hex_hash(r.recorded) + " replayed " + hex_hash(r.replayed) + "\n");
}

// Player 7's move_x at tick 40 (the first input's first float) changes sign.
TEST_F(Fixture, FlippedInputBitIsADivergenceAtThatTick) {
  ChunkSpan c = find_chunk(file, ChunkType::Tick, 41);
  // tick, hash, event count (0), input count, then player 3's frame: u32 player, f32 move_x
  ASSERT_EQ(le32(&file[c.payload() + 16]), 0u);
  ASSERT_GE(le32(&file[c.payload() + 20]), 1u);
  file[c.payload() + 24 + 4 + 3] ^= 0x80;  // sign bit of move_x
  fix_checksum(file, c);
  VerifyResult r = verify_damaged();
  ASSERT_TRUE(r.diverged_at.has_value()) << r.error;
  EXPECT_EQ(*r.diverged_at, 41u);
}

// The same flip without fixing the checksum: the chunk is damaged and named by its byte
// offset; the ticks before it verify, and so do those from the next checkpoint (60) on.
TEST_F(Fixture, RawFlipInATickIsCaughtByItsChecksum) {
  ChunkSpan c = find_chunk(file, ChunkType::Tick, 41);
  file[c.payload() + 30] ^= 0x01;
  write_bytes(damaged, file);
  auto rec = Recording::open(damaged);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->index().segments, (std::vector<TickRange>{{0, 40}, {60, 120}}));
  EXPECT_EQ(rec->index().gaps, (std::vector<TickRange>{{41, 59}}));
  const std::string where = "checksum mismatch in a tick chunk at byte " + std::to_string(c.offset) + " (after tick 40)";
  EXPECT_TRUE(mentions(rec->index().problems, where)) << rec->index().problems.front();
  std::ostringstream o, e;
  EXPECT_EQ(cli::verify(verify_args(damaged), cli::Io{o, e}), 2) << o.str() << e.str();
  EXPECT_NE(o.str().find("damaged: 100 ticks verified (0..40, 60..120); ticks 41..59 cannot be re-run; first damage: " + where),
            std::string::npos)
      << o.str();
}

// A damaged checkpoint is caught by its checksum and reported after its tick; every tick
// still verifies, seeking past it falls back to the checkpoint before, and the command
// still fails: the file is damaged.
TEST_F(Fixture, RawFlipInACheckpointIsCaughtByItsChecksum) {
  ChunkSpan c = find_chunk(file, ChunkType::Checkpoint, 60);
  file[c.payload() + c.length / 2] ^= 0x20;
  VerifyResult r = verify_damaged();
  EXPECT_FALSE(r.diverged_at.has_value());
  EXPECT_TRUE(r.damaged);
  EXPECT_EQ(r.verified, 120u);
  EXPECT_TRUE(mentions(r.warnings, "checksum mismatch in a checkpoint chunk at byte " + std::to_string(c.offset)))
      << r.warnings.front();
  EXPECT_TRUE(mentions(r.warnings, "(after tick 60)"));
  auto rec = Recording::open(damaged);
  ASSERT_TRUE(rec);
  auto replay = Replay::start(*rec, 75);
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_EQ(replay->base_tick(), 30u);
  EXPECT_EQ(replay->match().hash(), replay->recorded_hash());
  std::ostringstream o, e;
  EXPECT_EQ(cli::verify(verify_args(damaged), cli::Io{o, e}), 2) << o.str();
  EXPECT_NE(o.str().find("damaged: 120 ticks verified (0..120); no tick is lost"), std::string::npos) << o.str();
}

// The file recover makes of it: a gap from 41 to 59 that its footer lists. verify re-runs
// both segments and says the file is incomplete (exit 3); info lists the gap; dump
// reaches ticks on either side (from the checkpoint at 60 after it) and refuses one in it.
TEST_F(Fixture, RecoveredFileWithAGapIsReplayedSegmentBySegment) {
  ChunkSpan c = find_chunk(file, ChunkType::Tick, 41);
  file[c.payload() + 3] ^= 0x10;
  write_bytes(damaged, file);
  const std::string fixed = dir.path("fixed.krec");
  std::ostringstream o, e;
  EXPECT_EQ(cli::recover(damaged, fixed, cli::Io{o, e}), 3) << o.str();
  EXPECT_NE(o.str().find("kept 102 ticks (0..40, 60..120) and 4 checkpoints"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("lost: ticks 41..59"), std::string::npos) << o.str();
  auto rec = Recording::open(fixed);
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->index().finished);
  EXPECT_TRUE(rec->index().problems.empty()) << rec->index().problems.front();
  EXPECT_EQ(rec->index().gaps, (std::vector<TickRange>{{41, 59}}));
  VerifyResult v = verify(*rec, VerifyOptions{});
  EXPECT_FALSE(v.damaged);
  EXPECT_EQ(v.verified, 100u) << v.error;
  std::ostringstream vo, ve;
  EXPECT_EQ(cli::verify(verify_args(fixed), cli::Io{vo, ve}), 3) << vo.str();
  EXPECT_NE(vo.str().find("incomplete: 100 ticks verified (0..40, 60..120); ticks 41..59 are missing"), std::string::npos)
      << vo.str();
  std::ostringstream io_out, io_err;
  EXPECT_EQ(cli::info(fixed, cli::Io{io_out, io_err}), 0);
  EXPECT_NE(io_out.str().find("missing: ticks 41..59"), std::string::npos) << io_out.str();
  for (uint64_t tick : {30u, 75u}) {
    cli::DumpArgs d;
    d.rec = fixed;
    d.tick = tick;
    std::ostringstream dout, derr;
    EXPECT_EQ(cli::dump(d, cli::Io{dout, derr}), 0) << derr.str();
    EXPECT_NE(dout.str().find("\"tick\": " + std::to_string(tick)), std::string::npos) << dout.str().substr(0, 200);
  }
  cli::DumpArgs in_gap;
  in_gap.rec = fixed;
  in_gap.tick = 45;
  std::ostringstream gout, gerr;
  EXPECT_EQ(cli::dump(in_gap, cli::Io{gout, gerr}), 2);
  EXPECT_NE(gerr.str().find("before tick 45"), std::string::npos) << gerr.str();
  // Recovering the recovered file keeps the gap listed and loses nothing more.
  std::ostringstream ro, re;
  EXPECT_EQ(cli::recover(fixed, dir.path("again.krec"), cli::Io{ro, re}), 0) << ro.str();
}

// A checkpoint whose chunk is intact but whose state is not what its tick hashed to.
TEST_F(Fixture, CheckpointWithWrongStateIsReportedAtItsTick) {
  ChunkSpan c = find_chunk(file, ChunkType::Checkpoint, 90);
  file[c.end() - 8 - 1] ^= 0x01;  // last byte of the (compressed) state
  fix_checksum(file, c);
  VerifyResult r = verify_damaged();
  EXPECT_FALSE(r.diverged_at.has_value());
  EXPECT_TRUE(mentions(r.warnings, "checkpoint at tick 90 is damaged")) << (r.warnings.empty() ? "" : r.warnings.front());
}

size_t complete_ticks_before(const std::vector<uint8_t>& file, size_t cut) {
  size_t n = 0;
  for (const ChunkSpan& c : chunks_of(file)) {
    if (c.type == uint32_t(ChunkType::Tick) && c.end() <= cut) ++n;
  }
  return n;
}

// 50 seeded cuts anywhere after the header: recover keeps exactly the complete ticks,
// says whether anything may have been lost, and the result verifies.
TEST_F(Fixture, TruncatedAnywhereRecoversEveryCompleteTick) {
  const std::vector<ChunkSpan> chunks = chunks_of(file);
  const size_t body = chunks[2].offset;  // after the header and its copy
  const size_t footer = chunks.back().offset;
  ASSERT_EQ(chunks.back().type, uint32_t(ChunkType::Footer));
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<size_t> cut_at(body + 1, file.size() - 1);
  for (int i = 0; i < 50; ++i) {
    size_t cut = i == 0 ? footer + kChunkHeadBytes : cut_at(rng);  // one cut inside the footer for sure
    write_bytes(damaged, std::vector<uint8_t>(file.begin(), file.begin() + std::ptrdiff_t(cut)));
    const std::string fixed = dir.path("fixed.krec");
    auto r = recover_recording(damaged, fixed);
    ASSERT_TRUE(r) << r.error().message;
    size_t expected = complete_ticks_before(file, cut);
    ASSERT_EQ(r->ticks_kept, expected) << "cut at " << cut;
    auto rec = Recording::open(fixed);
    ASSERT_TRUE(rec);
    EXPECT_TRUE(rec->index().finished && rec->index().problems.empty()) << "cut at " << cut;
    VerifyResult v = verify(*rec, VerifyOptions{});
    EXPECT_EQ(v.verified, expected - 1) << "cut at " << cut << " " << v.error;
    std::ostringstream o, e;
    int code = cli::recover(damaged, fixed, cli::Io{o, e});
    // Only a cut inside the footer (its head read, so its type is known) or the tail
    // proves that the writer had recorded every tick; any other cut may have lost some.
    bool lossless = cut >= footer + kChunkHeadBytes;
    EXPECT_EQ(code, lossless ? 0 : 3) << "cut at " << cut << ": " << o.str();
    EXPECT_EQ(o.str().find("nothing was lost") != std::string::npos, lossless) << o.str();
    if (!lossless) {
      EXPECT_NE(o.str().find("lost: the tail after tick " + std::to_string(expected - 1) + ", up to "), std::string::npos)
          << o.str();
    }
  }
}

TEST_F(Fixture, RecoverOfASoundFileLosesNothingAndOfNoHeaderRecoversNothing) {
  std::ostringstream o, e;
  EXPECT_EQ(cli::recover(original, dir.path("same.krec"), cli::Io{o, e}), 0) << o.str();
  EXPECT_NE(o.str().find("kept 121 ticks (0..120)"), std::string::npos) << o.str();
  write_bytes(damaged, std::vector<uint8_t>(file.begin(), file.begin() + 40));
  EXPECT_EQ(cli::recover(damaged, dir.path("none.krec"), cli::Io{o, e}), 1);
}

}  // namespace
}  // namespace keel::replay::test
