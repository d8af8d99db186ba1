// Wavefront OBJ reader: only what a collision mesh needs, every line checked.
#include "obj_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace keel::scene::detail {

namespace {

keel::Error at_line(const std::string& name, size_t line, const std::string& what) {
  return keel::Error{name + ":" + std::to_string(line) + ": " + what};
}

// Splits on spaces and tabs.
std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream is(line);
  std::string tok;
  while (is >> tok) out.push_back(tok);
  return out;
}

bool parse_float(const std::string& s, float& out) {
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) return false;
  out = v;
  return true;
}

// One face corner: the vertex index before any '/'.
bool parse_index(const std::string& s, size_t vertex_count, uint32_t& out) {
  const std::string head = s.substr(0, s.find('/'));
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(head.c_str(), &end, 10);
  if (head.empty() || end == head.c_str() || *end != '\0' || errno == ERANGE) return false;
  const long long resolved = v > 0 ? v - 1 : static_cast<long long>(vertex_count) + v;
  if (v == 0 || resolved < 0 || resolved >= static_cast<long long>(vertex_count)) return false;
  out = static_cast<uint32_t>(resolved);
  return true;
}

keel::Status read_vertex(const std::vector<std::string>& t, const std::string& name, size_t line,
                        std::vector<sim::Vec3>& points) {
  if (t.size() < 4 || t.size() > 5) return at_line(name, line, "a vertex needs x y z (and an optional w)");
  if (points.size() >= sim::kMaxMeshVertices) {
    return at_line(name, line, "more than " + std::to_string(sim::kMaxMeshVertices) + " vertices");
  }
  sim::Vec3 p;
  for (int k = 0; k < 3; ++k) {
    if (!parse_float(t[size_t(k) + 1], p[k])) return at_line(name, line, "vertex coordinate '" + t[size_t(k) + 1] + "' is not a finite number");
  }
  points.push_back(p);
  return keel::Status::ok();
}

keel::Status read_face(const std::vector<std::string>& t, const std::string& name, size_t line, size_t vertex_count,
                      std::vector<uint32_t>& indices) {
  if (t.size() < 4) return at_line(name, line, "a face needs at least three corners");
  std::vector<uint32_t> corner(t.size() - 1);
  for (size_t i = 1; i < t.size(); ++i) {
    if (!parse_index(t[i], vertex_count, corner[i - 1])) {
      return at_line(name, line, "face index '" + t[i] + "' is out of range (" + std::to_string(vertex_count) +
                                     " vertices so far)");
    }
  }
  if (indices.size() / 3 + (corner.size() - 2) > sim::kMaxMeshTriangles) {
    return at_line(name, line, "more than " + std::to_string(sim::kMaxMeshTriangles) + " triangles");
  }
  for (size_t i = 1; i + 1 < corner.size(); ++i) indices.insert(indices.end(), {corner[0], corner[i], corner[i + 1]});
  return keel::Status::ok();
}

}  // namespace

keel::Status read_obj_text(const std::string& text, const std::string& name, std::vector<sim::Vec3>& points,
                          std::vector<uint32_t>& indices) {
  points.clear();
  indices.clear();
  std::istringstream in(text);
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> t = tokens_of(line);
    if (t.empty()) continue;
    keel::Status st = keel::Status::ok();
    if (t[0] == "v") st = read_vertex(t, name, number, points);
    if (t[0] == "f") st = read_face(t, name, number, points.size(), indices);
    if (!st) return st;
  }
  if (indices.empty()) return keel::Error{name + ": has no faces (f lines)"};
  return keel::Status::ok();
}

keel::Status read_obj_file(const std::string& path, const std::string& name, std::vector<sim::Vec3>& points,
                          std::vector<uint32_t>& indices) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return keel::Error{name + ": cannot read: not a regular file"};
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return keel::Error{name + ": cannot read: " + ec.message()};
  if (size > kMaxObjFileBytes) {
    return keel::Error{name + ": is " + std::to_string(size) + " bytes, at most " + std::to_string(kMaxObjFileBytes) +
                      " allowed"};
  }
  std::ifstream file(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!file || !file.read(text.data(), static_cast<std::streamsize>(size))) return keel::Error{name + ": cannot read"};
  return read_obj_text(text, name, points, indices);
}

}  // namespace keel::scene::detail
