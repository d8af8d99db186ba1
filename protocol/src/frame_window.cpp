#include <keel/protocol/frame_window.h>

namespace keel::protocol {

void FrameWindow::add(const InputFrameMessage& frame) {
  if (encoded_.empty()) first_tick_ = frame.tick;
  encoded_.push_back(encode_server_input_frame(frame));
  while (encoded_.size() > kMaxFrames) {
    encoded_.pop_front();
    ++first_tick_;
  }
}

void FrameWindow::on_ack(uint64_t tick) {
  while (!encoded_.empty() && first_tick_ <= tick) {
    encoded_.pop_front();
    ++first_tick_;
  }
}

DropReason FrameReceiver::receive(const fb::ServerInputFrame& message, InputFrameMessage& out) {
  uint64_t tick = message.tick();
  if (started_ && tick <= contiguous_) return DropReason::Duplicate;
  if (started_ && tick - contiguous_ > kMaxAhead) return DropReason::OutOfRange;
  if (ahead_.count(tick) != 0) return DropReason::Duplicate;
  DropReason r = decode_server_input_frame(message, out);
  if (r != DropReason::None) return r;
  if (!started_) {
    // The first frame a client sees starts its chain (it joined at that tick).
    started_ = true;
    contiguous_ = tick;
  } else {
    ahead_.insert(tick);
  }
  while (!ahead_.empty() && *ahead_.begin() == contiguous_ + 1) {
    ahead_.erase(ahead_.begin());
    ++contiguous_;
  }
  return DropReason::None;
}

}  // namespace keel::protocol
