// The binary half of scene loading, shared by scene_loader.cpp (files) and
// parse_scene_binary (bytes from memory or a network). It needs only the header-only
// FlatBuffers runtime, so a build without libflatbuffers (the cross-compiled determinism
// runner) can read binary scenes with the same checks.
#pragma once

#include <keel/sim/defs.h>
#include <keel/base/expected.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace keel::scene::detail {

/// True when the bytes are long enough to hold a FlatBuffers root and carry "KSCN".
bool has_scene_identifier(const uint8_t* data, size_t size);

/// Verifies (FlatBuffers Verifier, bounded table count) and converts. `data` must be
/// 8-byte aligned; `base_dir` as for read_scene.
keel::Expected<sim::SceneDef> parse_verified_binary(const uint8_t* data, size_t size, const std::string& source,
                                                   const std::string* base_dir = nullptr);

}  // namespace keel::scene::detail
