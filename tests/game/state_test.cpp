// keel::game::StateScope / StateValues: declared state, its handles, and its canonical
// bytes (widths, little-endian order, the one spelling of a Bool).
#include <keel/game/state.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace keel::game {
namespace {

// a: i32[2], b: bool, c: f32, d: u64 -> 2*4 + 1 + 4 + 8 = 21 bytes, 5 elements.
struct Sample {
  StateScope scope;
  StateRef a, b, c, d;
  Sample() {
    a = scope.add("a", StateType::I32, 2);
    b = scope.add("b", StateType::Bool);
    c = scope.add("c", StateType::F32);
    d = scope.add("d", StateType::U64);
  }
};

TEST(State, HandlesAndSizes) {
  Sample s;
  EXPECT_EQ(s.a.offset, 0u);
  EXPECT_EQ(s.a.count, 2u);
  EXPECT_EQ(s.b.offset, 2u);
  EXPECT_EQ(s.c.offset, 3u);
  EXPECT_EQ(s.d.offset, 4u);
  EXPECT_EQ(s.scope.elements(), 5u);
  EXPECT_EQ(s.scope.state_bytes(), 21u);
  EXPECT_TRUE(s.scope.validate(16));
  EXPECT_EQ(element_name(s.scope, 1), "a[1]");
  EXPECT_EQ(element_name(s.scope, 2), "b");
  EXPECT_EQ(element_name(s.scope, 9), "element 9");
}

TEST(State, SetAndGetEachType) {
  Sample s;
  StateValues v(s.scope);
  EXPECT_EQ(v.get_i32(s.a, 1), 0);  // a new scope starts at zero
  v.set_i32(s.a, -7, 1);
  v.set_bool(s.b, true);
  v.set_f32(s.c, 0.1f);
  v.set_u64(s.d, 0x0123456789abcdefull);
  EXPECT_EQ(v.get_i32(s.a, 0), 0);
  EXPECT_EQ(v.get_i32(s.a, 1), -7);
  EXPECT_EQ(v.raw()[1], 0xfffffff9ull);  // a 32-bit element is stored zero-extended
  EXPECT_TRUE(v.get_bool(s.b));
  EXPECT_EQ(v.get_f32(s.c), 0.1f);
  EXPECT_EQ(v.get_u64(s.d), 0x0123456789abcdefull);
  EXPECT_EQ(format_element(s.scope, v, 1), "-7");
  EXPECT_EQ(format_element(s.scope, v, 2), "true");
  EXPECT_EQ(format_element(s.scope, v, 3), "0.100000001");
}

TEST(State, OutOfRangeHandlesNeverWriteOutside) {
  Sample s;
  StateValues v(s.scope);
  v.set_bool(s.b, true);
  // An element index past the field's count lands on its last element, never on b.
  v.set_i32(s.a, 5, 9);
  EXPECT_EQ(v.get_i32(s.a, 1), 5);
  EXPECT_TRUE(v.get_bool(s.b));
  // A handle from another, larger layout lands on the spare element: nothing declared
  // changes and the canonical bytes stay the same.
  std::vector<uint8_t> before;
  write_state_values(s.scope, v, before);
  const StateRef stray{1000, 4, StateType::U32};
  v.set_u32(stray, 42, 3);
  EXPECT_EQ(v.get_u32(stray, 3), 42u);
  EXPECT_EQ(v.raw().size(), 6u);  // five elements and the spare
  std::vector<uint8_t> after;
  write_state_values(s.scope, v, after);
  EXPECT_EQ(before, after);
  // A default StateValues (no scope) has only the spare.
  StateValues empty;
  empty.set_i64(s.d, -1);
  EXPECT_EQ(empty.raw().size(), 1u);
}

TEST(State, CanonicalBytesRoundTrip) {
  Sample s;
  StateValues v(s.scope);
  v.set_i32(s.a, 1, 0);
  v.set_i32(s.a, -2, 1);
  v.set_bool(s.b, true);
  v.set_f32(s.c, 1.0f);
  v.set_u64(s.d, 0x1122334455667788ull);
  std::vector<uint8_t> bytes;
  write_state_values(s.scope, v, bytes);
  const std::vector<uint8_t> expected = {
      0x01, 0x00, 0x00, 0x00,                          // a[0] = 1
      0xfe, 0xff, 0xff, 0xff,                          // a[1] = -2
      0x01,                                            // b
      0x00, 0x00, 0x80, 0x3f,                          // c = 1.0f
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // d
  };
  EXPECT_EQ(bytes, expected);
  size_t at = 0;
  StateValues back;
  ASSERT_TRUE(read_state_values(s.scope, bytes, at, back));
  EXPECT_EQ(at, bytes.size());
  EXPECT_EQ(back, v);

  // A Bool byte other than 0 or 1 is a second spelling of the same state: refused.
  std::vector<uint8_t> two = bytes;
  two[8] = 2;
  at = 0;
  EXPECT_FALSE(read_state_values(s.scope, two, at, back));
  // Every truncation is refused and moves nothing.
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    at = 0;
    EXPECT_FALSE(read_state_values(s.scope, cut, at, back)) << n;
    EXPECT_EQ(at, 0u);
  }
  at = bytes.size() + 1;
  EXPECT_FALSE(read_state_values(s.scope, bytes, at, back));
}

TEST(State, LayoutBytesAndRefusals) {
  StateLayout layout;
  layout.global.add("score", StateType::I32, 2);
  layout.player.add("charge", StateType::U32);
  std::vector<uint8_t> bytes;
  write_state_layout(layout, bytes);
  size_t at = 0;
  auto back = read_state_layout(bytes, at);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, layout);
  EXPECT_EQ(at, bytes.size());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    size_t o = 0;
    EXPECT_FALSE(read_state_layout(cut, o)) << n;
  }

  auto message = [](const StateLayout& l) {
    Status st = l.validate();
    return st ? std::string("(accepted)") : st.error().message;
  };
  StateLayout twice;
  twice.global.add("x", StateType::U32);
  twice.global.add("x", StateType::I64);
  EXPECT_NE(message(twice).find("\"x\" is declared twice"), std::string::npos) << message(twice);
  StateLayout empty_field;
  empty_field.player.add("x", StateType::U32, 0);
  EXPECT_NE(message(empty_field).find("no elements"), std::string::npos) << message(empty_field);
  StateLayout big;
  big.player.add("x", StateType::U32, kMaxPlayerStateElements + 1);
  EXPECT_NE(message(big).find("257 elements"), std::string::npos) << message(big);
  StateLayout bad_name;
  bad_name.global.add("Score", StateType::U32);
  EXPECT_NE(message(bad_name).find("must be 1 to 32 characters"), std::string::npos) << message(bad_name);
  StateLayout fine;
  fine.global.add("x", StateType::U32, kMaxGlobalStateElements);
  EXPECT_TRUE(fine.validate());
}

}  // namespace
}  // namespace keel::game
