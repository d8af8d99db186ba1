// Input layouts the input and values fuzz targets start from when the fuzz input does not
// supply one of its own: the sandbox's (games/sandbox, make_spec) and one field of every
// kind, with a negative Int minimum, a Fixed range without 0 and uneven Point3 axes.
#pragma once

#include <keel/game/layout.h>

namespace keel::fuzz {

inline game::Layout sandbox_layout() {
  game::Layout l;
  l.add_stick("move", 127);
  l.add_angle("look_yaw", 16);
  l.add_buttons("buttons", {"jump", "fire"});
  return l;
}

inline game::Layout every_kind_layout() {
  game::Layout l;
  l.add_bool("flag");
  l.add_buttons("keys", {"a", "b", "c"});
  l.add_int("count", -5, 10);
  l.add_enum("colour", {"red", "green", "blue"});
  l.add_fixed("throttle", 1.0f, 2.0f, 0.25f);
  l.add_stick("stick", 10);
  l.add_angle("heading", 8);
  l.add_direction3("aim", 6);
  l.add_point3("target", sim::Vec3(-1.0f, 0.0f, 2.0f), sim::Vec3(1.0f, 4.0f, 3.0f), 0.5f);
  return l;
}

/// A layout chosen by one byte of the input: 0 the sandbox's, 1 read from the next chunk
/// (game::read_layout; the sandbox's when it is refused), 2 no fields, 3 every kind.
template <class Reader>
game::Layout choose_layout(Reader& in) {
  switch (in.u8() % 4) {
    case 1: {
      const std::vector<uint8_t> bytes = in.chunk();
      size_t at = 0;
      auto l = game::read_layout(bytes, at);
      return l ? *l : sandbox_layout();
    }
    case 2: return game::Layout{};
    case 3: return every_kind_layout();
    default: return sandbox_layout();
  }
}

}  // namespace keel::fuzz
