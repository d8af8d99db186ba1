// Scene files: JSON on disk, FlatBuffers binary on the wire and in recordings, both
// described by scene/schemas/scene.fbs. docs/scene-format.md is the user's reference.
//
// Every byte read here is untrusted. A bad scene gets an Error whose message names the
// source, the body id and the field, e.g.
//   "scenes/bad.json: body 12: colliders[0].radius: must be > 0 (got -1)"
// Nothing is silently fixed, with one documented exception: a rotation quaternion whose
// length is not 1 (but not ~0) is normalised.
#pragma once

#include <keel/sim/defs.h>
#include <keel/base/expected.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keel::scene {

/// Limits that keep a hostile or mistaken file from exhausting memory. Scenes past them
/// are rejected with a message naming the limit.
struct SceneLimits {
  static constexpr size_t kMaxBodies = 1'000'000;
  static constexpr size_t kMaxCollidersPerBody = 64;
  static constexpr size_t kMaxTotalColliders = 4'000'000;
  static constexpr size_t kMaxSpawnPoints = 65'536;
  static constexpr size_t kMaxNameBytes = 256;
  /// 512 MiB, JSON or binary. JSON expands up to ~2.7x when built into a FlatBuffer,
  /// which must stay under FlatBuffers' 2 GiB ceiling.
  static constexpr uint64_t kMaxFileBytes = 512ull << 20;
  static constexpr uint32_t kMaxSubsteps = 64;
  static constexpr size_t kMaxCharacters = 4'096;
  static constexpr size_t kMaxScriptSteps = 4'096;         ///< per character
  static constexpr size_t kMaxTotalScriptSteps = 262'144;  ///< over the scene
  static constexpr size_t kMaxJoints = 1'000'000;
  static constexpr size_t kMaxAssemblies = 65'536;  ///< ragdolls, and vehicles, each
  /// The longest JSON array any scene may hold: the body or joint list, a mesh's indices or a
  /// heightfield's heights (sim::kMaxHeightfieldSamples), whichever is longest.
  static constexpr size_t kMaxArrayElements =
      std::max({kMaxBodies, kMaxJoints, size_t(sim::kMaxHeightfieldSamples), size_t(sim::kMaxMeshTriangles) * 3});
};

/// Tick rates a scene may choose (docs/scene-format.md): 30, 60 or 120 Hz.
bool is_supported_tick_rate(uint32_t tick_rate);

/// Reads a scene file. A file whose bytes 4..7 are the identifier "KSCN" is read as
/// FlatBuffers binary, anything else as JSON. Errors start with `path`.
keel::Expected<sim::SceneDef> load_scene_file(const std::string& path);

/// Parses and validates a JSON scene. `source_name` (usually the path) starts every error
/// message; parse errors also carry the line and column.
keel::Expected<sim::SceneDef> parse_scene_json(std::string_view json,
                                              const std::string& source_name);

/// Verifies (FlatBuffers Verifier, then the same checks as JSON) and converts a binary
/// scene. The bytes may come straight off a network or out of a file.
keel::Expected<sim::SceneDef> parse_scene_binary(std::span<const uint8_t> bytes,
                                                const std::string& source_name);

/// Encodes a scene as a FlatBuffers binary with identifier "KSCN" (what a server sends
/// to clients and a recording embeds). For any scene that loads (every SceneDef the
/// parse functions return), parse_scene_binary of the result gives back the same
/// SceneDef bit for bit, settings.threads aside (it never changes results and is not part
/// of the format). The scene must fit the limits above; larger ones are a caller bug.
std::vector<uint8_t> scene_to_binary(const sim::SceneDef& scene);

/// The text of scene/schemas/scene.fbs, compiled into the library.
std::string_view scene_schema_text();

}  // namespace keel::scene
