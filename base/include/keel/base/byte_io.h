// Little-endian byte writing and bounds-checked reading, for every binary layout Keel keeps
// outside FlatBuffers: recording chunks, packet chunks, connect tokens.
//
// Every byte a reader sees may come from a damaged file or a hostile peer, so ByteReader
// keeps a sticky ok flag (the first failure wins, with its message; later reads return
// zeros), never reads past its span, and never lets a count larger than the bytes left
// make a caller allocate. A parser reads a whole record and checks ok() once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace keel {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void f32(float v) {  // by bit pattern: NaN payloads and -0 survive
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void bytes(std::span<const uint8_t> b) {
    // Byte by byte after one reserve: vector::insert and resize + memcpy both trip false
    // -Wstringop-overflow warnings in gcc 12 at some call sites.
    out_.reserve(out_.size() + b.size());
    for (uint8_t x : b) out_.push_back(x);
  }
  /// u32 length, then the bytes.
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }
  size_t size() const { return out_.size(); }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>& out_;
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

}  // namespace keel
