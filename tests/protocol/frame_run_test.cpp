// Input frame runs (server -> predicting clients): frames round-trip bit for bit whether
// their inputs are quantised or arbitrary floats, a steady player costs a few bits a tick
// (sizes computed by hand from the layout in frame_run.cpp), hostile payloads are refused,
// and the window cuts runs so that no message needs fragmenting.
#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

bool same_bits(const ks::InputFrame& a, const ks::InputFrame& b) {
  return std::memcmp(&a.move_x, &b.move_x, 4) == 0 && std::memcmp(&a.move_z, &b.move_z, 4) == 0 &&
         std::memcmp(&a.look_yaw, &b.look_yaw, 4) == 0 && a.buttons == b.buttons;
}

void expect_same(const std::vector<kp::InputFrameMessage>& got, const std::vector<kp::InputFrameMessage>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].tick, want[k].tick);
    EXPECT_EQ(got[k].state_hash, want[k].state_hash);
    EXPECT_EQ(got[k].inputs.events, want[k].inputs.events);
    ASSERT_EQ(got[k].inputs.inputs.size(), want[k].inputs.inputs.size()) << k;
    for (size_t i = 0; i < want[k].inputs.inputs.size(); ++i) {
      EXPECT_EQ(got[k].inputs.inputs[i].player, want[k].inputs.inputs[i].player);
      EXPECT_TRUE(same_bits(got[k].inputs.inputs[i].frame, want[k].inputs.inputs[i].frame)) << k << " " << i;
    }
  }
}

// True when the message is refused, at the check or at the decode.
bool refused(const std::vector<uint8_t>& message) {
  const kp::fb::Message* m = nullptr;
  std::vector<kp::InputFrameMessage> out;
  return kp::check_message(message, m) != kp::DropReason::None ||
         kp::decode_input_frame_run(*m->body_as_ServerInputFrameRun(), out) != kp::DropReason::None;
}

std::vector<kp::InputFrameMessage> decode(const std::vector<uint8_t>& message, kp::DropReason expect = kp::DropReason::None) {
  const kp::fb::Message* m = nullptr;
  std::vector<kp::InputFrameMessage> out;
  kp::DropReason r = kp::check_message(message, m);
  EXPECT_EQ(r, expect);
  if (r == kp::DropReason::None) {
    EXPECT_EQ(kp::decode_input_frame_run(*m->body_as_ServerInputFrameRun(), out), expect);
  }
  return out;
}

// A run message with a hand-made payload.
std::vector<uint8_t> run_message(uint64_t first_tick, uint16_t count, const std::vector<uint8_t>& payload) {
  flatbuffers::FlatBufferBuilder fbb;
  auto body = kp::fb::CreateServerInputFrameRunDirect(fbb, first_tick, count, &payload);
  return kp::finish_message(fbb, kp::fb::Body::ServerInputFrameRun, body.Union());
}

kp::InputFrameMessage steady_frame(uint64_t tick, int players) {
  kp::InputFrameMessage f;
  f.tick = tick;
  f.state_hash = tick * 0x9e3779b97f4a7c15ull;
  for (int p = 1; p <= players; ++p) {
    f.inputs.inputs.push_back({uint32_t(p * 3), kp::dequantize_input(kp::quantize_input({0.5f, -0.25f, 1.0f, 0}))});
  }
  return f;
}

}  // namespace

TEST(FrameRun, QuantisedRawAndChangingPlayersRoundTripBitForBit) {
  std::vector<kp::InputFrameMessage> frames;
  for (uint64_t t = 100; t < 120; ++t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = ~t * 0x2545f4914f6cdd1dull;
    if (t == 105) f.inputs.events = {{ks::PlayerEvent::Kind::Join, 9}};
    if (t == 112) f.inputs.events = {{ks::PlayerEvent::Kind::Leave, 2}, {ks::PlayerEvent::Kind::Join, 11}};
    if (t < 112) f.inputs.inputs.push_back({2, kp::dequantize_input(kp::quantize_input({0.1f * float(t % 7), 0.2f, 0.01f * t, 1}))});
    if (t >= 105) f.inputs.inputs.push_back({9, {1.0f / 3.0f, -0.0f, 0.123456f, 0xabcu}});  // not a quantised frame
    if (t >= 108 && t < 110) f.inputs.inputs.push_back({10, {0.25f + float(t), 0.0f, -2.0f, 7}});
    if (t >= 112) f.inputs.inputs.push_back({11, {}});
    frames.push_back(f);
  }
  expect_same(decode(kp::encode_input_frame_run(frames)), frames);
}

TEST(FrameRun, SteadyPlayersCostThreeBitsEachAfterTheFirstTick) {
  std::vector<kp::InputFrameMessage> frames;
  for (uint64_t t = 0; t < 8; ++t) frames.push_back(steady_frame(1000 + t, 4));
  std::vector<uint8_t> message = kp::encode_input_frame_run(frames);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(message, m), kp::DropReason::None);
  // Per frame: hash 64 + event count 10 (0..512) + input count 9 (0..256) bits. First
  // frame, per player: id 32 + quantised 1 + full 40; later: same player 1 + quantised 1
  // + unchanged 1. (64+19+4*73) + 7*(64+19+4*3) = 375 + 665 = 1040 bits = 130 bytes.
  EXPECT_EQ(m->body_as_ServerInputFrameRun()->payload()->size(), 130u);
  // The same frames as ServerInputFrame messages, one each, as servers sent them before.
  size_t separate = 0;
  for (const auto& f : frames) separate += kp::encode_server_input_frame(f).size();
  EXPECT_GT(separate, 6 * message.size()) << separate << " vs " << message.size();
  expect_same(decode(message), frames);
}

TEST(FrameRun, EveryQuantisedInputIsRecognisedAfterDequantising) {
  // A frame is sent in its 40-bit form only when quantise(dequantise(q)) gives q back;
  // this holds for every move vector inside the unit disk and every yaw step. (The few
  // rounding-slack vectors just outside are shortened by sanitising: they go as floats.)
  for (int x = -127; x <= 127; ++x) {
    for (int z = -127; z <= 127; ++z) {
      if (x * x + z * z > 127 * 127 - 127) continue;
      kp::QuantInput q{int8_t(x), int8_t(z), uint16_t((x + 128) * 257), uint8_t(ks::kButtonFire)};
      ASSERT_EQ(kp::quantize_input(kp::dequantize_input(q)), q) << x << " " << z;
    }
  }
  for (uint32_t yaw = 0; yaw < 65536; ++yaw) {
    kp::QuantInput q{0, 0, uint16_t(yaw), 0};
    ASSERT_EQ(kp::quantize_input(kp::dequantize_input(q)), q) << yaw;
  }
}

TEST(FrameRun, HostilePayloadsAreRefused) {
  std::vector<kp::InputFrameMessage> frames{steady_frame(7, 3), steady_frame(8, 3)};
  std::vector<uint8_t> good = kp::encode_input_frame_run(frames);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(good, m), kp::DropReason::None);
  const auto* p = m->body_as_ServerInputFrameRun()->payload();
  std::vector<uint8_t> payload(p->begin(), p->end());

  // Counts outside 1 .. kMaxFrames, and a run that would pass the last tick.
  decode(run_message(7, 0, payload), kp::DropReason::OutOfRange);
  decode(run_message(7, kp::FrameWindow::kMaxFrames + 1, payload), kp::DropReason::OutOfRange);
  decode(run_message(std::numeric_limits<uint64_t>::max(), 2, payload), kp::DropReason::OutOfRange);
  // More frames than the payload holds; a payload cut short; bytes left over.
  decode(run_message(7, 3, payload), kp::DropReason::MalformedPayload);
  EXPECT_TRUE(refused(run_message(7, 2, {payload.begin(), payload.end() - 2})));
  std::vector<uint8_t> longer = payload;
  longer.push_back(0xff);
  decode(run_message(7, 2, longer), kp::DropReason::MalformedPayload);
  // Player ids out of order.
  kp::InputFrameMessage unsorted = steady_frame(7, 3);
  std::swap(unsorted.inputs.inputs[0], unsorted.inputs.inputs[2]);
  decode(kp::encode_input_frame_run(std::vector{unsorted}), kp::DropReason::OutOfRange);
  // A raw float that is not finite (read_float refuses it).
  kp::InputFrameMessage nan = steady_frame(7, 1);
  nan.inputs.inputs[0].frame.move_x = std::numeric_limits<float>::quiet_NaN();
  decode(kp::encode_input_frame_run(std::vector{nan}), kp::DropReason::MalformedPayload);
  // Every truncation is refused; every single-bit flip is refused or decoded, never a crash.
  for (size_t n = 0; n < payload.size(); ++n) {
    EXPECT_TRUE(refused(run_message(7, 2, {payload.begin(), payload.begin() + long(n)}))) << n;
  }
  for (size_t bit = 0; bit < payload.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = payload;
    flipped[bit / 8] ^= uint8_t(1u << (bit % 8));
    const kp::fb::Message* fm = nullptr;
    std::vector<kp::InputFrameMessage> out;
    // The message must outlive fm, which points into it.
    const std::vector<uint8_t> message = run_message(7, 2, flipped);
    if (kp::check_message(message, fm) != kp::DropReason::None) continue;
    // Accepted by the check means decodable, into exactly the two frames of the run.
    ASSERT_EQ(kp::decode_input_frame_run(*fm->body_as_ServerInputFrameRun(), out), kp::DropReason::None);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].tick, 8u);
  }
}

TEST(FrameWindow, RunsAreCutBelowAPacketAndCoverEveryUnackedFrameOnce) {
  kp::FrameWindow window;
  std::vector<kp::InputFrameMessage> frames;
  for (uint64_t t = 500; t < 500 + kp::FrameWindow::kMaxFrames; ++t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = t;
    // 40 players whose raw float inputs change every tick: about 540 bytes a frame.
    for (uint32_t p = 1; p <= 40; ++p) f.inputs.inputs.push_back({p, {float(t) / 7.0f, float(p) / 9.0f, 0.5f, uint32_t(t)}});
    frames.push_back(f);
    window.add(f);
  }
  window.on_ack(509);  // the client holds 500 .. 509
  std::vector<kp::InputFrameMessage> got;
  for (const auto& message : window.messages()) {
    EXPECT_LE(message.size(), kp::FrameWindow::kRunBytes + 64);
    auto run = decode(message);
    got.insert(got.end(), run.begin(), run.end());
  }
  expect_same(got, {frames.begin() + 10, frames.end()});
  EXPECT_EQ(window.pending(), frames.size() - 10);
}
