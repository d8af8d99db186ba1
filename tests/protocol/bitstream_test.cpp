// BitWriter's bytes against the layout it documents, built here one bit at a time: the
// writer keeps up to 63 pending bits and appends four bytes at a time, codes a short
// exp-Golomb value in one write and copies prepared words, and none of that may move a
// bit of any message.
#include <keel/protocol/bitstream.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace kp = keel::protocol;

namespace {

// Bits least-significant first into bytes, the last byte zero-padded.
struct BitList {
  std::vector<uint8_t> bits;
  void add(uint64_t value, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) bits.push_back(static_cast<uint8_t>((value >> i) & 1));
  }
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out((bits.size() + 7) / 8, 0);
    for (size_t i = 0; i < bits.size(); ++i) out[i / 8] |= static_cast<uint8_t>(bits[i] << (i % 8));
    return out;
  }
};

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

}  // namespace

// Widths 0..32 in a random mix, values with bits above the width set (they must be cut).
TEST(BitWriter, BitsOfAnyWidthInOrder) {
  Rng rng{7};
  kp::BitWriter w;
  BitList ref;
  for (int i = 0; i < 5000; ++i) {
    const uint32_t n = static_cast<uint32_t>(rng.next() % 33);
    const uint32_t v = static_cast<uint32_t>(rng.next());
    w.write_bits(v, n);
    ref.add(n == 32 ? v : v & ((1u << n) - 1), n);
    ASSERT_EQ(w.bit_count(), ref.bits.size());
    if (i % 97 == 0) {
      ASSERT_EQ(w.finish(), ref.bytes()) << "after " << i + 1 << " writes";
    }
  }
  EXPECT_EQ(w.finish(), ref.bytes());
}

// The exp-Golomb code: n - 1 zeros, a one, the zigzag value plus one's low n - 1 bits;
// 0 costs 1 bit, -1 3 bits, and the longest codes (more than 32 bits) too.
TEST(BitWriter, GolombCodesAsDocumented) {
  Rng rng{11};
  std::vector<int64_t> values = {0, 1, -1, 2, -2, 3, 7, -8, 32767, -32768, 65535, (1 << 25) - 1, -(1 << 25) + 1};
  for (int i = 0; i < 3000; ++i) {
    const int shift = static_cast<int>(rng.next() % 26);
    const int64_t m = static_cast<int64_t>(rng.next() % (uint64_t{1} << shift));
    values.push_back(rng.next() % 2 ? m : -m);
  }
  kp::BitWriter w;
  BitList ref;
  for (int64_t d : values) {
    const uint32_t pad = static_cast<uint32_t>(rng.next() % 8);  // every alignment
    w.write_bits(0x55, pad);
    ref.add(0x55, pad);
    const uint64_t v = (d < 0 ? uint64_t(-d) * 2 - 1 : uint64_t(d) * 2) + 1;
    uint32_t n = 0;
    while ((v >> n) != 0) ++n;
    ref.add(0, n - 1);
    ref.add(1, 1);
    ref.add(v, n - 1);
    w.write_golomb(d);
    ASSERT_EQ(w.bit_count(), ref.bits.size()) << d;
  }
  EXPECT_EQ(w.finish(), ref.bytes());
}

// write_words copies `bits` bits of prepared words as write_bits of each bit would, at
// every alignment and every length up to three words.
TEST(BitWriter, WordsCopyTheirBits) {
  Rng rng{3};
  for (uint32_t pad = 0; pad < 40; ++pad) {
    for (size_t bits = 0; bits <= 192; bits += 1 + bits / 16) {
      const uint64_t words[3] = {rng.next(), rng.next(), rng.next()};
      kp::BitWriter w;
      BitList ref;
      w.write_bits(0x5a5a5a5au, pad % 33);
      ref.add(0x5a5a5a5au & ((uint64_t{1} << (pad % 33)) - 1), pad % 33);
      w.write_words(words, bits);
      for (size_t i = 0; i < bits; ++i) ref.add(words[i / 64] >> (i % 64), 1);
      w.write_bits(3, 2);
      ref.add(3, 2);
      ASSERT_EQ(w.finish(), ref.bytes()) << "pad " << pad << " bits " << bits;
    }
  }
}
