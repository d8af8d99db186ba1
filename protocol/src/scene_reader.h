// Turns a FlatBuffers Scene (already verified, or built by our own JSON parser) into a
// sim::SceneDef, enforcing every rule of docs/scene-format.md.
#pragma once

#include <keel/protocol/scene_generated.h>
#include <keel/sim/defs.h>
#include <keel/sim/expected.h>

#include <string>

namespace keel::protocol::detail {

/// Converts and validates. `source` starts every error message.
sim::Expected<sim::SceneDef> read_scene(const fb::Scene& scene, const std::string& source);

/// Shortest text that reads back as the same float ("-1", "0.1", "nan", "inf").
std::string format_float(float value);

}  // namespace keel::protocol::detail
