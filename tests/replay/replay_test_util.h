// Helpers for the replay tests: temporary files, recordings made the way a server makes
// them, and byte surgery on recorded files (flipping bits, fixing checksums).
#pragma once

#include <keel/scene/scene.h>
#include <keel/replay/format.h>
#include <keel/replay/reader.h>
#include <keel/replay/writer.h>
#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace keel::replay::test {

namespace fs = std::filesystem;

inline std::string scene_path(const std::string& name) { return std::string(KEEL_SOURCE_DIR) + "/scenes/" + name; }

inline sim::SceneDef load_scene(const std::string& name) {
  auto scene = scene::load_scene_file(scene_path(name));
  EXPECT_TRUE(scene) << (scene ? "" : scene.error().message);
  return *scene;
}

/// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = fs::temp_directory_path() / ("keel_replay_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() { fs::remove_all(dir_); }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }

 private:
  fs::path dir_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  // A fresh file, not a truncated one: ext4 writes a file truncated and rewritten back
  // to disk at close (its replace-by-truncate heuristic), ~2 ms each time.
  fs::remove(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

/// The inputs of tick t in the scripted multi-player session: three players join at
/// different ticks, walk, turn, jump and fire; one leaves and comes back.
inline game::TickInputs scripted_inputs(uint64_t t) {
  using Kind = game::PlayerEvent::Kind;
  game::TickInputs in;
  if (t == 1) in.events.push_back({Kind::Join, 7});
  if (t == 5) in.events.push_back({Kind::Join, 3});
  if (t == 20) in.events.push_back({Kind::Join, 11});
  if (t == 70) in.events.push_back({Kind::Leave, 3});
  if (t == 90) in.events.push_back({Kind::Join, 3});
  for (uint32_t p : {3u, 7u, 11u}) {
    if ((t + p) % 3 == 0) continue;  // some ticks carry no frame: the repeat-last rule
    const float move_x = float(int(t % 7) - 3) / 3.0f;
    const float move_forward = float(int((t + p) % 5) - 2) / 2.0f;
    const float yaw = float(t % 13) * 0.5f;  // past pi: the layout wraps it
    in.inputs.push_back({p, games::sandbox_input(move_x, move_forward, yaw, (t + p) % 4 == 0, (t + p) % 9 == 0)});
  }
  return in;
}

/// Called after each tick is stepped and before it is recorded: tests perturb the match
/// there (a bit flip on one machine) or write a dump of it.
using AfterStep = std::function<void(uint64_t tick, game::Match& match)>;

/// Steps the match and records the step, as a host does: one hash for the tick.
inline keel::Status step_and_record(RecordingWriter& writer, game::Match& match, const game::TickInputs& inputs) {
  match.step(inputs);
  return writer.record(inputs, match, match.hash());
}

/// Records `ticks` ticks of `scene`, with the scripted inputs when `players`.
inline void record(const std::string& path, const sim::SceneDef& scene, uint64_t ticks, bool players,
                   uint32_t checkpoint_interval = 30, const AfterStep& after_step = {}) {
  auto match = game::Match::create(scene, std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match) << match.error().message;
  WriterOptions options;
  options.checkpoint_interval = checkpoint_interval;
  auto writer = RecordingWriter::create(path, *match, options);
  ASSERT_TRUE(writer) << writer.error().message;
  for (uint64_t t = 1; t <= ticks; ++t) {
    const game::TickInputs in = players ? scripted_inputs(t) : game::TickInputs{};
    match->step(in);
    if (after_step) after_step(t, *match);
    auto st = writer->record(in, *match, match->hash());
    ASSERT_TRUE(st) << st.error().message;
  }
  ASSERT_TRUE(writer->finish());
}

/// One chunk's place in a file, found by walking the frames (no checksum checks).
struct ChunkSpan {
  uint32_t type = 0;
  size_t offset = 0;  ///< of the frame
  size_t length = 0;  ///< payload bytes
  size_t payload() const { return offset + kChunkHeadBytes; }
  size_t end() const { return offset + kChunkFrameBytes + length; }
};

inline uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
inline uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

inline std::vector<ChunkSpan> chunks_of(const std::vector<uint8_t>& file) {
  std::vector<ChunkSpan> out;
  size_t at = kPreambleBytes;
  while (at + kChunkHeadBytes <= file.size()) {
    ChunkSpan c{le32(&file[at]), at, le32(&file[at + 4])};
    if (c.end() > file.size()) break;
    out.push_back(c);
    if (ChunkType(c.type) == ChunkType::Footer) break;
    at = c.end();
  }
  return out;
}

/// The chunk of `type` whose payload starts with u64 `tick` (ticks and checkpoints).
inline ChunkSpan find_chunk(const std::vector<uint8_t>& file, ChunkType type, uint64_t tick) {
  for (const ChunkSpan& c : chunks_of(file)) {
    if (c.type == uint32_t(type) && le64(&file[c.payload()]) == tick) return c;
  }
  ADD_FAILURE() << "no " << to_string(type) << " chunk for tick " << tick;
  return {};
}

/// Recomputes a chunk's checksum after its payload was edited (a wrong but well-framed
/// recording, as a buggy or diverged writer would make).
inline void fix_checksum(std::vector<uint8_t>& file, const ChunkSpan& c) {
  uint64_t sum = chunk_checksum(std::span<const uint8_t>(file).subspan(c.offset, kChunkHeadBytes + c.length));
  for (int i = 0; i < 8; ++i) file[c.offset + kChunkHeadBytes + c.length + size_t(i)] = uint8_t(sum >> (8 * i));
}

}  // namespace keel::replay::test
