// A value's bytes as another trivially copyable type of the same size (a float's bit
// pattern and back), through memcpy rather than std::bit_cast: the libc++ of Debian's
// emscripten (3.1.6) has no std::bit_cast, and the wasm32 build compiles every module
// that needs this. Compilers turn either into one move.
#pragma once

#include <cstring>
#include <type_traits>

namespace keel {

template <class To, class From>
To bit_copy(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_copy needs types of one size");
  static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>);
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

}  // namespace keel
