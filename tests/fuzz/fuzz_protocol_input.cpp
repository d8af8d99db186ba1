// libFuzzer: game inputs on the wire, against a layout the input chooses — the bit-packed
// frames of a batch on their own (count from a byte) and whole InputBatch /
// ServerInputFrameRun messages through their checks, the server's InputReceiver and a
// client's FrameReceiver. Whatever decodes must be valid for its layout and survive
// encode -> decode unchanged; anything else aborts.
//
// Input: [layout:1] [when layout % 4 == 1: len:u16 + bytes of game::write_layout] [count:1]
// [rest]. layout % 4: 0 the sandbox's, 1 read from the input (the sandbox's when
// read_layout refuses it), 2 no fields, 3 one field of every kind. The frames are
// decoded from [rest] with `count`; [count] [rest] together are also tried as a message.
#include "fuzz_input.h"
#include "fuzz_layouts.h"

#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace kp = keel::protocol;
namespace kg = keel::game;

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "input decoder: %s\n", what);
    std::abort();
  }
}

void check_frames(const kg::Layout& l, std::span<const uint8_t> bits, uint32_t count) {
  std::vector<kg::InputFrame> frames, again;
  if (kp::decode_inputs(l, bits, count, frames) != kp::DropReason::None) return;
  require(frames.size() == count, "a batch decoded into another number of frames");
  for (const kg::InputFrame& f : frames) require(l.valid(f), "a decoded frame out of its layout's range");
  require(kp::decode_inputs(l, kp::encode_inputs(l, frames), count, again) == kp::DropReason::None,
          "re-encoded frames do not decode");
  require(again == frames, "re-encoded frames decode differently");
}

void check_run(const kg::Layout& l, const kp::fb::ServerInputFrameRun& run) {
  std::vector<kp::InputFrameMessage> frames, again;
  if (kp::decode_input_frame_run(l, run, frames) != kp::DropReason::None) return;
  require(frames.size() == run.count(), "a run decoded into another number of frames");
  for (const auto& f : frames) {
    for (const auto& input : f.inputs.inputs) require(l.valid(input.frame), "a run's input out of range");
  }
  static kp::FrameReceiver receiver;  // kept across inputs, like a client's
  for (const auto& f : frames) receiver.receive(f);
  const std::vector<uint8_t> message = kp::encode_input_frame_run(l, frames);
  const kp::fb::Message* m = nullptr;
  require(kp::check_message(message, m) == kp::DropReason::None, "a re-encoded run is refused");
  require(kp::decode_input_frame_run(l, *m->body_as_ServerInputFrameRun(), again) == kp::DropReason::None,
          "a re-encoded run does not decode");
  require(again.size() == frames.size(), "a re-encoded run has another length");
  for (size_t i = 0; i < frames.size(); ++i) {
    require(again[i].tick == frames[i].tick && again[i].state_hash == frames[i].state_hash &&
                again[i].inputs == frames[i].inputs,
            "a re-encoded run decodes differently");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  keel::fuzz::InputReader in{data, size};
  const kg::Layout layout = keel::fuzz::choose_layout(in);
  if (!in.more()) return 0;
  // FlatBuffers reads fields in place: the message is copied to aligned storage.
  const std::vector<uint8_t> rest(data + in.pos, data + size);
  check_frames(layout, std::span(rest).subspan(1), rest[0]);
  const kp::fb::Message* m = nullptr;
  if (kp::check_message(rest, m) != kp::DropReason::None) return 0;
  if (m->body_type() == kp::fb::Body::InputBatch) {
    kp::InputReceiver receiver;
    std::vector<std::pair<uint64_t, kg::PlayerInput>> fresh;
    const auto& batch = *m->body_as_InputBatch();
    if (receiver.receive(layout, batch, batch.first_tick(), fresh) == kp::DropReason::None) {
      require(fresh.size() == batch.count(), "a first batch delivered another number of frames");
    }
  } else if (m->body_type() == kp::fb::Body::ServerInputFrameRun) {
    check_run(layout, *m->body_as_ServerInputFrameRun());
  }
  return 0;
}
