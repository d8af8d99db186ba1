// Input layouts the input and values fuzz targets start from when the fuzz input does not
// supply one of its own: the codec tests' (the sandbox's, and one field of every kind,
// with a negative Int minimum, a Fixed range without 0 and uneven Point3 axes).
#pragma once

#include "../protocol/input_layouts.h"  // the layouts the codec tests use

#include <keel/game/layout.h>

namespace keel::fuzz {

using protocol::test::sandbox_layout;
inline game::Layout every_kind_layout() { return protocol::test::all_kinds_layout(); }

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
