// libFuzzer: input batches — the bit-packed frames on their own (count from the first
// byte) and whole InputBatch / ServerInputFrame / ServerInputFrameRun messages through
// their checks, the server's InputReceiver and a client's FrameReceiver.
#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>

#include <cstddef>
#include <cstdint>

namespace kp = keel::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<kp::QuantInput> frames;
  kp::decode_inputs({data + 1, size - 1}, data[0], frames);
  const kp::fb::Message* m = nullptr;
  if (kp::check_message({data, size}, m) != kp::DropReason::None) return 0;
  if (m->body_type() == kp::fb::Body::InputBatch) {
    kp::InputReceiver receiver;
    std::vector<std::pair<uint64_t, kp::QuantInput>> fresh;
    receiver.receive(*m->body_as_InputBatch(), m->body_as_InputBatch()->first_tick(), fresh);
  } else if (m->body_type() == kp::fb::Body::ServerInputFrame) {
    kp::InputFrameMessage frame;
    kp::decode_server_input_frame(*m->body_as_ServerInputFrame(), frame);
    static kp::FrameReceiver frames;  // kept across inputs, like a client's
    frames.receive(*m->body_as_ServerInputFrame(), frame);
  } else if (m->body_type() == kp::fb::Body::ServerInputFrameRun) {
    std::vector<kp::InputFrameMessage> run;
    kp::decode_input_frame_run(*m->body_as_ServerInputFrameRun(), run);
    static kp::FrameReceiver run_frames;
    for (const auto& f : run) run_frames.receive(f);
  }
  return 0;
}
