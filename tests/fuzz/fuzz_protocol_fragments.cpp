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
  // The limits a client runs with (the defaults): 8 partial messages, 1 MiB held in them,
  // 256 KiB per unreliable message, blocks of up to 64 MiB received through the streaming
  // decompressor, 96 MiB held in all; plus a shared budget as the server gives its
  // connections. Toy limits would leave the real bounds unfuzzed.
  kp::ConnectionConfig config;
  kp::MemoryBudget shared;
  config.shared_budget = &shared;
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
    // What the connection holds for its peer never passes its bound, and the shared
    // budget sees exactly that.
    if (c.held_bytes() > config.max_held_bytes || shared.used() != c.held_bytes()) __builtin_trap();
  }
  return 0;
}
