// libFuzzer target for everything that reads recording bytes: the preamble, the header
// and its copy, chunk framing and frame checks, the scan for the next sound chunk after
// damage, every payload decoder, gaps and segments, the footer and tail, checkpoint
// decompression under the scene's limit, a short verify of each segment, and desync dumps.
// Build: configure with clang and -DKEEL_BUILD_FUZZ=ON; run:
//   build-fuzz/bin/fuzz_replay_reader -max_total_time=60 tests/fuzz/corpus/replay_reader
#include <keel/scene/scene.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

using namespace keel::replay;

namespace {

// Stepping a fuzzed scene is the sim's business, not the reader's: keep it small.
bool small_scene(const Header& h) {
  auto scene = keel::scene::parse_scene_binary(h.scene, "fuzz");
  return scene && scene->bodies.size() <= 32;
}

void exercise(const Recording& rec) {
  const RecordingIndex& idx = rec.index();
  for (const CheckpointRef& ref : rec.checkpoints()) (void)rec.read_checkpoint(ref);
  if (!small_scene(rec.header())) return;
  // A few ticks at the start of every segment (each starts from its own checkpoint).
  for (size_t i = 0; i < idx.segments.size() && i < 4; ++i) {
    VerifyOptions options;
    options.from = idx.segments[i].first;
    options.to = std::min<uint64_t>(idx.segments[i].last, idx.segments[i].first + 4);
    (void)verify(rec, options);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  (void)decode_desync_dump(bytes);
  auto rec = Recording::from_bytes(std::move(bytes), "fuzz");
  if (rec) exercise(*rec);
  return 0;
}
