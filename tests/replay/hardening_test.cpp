// Hostile and damaged recordings: every single-byte flip of a real recording is caught
// and named, recovery keeps every tick range outside the damaged chunk, a crash's lost
// tail is reported with a bound that holds, and a checkpoint that claims gigabytes is
// refused without allocating them.
#include "replay_test_util.h"
#include <keel/games/sandbox.h>

#include <keel/replay/commands.h>
#include <keel/replay/recover.h>
#include <keel/replay/replayer.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>

namespace keel::replay::test {
namespace {

int run_verify(const std::string& path, std::string& out) {
  std::ostringstream o, e;
  cli::VerifyArgs args;
  args.rec = path;
  int code = cli::verify(args, cli::Io{o, e});
  out = o.str() + e.str();
  return code;
}

// The demo scene cut down to its ground and two boxes: a small header, cheap steps.
sim::SceneDef small_scene() {
  sim::SceneDef scene = load_scene("demo.json");
  scene.bodies.resize(3);
  scene.spawn_points.resize(2);
  return scene;
}

std::optional<ChunkSpan> chunk_at(const std::vector<ChunkSpan>& chunks, size_t byte) {
  for (const ChunkSpan& c : chunks) {
    if (byte >= c.offset && byte < c.end()) return c;
  }
  return std::nullopt;
}

uint64_t first_checkpoint_after(const std::vector<uint8_t>& file, const std::vector<ChunkSpan>& chunks, uint64_t tick) {
  for (const ChunkSpan& c : chunks) {
    if (c.type == uint32_t(ChunkType::Checkpoint) && le64(&file[c.payload()]) > tick) return le64(&file[c.payload()]);
  }
  return UINT64_MAX;
}

// The ticks a recovery must keep when the one damaged chunk is `hit`: all of them, unless
// it is tick d's record; then d up to the next checkpoint after it cannot be re-run.
std::vector<TickRange> expected_segments(const std::vector<uint8_t>& file, const std::vector<ChunkSpan>& chunks,
                                         const std::optional<ChunkSpan>& hit, uint64_t last) {
  if (!hit || hit->type != uint32_t(ChunkType::Tick)) return {{0, last}};
  const uint64_t d = le64(&file[hit->payload()]);
  const uint64_t resume = first_checkpoint_after(file, chunks, d);
  std::vector<TickRange> kept;
  if (d > 0) kept.push_back({0, d - 1});
  if (resume <= last) kept.push_back({resume, last});
  return kept;
}

// Every byte of a 30-tick, three-player recording, flipped in turn (by a different bit
// pattern for each offset): verify never passes, and names the byte offset of the damage;
// recovery keeps exactly the ticks outside the damaged chunk, and its output verifies.
TEST(Hardening, EveryByteFlipIsCaughtAndRecoveryKeepsTheRest) {
  TempDir dir;
  const std::string original = dir.path("small.krec");
  record(original, small_scene(), 30, true, 10);
  const std::vector<uint8_t> file = read_bytes(original);
  const std::vector<ChunkSpan> chunks = chunks_of(file);
  ASSERT_EQ(chunks.back().type, uint32_t(ChunkType::Footer));
  std::string out;
  ASSERT_EQ(run_verify(original, out), 0) << out;
  const auto started = std::chrono::steady_clock::now();
  const std::string damaged = dir.path("flipped.krec"), fixed = dir.path("fixed.krec");
  size_t verify_runs = 0, flips = 0, frame_bytes = 0;
  for (size_t i = 0; i < file.size(); ++i) {
    const std::optional<ChunkSpan> hit = chunk_at(chunks, i);
    // Every byte goes through the index (whose problems alone decide that verify fails)
    // and recovery; the full command, which re-runs the match, through every byte outside
    // payloads (preamble, frames, checksums, tail) and every 4th payload byte.
    const bool in_frame = !hit || i < hit->payload() || i >= hit->end() - 8;
    frame_bytes += in_frame ? 1 : 0;
    std::vector<uint8_t> bytes = file;
    bytes[i] ^= uint8_t(1u << (i % 8)) | (i % 5 == 0 ? 0x80 : 0);
    write_bytes(damaged, bytes);
    if (in_frame || i % 4 == 0) {
      ++verify_runs;
      int code = run_verify(damaged, out);
      ASSERT_EQ(code, 2) << "flip at byte " << i << ":\n" << out;
      ASSERT_NE(out.find("damaged: "), std::string::npos) << "flip at byte " << i << ":\n" << out;
      const std::string where = hit ? "at byte " + std::to_string(hit->offset) : "";
      if (hit && hit->offset > kPreambleBytes) {
        ASSERT_NE(out.find(where), std::string::npos) << "flip at byte " << i << ":\n" << out;
      }
      if (!hit && i < kPreambleBytes) {
        ASSERT_NE(out.find("the preamble (bytes 0..15) is damaged"), std::string::npos) << out;
      }
    }
    ++flips;
    auto rec = Recording::from_bytes(bytes, damaged);
    ASSERT_TRUE(rec) << "flip at byte " << i << ": " << rec.error().message;
    ASSERT_FALSE(rec->index().problems.empty()) << "flip at byte " << i << " went unnoticed";
    fs::remove(fixed);  // see write_bytes
    auto r = recover_recording(damaged, fixed);
    ASSERT_TRUE(r) << "flip at byte " << i << ": " << r.error().message;
    ASSERT_EQ(r->segments, expected_segments(file, chunks, hit, 30)) << "flip at byte " << i;
    ASSERT_TRUE(r->lost_data) << "flip at byte " << i;
    auto again = Recording::open(fixed);
    ASSERT_TRUE(again);
    ASSERT_TRUE(again->index().problems.empty()) << "flip at byte " << i << ": " << again->index().problems.front();
    ASSERT_EQ(again->index().segments, r->segments) << "flip at byte " << i;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(flips, file.size());
  std::cout << "flipped " << flips << " of " << file.size() << " bytes (all " << frame_bytes << " outside payloads; "
            << verify_runs << " full verifies) in " << seconds << " s\n";
}

// The bug this format version fixes: a flipped length byte made a tick chunk look cut
// short, and verify passed the ticks before it.
TEST(Hardening, FlippedLengthByteIsDamageNotATruncatedFile) {
  TempDir dir;
  const std::string path = dir.path("len.krec");
  record(path, load_scene("demo.json"), 60, true, 30);
  std::vector<uint8_t> file = read_bytes(path);
  const ChunkSpan c = find_chunk(file, ChunkType::Tick, 20);
  for (size_t b = 0; b < 4; ++b) {
    std::vector<uint8_t> bytes = file;
    bytes[c.offset + 4 + b] ^= 0x40;
    write_bytes(path, bytes);
    std::string out;
    EXPECT_EQ(run_verify(path, out), 2) << out;
    EXPECT_NE(out.find("damaged chunk frame (its type or length fails the frame check) at byte " + std::to_string(c.offset) +
                       " (after tick 19)"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("ticks 20..29 cannot be re-run"), std::string::npos) << out;
  }
}

// The header chunk and its copy: a damaged byte in either leaves the other, and every
// tick still verifies (the command still fails: the file is damaged).
TEST(Hardening, HeaderSurvivesAFlippedByteInEitherCopy) {
  TempDir dir;
  const std::string path = dir.path("h.krec");
  record(path, load_scene("demo.json"), 30, true, 10);
  const std::vector<uint8_t> file = read_bytes(path);
  const std::vector<ChunkSpan> chunks = chunks_of(file);
  ASSERT_EQ(chunks[0].type, uint32_t(ChunkType::Header));
  ASSERT_EQ(chunks[1].type, uint32_t(ChunkType::HeaderCopy));
  for (const ChunkSpan& c : {chunks[0], chunks[1]}) {
    for (size_t at : {c.offset + 5, c.payload() + 40, c.end() - 3}) {
      std::vector<uint8_t> bytes = file;
      bytes[at] ^= 0x08;
      write_bytes(path, bytes);
      auto rec = Recording::open(path);
      ASSERT_TRUE(rec) << rec.error().message;
      EXPECT_EQ(rec->header().game, "sandbox");
      EXPECT_EQ(rec->header().scene, scene::scene_to_binary(load_scene("demo.json")));
      VerifyResult v = verify(*rec, VerifyOptions{});
      EXPECT_EQ(v.verified, 30u) << v.error;
      EXPECT_TRUE(v.damaged);
      std::string out;
      EXPECT_EQ(run_verify(path, out), 2) << out;
      EXPECT_NE(out.find("at byte " + std::to_string(c.offset)), std::string::npos) << out;
    }
  }
}

// A real process records with a flush every 10 ticks and is killed with SIGKILL after
// tick 95: verify says the file is incomplete (exit 3) with the ticks it holds, recover
// says the tail after the last tick on disk is lost and bounds it, and the bound holds.
TEST(Hardening, KilledWriterLeavesAnIncompleteFileWithABoundedLostTail) {
  TempDir dir;
  const std::string path = dir.path("killed.krec");
  const sim::SceneDef scene = load_scene("demo.json");
  constexpr uint64_t kKilledAfter = 95;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto match = game::Match::create(scene, std::make_unique<games::SandboxRules>());
    WriterOptions options;
    options.flush_every_ticks = 10;
    options.checkpoint_interval = 30;
    auto writer = RecordingWriter::create(path, *match, options);
    if (!match || !writer) _exit(10);
    for (uint64_t t = 1; t <= kKilledAfter; ++t) {
      if (!step_and_record(*writer, *match, scripted_inputs(t))) _exit(11);
    }
    std::raise(SIGKILL);  // what `kill -9` does: no destructor, no footer, no final flush
    _exit(12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  auto rec = Recording::open(path);
  ASSERT_TRUE(rec) << rec.error().message;
  const RecordingIndex& idx = rec->index();
  EXPECT_TRUE(idx.problems.empty()) << idx.problems.front();
  EXPECT_FALSE(idx.writer_finished);
  ASSERT_TRUE(idx.last_sync.has_value());
  EXPECT_EQ(*idx.last_sync, 90u);  // the flushes at 10, 20, ... 90
  EXPECT_GE(idx.last_tick, 90u);
  EXPECT_LT(idx.last_tick, kKilledAfter);
  // The bound covers the ticks really lost, and is no looser than one flush interval.
  EXPECT_GE(idx.highest_tick + idx.tail_lost_up_to, kKilledAfter);
  EXPECT_LE(idx.tail_lost_up_to, 10u);
  std::string out;
  EXPECT_EQ(run_verify(path, out), 3) << out;
  const std::string tail = "the tail after tick " + std::to_string(idx.last_tick) + " is lost, up to " +
                           std::to_string(idx.tail_lost_up_to) + " ticks (it flushes every 10 ticks and last flushed at tick 90)";
  EXPECT_NE(out.find("incomplete: " + std::to_string(idx.last_tick) + " ticks verified (0.." + std::to_string(idx.last_tick) + ")"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(tail), std::string::npos) << out;
  EXPECT_EQ(out.find("verified " + std::to_string(idx.last_tick) + " ticks\n"), std::string::npos) << out;
  std::ostringstream o, e;
  EXPECT_EQ(cli::recover(path, dir.path("fixed.krec"), cli::Io{o, e}), 3) << o.str();
  EXPECT_EQ(o.str().find("nothing was lost"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("lost: the tail after tick " + std::to_string(idx.last_tick) + ", up to " +
                         std::to_string(idx.tail_lost_up_to) + " ticks"),
            std::string::npos)
      << o.str();
}

// A zstd frame of `blocks` RLE blocks of 128 KiB zeros each: ~4 bytes per block, so a
// 64 KiB frame expands to 2 GiB.
std::vector<uint8_t> zstd_zero_bomb(uint64_t content_size) {
  std::vector<uint8_t> z = {0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0x38};  // magic; 8-byte content size; 128 KiB window
  for (int i = 0; i < 8; ++i) z.push_back(uint8_t(content_size >> (8 * i)));
  constexpr uint32_t kBlock = 128u << 10;
  for (uint64_t left = content_size; left > 0;) {
    uint32_t n = uint32_t(std::min<uint64_t>(left, kBlock));
    left -= n;
    uint32_t h = (left == 0 ? 1u : 0u) | (1u << 1) | (n << 3);  // last flag, RLE, size
    z.insert(z.end(), {uint8_t(h), uint8_t(h >> 8), uint8_t(h >> 16), 0});
  }
  return z;
}

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") return (in >> value) ? value : 0;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

// A ~80 KB recording whose checkpoint claims a 2 GiB state (a valid zstd frame that
// really expands to that, and a hash that agrees with its tick). The limit comes from
// the scene, so verify refuses the checkpoint at once: in a child process, it exits 2
// in well under a second without its peak memory growing past a few MB.
TEST(Hardening, CheckpointClaimingGigabytesIsRefusedWithoutAllocating) {
  TempDir dir;
  const std::string path = dir.path("bomb.krec");
  record(path, load_scene("demo.json"), 60, true, 30);
  std::vector<uint8_t> file = read_bytes(path);
  const ChunkSpan c = find_chunk(file, ChunkType::Checkpoint, 30);
  const uint64_t claimed = 1ull << 31;
  // tick and hash as they were (so the checkpoint agrees with its tick), then zstd.
  std::vector<uint8_t> payload(file.begin() + std::ptrdiff_t(c.payload()), file.begin() + std::ptrdiff_t(c.payload() + 16));
  payload.push_back(uint8_t(Compression::Zstd));
  for (int i = 0; i < 8; ++i) payload.push_back(uint8_t(claimed >> (8 * i)));
  std::vector<uint8_t> bomb = zstd_zero_bomb(claimed);
  payload.insert(payload.end(), bomb.begin(), bomb.end());
  std::vector<uint8_t> framed;
  frame_chunk(ChunkType::Checkpoint, payload, framed);
  std::vector<uint8_t> crafted(file.begin(), file.begin() + std::ptrdiff_t(c.offset));
  crafted.insert(crafted.end(), framed.begin(), framed.end());
  crafted.insert(crafted.end(), file.begin() + std::ptrdiff_t(c.end()), file.end());
  write_bytes(path, crafted);
  ASSERT_GT(crafted.size(), 64'000u);  // 16,384 RLE blocks and the rest of a 60-tick match
  ASSERT_LT(crafted.size(), 128'000u);

  auto rec = Recording::open(path);
  ASSERT_TRUE(rec);
  EXPECT_LT(rec->max_state_bytes(), 32ull << 20);  // demo: 16 bodies, 256 players' bodies
  auto checkpoint = rec->read_checkpoint(CheckpointRef{30, c.offset});
  ASSERT_FALSE(checkpoint);
  EXPECT_NE(checkpoint.error().message.find("state size 2147483648 exceeds the " + std::to_string(rec->max_state_bytes()) +
                                            "-byte limit for this recording's scene"),
            std::string::npos)
      << checkpoint.error().message;

  const long before = rss_kib();
  const auto started = std::chrono::steady_clock::now();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ostringstream o, e;
    cli::VerifyArgs args;
    args.rec = path;
    _exit(cli::verify(args, cli::Io{o, e}));
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_LT(seconds, 0.5);
  EXPECT_LT(usage.ru_maxrss, before + 64 * 1024) << "KiB; before the fork: " << before;
  std::cout << "verify of the " << crafted.size() << "-byte file: " << seconds << " s, peak RSS " << usage.ru_maxrss
            << " KiB (the test process had " << before << " KiB)\n";
}

// The scene's limit has room for real matches: 256 players join the sandbox, walk and
// throw balls; every checkpoint stays far below it.
TEST(Hardening, CheckpointLimitHoldsAFullSandboxMatch) {
  const sim::SceneDef scene = load_scene("demo.json");
  auto match = game::Match::create(scene, std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  const uint64_t limit = max_checkpoint_state_bytes(scene, games::SandboxRules::make_spec());
  size_t largest = 0;
  for (uint64_t t = 1; t <= 180; ++t) {
    game::TickInputs in;
    for (uint32_t p = 1; p <= game::kMaxPlayersPerMatch; ++p) {
      if (t == 1) in.events.push_back({game::PlayerEvent::Kind::Join, p});
      in.inputs.push_back({p, games::sandbox_input(float(int((t + p) % 3) - 1), 0.0f, float(p % 7), t % 30 == 0, true)});
    }
    match->step(in);
    if (t % 20 == 0) largest = std::max(largest, match->save_state().size());
  }
  EXPECT_EQ(match->world().bodies().size(), scene.bodies.size() + 256u * (1 + games::SandboxRules::kMaxBallsPerPlayer));
  EXPECT_LT(largest * 4, limit) << largest << " bytes of state, limit " << limit;
  std::cout << "256-player sandbox state: " << largest << " bytes; the scene's limit " << limit << "\n";
}

}  // namespace
}  // namespace keel::replay::test
