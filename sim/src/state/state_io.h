// Byte-level writer and bounds-checked reader for canonical state: keel/base/byte_io.h's
// ByteWriter and ByteReader with Keel's math types added.
//
// Every value is written little-endian field by field (floats by their bit pattern),
// so the bytes are the same on every machine and no struct padding leaks in. The reader
// treats its input as untrusted: a sticky ok flag, and no count larger than the bytes
// left can make it allocate.
#pragma once

#include <keel/base/byte_io.h>
#include <keel/sim/math.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace keel::sim {

struct WorldImpl;

/// ByteWriter (keel/base/byte_io.h) plus the math types, field by field.
class StateWriter : public ByteWriter {
 public:
  explicit StateWriter(std::vector<uint8_t>& out) : ByteWriter(out) {}

  using ByteWriter::bytes;
  void bytes(const void* data, size_t n) { bytes({static_cast<const uint8_t*>(data), n}); }
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
};

/// ByteReader (keel/base/byte_io.h) plus the math types; failures name the byte offset.
class StateReader : public ByteReader {
 public:
  explicit StateReader(std::span<const uint8_t> in) : ByteReader(in) {}

  bool at_end() const { return ok() && left() == 0; }
  /// Bytes not yet read.
  size_t remaining() const { return ok() ? left() : 0; }
  void fail(const std::string& why) { ByteReader::fail(why + " (at byte " + std::to_string(position()) + ")"); }

  /// The next u32 without consuming it; false when fewer than 4 bytes remain.
  bool peek_u32(uint32_t& v) const {
    if (!ok() || left() < 4) return false;
    StateReader ahead = *this;
    v = ahead.u32();
    return true;
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
  using ByteReader::bytes;
  void bytes(void* out, size_t n) {
    auto b = bytes(n);
    if (!b.empty()) std::memcpy(out, b.data(), n);
  }
  using ByteReader::count;
  /// An element count with at least `min_bytes_each` bytes per element left, at most
  /// `limit`; 0 after a failure.
  uint32_t count(size_t min_bytes_each, uint32_t limit = 0xffffffffu) {
    return ByteReader::count(min_bytes_each, limit, "element");
  }
};

/// Writes the world's canonical state.
void write_state(const WorldImpl& world, StateWriter& w);

}  // namespace keel::sim
