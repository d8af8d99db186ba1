// The fuzz input as the session-level targets read it: bytes one at a time (0 past the
// end) and length-prefixed chunks ([len:u16][bytes], cut at the end of the input), so
// any input decodes to some sequence of steps.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace keel::fuzz {

struct InputReader {
  const uint8_t* data;
  size_t size, pos = 0;
  bool more() const { return pos < size; }
  uint8_t u8() { return pos < size ? data[pos++] : 0; }
  std::vector<uint8_t> chunk() {
    size_t len = u8();
    len |= size_t{u8()} << 8;
    len = std::min(len, size - pos);
    std::vector<uint8_t> out(data + pos, data + pos + len);
    pos += len;
    return out;
  }
};

}  // namespace keel::fuzz
