// Little-endian byte writer and bounds-checked reader for recording payloads.
//
// Every byte a reader sees may come from a damaged or hostile file, so ByteReader keeps a
// sticky ok flag (the first failure wins and later reads return zeros) and never lets a
// count larger than the bytes left make it allocate.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace keel::replay::detail {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(uint8_t(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    u32(uint32_t(v));
    u32(uint32_t(v >> 32));
  }
  void f32(float v) {  // by bit pattern: NaN payloads and -0 survive
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void bytes(std::span<const uint8_t> b) {
    // resize + memcpy rather than vector::insert, which trips false gcc 12 warnings.
    if (b.empty()) return;
    size_t old = out_.size();
    out_.resize(old + b.size());
    std::memcpy(out_.data() + old, b.data(), b.size());
  }
  /// u32 length, then the bytes.
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }
  size_t size() const { return out_.size(); }

 private:
  std::vector<uint8_t>& out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

  bool ok() const { return ok_; }
  size_t left() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }
  const std::string& error() const { return error_; }
  void fail(const std::string& why) {
    if (ok_) error_ = why;
    ok_ = false;
  }

  uint8_t u8() { return need(1, "u8") ? in_[pos_++] : 0; }
  uint32_t u32() {
    if (!need(4, "u32")) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(in_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
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
  /// A count of items of `item_bytes` each that must still fit in the bytes left, and
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
  std::string str(uint32_t max, const char* what) {
    uint32_t n = count(1, max, what);
    if (!ok_) return {};
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  /// The next n bytes as a view (n already bounded by the caller).
  std::span<const uint8_t> view(size_t n) {
    if (!need(n, "bytes")) return {};
    auto v = in_.subspan(pos_, n);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> rest() { return view(left()); }

 private:
  bool need(size_t n, const char* what) {
    if (!ok_) return false;
    if (left() < n) {
      fail(std::string("payload ends inside a ") + what + " at byte " + std::to_string(pos_));
      return false;
    }
    return true;
  }

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

}  // namespace keel::replay::detail
