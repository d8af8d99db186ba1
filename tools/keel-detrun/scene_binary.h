// keel-detrun's scene reader: FlatBuffers binary scenes (`flatc -b
// scene/schemas/scene.fbs scenes/X.json` writes X.kscn) and nothing else.
#pragma once

#include <keel/sim/defs.h>
#include <keel/base/expected.h>

#include <string>

namespace keel::det {

/// Reads, verifies (FlatBuffers Verifier) and validates a binary scene with the same rules
/// as keel::scene. Errors start with `path`.
keel::Expected<sim::SceneDef> load_binary_scene(const std::string& path);

}  // namespace keel::det
