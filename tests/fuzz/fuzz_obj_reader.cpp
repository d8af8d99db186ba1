// libFuzzer: the Wavefront OBJ reader that mesh colliders in scene files load
// (read_obj_text). On success every index must name a vertex, every coordinate must be
// finite and the counts must be within the sim's mesh limits; on failure the message
// must name the file.
// Input: the OBJ text.
#include "obj_reader.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 20) return -1;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<keel::sim::Vec3> points;
  std::vector<uint32_t> indices;
  keel::Status st = keel::scene::detail::read_obj_text(text, "fuzz.obj", points, indices);
  if (!st) {
    if (st.error().message.rfind("fuzz.obj", 0) != 0) std::abort();
    return 0;
  }
  if (indices.empty() || indices.size() % 3 != 0) std::abort();
  if (points.size() > keel::sim::kMaxMeshVertices || indices.size() / 3 > keel::sim::kMaxMeshTriangles) std::abort();
  for (uint32_t i : indices) {
    if (i >= points.size()) std::abort();
  }
  for (const auto& p : points) {
    if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) std::abort();
  }
  return 0;
}
