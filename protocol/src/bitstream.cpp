#include <keel/protocol/bitstream.h>

#include <keel/base/bit_copy.h>

#include <cassert>
#include <cmath>

namespace keel::protocol {

// Pending bits go out 32 at a time (four bytes, least significant first): the bytes are
// those a byte-at-a-time writer makes, with a quarter of the appends.
void BitWriter::flush_word() {
  const uint8_t word[4] = {static_cast<uint8_t>(scratch_), static_cast<uint8_t>(scratch_ >> 8),
                           static_cast<uint8_t>(scratch_ >> 16), static_cast<uint8_t>(scratch_ >> 24)};
  bytes_.insert(bytes_.end(), word, word + 4);
  scratch_ >>= 32;
  scratch_bits_ -= 32;
}

void BitWriter::write_words(const uint64_t* words, size_t bits) {
  for (; bits >= 64; bits -= 64, ++words) {
    write_bits(static_cast<uint32_t>(*words), 32);
    write_bits(static_cast<uint32_t>(*words >> 32), 32);
  }
  if (bits > 32) {
    write_bits(static_cast<uint32_t>(*words), 32);
    write_bits(static_cast<uint32_t>(*words >> 32), static_cast<uint32_t>(bits - 32));
  } else if (bits > 0) {
    write_bits(static_cast<uint32_t>(*words), static_cast<uint32_t>(bits));
  }
}

void BitWriter::write_int(int64_t value, int64_t min, int64_t max) {
  assert(min <= max && value >= min && value <= max);
  uint64_t range = static_cast<uint64_t>(max - min);
  uint64_t v = static_cast<uint64_t>(value - min);
  uint32_t bits = bits_required(range);
  if (bits > 32) {
    write_bits(static_cast<uint32_t>(v), 32);
    write_bits(static_cast<uint32_t>(v >> 32), bits - 32);
  } else {
    write_bits(static_cast<uint32_t>(v), bits);
  }
}

void BitWriter::write_u64(uint64_t v) {
  write_bits(static_cast<uint32_t>(v), 32);
  write_bits(static_cast<uint32_t>(v >> 32), 32);
}

void BitWriter::write_float(float v) { write_bits(keel::bit_copy<uint32_t>(v), 32); }

void BitWriter::write_golomb(int64_t d) {
  assert(d > -(int64_t{1} << 25) && d < (int64_t{1} << 25));
  uint64_t v = (d < 0 ? uint64_t(-d) * 2 - 1 : uint64_t(d) * 2) + 1;  // zigzag, plus one
  uint32_t n = bits_required(v);  // >= 1
  // n - 1 zeros, a one, then v's low n - 1 bits: one write while the code fits 32 bits.
  const uint64_t low = v & ((uint64_t{1} << (n - 1)) - 1);
  if (2 * n - 1 <= 32) {
    write_bits(static_cast<uint32_t>(((low << 1) | 1) << (n - 1)), 2 * n - 1);
    return;
  }
  write_bits(0, n - 1);
  write_bits(1, 1);
  write_bits(static_cast<uint32_t>(low), n - 1);
}

std::vector<uint8_t> BitWriter::finish() const {
  std::vector<uint8_t> out;
  out.reserve(bytes_.size() + 4);
  out = bytes_;
  for (uint32_t b = 0; b < scratch_bits_; b += 8) out.push_back(static_cast<uint8_t>(scratch_ >> b));
  return out;
}

uint32_t BitReader::read_bits(uint32_t bits) {
  if (!ok_ || bits > 32 || bits > bits_left()) {
    ok_ = false;
    return 0;
  }
  uint32_t value = 0;
  for (uint32_t i = 0; i < bits; ++i, ++pos_) {
    uint32_t bit = (bytes_[pos_ / 8] >> (pos_ % 8)) & 1u;
    value |= bit << i;
  }
  return value;
}

int64_t BitReader::read_int(int64_t min, int64_t max) {
  if (min > max) {
    ok_ = false;
    return min;
  }
  uint64_t range = static_cast<uint64_t>(max - min);
  uint32_t bits = bits_required(range);
  uint64_t v = 0;
  if (bits > 32) {
    v = read_bits(32);
    v |= static_cast<uint64_t>(read_bits(bits - 32)) << 32;
  } else {
    v = read_bits(bits);
  }
  if (!ok_ || v > range) {
    ok_ = false;
    return min;
  }
  return min + static_cast<int64_t>(v);
}

int64_t BitReader::read_golomb() {
  uint32_t zeros = 0;
  while (ok_ && !read_bool()) {
    if (++zeros > 26) ok_ = false;
  }
  if (!ok_) return 0;
  uint64_t v = ((uint64_t{1} << zeros) | read_bits(zeros)) - 1;
  return (v & 1u) ? -static_cast<int64_t>((v + 1) / 2) : static_cast<int64_t>(v / 2);
}

uint64_t BitReader::read_u64() {
  uint64_t lo = read_bits(32);
  uint64_t hi = read_bits(32);
  return lo | (hi << 32);
}

float BitReader::read_float() {
  float v = keel::bit_copy<float>(read_bits(32));
  if (!std::isfinite(v)) {
    ok_ = false;
    return 0.0f;
  }
  return v;
}

}  // namespace keel::protocol
