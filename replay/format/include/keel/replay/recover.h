// Turning a recording cut short (a crash) or damaged in its tail into a finished one.
#pragma once

#include <keel/replay/format.h>
#include <keel/base/expected.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace keel::replay {

struct RecoverResult {
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;
  uint64_t ticks_kept = 0;        ///< tick records written (the first tick counts)
  uint32_t checkpoints_kept = 0;
  std::vector<TickRange> segments;  ///< the runs of ticks kept
  /// Ticks lost inside the recording: damaged, or behind damage up to the next checkpoint.
  std::vector<TickRange> lost;
  /// The writer did not finish: the ticks after last_tick it may have recorded, an
  /// upper bound (up_to), from its last sync chunk and flush interval.
  std::optional<TickRange> lost_tail;
  std::optional<uint64_t> last_sync;  ///< the writer's last flush, when known
  uint32_t flush_every_ticks = 0;
  bool lost_data = false;         ///< anything was lost: ticks, a tail, or a damaged chunk
  std::vector<std::string> problems;
};

/// Copies the header and every sound chunk into `out`: after damage it resumes at the
/// next tick record that has a checkpoint, so every replayable range survives; then it
/// writes a footer that lists what was lost, and the tail. Fails (writing nothing
/// useful) when neither the header nor its copy can be read, since without them no
/// tick can be replayed.
keel::Expected<RecoverResult> recover_recording(const std::string& in, const std::string& out);

}  // namespace keel::replay
