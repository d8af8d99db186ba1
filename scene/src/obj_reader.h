// Wavefront OBJ geometry for mesh colliders (internal to scene/src).
#pragma once

#include <keel/sim/defs.h>
#include <keel/base/expected.h>

#include <string>
#include <vector>

namespace keel::scene::detail {

/// Largest OBJ file read (bytes): a mesh at the sim's limits fits in far less.
inline constexpr uint64_t kMaxObjFileBytes = 256ull << 20;

/// Reads `v x y z` and `f a b c ...` lines (`a`, `a/t`, `a//n`, `a/t/n`; 1-based, or
/// negative = counted back from the last vertex so far); polygons become triangle fans
/// (a b c, a c d, ...). Every other line (vt, vn, o, g, s, usemtl, comments) is ignored.
/// Errors name the file and line: "level.obj:12: face index 40 is out of range (38 vertices)".
keel::Status read_obj_text(const std::string& text, const std::string& name, std::vector<sim::Vec3>& points,
                          std::vector<uint32_t>& indices);
keel::Status read_obj_file(const std::string& path, const std::string& name, std::vector<sim::Vec3>& points,
                          std::vector<uint32_t>& indices);

}  // namespace keel::scene::detail
