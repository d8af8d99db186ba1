// Why a second binary entry point beside keel::protocol::parse_scene_binary: protocol's
// lives in scene_loader.cpp together with the JSON parser, which needs libflatbuffers
// (flatbuffers::Parser is not header-only). The runner must cross-compile for aarch64 with
// no target libraries, so it compiles protocol's validating converter
// (protocol/src/scene_reader.cpp, unchanged) and does the verification step here with the
// header-only runtime. The checks are the same; only the file-reading shell is repeated.
// If protocol moves its binary path into a file of its own, this file shrinks to a call.
#include "scene_binary.h"

#include <keel/protocol/scene.h>
#include <keel/protocol/scene_generated.h>

#include <fstream>
#include <vector>

#include "scene_reader.h"

namespace keel::protocol {

// scene_reader.cpp calls this; protocol defines it in scene_loader.cpp, which the runner
// does not build. Scenes may choose (docs/scene-format.md) 30, 60 or 120 Hz.
bool is_supported_tick_rate(uint32_t tick_rate) { return tick_rate == 30 || tick_rate == 60 || tick_rate == 120; }

}  // namespace keel::protocol

namespace keel::det {

namespace {

// As protocol: every table a valid scene can hold, plus room for a joint list.
constexpr size_t kMaxVerifiedTables = 2 + protocol::SceneLimits::kMaxBodies + protocol::SceneLimits::kMaxTotalColliders +
                                      protocol::SceneLimits::kMaxSpawnPoints + protocol::SceneLimits::kMaxCharacters +
                                      protocol::SceneLimits::kMaxTotalScriptSteps + 65'536;

}  // namespace

sim::Expected<sim::SceneDef> load_binary_scene(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return sim::Error{path + ": cannot open"};
  const std::streamoff size = in.tellg();
  if (size < 0 || uint64_t(size) > protocol::SceneLimits::kMaxFileBytes) {
    return sim::Error{path + ": is not a readable file of at most " +
                      std::to_string(protocol::SceneLimits::kMaxFileBytes) + " bytes"};
  }
  // A heap buffer is aligned for any scalar, as FlatBuffers' in-place reads need.
  std::vector<uint8_t> bytes(size_t(size), 0);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) return sim::Error{path + ": read error"};
  if (bytes.size() < 2 * sizeof(flatbuffers::uoffset_t) ||
      !flatbuffers::BufferHasIdentifier(bytes.data(), protocol::fb::SceneIdentifier())) {
    return sim::Error{path + ": not a binary scene (no \"KSCN\" identifier); convert a JSON scene with "
                             "`flatc -b protocol/schemas/scene.fbs SCENE.json`"};
  }
  flatbuffers::Verifier::Options options;
  options.max_tables = static_cast<flatbuffers::uoffset_t>(kMaxVerifiedTables);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  if (!protocol::fb::VerifySceneBuffer(verifier)) {
    return sim::Error{path + ": not a valid binary scene (FlatBuffers verification failed)"};
  }
  return protocol::detail::read_scene(*protocol::fb::GetScene(bytes.data()), path);
}

}  // namespace keel::det
