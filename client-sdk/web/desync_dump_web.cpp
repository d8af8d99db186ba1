// keel::replay::write_desync_dump for the wasm32 client: a page has no file system, so the
// dump is never written (the module's client keeps PredictionConfig::dump_dir empty and
// reports the first mismatching tick as a counter instead, keel_web_stat). The dump's
// format library stays out of the wasm build: it compresses with libzstd.
#include <keel/replay/desync_dump.h>

namespace keel::replay {

keel::Status write_desync_dump(const std::string& path, const game::Match&, uint64_t, std::string) {
  return keel::Error{path + ": the wasm32 client writes no desync dumps (no file system)"};
}

}  // namespace keel::replay
