// The chunks a connected packet's payload is made of (docs/protocol.md has the same
// table). Each is [kind u8] then kind-specific fields (little-endian) and bytes:
//   Reliable       id u16, len u16, bytes                        (control channel)
//   Unreliable     channel u8, len u16, bytes
//   Fragment       channel u8, group u16, index u8, count u8, len u16, bytes
//   BlockFragment  id u16, index u16, count u16, csize u32, usize u32, len u16, bytes
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace keel::protocol::connection {

enum ChunkKind : uint8_t { kReliable = 1, kUnreliable = 2, kFragment = 3, kBlockFragment = 4 };

inline constexpr size_t kFragmentBytes = 1024;       // unreliable fragments
inline constexpr size_t kBlockFragmentBytes = 1100;  // large-block fragments
inline constexpr size_t kReliableOverhead = 5;
inline constexpr size_t kUnreliableOverhead = 4;
inline constexpr size_t kFragmentOverhead = 8;
inline constexpr size_t kBlockOverhead = 17;
inline constexpr uint32_t kMaxFragments = 255;

/// What one sent packet carried, kept until it is acked or forgotten: the reliability
/// layer times it, and the channels and the block sender learn from its ack what arrived.
/// A packet carries a few control messages and at most two block fragments almost
/// always, so those live in place; only a packet with more spills into a vector. Records
/// are reused for packet after packet, so sending allocates nothing.
class SentPacket {
 public:
  double time = 0;
  bool acked = false;

  void add_control(uint16_t id) { add(id, control_count_, control_, more_control_); }
  void add_block_fragment(uint32_t index) { add(index, block_count_, block_, more_block_); }
  template <class F>
  void for_each_control(F&& f) const {
    each(control_count_, control_, more_control_, f);
  }
  template <class F>
  void for_each_block_fragment(F&& f) const {
    each(block_count_, block_, more_block_, f);
  }
  /// Empties it (the spill vectors keep their memory).
  void reset() {
    time = 0;
    acked = false;
    control_count_ = block_count_ = 0;
    more_control_.clear();
    more_block_.clear();
  }

 private:
  template <class T, size_t N>
  static void add(T value, uint8_t& count, std::array<T, N>& inline_values, std::vector<T>& more) {
    if (count < N) inline_values[count++] = value;
    else more.push_back(value);
  }
  template <class T, size_t N, class F>
  static void each(uint8_t count, const std::array<T, N>& inline_values, const std::vector<T>& more, F& f) {
    for (uint8_t i = 0; i < count; ++i) f(inline_values[i]);
    for (T v : more) f(v);
  }

  uint8_t control_count_ = 0, block_count_ = 0;
  std::array<uint16_t, 6> control_{};
  std::array<uint32_t, 2> block_{};
  std::vector<uint16_t> more_control_;
  std::vector<uint32_t> more_block_;
};

}  // namespace keel::protocol::connection
