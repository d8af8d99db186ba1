// Turns a FlatBuffers Scene (already verified, or built by our own JSON parser) into a
// sim::SceneDef, enforcing every rule of docs/scene-format.md.
#pragma once

#include <keel/scene/scene_generated.h>
#include <keel/sim/defs.h>
#include <keel/base/expected.h>

#include <string>

namespace keel::scene::detail {

/// Converts and validates. `source` starts every error message.
/// `base_dir`: the folder of the scene file, where Mesh colliders' mesh_file names are
/// looked up; null for a scene from memory or the network (mesh_file is then an error).
keel::Expected<sim::SceneDef> read_scene(const fb::Scene& scene, const std::string& source,
                                        const std::string* base_dir = nullptr);

/// Shortest text that reads back as the same float ("-1", "0.1", "nan", "inf").
std::string format_float(float value);

}  // namespace keel::scene::detail
