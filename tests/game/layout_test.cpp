// keel::game::Layout: bit widths, sanitising, code-to-number readers, canonical bytes and
// the checks a declared layout must pass. Every expected number is worked out by hand in
// the comment beside it.
#include <keel/game/layout.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace keel::game {
namespace {

constexpr float kPi = 3.14159265358979323846f;

// One field of every kind, with ranges chosen so each width is easy to count.
struct AllKinds {
  Layout layout;
  uint32_t flag, keys, level, colour, gain, move, yaw, normal, spot;
  AllKinds() {
    flag = layout.add_bool("flag");
    keys = layout.add_buttons("keys", {"a", "b", "c"});
    level = layout.add_int("level", -5, 10);
    colour = layout.add_enum("colour", {"red", "green", "blue", "yellow", "white"});
    gain = layout.add_fixed("gain", -1.0f, 1.0f, 0.25f);
    move = layout.add_stick("move", 64);
    yaw = layout.add_angle("yaw", 12);
    normal = layout.add_direction3("normal", 10);
    spot = layout.add_point3("spot", sim::Vec3(-10.0f, 0.0f, -5.0f), sim::Vec3(10.0f, 4.0f, 5.0f), 0.5f);
  }
};

TEST(Layout, CodeBitsOfEachKind) {
  AllKinds k;
  const Layout& l = k.layout;
  ASSERT_TRUE(l.validate());
  EXPECT_EQ(l.field(k.flag).code_bits(0), 1u);    // codes 0..1
  EXPECT_EQ(l.field(k.keys).code_bits(0), 3u);    // mask 0..7
  EXPECT_EQ(l.field(k.level).code_bits(0), 4u);   // 16 values: 0..15
  EXPECT_EQ(l.field(k.colour).code_bits(0), 3u);  // 5 values: 0..4
  EXPECT_EQ(l.field(k.gain).max_code(0), 8u);     // (1 - -1) / 0.25 = 8 steps
  EXPECT_EQ(l.field(k.gain).code_bits(0), 4u);    // 0..8
  EXPECT_EQ(l.field(k.move).max_code(0), 128u);   // 2 * 64
  EXPECT_EQ(l.field(k.move).code_bits(0), 8u);
  EXPECT_EQ(l.field(k.move).code_bits(1), 8u);
  EXPECT_EQ(l.field(k.yaw).code_bits(0), 12u);
  EXPECT_EQ(l.field(k.normal).code_bits(0), 10u);
  EXPECT_EQ(l.field(k.normal).code_bits(1), 10u);
  // Point3: 20 / 0.5 = 40 steps (6 bits), 4 / 0.5 = 8 (4 bits), 10 / 0.5 = 20 (5 bits).
  EXPECT_EQ(l.field(k.spot).code_bits(0), 6u);
  EXPECT_EQ(l.field(k.spot).code_bits(1), 4u);
  EXPECT_EQ(l.field(k.spot).code_bits(2), 5u);
  // 1 + 3 + 4 + 3 + 4 + 16 + 12 + 20 + 15
  EXPECT_EQ(l.full_bits(), 78u);
  // 1 + 1 + 1 + 1 + 1 + 2 + 1 + 2 + 3 components
  EXPECT_EQ(l.components(), 13u);
  EXPECT_EQ(l.first_component(k.spot), 10u);
  // A one-value Int needs no bits at all.
  Layout one;
  one.add_int("only", 3, 3);
  EXPECT_EQ(one.full_bits(), 0u);
}

// The layout's per-component codes (worked out once, read by the wire and sanitize every
// tick) are the field's own: max code, bits, axis, and index_of / code_of at every code.
TEST(Layout, ComponentCodesAreTheFieldsOwn) {
  AllKinds k;
  const Layout& l = k.layout;
  ASSERT_TRUE(l.validate());
  // Two hand-checked: the stick's x, 0..128 around 64; the gain, 0..8 around 4 (0 at -1 + 4 * 0.25).
  EXPECT_EQ(l.codes(l.first_component(k.move)).axis.lo, -64);
  EXPECT_EQ(l.codes(l.first_component(k.move)).axis.hi, 64);
  EXPECT_EQ(l.codes(l.first_component(k.gain)).axis.lo, -4);
  EXPECT_EQ(l.codes(l.first_component(k.gain)).axis.hi, 4);
  for (uint32_t i = 0; i < l.size(); ++i) {
    const Field& f = l.field(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      const uint32_t at = l.first_component(i) + c;
      const Layout::ComponentCodes& codes = l.codes(at);
      EXPECT_EQ(codes.max_code, f.max_code(c)) << f.name << " " << c;
      EXPECT_EQ(codes.bits, f.code_bits(c)) << f.name << " " << c;
      EXPECT_EQ(codes.axis.lo, f.axis(c).lo) << f.name << " " << c;
      EXPECT_EQ(codes.axis.hi, f.axis(c).hi) << f.name << " " << c;
      for (uint32_t code = 0; code <= std::min(codes.max_code, 300u); ++code) {
        ASSERT_EQ(l.index_of(at, code), f.index_of(c, code)) << f.name << " code " << code;
        const int64_t index = f.index_of(c, code);
        ASSERT_EQ(l.code_of(at, index), f.code_of(c, index)) << f.name << " index " << index;
      }
    }
  }
}

// A default Values (every code 0) is every field at its zero, and valid: what a player
// that has sent nothing yet applies. A Fixed range without 0 starts at its nearest end.
TEST(Layout, ZeroCodesAreEveryFieldAtItsZero) {
  AllKinds k;
  const Layout& l = k.layout;
  const Values zero;
  EXPECT_TRUE(l.valid(zero));
  EXPECT_FALSE(l.boolean(zero, k.flag));
  EXPECT_EQ(l.buttons(zero, k.keys), 0u);
  EXPECT_EQ(l.integer(zero, k.level), 0);
  EXPECT_EQ(l.format(zero, k.colour), "red");
  EXPECT_EQ(l.number(zero, k.gain), 0.0f);
  EXPECT_EQ(l.stick(zero, k.move), sim::Vec3(0.0f));
  EXPECT_EQ(l.angle(zero, k.yaw), 0.0f);
  EXPECT_EQ(l.point3(zero, k.spot), sim::Vec3(0.0f));
  Layout above;
  const uint32_t f = above.add_fixed("height", 2.0f, 3.0f, 0.125f);
  EXPECT_EQ(above.number(Values{}, f), 2.0f);
  Values v;
  above.set_number(v, f, 0.0f);  // nothing below 2: clamped to it
  EXPECT_EQ(v.code[0], 0u);
  above.set_number(v, f, 2.5f);  // 4 steps up: codes count up from the lowest value
  EXPECT_EQ(v.code[0], 4u);
}

TEST(Layout, SanitizeClampsEveryKind) {
  AllKinds k;
  const Layout& l = k.layout;
  Values v;
  l.set_stick(v, k.move, 0.0f, 0.0f);
  l.set_direction3(v, k.normal, sim::Vec3(0, 0, 1));
  ASSERT_TRUE(l.valid(v));

  Values bad = v;
  bad.code[l.first_component(k.flag)] = 5;        // -> 1
  bad.code[l.first_component(k.keys)] = 0xff;     // buttons past the three declared -> 0b111
  bad.code[l.first_component(k.level)] = 100;     // -> 15 (the value 10)
  bad.code[l.first_component(k.colour)] = 9;      // past the five values -> 4
  bad.code[l.first_component(k.yaw)] = 4096 + 5;  // an angle wraps: -> 5
  bad.code[l.first_component(k.spot) + 1] = 99;   // y past 8 steps -> 8
  bad.code[20] = 3;                               // unused component -> 0
  EXPECT_FALSE(l.sanitize(bad));
  EXPECT_EQ(bad.code[l.first_component(k.flag)], 1u);
  EXPECT_EQ(bad.code[l.first_component(k.keys)], 7u);
  EXPECT_EQ(l.integer(bad, k.level), 10);
  EXPECT_EQ(l.integer(bad, k.colour), 4);
  EXPECT_EQ(bad.code[l.first_component(k.yaw)], 5u);
  EXPECT_EQ(bad.code[l.first_component(k.spot) + 1], 8u);
  EXPECT_EQ(bad.code[20], 0u);
  EXPECT_TRUE(l.sanitize(bad));  // a second pass changes nothing

  // Stick codes alternate around the centre: code 2k is +k steps, 2k - 1 is -k. The
  // corner (+64, +64), codes 128 and 128, lies outside the disc x^2 + y^2 <= 64^2 + 2*64
  // = 4224: len = isqrt(8192) = 90, so each axis becomes 64 * 64 / 90 = 45 steps (4050 <=
  // 4224), code 2 * 45 = 90.
  Values corner = v;
  corner.code[l.first_component(k.move)] = 128;
  corner.code[l.first_component(k.move) + 1] = 128;
  EXPECT_FALSE(l.sanitize(corner));
  EXPECT_EQ(corner.code[l.first_component(k.move)], 90u);
  EXPECT_EQ(corner.code[l.first_component(k.move) + 1], 90u);
  // A code past the range is first clamped to 128 (+64 steps): (64, 0) is on the edge.
  Values far = v;
  far.code[l.first_component(k.move)] = 1000;
  EXPECT_FALSE(l.sanitize(far));
  EXPECT_EQ(far.code[l.first_component(k.move)], 128u);
  EXPECT_EQ(far.code[l.first_component(k.move) + 1], 0u);
}

TEST(Layout, ReadersTurnCodesIntoNumbersByHand) {
  AllKinds k;
  const Layout& l = k.layout;
  Values v;
  auto code = [&](uint32_t field, uint32_t c, uint32_t x) { v.code[l.first_component(field) + c] = x; };

  // Code 0 is every field's zero; the codes of a range around it alternate sides
  // (0, +1, -1, +2, -2, ...) while both sides have room, then run on along the longer.
  code(k.yaw, 0, 0);
  EXPECT_EQ(l.angle(v, k.yaw), 0.0f);  // code 0 is 0 rad
  code(k.yaw, 0, 2048);                // 2^(12-1) is the upper half's first: (2048 - 4096) * 2pi / 4096 = -pi
  EXPECT_EQ(l.angle(v, k.yaw), -kPi);
  code(k.yaw, 0, 1024);
  EXPECT_FLOAT_EQ(l.angle(v, k.yaw), kPi / 2);
  code(k.yaw, 0, 3072);
  EXPECT_FLOAT_EQ(l.angle(v, k.yaw), -kPi / 2);

  // gain: [-1, 1] in 0.25 steps, zero 4 steps above -1, so 4 steps each side.
  code(k.gain, 0, 1);  // -1 step: -0.25
  EXPECT_EQ(l.number(v, k.gain), -0.25f);
  code(k.gain, 0, 6);  // +3 steps: 0.75
  EXPECT_EQ(l.number(v, k.gain), 0.75f);
  code(k.gain, 0, 0);
  EXPECT_EQ(l.number(v, k.gain), 0.0f);
  // level: [-5, 10], zero with 5 values below and 10 above: codes 0..10 alternate
  // (code 9 is -5), codes 11..15 are +6..+10.
  code(k.level, 0, 0);
  EXPECT_EQ(l.integer(v, k.level), 0);
  code(k.level, 0, 9);
  EXPECT_EQ(l.integer(v, k.level), -5);
  code(k.level, 0, 11);
  EXPECT_EQ(l.integer(v, k.level), 6);
  code(k.level, 0, 15);
  EXPECT_EQ(l.integer(v, k.level), 10);

  code(k.move, 0, 64);  // +32 steps: 32 / 64
  code(k.move, 1, 63);  // -32 steps
  EXPECT_EQ(l.stick(v, k.move), sim::Vec3(0.5f, -0.5f, 0.0f));

  code(k.spot, 0, 31);  // x: zero 20 steps above -10; -16 steps (code 2 * 16 - 1): -10 + 4 * 0.5
  code(k.spot, 1, 2);   // y: [0, 4] starts at zero, so codes count up: 0 + 2 * 0.5
  code(k.spot, 2, 0);   // z: zero
  EXPECT_EQ(l.point3(v, k.spot), sim::Vec3(-8.0f, 1.0f, 0.0f));

  code(k.keys, 0, 0b101);
  EXPECT_TRUE(l.button(v, k.keys, 0));
  EXPECT_FALSE(l.button(v, k.keys, 1));
  EXPECT_TRUE(l.button(v, k.keys, 2));
  EXPECT_EQ(l.format(v, k.keys), "a|c");
  code(k.colour, 0, 2);
  EXPECT_EQ(l.format(v, k.colour), "blue");
}

TEST(Layout, Direction3RoundTripsTheSixAxes) {
  AllKinds k;
  const Layout& l = k.layout;
  // With 10 bits an axis has 1023 steps over [-1, 1]; the centre falls between two codes,
  // so a decoded axis is off by at most about 1 / 1023 in each component.
  const float tolerance = 2.0f / 1023.0f;
  const sim::Vec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  for (const sim::Vec3& axis : axes) {
    Values v;
    l.set_direction3(v, k.normal, axis);
    ASSERT_TRUE(l.valid(v));
    const sim::Vec3 d = l.direction3(v, k.normal);
    EXPECT_NEAR(d.x, axis.x, tolerance) << axis.x << " " << axis.y << " " << axis.z;
    EXPECT_NEAR(d.y, axis.y, tolerance);
    EXPECT_NEAR(d.z, axis.z, tolerance);
    EXPECT_NEAR(std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z), 1.0f, 1e-6f);
  }
}

TEST(Layout, WritersRoundAndClamp) {
  AllKinds k;
  const Layout& l = k.layout;
  Values v;
  l.set_number(v, k.gain, 0.3f);  // nearest step: 0.25, +1 step above zero (code 2)
  EXPECT_EQ(v.code[l.first_component(k.gain)], 2u);
  l.set_number(v, k.gain, 7.0f);  // clamped to 1 (code 8)
  EXPECT_EQ(l.number(v, k.gain), 1.0f);
  l.set_angle(v, k.yaw, kPi);  // pi wraps to -pi: code 2048
  EXPECT_EQ(v.code[l.first_component(k.yaw)], 2048u);
  EXPECT_EQ(l.angle(v, k.yaw), -kPi);
  l.set_stick(v, k.move, 3.0f, 4.0f);  // scaled onto the rim: (0.6, 0.8) -> 38.4 and 51.2 steps
  EXPECT_EQ(v.code[l.first_component(k.move)], 76u);  // +38 steps
  EXPECT_EQ(v.code[l.first_component(k.move) + 1], 102u);  // +51 steps
  l.set_integer(v, k.level, -100);
  EXPECT_EQ(l.integer(v, k.level), -5);
  EXPECT_TRUE(l.valid(v));
}

TEST(Layout, BytesRoundTripAndDamageIsRefused) {
  AllKinds k;
  std::vector<uint8_t> bytes;
  write_layout(k.layout, bytes);
  size_t at = 0;
  auto back = read_layout(bytes, at);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, k.layout);
  EXPECT_EQ(at, bytes.size());
  EXPECT_EQ(back->full_bits(), 78u);

  // Every truncation fails (and reads nothing past the end).
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    size_t o = 0;
    EXPECT_FALSE(read_layout(cut, o)) << "truncated to " << n << " bytes";
    EXPECT_EQ(o, 0u);
  }
  // The first field's kind byte follows the count (4) and its name (4-byte length + 4).
  std::vector<uint8_t> bad_kind = bytes;
  ASSERT_EQ(bad_kind[12], uint8_t(FieldKind::Bool));
  bad_kind[12] = 99;
  size_t o = 0;
  auto r = read_layout(bad_kind, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("kind 99"), std::string::npos) << r.error().message;
  // A known kind whose numbers break its bounds is read, then refused by validate(): an
  // Int whose max (after the count, the name "level" and its length, the kind byte and
  // the 4-byte min) becomes -1, below its min of 0.
  Layout one;
  one.add_int("level", 0, 10);
  std::vector<uint8_t> b;
  write_layout(one, b);
  ASSERT_EQ(b[4 + 4 + 5 + 1 + 4], 10u);
  b[4 + 4 + 5 + 1 + 4] = 0xff;
  b[4 + 4 + 5 + 1 + 5] = 0xff;
  b[4 + 4 + 5 + 1 + 6] = 0xff;
  b[4 + 4 + 5 + 1 + 7] = 0xff;
  o = 0;
  r = read_layout(b, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("invalid"), std::string::npos) << r.error().message;
  // A huge field count is refused before anything is allocated for it.
  std::vector<uint8_t> count = {0xff, 0xff, 0xff, 0x7f};
  o = 0;
  EXPECT_FALSE(read_layout(count, o));
  o = 5;  // an offset past the end
  EXPECT_FALSE(read_layout(count, o));
}

// The message of a layout that must not validate.
std::string refusal(const Layout& l) {
  Status st = l.validate();
  return st ? std::string("(accepted)") : st.error().message;
}

TEST(Layout, ValidateRefusals) {
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  {
    Layout l;
    l.add_bool("jump");
    l.add_int("jump", 0, 1);
    EXPECT_TRUE(has(refusal(l), "\"jump\" is declared twice")) << refusal(l);
  }
  for (const char* name : {"", "Jump", "has space", "dash-ed", "abcdefghijabcdefghijabcdefghijabc"}) {
    Layout l;
    l.add_bool(name);
    EXPECT_TRUE(has(refusal(l), "must be 1 to 32 characters")) << name << ": " << refusal(l);
  }
  {
    Layout l;  // 17 sticks are 34 components
    for (int i = 0; i < 17; ++i) l.add_stick("s" + std::to_string(i), 8);
    EXPECT_TRUE(has(refusal(l), "34 components")) << refusal(l);
  }
  {
    Layout l;  // 33 fields
    for (int i = 0; i < 33; ++i) l.add_bool("b" + std::to_string(i));
    EXPECT_TRUE(has(refusal(l), "33 fields")) << refusal(l);
  }
  {
    Layout l;
    l.add_buttons("keys", {"a", "a"});
    EXPECT_TRUE(has(refusal(l), "names \"a\" twice")) << refusal(l);
  }
  auto refused = [&](auto add, const std::string& part) {
    Layout l;
    add(l);
    EXPECT_TRUE(has(refusal(l), part)) << refusal(l);
  };
  refused([](Layout& l) { l.add_int("n", 5, 4); }, "min <= max");
  refused([](Layout& l) { l.add_int("n", 0, 1 << 24); }, "2^24 values");
  refused([](Layout& l) { l.add_enum("e", {"only"}); }, "it needs 2 to 256");
  std::vector<std::string> seventeen;
  for (int i = 0; i < 17; ++i) seventeen.push_back("b" + std::to_string(i));
  refused([&](Layout& l) { l.add_buttons("k", seventeen); }, "it needs 1 to 16");
  refused([](Layout& l) { l.add_fixed("f", 0.0f, 1.0f, 0.0f); }, "step above 0");
  refused([](Layout& l) { l.add_fixed("f", 0.0f, NAN, 0.1f); }, "finite bounds");
  refused([](Layout& l) { l.add_fixed("f", 1.0f, 0.0f, 0.1f); }, "lo <= hi");
  refused([](Layout& l) { l.add_fixed("f", 0.0f, 1e6f, 0.01f); }, "2^24 steps");
  refused([](Layout& l) { l.add_point3("p", sim::Vec3(0), sim::Vec3(1, -1, 1), 0.1f); }, "lo <= hi");
  refused([](Layout& l) { l.add_stick("s", 0); }, "steps per unit");
  refused([](Layout& l) { l.add_angle("a", 1); }, "2 to 24 bits");
  refused([](Layout& l) { l.add_angle("a", 25); }, "2 to 24 bits");
  refused([](Layout& l) { l.add_direction3("d", 30); }, "2 to 24 bits per axis");
  // The largest of each bound is accepted.
  Layout edge;
  edge.add_angle("a", 24);
  edge.add_int("n", 0, (1 << 24) - 1);
  edge.add_buttons("k", std::vector<std::string>(seventeen.begin(), seventeen.begin() + 16));
  EXPECT_TRUE(edge.validate()) << refusal(edge);
  EXPECT_EQ(edge.full_bits(), 24u + 24u + 16u);
}

}  // namespace
}  // namespace keel::game
