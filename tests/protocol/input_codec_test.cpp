// The input codec on a game's declared layout: every field kind round-trips in full and
// as a change, bit counts match the layout in input_bits.h (counted by hand below),
// out-of-range values are refused, and over a lossy link every input reaches the server
// once.
#include "input_layouts.h"

#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/link_sim.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace kp = keel::protocol;
namespace kg = keel::game;
using namespace keel::protocol::test;

namespace {

kg::InputFrame frame_for(uint64_t tick) {
  static const kg::Layout l = sandbox_layout();
  kg::InputFrame f;
  l.set_stick(f, kMove, float(std::sin(tick * 0.05)), (tick / 20) % 2 ? 0.6f : -0.3f);
  l.set_angle(f, kYaw, float(std::fmod(tick * 0.01, 6.0) - 3.0));
  l.set_buttons(f, kButtons, tick % 30 == 0 ? 2u : 0u);
  return f;
}

size_t full_bits(const kg::Layout& l, const kg::Values& v) {
  kp::BitWriter w;
  kp::write_values(w, l, v);
  return w.bit_count();
}

// Writes `v` as a change against `p`, reads it back, and returns the bits written; the
// reader must stop exactly where the writer did.
size_t change_round_trip(const kg::Layout& l, const kg::Values& p, const kg::Values& v) {
  kp::BitWriter w;
  kp::write_values_change(w, l, p, v);
  const std::vector<uint8_t> bytes = w.finish();
  kp::BitReader r(bytes);
  kg::Values back;
  EXPECT_TRUE(kp::read_values_change(r, l, p, back));
  EXPECT_EQ(back, v);
  EXPECT_EQ(r.bits_left(), bytes.size() * 8 - w.bit_count());
  return w.bit_count();
}

void full_round_trip(const kg::Layout& l, const kg::Values& v) {
  kp::BitWriter w;
  kp::write_values(w, l, v);
  const std::vector<uint8_t> bytes = w.finish();
  kp::BitReader r(bytes);
  kg::Values back;
  EXPECT_TRUE(kp::read_values(r, l, back));
  EXPECT_EQ(back, v);
  EXPECT_TRUE(r.at_end());
}

// A batch of two frames: `first` in full, then a change record written by hand
// (input_bits.h): not the same, only field `field` changed, its payload from `body`.
kp::DropReason decode_one_change(const kg::Layout& l, const kg::Values& first, uint32_t field,
                                 const std::function<void(kp::BitWriter&)>& body, kg::Values* out = nullptr) {
  kp::BitWriter w;
  kp::write_values(w, l, first);
  w.write_bool(false);
  for (uint32_t i = 0; i < l.size(); ++i) {
    w.write_bool(i == field);
    if (i == field) body(w);
  }
  std::vector<kg::InputFrame> frames;
  kp::DropReason r = kp::decode_inputs(l, w.finish(), 2, frames);
  if (out != nullptr && r == kp::DropReason::None) *out = frames[1];
  return r;
}

// One frame in full whose codes are written as they are (write_values writes each code
// in its component's width, whatever it holds).
kp::DropReason decode_raw_full(const kg::Layout& l, const kg::Values& raw) {
  kp::BitWriter w;
  kp::write_values(w, l, raw);
  std::vector<kg::InputFrame> frames;
  return kp::decode_inputs(l, w.finish(), 1, frames);
}

auto golomb(int64_t d) {
  return [d](kp::BitWriter& w) { w.write_golomb(d); };
}

}  // namespace

TEST(InputCodec, SandboxInputIsQuantisedSanitisedAndStable) {
  const kg::Layout l = sandbox_layout();
  kg::InputFrame f;
  l.set_stick(f, kMove, 3.0f, 4.0f);
  l.set_angle(f, kYaw, 100.0f);
  l.set_buttons(f, kButtons, 0xffffffffu);
  keel::sim::Vec3 s = l.stick(f, kMove);
  EXPECT_LE(s.x * s.x + s.y * s.y, 1.0f + 2.0f / 127);
  EXPECT_NEAR(s.x, 0.6f, 1.0f / 127);
  EXPECT_EQ(l.buttons(f, kButtons), 3u);  // jump | fire: nothing past the declared two
  EXPECT_TRUE(l.valid(f));
  kg::InputFrame nan;
  l.set_stick(nan, kMove, std::numeric_limits<float>::quiet_NaN(), 0.0f);
  EXPECT_EQ(nan.code[0], 0u);  // the centre
  for (float yaw : {-3.14159f, -1.0f, 0.0f, 1.0f, 3.14159f, 100.0f}) {
    kg::InputFrame y;
    l.set_angle(y, kYaw, yaw);
    double d = std::fabs(std::remainder(double(l.angle(y, kYaw)) - yaw, 2 * M_PI));
    EXPECT_LT(d, 2 * M_PI / 65536) << yaw;
  }
  // The sender sanitises what it is given: undeclared buttons and a stick past its
  // disc never reach the wire.
  kg::InputFrame wild;
  wild.code = {254, 254, 7, 0xff};
  kp::InputSender sender(l);
  sender.add(10, wild);
  const std::vector<uint8_t> msg = sender.build_batch(0, 0);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  kp::InputReceiver receiver;
  std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
  ASSERT_EQ(receiver.receive(l, *m->body_as_InputBatch(), 10, fresh), kp::DropReason::None);
  ASSERT_EQ(fresh.size(), 1u);
  kg::InputFrame want = wild;
  EXPECT_FALSE(l.sanitize(want));
  EXPECT_EQ(fresh[0].second.frame, want);
  EXPECT_EQ(l.buttons(want, kButtons), 3u);
}

TEST(InputCodec, SandboxFramesCostHandCountedBits) {
  const kg::Layout l = sandbox_layout();
  const kg::Field& move = l.field(kMove);
  kg::Values zero;
  // move 8 + 8 (255 codes a component), look_yaw 16, buttons 2.
  EXPECT_EQ(l.full_bits(), 34u);
  EXPECT_EQ(full_bits(l, zero), 34u);
  EXPECT_EQ(kp::encode_inputs(l, std::span(&zero, 1)).size(), 5u);
  // Unchanged: same:1.
  EXPECT_EQ(change_round_trip(l, zero, zero), 1u);
  // Only the stick, by (+1, 0): same 1 + move changed 1 + golomb(+1) 3 + golomb(0) 1 +
  // yaw unchanged 1 + buttons unchanged 1.
  kg::Values nudged = zero;
  nudged.code[0] = move.code_of(0, 1);
  EXPECT_EQ(change_round_trip(l, zero, nudged), 1u + 1 + 3 + 1 + 1 + 1);
  // Yaw across the wrap, -1 step to +1 step: the short way is +2, golomb 5 bits.
  kg::Values west = zero, east = zero;
  west.code[2] = 65535;
  east.code[2] = 1;
  EXPECT_EQ(change_round_trip(l, west, east), 1u + 1 + 1 + 5 + 1);
  // Yaw by -300 steps: zigzag 599, plus one 600 (10 bits): golomb 2*10 - 1 = 19 bits.
  kg::Values turned = zero;
  turned.code[2] = 65536 - 300;
  EXPECT_EQ(change_round_trip(l, zero, turned), 1u + 1 + 1 + 19 + 1);
  // Only the buttons: the new mask in its 2 bits.
  kg::Values jump = zero;
  jump.code[3] = 1;
  EXPECT_EQ(change_round_trip(l, zero, jump), 1u + 1 + 1 + 1 + 2);
  // Everything: stick (+1, -1) 1 + 3 + 3, yaw -3 1 + 5, buttons 1 + 2.
  kg::Values all = zero;
  all.code[0] = move.code_of(0, 1);
  all.code[1] = move.code_of(1, -1);
  all.code[2] = 65536 - 3;
  all.code[3] = 3;
  EXPECT_EQ(change_round_trip(l, zero, all), 1u + 1 + 3 + 3 + 1 + 5 + 1 + 2);
  full_round_trip(l, all);
}

TEST(InputCodec, EveryKindRoundTripsInFullAndAsAChange) {
  const kg::Layout l = all_kinds_layout();
  ASSERT_TRUE(l.validate());
  EXPECT_EQ(l.full_bits(), 52u);
  EXPECT_EQ(l.components(), 13u);
  Rng rng{42};
  kg::Values prev;
  std::vector<kg::Values> batch;
  for (int i = 0; i < 400; ++i) {
    kg::Values v = random_values(l, rng);
    ASSERT_TRUE(l.valid(v));
    full_round_trip(l, v);
    change_round_trip(l, prev, v);
    change_round_trip(l, v, v);
    if (batch.size() < kp::MessageLimits::kMaxInputWindow) batch.push_back(v);
    prev = v;
  }
  std::vector<kg::InputFrame> back;
  ASSERT_EQ(kp::decode_inputs(l, kp::encode_inputs(l, batch), uint32_t(batch.size()), back), kp::DropReason::None);
  EXPECT_EQ(back, batch);
  // Every step of every stepped axis, one step at a time from its lowest to its highest
  // index (the alternating codes around each origin included), and every angle across
  // its wrap.
  for (uint32_t i : {kCount, kThrottle, kStick, kAim, kTarget, kHeading}) {
    const kg::Field& f = l.field(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      kg::Values a, b;
      const uint32_t at = l.first_component(i) + c;
      const kg::Field::Axis axis = f.axis(c);
      for (int64_t k = axis.lo; k < axis.hi; ++k) {
        a.code[at] = f.code_of(c, k);
        b.code[at] = f.code_of(c, k + 1);
        ASSERT_EQ(f.index_of(c, b.code[at]), k + 1);
        EXPECT_EQ(change_round_trip(l, a, b), 1u + 9 + 3 + (f.components() - 1)) << f.name << " " << k;
        full_round_trip(l, b);
      }
    }
  }
  kg::Values top, wrapped;
  top.code[l.first_component(kHeading)] = 255;  // -1 step, +1 step is code 0
  EXPECT_EQ(change_round_trip(l, top, wrapped), 1u + 9 + 3);
  // The numbers survive the wire, not only the codes.
  kg::Values v;
  l.set_bool(v, kFlag, true);
  l.set_buttons(v, kKeys, 5);
  l.set_integer(v, kCount, -5);
  l.set_integer(v, kColour, 2);
  l.set_number(v, kThrottle, 1.75f);
  l.set_stick(v, kStick, -1.0f, 0.0f);
  l.set_angle(v, kHeading, float(M_PI / 2));
  l.set_direction3(v, kAim, keel::sim::Vec3(0.0f, 0.0f, -1.0f));
  l.set_point3(v, kTarget, keel::sim::Vec3(-1.0f, 4.0f, 3.0f));
  kp::BitWriter w;
  kp::write_values(w, l, v);
  kp::write_values_change(w, l, v, kg::Values{});
  kp::write_values_change(w, l, kg::Values{}, v);
  const std::vector<uint8_t> bytes = w.finish();
  kp::BitReader r(bytes);
  kg::Values a, b, c;
  ASSERT_TRUE(kp::read_values(r, l, a) && kp::read_values_change(r, l, a, b) && kp::read_values_change(r, l, b, c));
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(b, kg::Values{});
  for (const kg::Values& got : {a, c}) {
    EXPECT_TRUE(l.boolean(got, kFlag));
    EXPECT_EQ(l.buttons(got, kKeys), 5u);
    EXPECT_EQ(l.integer(got, kCount), -5);
    EXPECT_EQ(l.integer(got, kColour), 2);
    EXPECT_EQ(l.number(got, kThrottle), 1.75f);
    EXPECT_EQ(l.stick(got, kStick).x, -1.0f);
    EXPECT_EQ(l.angle(got, kHeading), float(M_PI / 2));  // 64 of 256 steps: exact
    EXPECT_NEAR(l.direction3(got, kAim).z, -1.0f, 1e-6f);
    EXPECT_EQ(l.point3(got, kTarget).x, -1.0f);
    EXPECT_EQ(l.point3(got, kTarget).y, 4.0f);
    EXPECT_EQ(l.point3(got, kTarget).z, 3.0f);
  }
  // Code 0 is each field's zero, or its step nearest zero: Fixed [1, 2] reads 1, Point3's
  // z axis [2, 3] reads 2.
  EXPECT_EQ(l.number(kg::Values{}, kThrottle), 1.0f);
  EXPECT_EQ(l.point3(kg::Values{}, kTarget).z, 2.0f);
  EXPECT_EQ(l.integer(kg::Values{}, kCount), 0);
}

TEST(InputCodec, EachKindCostsHandCountedBitsAsAChange) {
  const kg::Layout l = all_kinds_layout();
  const kg::Values zero;
  auto only = [&](uint32_t field, uint32_t c, uint32_t code) {
    kg::Values v;
    v.code[l.first_component(field) + c] = code;
    return change_round_trip(l, zero, v);
  };
  const kg::Field& count = l.field(kCount);
  const kg::Field& target = l.field(kTarget);
  // Each: same 1 + nine changed flags, then the changed field's record.
  EXPECT_EQ(change_round_trip(l, zero, zero), 1u);
  EXPECT_EQ(only(kFlag, 0, 1), 1u + 9);                          // a flip: nothing more
  EXPECT_EQ(only(kKeys, 0, 5), 1u + 9 + 3);                      // the mask in full
  EXPECT_EQ(only(kColour, 0, 2), 1u + 9 + 2);                    // the index in full
  EXPECT_EQ(only(kCount, 0, count.code_of(0, -5)), 1u + 9 + 7);  // golomb(-5): zigzag 9 + 1 = 10, 4 bits
  EXPECT_EQ(only(kThrottle, 0, 4), 1u + 9 + 7);                  // golomb(+4): zigzag 8 + 1 = 9, 4 bits
  EXPECT_EQ(only(kHeading, 0, 255), 1u + 9 + 3);                 // -1 the short way round
  EXPECT_EQ(only(kHeading, 0, 128), 1u + 9 + 17);                // half a turn is -128: zigzag 255 + 1 = 256, 9 bits
  EXPECT_EQ(only(kAim, 1, 1), 1u + 9 + 1 + 3);                   // golomb(0) golomb(+1)
  EXPECT_EQ(only(kTarget, 1, target.code_of(1, 2)), 1u + 9 + 1 + 5 + 1);
  EXPECT_EQ(only(kStick, 0, l.field(kStick).code_of(0, -10)), 1u + 9 + 9 + 1);  // golomb(-10): zigzag 19 + 1, 5 bits
}

TEST(InputCodec, DecodingRefusesEachKindsOutOfRangeValues) {
  const kg::Layout l = all_kinds_layout();
  const uint32_t stick = l.first_component(kStick), target = l.first_component(kTarget);
  const uint32_t aim = l.first_component(kAim);
  auto raw = [&](uint32_t component, uint32_t code) {
    kg::Values v;
    v.code[component] = code;
    return decode_raw_full(l, v);
  };
  // In full: codes that fit their bits but not their range.
  EXPECT_EQ(raw(l.first_component(kColour), 3), kp::DropReason::OutOfRange);    // enum of 3 values
  EXPECT_EQ(raw(l.first_component(kThrottle), 5), kp::DropReason::OutOfRange);  // 4 steps, 3 bits
  EXPECT_EQ(raw(stick, 21), kp::DropReason::OutOfRange);                        // 20 codes, 5 bits
  EXPECT_EQ(raw(target + 2, 3), kp::DropReason::OutOfRange);                    // z: 2 steps, 2 bits
  EXPECT_EQ(raw(target + 2, 2), kp::DropReason::None);
  // A stick whose components are each in range but together outside the disc
  // (10 steps a unit: 10^2 + 10^2 > 10^2 + 2*10).
  kg::Values corner;
  corner.code[stick] = l.field(kStick).code_of(0, 10);
  corner.code[stick + 1] = l.field(kStick).code_of(1, 10);
  EXPECT_EQ(decode_raw_full(l, corner), kp::DropReason::OutOfRange);

  // As changes.
  kg::Values base, got;
  EXPECT_EQ(decode_one_change(l, base, kColour, [](kp::BitWriter& w) { w.write_bits(3, 2); }),
            kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kColour, [](kp::BitWriter& w) { w.write_bits(2, 2); }, &got),
            kp::DropReason::None);
  EXPECT_EQ(l.integer(got, kColour), 2);
  // Int [-5, 10]: at 10, +1 leaves the range; -15 reaches -5; at -5, -1 leaves it.
  kg::Values ten, minus_five;
  l.set_integer(ten, kCount, 10);
  l.set_integer(minus_five, kCount, -5);
  EXPECT_EQ(decode_one_change(l, ten, kCount, golomb(1)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, ten, kCount, golomb(-15), &got), kp::DropReason::None);
  EXPECT_EQ(l.integer(got, kCount), -5);
  EXPECT_EQ(decode_one_change(l, minus_five, kCount, golomb(-1)), kp::DropReason::OutOfRange);
  // Fixed [1, 2]: its origin is its lowest step, so any step below it is out.
  EXPECT_EQ(decode_one_change(l, base, kThrottle, golomb(-1)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kThrottle, golomb(5)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kThrottle, golomb(4)), kp::DropReason::None);
  // Stick: past its axis, and inside both axes but outside the disc.
  kg::Values right;
  l.set_stick(right, kStick, 1.0f, 0.0f);
  auto two = [](int64_t a, int64_t b) {
    return [a, b](kp::BitWriter& w) { w.write_golomb(a), w.write_golomb(b); };
  };
  EXPECT_EQ(decode_one_change(l, right, kStick, two(1, 0)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kStick, two(8, 8)), kp::DropReason::OutOfRange);  // 128 > 120
  EXPECT_EQ(decode_one_change(l, base, kStick, two(8, 7)), kp::DropReason::None);        // 113
  // Angle, 8 bits: the short way round is -128 .. 127.
  EXPECT_EQ(decode_one_change(l, base, kHeading, golomb(128)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kHeading, golomb(-129)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kHeading, golomb(-128), &got), kp::DropReason::None);
  EXPECT_EQ(got.code[l.first_component(kHeading)], 128u);
  // Direction3 [0, 63] per axis; Point3 y [0, 8] from 0 and z [0, 2] from 2.
  kg::Values up;
  up.code[aim] = 63;
  EXPECT_EQ(decode_one_change(l, up, kAim, two(1, 0)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kAim, two(0, -1)), kp::DropReason::OutOfRange);
  auto three = [](int64_t a, int64_t b, int64_t c) {
    return [a, b, c](kp::BitWriter& w) { w.write_golomb(a), w.write_golomb(b), w.write_golomb(c); };
  };
  EXPECT_EQ(decode_one_change(l, base, kTarget, three(0, -1, 0)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kTarget, three(0, 0, 3)), kp::DropReason::OutOfRange);
  EXPECT_EQ(decode_one_change(l, base, kTarget, three(-3, 0, 0)), kp::DropReason::OutOfRange);  // x [-2, 2]
  EXPECT_EQ(decode_one_change(l, base, kTarget, three(-2, 8, 2)), kp::DropReason::None);
  // A difference longer than any code (27 zero bits of prefix): refused, never read on.
  EXPECT_NE(decode_one_change(l, base, kCount, [](kp::BitWriter& w) { w.write_bits(0, 27), w.write_bits(1, 1); }),
            kp::DropReason::None);
}

TEST(InputCodec, ButtonsPastTheDeclaredOnesHaveNoCodeOnTheWire) {
  // A buttons field takes exactly one bit per declared button, so an undeclared button
  // cannot be sent: the third bit below is the next field's.
  kg::Layout l;
  l.add_buttons("buttons", {"jump", "fire"});
  l.add_bool("crouch");
  const std::vector<uint8_t> bits{0b111};
  std::vector<kg::InputFrame> frames;
  ASSERT_EQ(kp::decode_inputs(l, bits, 1, frames), kp::DropReason::None);
  EXPECT_EQ(l.buttons(frames[0], 0), 3u);
  EXPECT_TRUE(l.boolean(frames[0], 1));
  // A frame holding one (a client bug) is not valid, and the sender clears it.
  kg::InputFrame extra;
  extra.code[0] = 0b101;
  EXPECT_FALSE(l.valid(extra));
  kp::InputSender sender(l);
  sender.add(1, extra);
  const std::vector<uint8_t> msg = sender.build_batch(0, 0);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  const auto* payload = m->body_as_InputBatch()->frames();
  ASSERT_EQ(kp::decode_inputs(l, {payload->data(), payload->size()}, 1, frames), kp::DropReason::None);
  EXPECT_EQ(l.buttons(frames[0], 0), 1u);
}

TEST(InputCodec, ALayoutWithNoFieldsCostsOneBitAFrame) {
  const kg::Layout none;
  ASSERT_TRUE(none.validate());
  EXPECT_EQ(none.full_bits(), 0u);
  const std::vector<kg::InputFrame> ten(10);
  // 0 bits in full, then nine `same:1`: 9 bits, 0xff 0x01.
  const std::vector<uint8_t> bytes = kp::encode_inputs(none, ten);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0xff, 0x01}));
  std::vector<kg::InputFrame> back;
  ASSERT_EQ(kp::decode_inputs(none, bytes, 10, back), kp::DropReason::None);
  EXPECT_EQ(back, ten);
  ASSERT_EQ(kp::decode_inputs(none, {}, 1, back), kp::DropReason::None);  // one frame: no bits at all
  EXPECT_EQ(back.size(), 1u);
  // The zero padding reads as frames that changed no field, so 16 bits hold 17 frames, not 18.
  EXPECT_EQ(kp::decode_inputs(none, bytes, 17, back), kp::DropReason::None);
  EXPECT_NE(kp::decode_inputs(none, bytes, 18, back), kp::DropReason::None);
  // Through the sender and the receiver.
  kp::InputSender sender(none);
  for (uint64_t t = 100; t < 110; ++t) sender.add(t, {});
  const std::vector<uint8_t> msg = sender.build_batch(0, 0);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  kp::InputReceiver receiver;
  std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
  ASSERT_EQ(receiver.receive(none, *m->body_as_InputBatch(), 105, fresh), kp::DropReason::None);
  EXPECT_EQ(fresh.size(), 10u);
  EXPECT_EQ(receiver.ack_tick(), 109u);
}

TEST(InputCodec, BatchRoundTripAndRejections) {
  const kg::Layout l = sandbox_layout();
  std::vector<kg::InputFrame> frames;
  for (uint64_t t = 0; t < 64; ++t) frames.push_back(frame_for(t));
  auto bytes = kp::encode_inputs(l, frames);
  // Below 64 full frames (272 bytes) although every frame changes: steering and turning
  // change by small steps (the yaw by 104 steps, 15 bits, the stick by up to 6).
  EXPECT_LT(bytes.size(), 64u * 34 / 8);
  std::vector<kg::InputFrame> back;
  ASSERT_EQ(kp::decode_inputs(l, bytes, 64, back), kp::DropReason::None);
  EXPECT_EQ(back, frames);
  EXPECT_EQ(kp::decode_inputs(l, bytes, 65, back), kp::DropReason::OutOfRange);  // over the window
  EXPECT_EQ(kp::decode_inputs(l, bytes, 0, back), kp::DropReason::OutOfRange);
  EXPECT_NE(kp::decode_inputs(l, bytes, 63, back), kp::DropReason::None);  // bits left over
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(kp::decode_inputs(l, longer, 64, back), kp::DropReason::MalformedPayload);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_NE(kp::decode_inputs(l, std::span(bytes).first(n), 64, back), kp::DropReason::None) << n;
  }
  // A forged full frame: the stick at (127, 127), length sqrt(2).
  kg::InputFrame forged;
  forged.code[0] = l.field(kMove).code_of(0, 127);
  forged.code[1] = l.field(kMove).code_of(1, 127);
  EXPECT_EQ(decode_raw_full(l, forged), kp::DropReason::OutOfRange);
}

TEST(InputCodec, EveryInputArrivesOnceOverALossyLink) {
  const kg::Layout l = sandbox_layout();
  kp::LinkSimulator up({30, 10, 0.3, 0.1, 0.2, 5}), down({30, 10, 0.3, 0.1, 0.2, 6});
  kp::InputSender sender(l);
  kp::InputReceiver receiver;
  std::map<uint64_t, kg::InputFrame> got;
  const uint64_t kStart = 1000;
  for (uint64_t t = kStart; t < kStart + 600; ++t) {
    double now = double(t) / 60.0;
    sender.add(t, frame_for(t));
    up.send(sender.build_batch(0, 0), now);
    for (auto& d : up.receive(now)) {
      const kp::fb::Message* m = nullptr;
      ASSERT_EQ(kp::check_message(d, m), kp::DropReason::None);
      std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
      auto r = receiver.receive(l, *m->body_as_InputBatch(), t, fresh);
      ASSERT_TRUE(r == kp::DropReason::None || r == kp::DropReason::Duplicate);
      for (auto& [tick, f] : fresh) {
        EXPECT_EQ(got.count(tick), 0u) << "delivered twice: " << tick;
        got[tick] = f.frame;
      }
    }
    // The server's ack travels back (as it would in a snapshot's or frame's message).
    std::vector<uint8_t> ack(8);
    for (int i = 0; i < 8; ++i) ack[i] = uint8_t(receiver.ack_tick() >> (8 * i));
    down.send(ack, now);
    for (auto& d : down.receive(now)) {
      uint64_t a = 0;
      for (int i = 0; i < 8; ++i) a |= uint64_t(d[i]) << (8 * i);
      sender.on_ack(a);
    }
    EXPECT_LE(sender.pending(), kp::MessageLimits::kMaxInputWindow);
  }
  // 30% loss, yet every frame older than the last round trip arrived, exactly as sent.
  for (uint64_t t = kStart; t < kStart + 580; ++t) {
    ASSERT_EQ(got.count(t), 1u) << t;
    EXPECT_EQ(got[t], frame_for(t));
  }
}

TEST(InputCodec, BatchesOutsideTheTickWindowAreRefused) {
  const kg::Layout l = sandbox_layout();
  kp::InputSender s(l);
  s.add(5000, frame_for(1));
  auto msg = s.build_batch(0, 0);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  const kp::fb::InputBatch& batch = *m->body_as_InputBatch();
  std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
  // At most kMaxAhead (120) ahead of the server's tick and kMaxBehind (256) behind it.
  EXPECT_EQ(kp::InputReceiver().receive(l, batch, 100, fresh), kp::DropReason::OutOfRange);
  EXPECT_EQ(kp::InputReceiver().receive(l, batch, 5000 - 121, fresh), kp::DropReason::OutOfRange);
  EXPECT_EQ(kp::InputReceiver().receive(l, batch, 5000 - 120, fresh), kp::DropReason::None);
  EXPECT_EQ(kp::InputReceiver().receive(l, batch, 5000 + 257, fresh), kp::DropReason::OutOfRange);
  EXPECT_EQ(kp::InputReceiver().receive(l, batch, 9000, fresh), kp::DropReason::OutOfRange);
  kp::InputReceiver r;
  EXPECT_EQ(r.receive(l, batch, 5000 + 256, fresh), kp::DropReason::None);
  EXPECT_EQ(fresh.size(), 1u);
  // The same layout decodes it, and another refuses it: 35 bits are not one frame of a
  // one-bool layout.
  kg::Layout other;
  other.add_bool("b");
  EXPECT_EQ(kp::InputReceiver().receive(other, batch, 5000, fresh), kp::DropReason::MalformedPayload);
}

TEST(InputCodec, DuplicatesAndOverlapsDeliverEachTickOnce) {
  const kg::Layout l = sandbox_layout();
  auto batch_of = [&](uint64_t first, uint64_t count) {
    kp::InputSender s(l);
    for (uint64_t t = first; t < first + count; ++t) s.add(t, frame_for(t));
    return s.build_batch(0, 0);
  };
  kp::InputReceiver r;
  std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
  auto receive = [&](const std::vector<uint8_t>& msg) {
    const kp::fb::Message* m = nullptr;
    EXPECT_EQ(kp::check_message(msg, m), kp::DropReason::None);
    return r.receive(l, *m->body_as_InputBatch(), 100, fresh);
  };
  const std::vector<uint8_t> first = batch_of(100, 4);
  ASSERT_EQ(receive(first), kp::DropReason::None);
  EXPECT_EQ(fresh.size(), 4u);
  EXPECT_EQ(r.ack_tick(), 103u);
  EXPECT_EQ(receive(first), kp::DropReason::Duplicate);
  EXPECT_TRUE(fresh.empty());
  EXPECT_EQ(receive(batch_of(90, 6)), kp::DropReason::Duplicate);  // 90 .. 95: all older
  ASSERT_EQ(receive(batch_of(102, 4)), kp::DropReason::None);      // 102 .. 105: two new
  ASSERT_EQ(fresh.size(), 2u);
  EXPECT_EQ(fresh[0].first, 104u);
  EXPECT_EQ(fresh[1].first, 105u);
  EXPECT_EQ(fresh[1].second.frame, frame_for(105));
  EXPECT_EQ(r.ack_tick(), 105u);
}

TEST(InputCodec, TheSenderKeepsAWindowOfUnackedFrames) {
  const kg::Layout l = sandbox_layout();
  kp::InputSender s(l);
  EXPECT_TRUE(s.build_batch(0, 0).empty());
  for (uint64_t t = 1000; t < 1070; ++t) s.add(t, frame_for(t));
  EXPECT_EQ(s.pending(), 64u);  // the six oldest were given up
  auto first_tick = [&] {
    const std::vector<uint8_t> msg = s.build_batch(7, 8);
    const kp::fb::Message* m = nullptr;
    EXPECT_EQ(kp::check_message(msg, m), kp::DropReason::None);
    EXPECT_EQ(m->body_as_InputBatch()->ack_snapshot_tick(), 7u);
    EXPECT_EQ(m->body_as_InputBatch()->ack_input_frame_tick(), 8u);
    EXPECT_EQ(m->body_as_InputBatch()->count(), s.pending());
    return m->body_as_InputBatch()->first_tick();
  };
  EXPECT_EQ(first_tick(), 1006u);
  s.on_ack(1010);
  EXPECT_EQ(s.pending(), 59u);
  EXPECT_EQ(first_tick(), 1011u);
  s.on_ack(1005);  // an old ack changes nothing
  EXPECT_EQ(s.pending(), 59u);
  s.on_ack(2000);
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_TRUE(s.build_batch(0, 0).empty());
  s.add(2001, frame_for(2001));
  EXPECT_EQ(first_tick(), 2001u);
}

TEST(FrameWindow, EveryServerFrameArrivesOnceOverALossyLink) {
  const kg::Layout l = sandbox_layout();
  kp::LinkSimulator down({30, 10, 0.3, 0.1, 0.2, 8}), up({30, 10, 0.3, 0.1, 0.2, 9});
  kp::FrameWindow window(l);
  kp::FrameReceiver receiver(50);
  std::map<uint64_t, kp::InputFrameMessage> got;
  auto frame = [](uint64_t t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = t * 0x9e3779b97f4a7c15ull;
    f.inputs.inputs = {{1, frame_for(t)}, {4, {}}};
    return f;
  };
  for (uint64_t t = 50; t < 650; ++t) {
    double now = double(t) / 60.0;
    window.add(frame(t));
    for (const auto& m : window.messages()) down.send(m, now);
    for (auto& d : down.receive(now)) {
      const kp::fb::Message* m = nullptr;
      ASSERT_EQ(kp::check_message(d, m), kp::DropReason::None);
      std::vector<kp::InputFrameMessage> run;
      ASSERT_EQ(kp::decode_input_frame_run(l, *m->body_as_ServerInputFrameRun(), run), kp::DropReason::None);
      for (const kp::InputFrameMessage& f : run) {
        if (receiver.receive(f) == kp::DropReason::None) {
          EXPECT_EQ(got.count(f.tick), 0u);
          got[f.tick] = f;
        }
      }
    }
    std::vector<uint8_t> ack(8);
    for (int i = 0; i < 8; ++i) ack[i] = uint8_t(receiver.ack_tick() >> (8 * i));
    up.send(ack, now);
    for (auto& d : up.receive(now)) {
      uint64_t a = 0;
      for (int i = 0; i < 8; ++i) a |= uint64_t(d[i]) << (8 * i);
      window.on_ack(a);
    }
    EXPECT_LE(window.messages().size(), kp::FrameWindow::kMaxFrames);
  }
  for (uint64_t t = 50; t < 630; ++t) {
    ASSERT_EQ(got.count(t), 1u) << t;
    EXPECT_EQ(got[t].state_hash, frame(t).state_hash);
    EXPECT_EQ(got[t].inputs, frame(t).inputs);
  }
}
