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

// The same flip without fixing the checksum: the chunk is damaged, the ticks before it
// still verify, and the reason names the tick before the damage.
TEST_F(Fixture, RawFlipInATickIsCaughtByItsChecksum) {
  ChunkSpan c = find_chunk(file, ChunkType::Tick, 41);
  file[c.payload() + 30] ^= 0x01;
  write_bytes(damaged, file);
  auto rec = Recording::open(damaged);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->index().last_tick, 40u);
  EXPECT_TRUE(mentions(rec->index().problems, "checksum mismatch")) << rec->index().problems.front();
  EXPECT_TRUE(mentions(rec->index().problems, "after tick 40"));
  std::ostringstream o, e;
  EXPECT_EQ(cli::verify(verify_args(damaged), cli::Io{o, e}), 2) << o.str() << e.str();
  EXPECT_NE(o.str().find("warning: tick 41 is missing"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("damaged after tick 40: ticks 0..40 verified"), std::string::npos) << o.str();
}

// A damaged checkpoint is caught by its checksum and reported after its tick; every tick
// still verifies, and seeking past it falls back to the checkpoint before.
TEST_F(Fixture, RawFlipInACheckpointIsCaughtByItsChecksum) {
  ChunkSpan c = find_chunk(file, ChunkType::Checkpoint, 60);
  file[c.payload() + c.length / 2] ^= 0x20;
  VerifyResult r = verify_damaged();
  EXPECT_FALSE(r.diverged_at.has_value());
  EXPECT_EQ(r.verified, 120u);
  EXPECT_TRUE(mentions(r.warnings, "skipped a damaged chunk: checksum mismatch in a chunk of type 3")) << r.warnings.front();
  EXPECT_TRUE(mentions(r.warnings, "(after tick 60)"));
  auto rec = Recording::open(damaged);
  ASSERT_TRUE(rec);
  auto replay = Replay::start(*rec, 75);
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_EQ(replay->base_tick(), 30u);
  EXPECT_EQ(replay->match().hash(), replay->recorded_hash());
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
// says whether anything was lost, and the result verifies.
TEST_F(Fixture, TruncatedAnywhereRecoversEveryCompleteTick) {
  const size_t body = chunks_of(file)[1].offset;  // the header chunk cannot be lost
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<size_t> cut_at(body + 1, file.size() - 1);
  for (int i = 0; i < 50; ++i) {
    size_t cut = cut_at(rng);
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
    // Nothing is lost when the cut falls inside the footer or tail, or between chunks.
    bool lossless = cut > chunks_of(file).back().offset;
    for (const ChunkSpan& c : chunks_of(file)) lossless = lossless || c.end() == cut;
    EXPECT_EQ(code, lossless ? 0 : 3) << "cut at " << cut << ": " << o.str();
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
