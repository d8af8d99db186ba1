// Turning a recording cut short (a crash) or damaged in its tail into a finished one.
#pragma once

#include <keel/sim/expected.h>

#include <cstdint>
#include <string>
#include <vector>

namespace keel::replay {

struct RecoverResult {
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;
  uint64_t ticks_kept = 0;        ///< tick records written (the first tick counts)
  uint32_t checkpoints_kept = 0;
  bool lost_data = false;         ///< something other than the footer was dropped
  std::vector<std::string> problems;
};

/// Copies the header and every sound chunk up to the first damage into `out`, then
/// writes a fresh footer and tail. Fails (writing nothing useful) when the preamble or
/// header cannot be read, since without them no tick can be replayed.
sim::Expected<RecoverResult> recover_recording(const std::string& in, const std::string& out);

}  // namespace keel::replay
