// The input codec: quantisation is idempotent and sanitised, batches round-trip exactly,
// forged frames are refused, and over a lossy link every input reaches the server once.
#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/link_sim.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

namespace kp = keel::protocol;
namespace ks = keel::sim;

namespace {

kp::QuantInput frame_for(uint64_t tick) {
  ks::InputFrame f;
  f.move_x = float(std::sin(tick * 0.05));
  f.move_z = (tick / 20) % 2 ? 0.6f : -0.3f;
  f.look_yaw = float(std::fmod(tick * 0.01, 6.0) - 3.0);
  f.buttons = (tick % 30 == 0) ? uint32_t{ks::kButtonFire} : 0u;
  return kp::quantize_input(f);
}

}  // namespace

TEST(InputCodec, QuantisationIsSanitisedAndIdempotent) {
  ks::InputFrame wild{3.0f, 4.0f, 100.0f, 0xffffffffu};
  auto q = kp::quantize_input(wild);
  ks::InputFrame back = kp::dequantize_input(q);
  EXPECT_LE(back.move_x * back.move_x + back.move_z * back.move_z, 1.0f + 2.0f / 127);
  EXPECT_EQ(back.buttons, ks::kKnownButtons);
  EXPECT_EQ(kp::quantize_input(back), q);  // applying the quantised frame is stable
  ks::InputFrame nan{std::numeric_limits<float>::quiet_NaN(), 0, 0, 0};
  EXPECT_EQ(kp::quantize_input(nan).move_x, 0);
  for (float yaw : {-3.14159f, -1.0f, 0.0f, 1.0f, 3.14159f}) {
    auto y = kp::dequantize_input(kp::quantize_input({0, 0, yaw, 0})).look_yaw;
    double d = std::fabs(std::remainder(double(y) - yaw, 2 * M_PI));
    EXPECT_LT(d, 2 * M_PI / 65536) << yaw;
  }
}

TEST(InputCodec, BatchRoundTripAndRejections) {
  std::vector<kp::QuantInput> frames;
  for (uint64_t t = 0; t < 64; ++t) frames.push_back(frame_for(t));
  auto bytes = kp::encode_inputs(frames);
  // Below the 5 bytes of a full frame although every frame changes: steering and
  // turning change by small steps.
  EXPECT_LT(bytes.size(), 64u * 4);
  std::vector<kp::QuantInput> back;
  ASSERT_EQ(kp::decode_inputs(bytes, 64, back), kp::DropReason::None);
  EXPECT_EQ(back, frames);
  EXPECT_NE(kp::decode_inputs(bytes, 65, back), kp::DropReason::None);  // over the window
  EXPECT_NE(kp::decode_inputs(bytes, 0, back), kp::DropReason::None);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_NE(kp::decode_inputs(std::span(bytes).first(n), 64, back), kp::DropReason::None);
  }
  kp::QuantInput forged{127, 127, 0, 0};  // length sqrt(2)
  EXPECT_EQ(kp::decode_inputs(kp::encode_inputs(std::span(&forged, 1)), 1, back),
            kp::DropReason::OutOfRange);
  kp::QuantInput buttons{0, 0, 0, 0x80};
  EXPECT_EQ(kp::decode_inputs(kp::encode_inputs(std::span(&buttons, 1)), 1, back),
            kp::DropReason::OutOfRange);
}

TEST(InputCodec, EveryInputArrivesOnceOverALossyLink) {
  kp::LinkSimulator up({30, 10, 0.3, 0.1, 0.2, 5}), down({30, 10, 0.3, 0.1, 0.2, 6});
  kp::InputSender sender;
  kp::InputReceiver receiver;
  std::map<uint64_t, kp::QuantInput> got;
  const uint64_t kStart = 1000;
  for (uint64_t t = kStart; t < kStart + 600; ++t) {
    double now = double(t) / 60.0;
    sender.add(t, frame_for(t));
    up.send(sender.build_batch(0, 0), now);
    for (auto& d : up.receive(now)) {
      const kp::fb::Message* m = nullptr;
      ASSERT_EQ(kp::check_message(d, m), kp::DropReason::None);
      std::vector<std::pair<uint64_t, kp::QuantInput>> fresh;
      auto r = receiver.receive(*m->body_as_InputBatch(), t, fresh);
      ASSERT_TRUE(r == kp::DropReason::None || r == kp::DropReason::Duplicate);
      for (auto& [tick, f] : fresh) {
        EXPECT_EQ(got.count(tick), 0u) << "delivered twice: " << tick;
        got[tick] = f;
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
  kp::InputSender s;
  s.add(5000, frame_for(1));
  auto msg = s.build_batch(0, 0);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  kp::InputReceiver r;
  std::vector<std::pair<uint64_t, kp::QuantInput>> fresh;
  EXPECT_EQ(r.receive(*m->body_as_InputBatch(), 100, fresh), kp::DropReason::OutOfRange);
  EXPECT_EQ(r.receive(*m->body_as_InputBatch(), 9000, fresh), kp::DropReason::OutOfRange);
  EXPECT_EQ(r.receive(*m->body_as_InputBatch(), 5000, fresh), kp::DropReason::None);
  EXPECT_EQ(fresh.size(), 1u);
}

TEST(FrameWindow, EveryServerFrameArrivesOnceOverALossyLink) {
  kp::LinkSimulator down({30, 10, 0.3, 0.1, 0.2, 8}), up({30, 10, 0.3, 0.1, 0.2, 9});
  kp::FrameWindow window;
  kp::FrameReceiver receiver(50);
  std::map<uint64_t, kp::InputFrameMessage> got;
  auto frame = [](uint64_t t) {
    kp::InputFrameMessage f;
    f.tick = t;
    f.state_hash = t * 0x9e3779b97f4a7c15ull;
    f.inputs.inputs = {{1, kp::dequantize_input(frame_for(t))}, {4, {}}};
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
      ASSERT_EQ(kp::decode_input_frame_run(*m->body_as_ServerInputFrameRun(), run), kp::DropReason::None);
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
