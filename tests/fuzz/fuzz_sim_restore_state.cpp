// libFuzzer target for the saved-state decoder (World::restore_state): what --state,
// recordings' checkpoints, desync dumps and the checkpoints sent to clients all go
// through. A state it takes must save back to the very same bytes (the decoder's
// canonical promise), and must step a tick without a sanitizer report.
// Build: scripts/fuzz.sh (clang-14, -DKEEL_BUILD_FUZZ=ON); run:
//   build-fuzz/bin/fuzz_sim_restore_state -max_total_time=60 tests/fuzz/corpus/sim_restore_state
// Seeds: real saved states (keel-sim run SCENE --save-at T --state-out F) of
// tests/fuzz/corpus/protocol_scene/{minimal,shapes,joints,concave}.json (concave: a
// heightfield, a mesh and hulls), scenes/demo.json and scenes/characters.json.
#include <keel/sim/world.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  keel::sim::World world;
  if (!world.restore_state(std::span<const uint8_t>(data, size))) return 0;
  const std::vector<uint8_t> again = world.save_state();
  // Not canonical: a peer restoring these bytes would hash another world. A finding.
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  // Stepping a huge forged world is the solver's cost, not the decoder's: keep it short.
  if (world.body_count() <= 256) {
    world.step();
    (void)world.first_non_finite_body();
  }
  return 0;
}
