// keel-detrun reads binary scenes through keel::scene's binary path (scene_binary.cpp
// there), which needs only the header-only FlatBuffers runtime: the runner cross-compiles
// for aarch64 with no target libraries. This file adds the file-reading shell and a hint
// for the JSON scenes the runner cannot read.
#include "scene_binary.h"

#include <keel/scene/scene.h>

#include <algorithm>
#include <fstream>
#include <span>
#include <vector>

namespace keel::det {

namespace {

constexpr char kSceneIdentifier[] = "KSCN";

bool has_scene_identifier(const std::vector<uint8_t>& bytes) {
  // A FlatBuffer starts with its root offset (4 bytes), then the file identifier.
  return bytes.size() >= 8 && std::equal(kSceneIdentifier, kSceneIdentifier + 4, bytes.begin() + 4);
}

}  // namespace

keel::Expected<sim::SceneDef> load_binary_scene(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return keel::Error{path + ": cannot open"};
  const std::streamoff size = in.tellg();
  if (size < 0 || uint64_t(size) > scene::SceneLimits::kMaxFileBytes) {
    return keel::Error{path + ": is not a readable file of at most " +
                      std::to_string(scene::SceneLimits::kMaxFileBytes) + " bytes"};
  }
  // A heap buffer is aligned for any scalar, as FlatBuffers' in-place reads need.
  std::vector<uint8_t> bytes(size_t(size), 0);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) return keel::Error{path + ": read error"};
  if (!has_scene_identifier(bytes)) {
    return keel::Error{path + ": not a binary scene (no \"KSCN\" identifier); convert a JSON scene with "
                             "`flatc -b scene/schemas/scene.fbs SCENE.json`"};
  }
  return scene::parse_scene_binary(std::span<const uint8_t>(bytes), path);
}

}  // namespace keel::det
