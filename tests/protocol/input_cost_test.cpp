// The sandbox's input declared as a layout (stick 127 steps, angle 16 bits, buttons
// jump and fire) costs no more bits a tick than protocol 1's fixed input frame did.
//
// Protocol 1 sent QuantInput { move_x:int8, move_z:int8, yaw:uint16, buttons:uint8 }:
// in full 8 + 8 + 16 + 8 = 40 bits; as a change `same:1`, or `0` then move_changed:1
// [golomb dx, golomb dz], yaw_changed:1 [golomb dyaw the short way], buttons_changed:1
// [buttons:8]. Its writer is reproduced below as it was, and both codecs are driven with
// the same input streams: the moves and turns cost the same bits in both (the same steps,
// the same exp-Golomb codes), so the layout saves exactly the 6 unused button bits
// whenever the buttons go in full, and nothing else differs.
#include "input_layouts.h"

#include <keel/protocol/input_codec.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace kp = keel::protocol;
namespace kg = keel::game;
using namespace keel::protocol::test;

namespace {

// --- protocol 1's input codec (its input_bits.h and input_codec.cpp) -------------------
struct OldInput {
  int8_t move_x = 0;   // -127 .. 127
  int8_t move_z = 0;
  uint16_t yaw = 0;    // yaw = -pi + yaw * 2pi / 65536
  uint8_t buttons = 0;
  friend bool operator==(const OldInput&, const OldInput&) = default;
};

void old_write_full(kp::BitWriter& w, const OldInput& f) {
  w.write_bits(static_cast<uint8_t>(f.move_x), 8);
  w.write_bits(static_cast<uint8_t>(f.move_z), 8);
  w.write_bits(f.yaw, 16);
  w.write_bits(f.buttons, 8);
}

void old_write_change(kp::BitWriter& w, const OldInput& p, const OldInput& f) {
  w.write_bool(f == p);
  if (f == p) return;
  bool move = f.move_x != p.move_x || f.move_z != p.move_z;
  w.write_bool(move);
  if (move) {
    w.write_golomb(int{f.move_x} - p.move_x);
    w.write_golomb(int{f.move_z} - p.move_z);
  }
  w.write_bool(f.yaw != p.yaw);
  if (f.yaw != p.yaw) w.write_golomb(static_cast<int16_t>(static_cast<uint16_t>(f.yaw - p.yaw)));
  w.write_bool(f.buttons != p.buttons);
  if (f.buttons != p.buttons) w.write_bits(f.buttons, 8);
}
// ------------------------------------------------------------------------------------------

/// One tick of a stream in steps: the stick (x, z) in 1/127 steps, yaw in 2pi/65536 steps
/// with 0 looking along -Z (the layout's code), buttons bit 0 jump and bit 1 fire (the
/// same bits in both protocols).
struct Step {
  int x = 0, z = 0;
  uint32_t yaw = 0;
  uint32_t buttons = 0;
};

bool in_disc(int x, int z) { return x * x + z * z <= 127 * 127 + 2 * 127; }

OldInput to_old(const Step& s) {
  // Protocol 1's yaw code 0 was -pi: the layout's code plus half a turn.
  return OldInput{int8_t(s.x), int8_t(s.z), uint16_t((s.yaw + 32768u) & 0xffffu), uint8_t(s.buttons)};
}

kg::Values to_new(const kg::Layout& l, const Step& s) {
  kg::Values v;
  v.code[l.first_component(kMove)] = l.field(kMove).code_of(0, s.x);
  v.code[l.first_component(kMove) + 1] = l.field(kMove).code_of(1, s.z);
  v.code[l.first_component(kYaw)] = s.yaw;
  l.set_buttons(v, kButtons, s.buttons);
  EXPECT_TRUE(l.valid(v));
  return v;
}

Step random_step(Rng& rng) {
  Step s;
  do {
    s.x = int(rng.below(255)) - 127;
    s.z = int(rng.below(255)) - 127;
  } while (!in_disc(s.x, s.z));
  s.yaw = rng.below(65536);
  s.buttons = rng.below(4);
  return s;
}

int toward(int from, int to, int most) { return from + std::clamp(to - from, -most, most); }

/// A scripted bot: a new stick target every 1.5 s (a fifth of them standing still),
/// reached 6 steps a tick; a turn rate of up to 160 steps a tick (a turn in 6.8 s) held
/// for a second, a fifth of them not turning; a jump tap every 1.5 s, fire held 6 ticks
/// every 2 s; and every other 10 s, 2 s when nothing changes at all.
std::vector<Step> bot_stream(uint32_t ticks) {
  Rng rng{2024};
  std::vector<Step> out;
  Step s, target;
  int turn = 0;
  for (uint32_t t = 0; t < ticks; ++t) {
    if ((t / 600) % 2 == 1 && t % 600 < 120) {
      out.push_back(s);
      continue;
    }
    if (t % 90 == 0) target = rng.below(5) == 0 ? Step{} : random_step(rng);
    if (t % 60 == 0) turn = rng.below(5) == 0 ? 0 : int(rng.below(321)) - 160;
    Step next = s;
    next.x = toward(s.x, target.x, 6);
    next.z = toward(s.z, target.z, 6);
    if (!in_disc(next.x, next.z)) next.x = s.x, next.z = s.z;
    next.yaw = uint32_t(int64_t(s.yaw) + turn) & 0xffffu;
    next.buttons = (t % 90 == 45 ? 1u : 0u) | (t % 120 < 6 ? 2u : 0u);
    s = next;
    out.push_back(s);
  }
  return out;
}

std::vector<Step> random_stream(uint32_t ticks) {
  Rng rng{99};
  std::vector<Step> out;
  for (uint32_t t = 0; t < ticks; ++t) out.push_back(random_step(rng));
  return out;
}

std::vector<Step> held_stream(uint32_t ticks) { return std::vector<Step>(ticks, Step{90, -64, 12345, 0}); }

/// Stick and yaw held, the buttons a different mask every tick (none, jump, both, fire).
std::vector<Step> buttons_stream(uint32_t ticks) {
  constexpr uint32_t kMasks[4] = {0, 1, 3, 2};
  std::vector<Step> out;
  for (uint32_t t = 0; t < ticks; ++t) out.push_back(Step{0, 127, 40000, kMasks[t % 4]});
  return out;
}

struct Cost {
  uint64_t old_bits = 0, new_bits = 0;
};

// Both codecs on one stream: the first frame in full, each later one as a change against
// the one before (a batch of the whole stream). Every frame's bits are compared.
Cost measure(const std::vector<Step>& stream) {
  const kg::Layout l = sandbox_layout();
  Cost total;
  OldInput old_prev;
  kg::Values new_prev;
  for (size_t i = 0; i < stream.size(); ++i) {
    const OldInput o = to_old(stream[i]);
    const kg::Values v = to_new(l, stream[i]);
    kp::BitWriter ow, nw;
    if (i == 0) {
      old_write_full(ow, o);
      kp::write_values(nw, l, v);
    } else {
      old_write_change(ow, old_prev, o);
      kp::write_values_change(nw, l, new_prev, v);
    }
    EXPECT_LE(nw.bit_count(), ow.bit_count()) << "frame " << i;
    // Buttons in full are 2 bits instead of 8; every other piece costs the same.
    const bool buttons_in_full = i == 0 || o.buttons != old_prev.buttons;
    EXPECT_EQ(nw.bit_count() + (buttons_in_full ? 6 : 0), ow.bit_count()) << "frame " << i;
    total.old_bits += ow.bit_count();
    total.new_bits += nw.bit_count();
    old_prev = o;
    new_prev = v;
  }
  // The frames measured are valid and decode back, in batches as a client sends them.
  for (size_t at = 0; at < stream.size(); at += kp::MessageLimits::kMaxInputWindow) {
    std::vector<kg::InputFrame> batch, back;
    for (size_t i = at; i < std::min(stream.size(), at + kp::MessageLimits::kMaxInputWindow); ++i) {
      batch.push_back(to_new(l, stream[i]));
    }
    EXPECT_EQ(kp::decode_inputs(l, kp::encode_inputs(l, batch), uint32_t(batch.size()), back), kp::DropReason::None);
    EXPECT_EQ(back, batch);
  }
  return total;
}

void print(const char* name, size_t ticks, const Cost& c) {
  std::cout << std::fixed << std::setprecision(3) << "input cost, " << name << " (" << ticks
            << " ticks): protocol 1 " << c.old_bits << " bits, " << double(c.old_bits) / double(ticks)
            << " bits/tick; layout " << c.new_bits << " bits, " << double(c.new_bits) / double(ticks)
            << " bits/tick\n";
}

constexpr uint32_t kTicks = 3600;  // a minute at 60 Hz

}  // namespace

TEST(InputCost, ScriptedBotCostsNoMoreThanProtocol1) {
  const std::vector<Step> stream = bot_stream(kTicks);
  const Cost c = measure(stream);
  print("scripted bot", stream.size(), c);
  EXPECT_LT(c.new_bits, c.old_bits);
}

TEST(InputCost, RandomFramesCostNoMoreThanProtocol1) {
  const std::vector<Step> stream = random_stream(kTicks);
  const Cost c = measure(stream);
  print("random frames", stream.size(), c);
  EXPECT_LT(c.new_bits, c.old_bits);
}

TEST(InputCost, AHeldStickCostsOneBitATickInBoth) {
  const std::vector<Step> stream = held_stream(kTicks);
  const Cost c = measure(stream);
  print("held stick", stream.size(), c);
  // The first frame in full, then `same:1` a tick.
  EXPECT_EQ(c.old_bits, 40u + (kTicks - 1));
  EXPECT_EQ(c.new_bits, 34u + (kTicks - 1));
}

TEST(InputCost, ButtonOnlyChangesCostHalfOfProtocol1) {
  const std::vector<Step> stream = buttons_stream(kTicks);
  const Cost c = measure(stream);
  print("buttons only", stream.size(), c);
  // Every tick: same 0, move 0, yaw 0, buttons 1 + the mask: 8 bits then, 2 now.
  EXPECT_EQ(c.old_bits, 40u + (kTicks - 1) * (4 + 8));
  EXPECT_EQ(c.new_bits, 34u + (kTicks - 1) * (4 + 2));
}
