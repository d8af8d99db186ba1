// Byte-level writer and bounds-checked reader for canonical state: keel/base/byte_io.h's
// FieldWriter and FieldReader (one field list per type over the direction), with Keel's
// math types and the state's fast writers added.
//
// Every value is written little-endian field by field (floats by their bit pattern),
// so the bytes are the same on every machine and no struct padding leaks in. The reader
// treats its input as untrusted: a sticky ok flag, and no count larger than the bytes
// left can make it allocate.
#pragma once

#include <keel/base/byte_io.h>
#include <keel/sim/math.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace keel::sim {

/// Tag of the state's last, optional section: the solver choice (state/state.cpp). A
/// character count never takes this value (kMaxCharacters is far below it).
inline constexpr uint32_t kSolverStateTag = 0x564c4f53u;  // "SOLV"

struct WorldImpl;

/// Canonical fields as bytes: keel::FieldWriter (keel/base/byte_io.h: little-endian,
/// floats by their bit pattern) plus the math types. `Out` supplies put(pointer, size).
template <class Out>
class FieldWriter : public keel::FieldWriter<Out> {
 public:
  using keel::FieldWriter<Out>::f32;
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

/// The canonical state's writer. Faster than ByteWriter because the state hash
/// serialises the world often: each field is one copy into room made ahead (doubling),
/// not a push_back per byte. The vector may hold spare room past the bytes written until
/// finish(), which the destructor also runs; read it only after that.
class StateWriter : public FieldWriter<StateWriter> {
 public:
  /// Appends to `out`.
  explicit StateWriter(std::vector<uint8_t>& out) : StateWriter(out, out.size()) {}
  /// Writes from byte `at` of `out`, reusing the room already there (the state hash
  /// rewrites its scratch buffer in place, with no fill and no allocation).
  StateWriter(std::vector<uint8_t>& out, size_t at) : out_(out), end_(at) {}
  StateWriter(const StateWriter&) = delete;
  StateWriter& operator=(const StateWriter&) = delete;
  ~StateWriter() { finish(); }

  /// Trims `out` to the bytes written.
  void finish() { out_.resize(end_); }
  size_t size() const { return end_; }

  // Inlined so that a field is a bounds check and one move; growing is the rare path.
  [[gnu::always_inline]] void put(const void* p, size_t n) {
    if (n > out_.size() - end_) [[unlikely]] grow(n);
    std::memcpy(out_.data() + end_, p, n);
    end_ += n;
  }

 private:
  [[gnu::noinline]] void grow(size_t n) { out_.resize(std::max({end_ + n, out_.size() * 2, size_t{4096}})); }

  std::vector<uint8_t>& out_;
  size_t end_;
};

/// One record of at most N bytes (a body's fixed fields, a collider's, a contact), built
/// on the stack and handed to a StateWriter in one copy. Field by field into the
/// StateWriter, every byte store might alias the vector's own pointers, so each field
/// reloads them; into this local buffer it cannot, and the fields become plain moves.
template <size_t N>
class RecordWriter : public FieldWriter<RecordWriter<N>> {
 public:
  [[gnu::always_inline]] void put(const void* p, size_t n) {
    if (n > N - size_) [[unlikely]] std::abort();  // a record larger than its bound: a bug here, not input
    std::memcpy(buf_ + size_, p, n);
    size_ += n;
  }
  std::span<const uint8_t> written() const { return {buf_, size_}; }

 private:
  uint8_t buf_[N];
  size_t size_ = 0;
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

/// The reading direction (keel::BasicFieldReader over a StateReader, whose failures name
/// the byte offset) plus the math types.
class FieldReader : public keel::BasicFieldReader<StateReader> {
 public:
  explicit FieldReader(StateReader& r) : keel::BasicFieldReader<StateReader>(r) {}

  void vec3(Vec3& v) { v = reader().vec3(); }
  void quat(Quat& q) { q = reader().quat(); }
  void transform(Transform& t) { t = reader().transform(); }
  void mat3(Mat3& m) { m = reader().mat3(); }
};

struct Body;
struct Shape;
struct Contact;
/// Writes the world's canonical state.
void write_state(const WorldImpl& world, StateWriter& w);
/// The state's parts in their order, for the state hash (state/world_hash.cpp), which
/// hashes them section by section: the header (magic to next_auto_id), one body slot,
/// a free list, one collider slot, one contact, and everything after the contacts.
void write_state_header(const WorldImpl& world, StateWriter& w);
void write_body_slot(StateWriter& w, const Body& b);
void write_free_list(StateWriter& w, const std::vector<uint32_t>& list);
void write_shape_slot(StateWriter& w, const Shape& s);
void write_contact(StateWriter& out, const Contact& c);
void write_state_tail(const WorldImpl& world, StateWriter& w);
/// The header's size: magic (8), version (4), settings (36), tick (8), next_auto_id (4).
inline constexpr size_t kStateHeaderBytes = 8 + 4 + 36 + 8 + 4;

}  // namespace keel::sim
