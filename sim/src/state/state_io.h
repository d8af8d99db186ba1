// Byte-level writer and bounds-checked reader for canonical state: the bytes of
// keel/base/byte_io.h's ByteWriter and ByteReader, with Keel's math types added.
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

/// Canonical fields as bytes: little-endian, floats by their bit pattern (NaN payloads and
/// -0 survive), the same bytes ByteWriter (keel/base/byte_io.h) writes, plus the math
/// types. `Out` supplies put(pointer, size).
template <class Out>
class FieldWriter {
 public:
  /// Field lists are written once, as templates over the direction (see FieldReader):
  /// `if constexpr (IO::kReading)` marks the few lines that differ.
  static constexpr bool kReading = false;

  void u8(uint8_t v) { out().put(&v, 1); }
  /// A bool as one byte, 0 or 1.
  void flag(bool v) { u8(v ? 1 : 0); }
  /// An enum stored as one byte; `last` and `what` are the reader's check.
  template <class E>
  void enum8(E v, E /*last*/, const char* /*what*/) {
    u8(uint8_t(v));
  }
  void u16(uint16_t v) { little_endian(v); }
  void u32(uint32_t v) { little_endian(v); }
  void u64(uint64_t v) { little_endian(v); }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void bytes(std::span<const uint8_t> b) {
    if (!b.empty()) out().put(b.data(), b.size());
  }
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

 private:
  Out& out() { return static_cast<Out&>(*this); }
  template <class T>
  void little_endian(T v) {
    if constexpr (std::endian::native == std::endian::little) {
      out().put(&v, sizeof v);
    } else {
      uint8_t b[sizeof v];
      for (size_t i = 0; i < sizeof v; ++i) b[i] = uint8_t(v >> (8 * i));
      out().put(b, sizeof v);
    }
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

/// The reading direction of a field list written once (FieldWriter's counterpart): the
/// same calls, each filling the field it is given from a StateReader. A value out of range
/// fails the reader (which stays failed: later fields read as zero); a flag byte other
/// than 0 or 1 reads as true, which the canonical re-encoding check then refuses.
class FieldReader {
 public:
  static constexpr bool kReading = true;

  explicit FieldReader(StateReader& r) : r_(r) {}
  StateReader& reader() { return r_; }
  bool ok() const { return r_.ok(); }
  void fail(const std::string& why) { r_.fail(why); }

  void u8(uint8_t& v) { v = r_.u8(); }
  void u16(uint16_t& v) { v = r_.u16(); }
  void u32(uint32_t& v) { v = r_.u32(); }
  void u64(uint64_t& v) { v = r_.u64(); }
  void f32(float& v) { v = r_.f32(); }
  void flag(bool& v) { v = r_.u8() != 0; }
  template <class E>
  void enum8(E& v, E last, const char* what) {
    const uint8_t code = r_.u8();
    if (code > uint8_t(last)) r_.fail(what);
    v = code > uint8_t(last) ? E{} : E(code);
  }
  void vec3(Vec3& v) { v = r_.vec3(); }
  void quat(Quat& q) { q = r_.quat(); }
  void transform(Transform& t) { t = r_.transform(); }
  void mat3(Mat3& m) { m = r_.mat3(); }

 private:
  StateReader& r_;
};

/// Where write_state takes the bytes from (the same bytes either way).
enum class StateSource {
  EveryField,        // every contact read from the contacts (save_state)
  DerivedShortcuts,  // contacts without points from the dense key array (the state hash)
};
/// Writes the world's canonical state.
void write_state(const WorldImpl& world, StateWriter& w, StateSource source = StateSource::EveryField);
/// Where the tick (u64) sits in the canonical state: after the magic, the version and the
/// settings. The state hash patches it into cached bytes of a dormant world.
inline constexpr size_t kStateTickOffset = 8 + 4 + 36;

}  // namespace keel::sim
