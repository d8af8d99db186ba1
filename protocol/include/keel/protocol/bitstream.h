// Bit-packed writing and reading for the snapshot and input codecs.
//
// BitReader is the one bounds-checked reader every untrusted payload passes through: it
// keeps a sticky `ok` flag, never reads past its span, and range-checks integers on read
// (read_int(min, max)), because these bytes come from the network (docs/architecture.md, "Conventions"). After
// the first failure every read returns 0 and ok() stays false, so decoders can read a
// whole record and check once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace keel::protocol {

/// Number of bits needed to store any value in [0, range], range >= 0 (0 needs 0 bits).
constexpr uint32_t bits_required(uint64_t range) {
  uint32_t bits = 0;
  while (range > 0) {
    ++bits;
    range >>= 1;
  }
  return bits;
}

/// Appends bits least-significant first into bytes (little-endian bit order).
class BitWriter {
 public:
  /// Writes the low `bits` bits of `value`; bits in [0, 32]. Inline: the codecs call it
  /// for every field of every body of every client's snapshot.
  void write_bits(uint32_t value, uint32_t bits) {
    scratch_ |= (uint64_t{value} & ((uint64_t{1} << bits) - 1)) << scratch_bits_;
    scratch_bits_ += bits;
    bits_ += bits;
    if (scratch_bits_ >= 32) flush_word();
  }
  /// Writes `bits` bits from `words`, least-significant first, as write_bits of each
  /// word's bits in turn would (a body's full form prepared once, copied per client).
  void write_words(const uint64_t* words, size_t bits);
  /// Room for `bytes` in all, made once.
  void reserve(size_t bytes) { bytes_.reserve(bytes); }
  void write_bool(bool v) { write_bits(v ? 1u : 0u, 1); }
  /// Writes value - min in bits_required(max - min) bits. value must lie in [min, max].
  void write_int(int64_t value, int64_t min, int64_t max);
  void write_u64(uint64_t v);
  void write_float(float v);
  /// A signed value |v| < 2^25 as an exp-Golomb code (order 0) of its zigzag form:
  /// 0 costs 1 bit, +-1 3 bits, +-2..3 5 bits — for small differences.
  void write_golomb(int64_t v);
  /// Total bits written.
  size_t bit_count() const { return bits_; }
  /// The bytes written so far (the last byte zero-padded).
  std::vector<uint8_t> finish() const;

 private:
  void flush_word();  // moves 32 pending bits into bytes_

  std::vector<uint8_t> bytes_;  // whole bytes
  uint64_t scratch_ = 0;        // pending bits not yet in bytes_ (fewer than 32 between calls)
  uint32_t scratch_bits_ = 0;
  size_t bits_ = 0;
};

class BitReader {
 public:
  explicit BitReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  /// Reads `bits` bits (0..32); past the end: sets !ok() and returns 0.
  uint32_t read_bits(uint32_t bits);
  bool read_bool() { return read_bits(1) != 0; }
  /// Reads an int written by write_int(v, min, max); a value above max sets !ok().
  int64_t read_int(int64_t min, int64_t max);
  uint64_t read_u64();
  /// Reads a float; a non-finite one sets !ok() (nothing on the wire may be NaN or inf).
  float read_float();
  /// Reads a write_golomb value; a code longer than 26 prefix bits sets !ok().
  int64_t read_golomb();
  bool ok() const { return ok_; }
  /// Marks the stream bad (a decoder found a value out of range).
  void fail() { ok_ = false; }
  size_t bits_left() const { return bytes_.size() * 8 - pos_; }
  /// True when every bit was consumed except the zero padding of the last byte.
  bool at_end() const { return ok_ && bits_left() < 8; }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace keel::protocol
