// Binary scenes (FlatBuffers, identifier "KSCN"): verified with the header-only runtime,
// then checked by the same rules as JSON (scene_reader.cpp). Nothing here needs
// libflatbuffers, which is what lets the determinism runner build this file alone.
#include "scene_binary.h"

#include <keel/scene/scene.h>
#include <keel/scene/scene_generated.h>

#include <new>
#include <string>
#include <vector>

#include "scene_reader.h"

namespace keel::scene {

bool is_supported_tick_rate(uint32_t tick_rate) {
  return tick_rate == 30 || tick_rate == 60 || tick_rate == 120;
}

namespace detail {
namespace {

// Every table a valid scene can hold (scene, solver, bodies, colliders, spawn points),
// plus room for a joint list, so that a scene with joints gets the "not supported yet"
// message rather than a verification failure.
constexpr size_t kMaxVerifiedTables = 2 + SceneLimits::kMaxBodies +
                                      SceneLimits::kMaxTotalColliders +
                                      SceneLimits::kMaxSpawnPoints + SceneLimits::kMaxCharacters +
                                      SceneLimits::kMaxTotalScriptSteps + 65'536;

}  // namespace

bool has_scene_identifier(const uint8_t* data, size_t size) {
  return size >= 2 * sizeof(flatbuffers::uoffset_t) &&
         flatbuffers::BufferHasIdentifier(data, fb::SceneIdentifier());
}

keel::Expected<sim::SceneDef> parse_verified_binary(const uint8_t* data, size_t size,
                                                   const std::string& source,
                                                   const std::string* base_dir) {
  flatbuffers::Verifier::Options options;
  options.max_tables = static_cast<flatbuffers::uoffset_t>(kMaxVerifiedTables);
  flatbuffers::Verifier verifier(data, size, options);
  if (!fb::VerifySceneBuffer(verifier)) {
    return keel::Error{source +
                      ": not a valid binary scene (FlatBuffers verification failed: the data "
                      "is truncated or corrupt, or holds more than " +
                      std::to_string(kMaxVerifiedTables) + " tables)"};
  }
  return read_scene(*fb::GetScene(data), source, base_dir);
}

}  // namespace detail

keel::Expected<sim::SceneDef> parse_scene_binary(std::span<const uint8_t> bytes,
                                                const std::string& source_name) {
  // The size check comes first: the Verifier asserts on buffers of 2 GiB and more.
  if (bytes.size() > SceneLimits::kMaxFileBytes) {
    return keel::Error{source_name + ": is " + std::to_string(bytes.size()) + " bytes, at most " +
                      std::to_string(SceneLimits::kMaxFileBytes) + " allowed"};
  }
  if (!detail::has_scene_identifier(bytes.data(), bytes.size())) {
    return keel::Error{source_name + ": not a binary scene (no \"KSCN\" file identifier)"};
  }
  try {
    // FlatBuffers reads scalars in place, so the buffer must be aligned as it was
    // written (8 bytes at most); bytes cut out of a larger message may not be.
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
      const std::vector<uint8_t> aligned(bytes.begin(), bytes.end());
      return detail::parse_verified_binary(aligned.data(), aligned.size(), source_name);
    }
    return detail::parse_verified_binary(bytes.data(), bytes.size(), source_name);
  } catch (const std::bad_alloc&) {
    return keel::Error{source_name + ": out of memory while reading"};
  }
}

}  // namespace keel::scene
