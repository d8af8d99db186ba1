// libFuzzer: a sequence of datagrams into one unauthenticated connection, so the fuzzer
// can write chunks directly: fragments, reliable messages, large-block fragments, in any
// order and with any sizes, while time advances. Exercises reassembly bounds, timeouts,
// ordering and zstd decompression of blocks, at the real ConnectionConfig limits.
// Input: repeated [len:u16][time step:u8][datagram bytes ...].
#include <keel/protocol/connection.h>

#include <cstddef>
#include <cstdint>

namespace kp = keel::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The limits the server and the client run with (both use the defaults): 8 partial
  // messages, 1 MiB held in them, 256 KiB per unreliable message, 64 MiB per block, a
  // 64-fragment block window. Toy limits would leave the real bounds unfuzzed.
  const kp::ConnectionConfig config;
  kp::Connection c(config);
  double now = 0;
  size_t pos = 0;
  while (pos + 3 <= size) {
    size_t len = data[pos] | (size_t{data[pos + 1]} << 8);
    now += data[pos + 2] / 100.0;
    pos += 3;
    len = std::min(len, size - pos);
    c.receive({data + pos, len}, now);
    pos += len;
    for (int ch = 0; ch < static_cast<int>(kp::Channel::kCount); ++ch) {
      while (c.take(static_cast<kp::Channel>(ch))) {
      }
    }
    while (c.take_block()) {
    }
    c.update(now);
  }
  return 0;
}
