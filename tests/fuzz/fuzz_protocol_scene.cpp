// libFuzzer: scene files, as load_scene_file() sees them — bytes carrying the "KSCN"
// identifier go through the FlatBuffers Verifier and the binary reader, anything else
// through the JSON path (size and NUL checks, array-length scan, FlatBuffers IDL parser,
// the same rule checks). Every accepted scene must also survive scene_to_binary() and
// read back to the same bytes (the round trip scene.h promises); a scene that does not
// is reported as a crash.
#include <keel/scene/scene.h>
#include <keel/scene/scene_generated.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

void check_round_trip(const keel::sim::SceneDef& scene) {
  const std::vector<uint8_t> binary = keel::scene::scene_to_binary(scene);
  auto again = keel::scene::parse_scene_binary(binary, "round-trip");
  if (!again) {
    std::fprintf(stderr, "accepted scene does not read back: %s\n", again.error().message.c_str());
    std::abort();
  }
  if (keel::scene::scene_to_binary(*again) != binary) {
    std::fprintf(stderr, "accepted scene reads back different\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool binary = size >= 8 && flatbuffers::BufferHasIdentifier(data, keel::scene::fb::SceneIdentifier());
  auto scene = binary
                   ? keel::scene::parse_scene_binary({data, size}, "fuzz.kscn")
                   : keel::scene::parse_scene_json({reinterpret_cast<const char*>(data), size}, "fuzz.json");
  if (scene) check_round_trip(*scene);
  return 0;
}
