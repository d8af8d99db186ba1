// Scene files in, SceneDefs out: JSON through the FlatBuffers IDL parser (the part of the
// scene library that needs libflatbuffers), binary through scene_binary.cpp, then both
// through the same rule checks (scene_reader.cpp).
#include <flatbuffers/idl.h>
#include <keel/scene/scene.h>
#include <keel/scene/scene_generated.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "json_scan.h"
#include "scene_binary.h"
#include "scene_reader.h"

namespace keel::scene {

namespace {

// The largest array a valid scene can hold: its body list, a heightfield's heights, or a
// mesh's indices.
constexpr size_t kMaxJsonArrayElements = SceneLimits::kMaxArrayElements;

/// A flatbuffers::Parser that can say where its tokenizer stopped. The position lives in
/// protected members; an error message that names the body needs it.
class SceneJsonParser : public flatbuffers::Parser {
 public:
  explicit SceneJsonParser(const flatbuffers::IDLOptions& options) : Parser(options) {}

  size_t offset_in(const char* text) const {
    return cursor_ != nullptr && cursor_ >= text ? static_cast<size_t>(cursor_ - text) : 0;
  }
  int line() const { return line_; }
  int64_t column() const { return cursor_ != nullptr ? CursorPosition() : 0; }
};

flatbuffers::IDLOptions json_options() {
  flatbuffers::IDLOptions options;
  // Quoted keys, no trailing commas: a scene file is plain JSON any tool can read.
  options.strict_json = true;
  // An unknown field is an error, as users expect from a config file (a typo such as
  // "resitution" must not silently become the default).
  options.skip_unexpected_fields_in_json = false;
  return options;
}

/// "3: 17: error: unknown field: foo" (possibly after warnings) -> "unknown field: foo".
/// The first marker is the parser's own; later text may quote the file (a field name).
std::string parser_message(const std::string& error) {
  const std::string marker = "error: ";
  const size_t at = error.find(marker);
  std::string message = at == std::string::npos ? error : error.substr(at + marker.size());
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
    message.pop_back();
  }
  return message;
}

/// Builds "file:LINE:COL: body 12: colliders[0].sahpe: unknown field: sahpe".
keel::Error json_error(const SceneJsonParser& parser, const std::string& text,
                      const std::string& source) {
  const detail::JsonLocation where = detail::locate(text, parser.offset_in(text.c_str()));
  std::string message =
      source + ":" + std::to_string(parser.line()) + ":" + std::to_string(parser.column()) + ": ";
  if (where.body_id) {
    message += "body " + std::to_string(*where.body_id) + ": ";
  } else if (where.body) {
    message += "bodies[" + std::to_string(*where.body) + "]: ";
  }
  if (!where.path.empty()) message += where.path + ": ";
  return keel::Error{message + parser_message(parser.error_)};
}

keel::Expected<sim::SceneDef> parse_json_text(const std::string& text, size_t bom,
                                             const std::string& source, const std::string* base_dir) {
  SceneJsonParser parser(json_options());
  const std::string schema(scene_schema_text());
  if (!parser.Parse(schema.c_str(), nullptr, "scene.fbs")) {
    return keel::Error{
        source + ": internal error: the built-in scene schema does not parse: " + parser.error_};
  }
  if (!parser.ParseJson(text.c_str() + bom)) return json_error(parser, text, source);
  const auto* scene = fb::GetScene(parser.builder_.GetBufferPointer());
  return detail::read_scene(*scene, source, base_dir);
}

/// Checks that only need the text, then parses. `text` is NUL-terminated by std::string.
keel::Expected<sim::SceneDef> parse_json_checked(const std::string& text,
                                                const std::string& source,
                                                const std::string* base_dir = nullptr) {
  if (text.size() > SceneLimits::kMaxFileBytes) {
    return keel::Error{source + ": is " + std::to_string(text.size()) + " bytes, at most " +
                      std::to_string(SceneLimits::kMaxFileBytes) + " allowed"};
  }
  // The parser reads a C string: text after a NUL would be silently dropped.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    return keel::Error{source + ": contains a NUL byte at offset " + std::to_string(nul) +
                      " (a scene is JSON text or a \"KSCN\" binary)"};
  }
  // A UTF-8 byte order mark is allowed (RFC 8259 lets parsers ignore it); it is not data.
  const size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  if (auto too_long = detail::find_long_array(text, kMaxJsonArrayElements)) {
    return keel::Error{source + ":" + std::to_string(too_long->line) +
                      ": an array here has more than " + std::to_string(kMaxJsonArrayElements) +
                      " elements, the most any array in a scene may have"};
  }
  try {
    return parse_json_text(text, bom, source, base_dir);
  } catch (const std::bad_alloc&) {
    return keel::Error{source + ": out of memory while parsing"};
  }
}

}  // namespace

keel::Expected<sim::SceneDef> parse_scene_json(std::string_view json,
                                              const std::string& source_name) {
  if (json.size() > SceneLimits::kMaxFileBytes) {
    return keel::Error{source_name + ": is " + std::to_string(json.size()) + " bytes, at most " +
                      std::to_string(SceneLimits::kMaxFileBytes) + " allowed"};
  }
  return parse_json_checked(std::string(json), source_name);
}

namespace {

keel::Expected<sim::SceneDef> load_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return keel::Error{path +
                      ": cannot read: " + (ec ? ec.message() : std::string("not a regular file"))};
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return keel::Error{path + ": cannot read: " + ec.message()};
  if (size > SceneLimits::kMaxFileBytes) {
    return keel::Error{path + ": is " + std::to_string(size) + " bytes, at most " +
                      std::to_string(SceneLimits::kMaxFileBytes) + " allowed"};
  }
  std::ifstream file(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!file || !file.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return keel::Error{path + ": cannot read: " + std::strerror(errno)};
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  // Mesh colliders' mesh_file names are relative to the scene file's folder.
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  if (detail::has_scene_identifier(data, bytes.size())) {
    // A std::string holds no particular alignment: copy into 8-aligned storage.
    const std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
    std::memcpy(const_cast<uint64_t*>(aligned.data()), bytes.data(), bytes.size());
    return detail::parse_verified_binary(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size(), path, &base_dir);
  }
  return parse_json_checked(bytes, path, &base_dir);
}

}  // namespace

keel::Expected<sim::SceneDef> load_scene_file(const std::string& path) {
  try {
    return load_file(path);
  } catch (const std::bad_alloc&) {
    return keel::Error{path + ": out of memory while reading"};
  }
}

}  // namespace keel::scene
