// Input frame runs (server -> predicting clients): frames of any layout round-trip
// exactly, a steady player costs two bits a tick (sizes counted by hand from the layout
// in frame_run.cpp), hostile payloads are refused, and the window cuts runs so that no
// message needs fragmenting.
#include "input_layouts.h"

#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace kp = keel::protocol;
namespace kg = keel::game;
using namespace keel::protocol::test;

namespace {

void expect_same(const std::vector<kp::InputFrameMessage>& got, const std::vector<kp::InputFrameMessage>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].tick, want[k].tick);
    EXPECT_EQ(got[k].state_hash, want[k].state_hash);
    EXPECT_EQ(got[k].inputs, want[k].inputs) << k;
  }
}

// True when the message is refused, at the check or at the decode.
bool refused(const kg::Layout& l, const std::vector<uint8_t>& message) {
  const kp::fb::Message* m = nullptr;
  std::vector<kp::InputFrameMessage> out;
  return kp::check_message(message, m) != kp::DropReason::None ||
         kp::decode_input_frame_run(l, *m->body_as_ServerInputFrameRun(), out) != kp::DropReason::None;
}

// Checks and decodes a run; `expect` is the reason of whichever refuses it first.
std::vector<kp::InputFrameMessage> decode(const kg::Layout& l, const std::vector<uint8_t>& message,
                                          kp::DropReason expect = kp::DropReason::None) {
  const kp::fb::Message* m = nullptr;
  std::vector<kp::InputFrameMessage> out;
  kp::DropReason r = kp::check_message(message, m);
  if (r == kp::DropReason::None) r = kp::decode_input_frame_run(l, *m->body_as_ServerInputFrameRun(), out);
  EXPECT_EQ(r, expect);
  return out;
}

size_t payload_bytes(const std::vector<uint8_t>& message) {
  const kp::fb::Message* m = nullptr;
  EXPECT_EQ(kp::check_message(message, m), kp::DropReason::None);
  return m == nullptr ? 0 : m->body_as_ServerInputFrameRun()->payload()->size();
}

// A run message with a hand-made payload.
std::vector<uint8_t> run_message(uint64_t first_tick, uint16_t count, const std::vector<uint8_t>& payload) {
  flatbuffers::FlatBufferBuilder fbb;
  auto body = kp::fb::CreateServerInputFrameRunDirect(fbb, first_tick, count, &payload);
  return kp::finish_message(fbb, kp::fb::Body::ServerInputFrameRun, body.Union());
}

kg::InputFrame steady_input() {
  static const kg::Layout l = sandbox_layout();
  kg::InputFrame f;
  l.set_stick(f, kMove, 0.5f, -0.25f);
  l.set_angle(f, kYaw, 1.0f);
  return f;
}

kp::InputFrameMessage steady_frame(uint64_t tick, int players) {
  kp::InputFrameMessage f;
  f.tick = tick;
  f.state_hash = tick * 0x9e3779b97f4a7c15ull;
  for (int p = 1; p <= players; ++p) f.inputs.inputs.push_back({uint32_t(p * 3), steady_input()});
  return f;
}

TEST(FrameWindow, EachRunHoldsEveryFrameThatFitsAndAFrameTooBigForOneGoesAlone) {
  const kg::Layout l = sandbox_layout();
  Rng rng{5};
  for (uint32_t players : {40u, 128u}) {
    SCOPED_TRACE(players);
    kp::FrameWindow window(l);
    std::vector<kp::InputFrameMessage> frames;
    for (uint64_t t = 100; t < 130; ++t) {
      kp::InputFrameMessage f;
      f.tick = t;
      f.state_hash = t * 7;
      for (uint32_t p = 1; p <= players; ++p) f.inputs.inputs.push_back({p * 3, random_values(l, rng)});
      frames.push_back(f);
      window.add(f);
    }
    std::vector<kp::InputFrameMessage> got;
    size_t from = 0;
    for (const auto& message : window.messages()) {
      auto run = decode(l, message);
      ASSERT_FALSE(run.empty());
      // A run of more than one frame fits; the next frame would not have.
      if (run.size() > 1) EXPECT_LE(message.size(), kp::FrameWindow::kRunBytes);
      const size_t next = from + run.size();
      if (next < frames.size()) {
        std::span<const kp::InputFrameMessage> longer(frames.data() + from, run.size() + 1);
        EXPECT_GT(kp::encode_input_frame_run(l, longer).size(),
                  kp::FrameWindow::kRunBytes - kp::FrameWindow::kRunFramingBytes);
      }
      got.insert(got.end(), run.begin(), run.end());
      from = next;
    }
    expect_same(got, frames);
    // 128 players' first frame, in full, is more than a run's room: one frame a message.
    if (players == 128) EXPECT_EQ(window.messages().size(), frames.size());
  }
}

// The runs are kept between calls and only what changed is made again: after any mix of
// frames added and acks (cutting runs anywhere), the messages hold every unacknowledged
// frame once, in order, each run within kRunBytes unless it is one frame.
TEST(FrameWindow, KeptRunsCoverTheUnackedFramesAfterEveryAddAndAck) {
  const kg::Layout l = sandbox_layout();
  Rng rng{11};
  kp::FrameWindow window(l);
  std::vector<kp::InputFrameMessage> all;
  uint64_t acked = 0;
  for (uint64_t t = 1000; t < 1400; ++t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = t ^ 0x5a5a;
    const uint32_t players = 1 + static_cast<uint32_t>(rng.next() % 60);
    for (uint32_t p = 1; p <= players; ++p) f.inputs.inputs.push_back({p, random_values(l, rng)});
    all.push_back(f);
    window.add(f);
    if (rng.next() % 3 == 0) {
      acked = std::max<uint64_t>(acked, t - rng.next() % 20);
      window.on_ack(acked);
    }
    if (t % 7 != 0) continue;
    std::vector<kp::InputFrameMessage> got;
    for (const auto& message : window.messages()) {
      auto run = decode(l, message);
      ASSERT_FALSE(run.empty()) << t;
      if (run.size() > 1) EXPECT_LE(message.size(), kp::FrameWindow::kRunBytes) << t;
      got.insert(got.end(), run.begin(), run.end());
    }
    const uint64_t oldest = std::max<uint64_t>({acked + 1, t + 1 - kp::FrameWindow::kMaxFrames, 1000});
    std::vector<kp::InputFrameMessage> want(all.begin() + static_cast<std::ptrdiff_t>(oldest - 1000), all.end());
    expect_same(got, want);
    ASSERT_EQ(window.pending(), want.size()) << t;
  }
}

}  // namespace

TEST(FrameRun, EveryKindAndChangingPlayersRoundTrip) {
  const kg::Layout l = all_kinds_layout();
  Rng rng{7};
  std::vector<kp::InputFrameMessage> frames;
  kg::Values two;
  for (uint64_t t = 100; t < 120; ++t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = ~t * 0x2545f4914f6cdd1dull;
    if (t == 105) f.inputs.events = {{kg::PlayerEvent::Kind::Join, 9}};
    if (t == 112) f.inputs.events = {{kg::PlayerEvent::Kind::Leave, 2}, {kg::PlayerEvent::Kind::Join, 11}};
    // Player 2 changes every other tick, 9 every tick, 10 holds, 11 stays at zero.
    if (t % 2 == 0) two = random_values(l, rng);
    if (t < 112) f.inputs.inputs.push_back({2, two});
    if (t >= 105) f.inputs.inputs.push_back({9, random_values(l, rng)});
    if (t >= 108 && t < 110) f.inputs.inputs.push_back({10, random_values(l, rng)});
    if (t >= 112) f.inputs.inputs.push_back({11, {}});
    frames.push_back(f);
  }
  expect_same(decode(l, kp::encode_input_frame_run(l, frames)), frames);
}

TEST(FrameRun, SteadyPlayersCostTwoBitsEachAfterTheFirstTick) {
  const kg::Layout l = sandbox_layout();
  std::vector<kp::InputFrameMessage> frames;
  for (uint64_t t = 0; t < 8; ++t) frames.push_back(steady_frame(1000 + t, 4));
  std::vector<uint8_t> message = kp::encode_input_frame_run(l, frames);
  // Per frame: hash 64 + event count 10 (0..512) + input count 9 (0..256) bits. First
  // frame, per player: id 32 + full 34; later: same player 1 + unchanged 1.
  // (64+19+4*66) + 7*(64+19+4*2) = 347 + 637 = 984 bits = 123 bytes.
  EXPECT_EQ(payload_bytes(message), 123u);
  // Each frame as a run of its own: 347 bits, 44 bytes each.
  size_t separate = 0;
  for (const auto& f : frames) separate += payload_bytes(kp::encode_input_frame_run(l, std::span(&f, 1)));
  EXPECT_EQ(separate, 8u * 44);
  expect_same(decode(l, message), frames);
}

TEST(FrameRun, APlayerNewAtAPositionIsSentInFull) {
  const kg::Layout l = sandbox_layout();
  std::vector<kp::InputFrameMessage> frames{steady_frame(50, 2), steady_frame(51, 2)};
  frames[1].inputs.events = {{kg::PlayerEvent::Kind::Leave, 6}, {kg::PlayerEvent::Kind::Join, 9}};
  frames[1].inputs.inputs[1].player = 9;
  // 50: 64 + 10 + 9 + 2*(32 + 34) = 215. 51: 64 + 10 + 2*(kind 1 + id 32) + 9 + player 3
  // (same 1, unchanged 1) + player 9 (not the same 1, id 32, full 34) = 218. 433 bits.
  const std::vector<uint8_t> message = kp::encode_input_frame_run(l, frames);
  EXPECT_EQ(payload_bytes(message), 55u);
  expect_same(decode(l, message), frames);
}

TEST(FrameRun, ALayoutWithNoFieldsCarriesPlayersAndEvents) {
  const kg::Layout none;
  std::vector<kp::InputFrameMessage> frames;
  for (uint64_t t = 0; t < 4; ++t) {
    kp::InputFrameMessage f;
    f.tick = 70 + t;
    f.state_hash = t;
    f.inputs.inputs = {{1, {}}, {2, {}}, {5, {}}};
    frames.push_back(f);
  }
  // 64 + 10 + 9 + 3*32 = 179, then 3 * (64 + 10 + 9 + 3*(1 + 1)) = 267: 446 bits.
  const std::vector<uint8_t> message = kp::encode_input_frame_run(none, frames);
  EXPECT_EQ(payload_bytes(message), 56u);
  expect_same(decode(none, message), frames);
}

TEST(FrameRun, EverySandboxInputCodeIsCarried) {
  // Every stick position inside the disc, every yaw step and every button mask goes
  // through in full and as a change from the centre.
  const kg::Layout l = sandbox_layout();
  const kg::Field& move = l.field(kMove);
  uint32_t inside = 0;
  auto carry = [&](const kg::Values& v) {
    kp::BitWriter w;
    kp::write_values(w, l, v);
    kp::write_values_change(w, l, kg::Values{}, v);
    const std::vector<uint8_t> bytes = w.finish();
    kp::BitReader r(bytes);
    kg::Values a, b;
    return kp::read_values(r, l, a) && kp::read_values_change(r, l, kg::Values{}, b) && r.at_end() && a == v && b == v;
  };
  for (int x = -127; x <= 127; ++x) {
    for (int z = -127; z <= 127; ++z) {
      kg::Values v;
      v.code[0] = move.code_of(0, x);
      v.code[1] = move.code_of(1, z);
      if (!l.valid(v)) continue;
      ++inside;
      ASSERT_TRUE(carry(v)) << x << " " << z;
    }
  }
  EXPECT_GT(inside, 50000u);  // pi * 127^2 is about 50671
  for (uint32_t yaw = 0; yaw < 65536; ++yaw) {
    kg::Values v;
    v.code[2] = yaw;
    ASSERT_TRUE(carry(v)) << yaw;
  }
  for (uint32_t b = 0; b < 4; ++b) {
    kg::Values v;
    v.code[3] = b;
    ASSERT_TRUE(carry(v)) << b;
  }
}

TEST(FrameRun, HostilePayloadsAreRefused) {
  const kg::Layout l = sandbox_layout();
  std::vector<kp::InputFrameMessage> frames{steady_frame(7, 3), steady_frame(8, 3)};
  std::vector<uint8_t> good = kp::encode_input_frame_run(l, frames);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(good, m), kp::DropReason::None);
  const auto* p = m->body_as_ServerInputFrameRun()->payload();
  std::vector<uint8_t> payload(p->begin(), p->end());

  // Counts outside 1 .. kMaxFrames, and a run that would pass the last tick.
  decode(l, run_message(7, 0, payload), kp::DropReason::OutOfRange);
  decode(l, run_message(7, kp::FrameWindow::kMaxFrames + 1, payload), kp::DropReason::OutOfRange);
  decode(l, run_message(std::numeric_limits<uint64_t>::max(), 2, payload), kp::DropReason::OutOfRange);
  // More frames than the payload holds; a payload cut short; bytes left over.
  decode(l, run_message(7, 3, payload), kp::DropReason::MalformedPayload);
  EXPECT_TRUE(refused(l, run_message(7, 2, {payload.begin(), payload.end() - 2})));
  std::vector<uint8_t> longer = payload;
  longer.push_back(0xff);
  decode(l, run_message(7, 2, longer), kp::DropReason::MalformedPayload);
  // Player ids out of order, and one id twice.
  kp::InputFrameMessage unsorted = steady_frame(7, 3);
  std::swap(unsorted.inputs.inputs[0], unsorted.inputs.inputs[2]);
  decode(l, kp::encode_input_frame_run(l, std::vector{unsorted}), kp::DropReason::OutOfRange);
  kp::InputFrameMessage twice = steady_frame(7, 2);
  twice.inputs.inputs[1].player = twice.inputs.inputs[0].player;
  decode(l, kp::encode_input_frame_run(l, std::vector{twice}), kp::DropReason::OutOfRange);
  // An input out of its range: the stick at (127, 127), in full and, a tick later, as a
  // change from a valid one.
  kp::InputFrameMessage corner = steady_frame(7, 1);
  corner.inputs.inputs[0].frame.code[0] = l.field(kMove).code_of(0, 127);
  corner.inputs.inputs[0].frame.code[1] = l.field(kMove).code_of(1, 127);
  decode(l, kp::encode_input_frame_run(l, std::vector{corner}), kp::DropReason::OutOfRange);
  decode(l, kp::encode_input_frame_run(l, std::vector{steady_frame(6, 1), corner}), kp::DropReason::OutOfRange);
  // The run read against another game's layout: refused, not misread.
  const kg::Layout kinds = all_kinds_layout();
  EXPECT_TRUE(refused(kinds, good));
  // Every truncation is refused; every single-bit flip is refused or decoded, never a crash.
  for (size_t n = 0; n < payload.size(); ++n) {
    EXPECT_TRUE(refused(l, run_message(7, 2, {payload.begin(), payload.begin() + long(n)}))) << n;
  }
  for (size_t bit = 0; bit < payload.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = payload;
    flipped[bit / 8] ^= uint8_t(1u << (bit % 8));
    const kp::fb::Message* fm = nullptr;
    std::vector<kp::InputFrameMessage> out;
    // The message must outlive fm, which points into it.
    const std::vector<uint8_t> message = run_message(7, 2, flipped);
    ASSERT_EQ(kp::check_message(message, fm), kp::DropReason::None);
    if (kp::decode_input_frame_run(l, *fm->body_as_ServerInputFrameRun(), out) != kp::DropReason::None) continue;
    // Decoded means exactly the two frames of the run, every input valid.
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].tick, 8u);
    for (const auto& f : out) {
      for (const auto& in : f.inputs.inputs) EXPECT_TRUE(l.valid(in.frame)) << bit;
    }
  }
}

TEST(FrameWindow, RunsAreCutBelowAPacketAndCoverEveryUnackedFrameOnce) {
  const kg::Layout l = sandbox_layout();
  kp::FrameWindow window(l);
  Rng rng{3};
  std::vector<kp::InputFrameMessage> frames;
  for (uint64_t t = 500; t < 500 + kp::FrameWindow::kMaxFrames; ++t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = t;
    // 40 players whose inputs jump anywhere every tick: about 350 bytes a frame.
    for (uint32_t p = 1; p <= 40; ++p) f.inputs.inputs.push_back({p, random_values(l, rng)});
    frames.push_back(f);
    window.add(f);
  }
  window.on_ack(509);  // the client holds 500 .. 509
  std::vector<kp::InputFrameMessage> got;
  EXPECT_GT(window.messages().size(), 20u);
  for (const auto& message : window.messages()) {
    EXPECT_LE(message.size(), kp::FrameWindow::kRunBytes + 64);
    auto run = decode(l, message);
    got.insert(got.end(), run.begin(), run.end());
  }
  expect_same(got, {frames.begin() + 10, frames.end()});
  EXPECT_EQ(window.pending(), frames.size() - 10);
}
