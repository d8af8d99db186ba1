// One field list per type (keel/base/byte_io.h, docs/architecture.md "Serialisation"):
// the writer's bytes laid out by hand, the reader's checks, and each recording chunk and
// the desync dump read back into what was written, byte for byte.
#include <keel/base/byte_io.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/format.h>
#include <keel/sim/state_hash.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using keel::ByteReader;
using keel::ByteWriter;
using keel::FieldReader;

enum class Colour : uint8_t { Red, Green, Blue };

struct Sample {
  uint8_t a = 0;
  uint16_t b = 0;
  uint32_t c = 0;
  uint64_t d = 0;
  float e = 0;
  bool f = false;
  Colour g = Colour::Red;
  std::string name;
  std::vector<uint8_t> blob;
  std::vector<uint32_t> list;
  std::array<uint8_t, 3> fixed{};
};

template <class IO, class S>
void visit_sample(IO& io, S& s) {
  io.u8(s.a);
  io.u16(s.b);
  io.u32(s.c);
  io.u64(s.d);
  io.f32(s.e);
  io.flag(s.f);
  io.enum8(s.g, Colour::Blue, "unknown colour");
  io.str(s.name, 8, "name");
  io.blob(s.blob, 16, "blob");
  io.count(s.list, 4, 4, "list");
  for (auto& x : s.list) io.u32(x);
  io.bytes(s.fixed);
}

Sample a_sample() {
  Sample s;
  s.a = 0xab;
  s.b = 0x1234;
  s.c = 0xdeadbeef;
  s.d = 0x0102030405060708ull;
  s.e = -0.0f;
  s.f = true;
  s.g = Colour::Blue;
  s.name = "ok";
  s.blob = {9, 8};
  s.list = {7, 0x01000000};
  s.fixed = {1, 2, 3};
  return s;
}

std::vector<uint8_t> write_sample(const Sample& s) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  visit_sample(w, s);
  return out;
}

TEST(FieldList, WritesEachFieldLittleEndianInOrder) {
  const std::vector<uint8_t> want = {
      0xab,                                            // u8
      0x34, 0x12,                                      // u16
      0xef, 0xbe, 0xad, 0xde,                          // u32
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // u64
      0x00, 0x00, 0x00, 0x80,                          // -0.0f by its bits
      0x01,                                            // flag
      0x02,                                            // enum8 Blue
      0x02, 0x00, 0x00, 0x00, 'o', 'k',                // str
      0x02, 0x00, 0x00, 0x00, 9, 8,                    // blob
      0x02, 0x00, 0x00, 0x00,                          // count
      0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,  // the list
      1, 2, 3,                                         // fixed bytes
  };
  EXPECT_EQ(write_sample(a_sample()), want);
}

TEST(FieldList, ReadsBackWhatItWrote) {
  const Sample s = a_sample();
  const std::vector<uint8_t> bytes = write_sample(s);
  ByteReader r(bytes);
  FieldReader io(r);
  Sample back;
  visit_sample(io, back);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.left(), 0u);
  EXPECT_EQ(back.a, s.a);
  EXPECT_EQ(back.b, s.b);
  EXPECT_EQ(back.c, s.c);
  EXPECT_EQ(back.d, s.d);
  EXPECT_TRUE(std::signbit(back.e));
  EXPECT_EQ(back.f, s.f);
  EXPECT_EQ(back.g, s.g);
  EXPECT_EQ(back.name, s.name);
  EXPECT_EQ(back.blob, s.blob);
  EXPECT_EQ(back.list, s.list);
  EXPECT_EQ(back.fixed, s.fixed);
  EXPECT_EQ(write_sample(back), bytes);
}

TEST(FieldList, RefusesAnEnumPastItsLast) {
  std::vector<uint8_t> bytes = write_sample(a_sample());
  bytes[20] = 3;  // the enum8 byte: one past Blue
  ByteReader r(bytes);
  FieldReader io(r);
  Sample back;
  visit_sample(io, back);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "unknown colour");
}

TEST(FieldList, BoundsACountBeforeResizing) {
  std::vector<uint8_t> bytes = write_sample(a_sample());
  // The list's count (byte 33) says 5: past its limit of 4.
  bytes[33] = 5;
  {
    ByteReader r(bytes);
    FieldReader io(r);
    Sample back;
    visit_sample(io, back);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "list count 5 exceeds the limit 4");
    EXPECT_TRUE(back.list.empty());
  }
  // 3 is within the limit but 12 bytes do not fit in the 11 left.
  bytes[33] = 3;
  ByteReader r(bytes);
  FieldReader io(r);
  Sample back;
  visit_sample(io, back);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "list count 3 exceeds the bytes left (11)");
}

TEST(FieldList, EveryCutShortInputFailsWithoutReadingPastIt) {
  const std::vector<uint8_t> bytes = write_sample(a_sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);  // its own allocation: ASan sees overreads
    ByteReader r(cut);
    FieldReader io(r);
    Sample back;
    visit_sample(io, back);
    EXPECT_FALSE(r.ok()) << n << " bytes";
  }
}

TEST(FieldList, SpanWriterFillsAFixedBufferAndRefusesToOverflowIt) {
  std::array<uint8_t, 6> buf{};
  keel::SpanWriter w(buf);
  w.u32(0x04030201);
  w.u16(0x0605);
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.size(), 6u);
  EXPECT_EQ(buf, (std::array<uint8_t, 6>{1, 2, 3, 4, 5, 6}));
  w.u8(7);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.size(), 6u);
  EXPECT_EQ(buf, (std::array<uint8_t, 6>{1, 2, 3, 4, 5, 6}));
}

TEST(FieldList, StrPrefixCutsWhatItWritesToTheLimit) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.str_prefix("abcdef", 4, "note");
  EXPECT_EQ(out, (std::vector<uint8_t>{4, 0, 0, 0, 'a', 'b', 'c', 'd'}));
}

// The recording chunks.

keel::replay::TickRecord a_tick() {
  keel::replay::TickRecord t;
  t.tick = 1;
  t.hash = 0x0102030405060708ull;
  t.inputs.events.push_back({keel::game::PlayerEvent::Kind::Leave, 7});
  keel::game::InputFrame frame;
  frame.code[0] = 5;
  frame.code[2] = 9;
  t.inputs.inputs.emplace_back(7, frame, keel::game::ViewStamp{3, 128});
  return t;
}

TEST(FieldList, TickChunkHasItsDocumentedBytesAndReadsBack) {
  const keel::replay::TickRecord t = a_tick();
  std::vector<uint8_t> bytes;
  keel::replay::encode_tick(t, bytes);
  const std::vector<uint8_t> want = {
      1, 0, 0, 0, 0, 0, 0, 0,                          // tick
      8, 7, 6, 5, 4, 3, 2, 1,                          // hash
      1, 0, 0, 0, 1, 7, 0, 0, 0,                       // one player event: Leave, player 7
      1, 0, 0, 0, 7, 0, 0, 0,                          // one input, player 7,
      3, 5, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0,           //   3 components (the last nonzero)
      0, 0, 0, 0,                                      // no game events
      1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 128,               // one view stamp: input 0, lag 3, 128
  };
  EXPECT_EQ(bytes, want);
  auto back = keel::replay::decode_tick(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->tick, t.tick);
  EXPECT_EQ(back->hash, t.hash);
  EXPECT_EQ(back->inputs, t.inputs);
  EXPECT_TRUE(back->events.empty());
  // Without a view stamp, the tick is the bytes it was before view stamps existed.
  keel::replay::TickRecord plain = t;
  plain.inputs.inputs[0].view = {};
  std::vector<uint8_t> plain_bytes;
  keel::replay::encode_tick(plain, plain_bytes);
  EXPECT_EQ(plain_bytes, std::vector<uint8_t>(want.begin(), want.end() - 11));
}

TEST(FieldList, TickChunkRefusesTooManyComponents) {
  std::vector<uint8_t> bytes;
  keel::replay::encode_tick(a_tick(), bytes);
  bytes[33] = uint8_t(keel::game::kMaxComponents + 1);
  auto back = keel::replay::decode_tick(bytes);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message,
            "tick chunk: an input has " + std::to_string(keel::game::kMaxComponents + 1) + " components");
}

TEST(FieldList, HeaderAndFooterReadBackToTheirOwnBytes) {
  keel::replay::Header h;
  h.keel_version = "1.2.3";
  h.build_id = "abc";
  h.compiler = "gcc";
  h.game = "sandbox";
  h.start_tick = 40;
  h.tick_rate = 60;
  h.checkpoint_interval = 300;
  h.flush_every_ticks = 8;
  h.checkpoint_compression = keel::replay::Compression::Zstd;
  h.metadata = {{"map", "demo"}, {"mode", "test"}};
  h.scene = {1, 2, 3, 4};
  h.game_seed = 0xfeedull;
  std::vector<uint8_t> bytes;
  keel::replay::encode_header(h, bytes);
  auto back = keel::replay::decode_header(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->metadata, h.metadata);
  EXPECT_EQ(back->scene, h.scene);
  EXPECT_EQ(back->checkpoint_compression, h.checkpoint_compression);
  std::vector<uint8_t> again;
  keel::replay::encode_header(*back, again);
  EXPECT_EQ(again, bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(keel::replay::decode_header(std::span(bytes).first(n))) << n << " bytes";
  }

  keel::replay::Footer f;
  f.first_tick = 40;
  f.last_tick = 900;
  f.checkpoints = {{40, 100}, {340, 5000}};
  f.lost = {{500, 520, false}, {880, 900, true}};
  std::vector<uint8_t> fb;
  keel::replay::encode_footer(f, fb);
  EXPECT_EQ(fb.size(), 8 + 8 + 4 + 2 * 16 + 4 + 2 * 17u);
  auto fback = keel::replay::decode_footer(fb);
  ASSERT_TRUE(fback) << fback.error().message;
  EXPECT_EQ(fback->checkpoints, f.checkpoints);
  EXPECT_EQ(fback->lost, f.lost);
  fb.back() = 2;  // the last range's up_to byte: neither 0 nor 1
  auto bad = keel::replay::decode_footer(fb);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "footer chunk: a lost range is not a range");
}

TEST(FieldList, CheckpointAndDesyncDumpReadBack) {
  keel::replay::Checkpoint c;
  c.tick = 12;
  c.state = std::vector<uint8_t>(100, 0x5a);
  c.hash = keel::sim::state_hash(c.state);
  std::vector<uint8_t> bytes;
  keel::replay::encode_checkpoint(c, keel::replay::Compression::None, bytes);
  EXPECT_EQ(bytes.size(), 25 + 100u);
  auto back = keel::replay::decode_checkpoint(bytes, 1000);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->state, c.state);
  EXPECT_EQ(back->tick, 12u);

  keel::replay::DesyncDump d;
  d.tick = 12;
  d.state = c.state;
  d.hash = c.hash;
  d.expected_hash = 99;
  d.game = "sandbox";
  d.note = std::string(keel::replay::kMaxStringBytes + 10, 'n');  // cut to the limit on writing
  auto dump = keel::replay::encode_desync_dump(d);
  auto dback = keel::replay::decode_desync_dump(dump);
  ASSERT_TRUE(dback) << dback.error().message;
  EXPECT_EQ(dback->note.size(), keel::replay::kMaxStringBytes);
  EXPECT_EQ(dback->state, d.state);
  EXPECT_EQ(dback->expected_hash, 99u);
  EXPECT_EQ(keel::replay::encode_desync_dump(*dback), dump);
}

}  // namespace
