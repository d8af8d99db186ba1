// View stamps on the wire (lag compensation): a client's view travels with each input in
// an InputBatch, the server clamps it (the future is the present, nothing older than any
// game's history), and the frame stream gives predicting clients every input's view as
// the match was given it. Games that never send a view pay nothing on either path.
#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>

#include <gtest/gtest.h>

namespace kp = keel::protocol;
namespace kg = keel::game;

namespace {

kg::Layout aim_layout() {
  kg::Layout l;
  l.add_fixed("aim_x", -50.0f, 50.0f, 0.01f);
  l.add_bool("fire");
  return l;
}

std::vector<std::pair<uint64_t, kg::PlayerInput>> send_and_receive(kp::InputSender& sender, uint64_t server_tick,
                                                                   kp::InputReceiver& receiver) {
  const std::vector<uint8_t> msg = sender.build_batch(0, 0);
  const kp::fb::Message* m = nullptr;
  EXPECT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
  EXPECT_EQ(receiver.receive(sender.layout(), *m->body_as_InputBatch(), server_tick, fresh), kp::DropReason::None);
  return fresh;
}

TEST(ViewStamps, AClientsViewTravelsWithItsInputAndIsClampedByTheServer) {
  const kg::Layout l = aim_layout();
  kp::InputSender sender(l);
  kg::InputFrame f;
  l.set_bool(f, 1, true);
  // 100 ms behind at 60 Hz, half way to the next tick; the same again; one from the
  // future (rendering ahead of the frame's tick); one older than any game's history.
  sender.add(200, f, kp::WireView{6, 128});
  sender.add(201, f, kp::WireView{6, 128});
  sender.add(202, f, kp::WireView{-3, 40});
  sender.add(203, f, kp::WireView{5000, 9});
  sender.add(204, f, kp::WireView{0, 77});
  kp::InputReceiver receiver;
  auto fresh = send_and_receive(sender, 200, receiver);
  ASSERT_EQ(fresh.size(), 5u);
  EXPECT_EQ(fresh[0].second.view, (kg::ViewStamp{6, 128}));
  EXPECT_EQ(fresh[1].second.view, (kg::ViewStamp{6, 128}));
  EXPECT_EQ(fresh[2].second.view, (kg::ViewStamp{0, 0}));                        // the future: the present
  EXPECT_EQ(fresh[3].second.view, (kg::ViewStamp{kg::kMaxPoseHistoryTicks, 9}));  // no older than 4 s
  EXPECT_EQ(fresh[4].second.view, (kg::ViewStamp{0, 0}));                        // the present has no fraction
  EXPECT_EQ(receiver.views_clamped(), 3u);
  EXPECT_EQ(fresh[0].second.frame, f);
}

TEST(ViewStamps, ViewsCostNothingWhenAbsentAndAFewBitsWhenHeld) {
  const kg::Layout l = aim_layout();
  kp::InputSender plain(l), viewing(l);
  for (uint64_t t = 0; t < 10; ++t) {
    plain.add(t, {});
    viewing.add(t, {}, kp::WireView{6, 128});
  }
  const auto a = plain.build_batch(0, 0), b = viewing.build_batch(0, 0);
  const kp::fb::Message *ma = nullptr, *mb = nullptr;
  ASSERT_EQ(kp::check_message(a, ma), kp::DropReason::None);
  ASSERT_EQ(kp::check_message(b, mb), kp::DropReason::None);
  EXPECT_EQ(ma->body_as_InputBatch()->views(), nullptr);
  // The first view in full (1 + golomb(6) = 7 bits + 8), then one bit for each repeat.
  ASSERT_NE(mb->body_as_InputBatch()->views(), nullptr);
  EXPECT_EQ(mb->body_as_InputBatch()->views()->size(), 4u);  // 1 + 7 + 8 + 9 = 25 bits
}

TEST(ViewStamps, TruncatedOrOverlongViewsAreRefused) {
  std::vector<kp::WireView> views = {{6, 128}, {7, 0}, {7, 0}};
  const std::vector<uint8_t> bits = kp::encode_views(views);
  std::vector<kp::WireView> out;
  ASSERT_EQ(kp::decode_views(bits, 3, out), kp::DropReason::None);
  EXPECT_EQ(out, views);
  EXPECT_EQ(kp::decode_views({bits.data(), bits.size() - 1}, 3, out), kp::DropReason::MalformedPayload);
  std::vector<uint8_t> longer = bits;
  longer.push_back(0);
  EXPECT_EQ(kp::decode_views(longer, 3, out), kp::DropReason::MalformedPayload);
  EXPECT_EQ(kp::decode_views({}, 3, out), kp::DropReason::None);  // absent: the present
  EXPECT_EQ(out, std::vector<kp::WireView>(3));
}

TEST(ViewStamps, TheViewIsTheRenderedTickQuantisedTo256ths) {
  EXPECT_EQ(kp::view_at(100, 93.5), (kp::WireView{7, 128}));
  EXPECT_EQ(kp::view_at(100, 94.0), (kp::WireView{6, 0}));
  EXPECT_EQ(kp::view_at(100, 101.25), (kp::WireView{-1, 64}));  // ahead: the server clamps it
  EXPECT_EQ(kp::view_at(100, -5.0), (kp::WireView{100, 0}));
}

TEST(ViewStamps, FrameRunsCarryEveryInputsView) {
  const kg::Layout l = aim_layout();
  std::vector<kp::InputFrameMessage> frames(3);
  for (uint64_t k = 0; k < 3; ++k) {
    frames[k].tick = 50 + k;
    frames[k].state_hash = 1000 + k;
    frames[k].inputs.inputs = {{2, {}, kg::ViewStamp{6, uint8_t(10 * k)}}, {5, {}}};
  }
  const std::vector<uint8_t> msg = kp::encode_input_frame_run(l, frames);
  const kp::fb::Message* m = nullptr;
  ASSERT_EQ(kp::check_message(msg, m), kp::DropReason::None);
  std::vector<kp::InputFrameMessage> out;
  ASSERT_EQ(kp::decode_input_frame_run(l, *m->body_as_ServerInputFrameRun(), out), kp::DropReason::None);
  ASSERT_EQ(out.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(out[k].inputs, frames[k].inputs) << k;
  // Without views the run has no views field at all: the bytes games without lag
  // compensation always sent.
  for (auto& f : frames) {
    for (auto& in : f.inputs.inputs) in.view = {};
  }
  const std::vector<uint8_t> plain = kp::encode_input_frame_run(l, frames);
  ASSERT_EQ(kp::check_message(plain, m), kp::DropReason::None);
  EXPECT_EQ(m->body_as_ServerInputFrameRun()->views(), nullptr);
  EXPECT_LT(plain.size(), msg.size());
}

}  // namespace
