// Byte-level writer and bounds-checked reader for canonical state.
//
// Every value is written little-endian field by field (floats by their bit pattern),
// so the bytes are the same on every machine and no struct padding leaks in. The reader
// treats its input as untrusted: a sticky ok flag, and no count larger than the bytes
// left can make it allocate.
#pragma once

#include <keel/sim/math.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace keel::sim {

struct WorldImpl;

class StateWriter {
 public:
  explicit StateWriter(std::vector<uint8_t>& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) {
    uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    bytes(b, 4);
  }
  void u64(uint64_t v) {
    u32(uint32_t(v));
    u32(uint32_t(v >> 32));
  }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void vec3(const Vec3& v) {
    f32(v.x);
    f32(v.y);
    f32(v.z);
  }
  void quat(const Quat& q) {  // x, y, z, w: file order
    f32(q.x);
    f32(q.y);
    f32(q.z);
    f32(q.w);
  }
  void transform(const Transform& t) {
    vec3(t.position);
    quat(t.rotation);
  }
  void mat3(const Mat3& m) {
    for (int c = 0; c < 3; ++c) vec3(m[c]);
  }
  void bytes(const void* data, size_t n) {
    // One byte at a time: vector::insert of a few bytes trips a false gcc 12 warning,
    // and the compiler turns this loop into the same copy.
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) out_.push_back(p[i]);
  }

 private:
  std::vector<uint8_t>& out_;
};

class StateReader {
 public:
  explicit StateReader(std::span<const uint8_t> in) : in_(in) {}

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  size_t position() const { return pos_; }
  const std::string& error() const { return error_; }
  void fail(const std::string& why) {
    if (ok_) error_ = why + " (at byte " + std::to_string(pos_) + ")";
    ok_ = false;
  }

  uint8_t u8() {
    if (!need(1)) return 0;
    return in_[pos_++];
  }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = uint32_t(in_[pos_]) | uint32_t(in_[pos_ + 1]) << 8 | uint32_t(in_[pos_ + 2]) << 16 |
                 uint32_t(in_[pos_ + 3]) << 24;
    pos_ += 4;
    return v;
  }
  /// The next u32 without consuming it; false when fewer than 4 bytes remain.
  bool peek_u32(uint32_t& v) const {
    if (!ok_ || in_.size() - pos_ < 4) return false;
    v = uint32_t(in_[pos_]) | uint32_t(in_[pos_ + 1]) << 8 | uint32_t(in_[pos_ + 2]) << 16 |
        uint32_t(in_[pos_ + 3]) << 24;
    return true;
  }
  uint64_t u64() {
    uint64_t lo = u32();
    uint64_t hi = u32();
    return lo | hi << 32;
  }
  float f32() {
    uint32_t bits = u32();
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  Vec3 vec3() {
    float x = f32(), y = f32(), z = f32();
    return Vec3(x, y, z);
  }
  Quat quat() {
    float x = f32(), y = f32(), z = f32(), w = f32();
    return make_quat(x, y, z, w);
  }
  Transform transform() {
    Vec3 p = vec3();
    Quat q = quat();
    return Transform{p, q};
  }
  Mat3 mat3() {
    Mat3 m;
    for (int c = 0; c < 3; ++c) m[c] = vec3();
    return m;
  }
  void bytes(void* out, size_t n) {
    if (!need(n)) return;
    std::memcpy(out, in_.data() + pos_, n);
    pos_ += n;
  }
  /// Reads an element count and checks that `min_bytes_each` bytes per element remain
  /// (and that it is at most `limit`); returns 0 after a failure.
  /// Bytes not yet read.
  size_t remaining() const { return ok_ ? in_.size() - pos_ : 0; }
  uint32_t count(size_t min_bytes_each, uint32_t limit = 0xffffffffu) {
    uint32_t n = u32();
    if (!ok_) return 0;
    if (n > limit || uint64_t(n) * min_bytes_each > in_.size() - pos_) {
      fail("count " + std::to_string(n) + " exceeds the bytes left");
      return 0;
    }
    return n;
  }

 private:
  bool need(size_t n) {
    if (!ok_) return false;
    if (in_.size() - pos_ < n) {
      fail("unexpected end of state");
      return false;
    }
    return true;
  }

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

/// Writes the world's canonical state.
void write_state(const WorldImpl& world, StateWriter& w);

}  // namespace keel::sim
