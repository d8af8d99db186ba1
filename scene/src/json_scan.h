// A small, forgiving walk over JSON text that never builds a tree. The FlatBuffers IDL
// parser does the real parsing; this walk exists for two things the parser cannot do:
//  - bound array lengths before parsing (the parser keeps every element of the array
//    being read in an ~80-byte record, so a file of a million "0," would need gigabytes);
//  - turn a parse error's byte offset into a path and a body id for the message
//    ("bodies[3].colliders[0].sahpe" in body 12), because a user thinks in bodies, not lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace keel::scene::detail {

struct ArrayTooLong {
  size_t line = 0;  ///< 1-based line where the array starts
  size_t elements = 0;
};

/// Returns the first array with more than `max_elements` elements, if any.
std::optional<ArrayTooLong> find_long_array(std::string_view json, size_t max_elements);

struct JsonLocation {
  /// Inside a body, relative to it ("colliders[0].shape"); elsewhere from the root
  /// ("spawn_points[2].rotation"). Empty at the root itself.
  std::string path;
  std::optional<size_t> body;       ///< index into "bodies" when the offset is inside one
  std::optional<uint32_t> body_id;  ///< that body's "id", when the text gives one
};

/// Describes where byte `offset` of `json` sits. Best effort: text past a syntax error is
/// read as far as it makes sense.
JsonLocation locate(std::string_view json, size_t offset);

}  // namespace keel::scene::detail
