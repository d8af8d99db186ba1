// Little-endian byte writing and bounds-checked reading, for every binary layout Keel keeps
// outside FlatBuffers: recording chunks, packet chunks, connect tokens, saved state. Each
// layout is one field list over the direction (FieldWriter or FieldReader; docs/
// architecture.md, "Serialisation"), so its writer and reader cannot drift apart.
//
// Every byte a reader sees may come from a damaged file or a hostile peer, so ByteReader
// keeps a sticky ok flag (the first failure wins, with its message; later reads return
// zeros), never reads past its span, and never lets a count larger than the bytes left
// make a caller allocate. A parser reads a whole record and checks ok() once.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace keel {

/// The writing half of a field list written once (see "Serialisation" in
/// docs/architecture.md): a type's `visit_X(IO& io, T& v)` calls these with its fields in
/// order, and the same function run with a FieldReader reads them back. The reading-only
/// arguments (a string's or count's limit and name, an enum's last value) are the
/// reader's checks; writing ignores them. `Out` (CRTP) supplies put(pointer, size).
template <class Out>
class FieldWriter {
 public:
  /// `if constexpr (IO::kReading)` marks the few lines of a field list that differ.
  static constexpr bool kReading = false;
  bool ok() const { return true; }
  /// A reader's check failing; writing has none.
  void fail(const std::string& /*why*/) {}

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
  void f32(float v) {  // by bit pattern: NaN payloads and -0 survive
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  /// Bytes as they are, no length: a fixed-size field (a key, a nonce, an array).
  void bytes(std::span<const uint8_t> b) {
    if (!b.empty()) out().put(b.data(), b.size());
  }
  void bytes(const void* data, size_t n) { bytes({static_cast<const uint8_t*>(data), n}); }
  /// u32 length, then the bytes.
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    bytes(s.data(), s.size());
  }
  void str(const std::string& s, uint32_t /*max*/, const char* /*what*/) { str(s); }
  /// At most `max` bytes of s, as str() (for text a writer may cut, such as a note).
  void str_prefix(const std::string& s, uint32_t max, const char* /*what*/) {
    const size_t n = s.size() < max ? s.size() : max;
    u32(uint32_t(n));
    bytes(s.data(), n);
  }
  /// u32 length, then the bytes (a std::vector<uint8_t> or any span of bytes).
  void blob(std::span<const uint8_t> b, uint32_t /*max*/, const char* /*what*/) {
    u32(uint32_t(b.size()));
    bytes(b);
  }
  /// A u32 element count: the container's size (the reader bounds it and resizes).
  template <class V>
  void count(const V& v, size_t /*item_bytes*/, uint32_t /*max*/, const char* /*what*/) {
    u32(uint32_t(v.size()));
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

/// A FieldWriter appending to a vector.
class ByteWriter : public FieldWriter<ByteWriter> {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

  void put(const void* p, size_t n) {
    // Byte by byte after one reserve: vector::insert and resize + memcpy both trip false
    // -Wstringop-overflow warnings in gcc 12 at some call sites.
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out_.reserve(out_.size() + n);
    for (size_t i = 0; i < n; ++i) out_.push_back(b[i]);
  }
  size_t size() const { return out_.size(); }

 private:
  std::vector<uint8_t>& out_;
};

/// A FieldWriter into a fixed buffer, for packets built without allocating: a write past
/// the end writes nothing and leaves ok() false (the packet is then a bug, never sent).
class SpanWriter : public FieldWriter<SpanWriter> {
 public:
  explicit SpanWriter(std::span<uint8_t> out) : out_(out) {}

  void put(const void* p, size_t n) {
    if (!ok_ || n > out_.size() - size_) {
      ok_ = false;
      return;
    }
    std::memcpy(out_.data() + size_, p, n);
    size_ += n;
  }
  bool ok() const { return ok_; }
  size_t size() const { return size_; }
  std::span<uint8_t> written() const { return out_.first(size_); }

 private:
  std::span<uint8_t> out_;
  size_t size_ = 0;
  bool ok_ = true;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

  bool ok() const { return ok_; }
  size_t left() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }
  /// Why reading stopped (empty while ok()).
  const std::string& error() const { return error_; }
  void fail(const std::string& why) {
    if (ok_) error_ = why;
    ok_ = false;
  }

  uint8_t u8() { return static_cast<uint8_t>(get(1, "u8")); }
  uint16_t u16() { return static_cast<uint16_t>(get(2, "u16")); }
  uint32_t u32() { return static_cast<uint32_t>(get(4, "u32")); }
  uint64_t u64() { return get(8, "u64"); }
  float f32() {
    uint32_t bits = u32();
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  /// The next n bytes as a view, or an empty span (and !ok()) when fewer remain.
  std::span<const uint8_t> bytes(size_t n) {
    if (!need(n, "bytes")) return {};
    auto v = in_.subspan(pos_, n);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> rest() { return bytes(left()); }
  /// A u32 count of items of `item_bytes` each that must still fit in the bytes left, and
  /// be at most `max`. Fails (and returns 0) otherwise.
  uint32_t count(size_t item_bytes, uint32_t max, const char* what) {
    uint32_t n = u32();
    if (!ok_) return 0;
    if (n > max || uint64_t(n) * item_bytes > left()) {
      fail(std::string(what) + " count " + std::to_string(n) + " exceeds the " +
           (n > max ? "limit " + std::to_string(max) : "bytes left (" + std::to_string(left()) + ")"));
      return 0;
    }
    return n;
  }
  /// A str() string of at most `max` bytes.
  std::string str(uint32_t max, const char* what) {
    uint32_t n = count(1, max, what);
    auto b = bytes(n);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }

 private:
  bool need(size_t n, const char* what) {
    if (!ok_) return false;
    if (left() < n) {
      fail(std::string("payload ends inside a ") + what + " at byte " + std::to_string(pos_));
      return false;
    }
    return true;
  }
  uint64_t get(size_t n, const char* what) {
    if (!need(n, what)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(in_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

/// The reading half of a field list written once (FieldWriter's counterpart): the same
/// calls, each filling the field it is given from a ByteReader (or a class derived from
/// one, `R`, whose fail() says more). A value out of range fails the reader, which stays
/// failed: later fields read as zero, and the caller checks ok() once at the end.
template <class R>
class BasicFieldReader {
 public:
  static constexpr bool kReading = true;

  explicit BasicFieldReader(R& r) : r_(r) {}
  R& reader() { return r_; }
  bool ok() const { return r_.ok(); }
  void fail(const std::string& why) { r_.fail(why); }

  void u8(uint8_t& v) { v = r_.u8(); }
  void u16(uint16_t& v) { v = r_.u16(); }
  void u32(uint32_t& v) { v = r_.u32(); }
  void u64(uint64_t& v) { v = r_.u64(); }
  void f32(float& v) { v = r_.f32(); }
  /// A flag byte other than 0 or 1 reads as true (a canonical re-encoding check refuses it).
  void flag(bool& v) { v = r_.u8() != 0; }
  template <class E>
  void enum8(E& v, E last, const char* what) {
    const uint8_t code = r_.u8();
    if (code > uint8_t(last)) r_.fail(what);
    v = code > uint8_t(last) ? E{} : E(code);
  }
  /// Exactly b.size() bytes into b (left as it was when fewer remain).
  void bytes(std::span<uint8_t> b) {
    auto in = r_.bytes(b.size());
    if (in.size() == b.size() && !b.empty()) std::memcpy(b.data(), in.data(), b.size());
  }
  void bytes(void* p, size_t n) { bytes(std::span<uint8_t>(static_cast<uint8_t*>(p), n)); }
  void str(std::string& s, uint32_t max, const char* what) { s = r_.str(max, what); }
  void str_prefix(std::string& s, uint32_t max, const char* what) { str(s, max, what); }
  void blob(std::vector<uint8_t>& b, uint32_t max, const char* what) {
    auto in = r_.bytes(r_.count(1, max, what));
    b.assign(in.begin(), in.end());
  }
  /// A u32 count of at least `item_bytes` bytes each (so it fits in the bytes left) and at
  /// most `max`, then `v` resized to it (empty after a failure): no allocation past the input.
  template <class V>
  void count(V& v, size_t item_bytes, uint32_t max, const char* what) {
    v.clear();
    v.resize(r_.count(item_bytes, max, what));
  }

 private:
  R& r_;
};

using FieldReader = BasicFieldReader<ByteReader>;

}  // namespace keel
