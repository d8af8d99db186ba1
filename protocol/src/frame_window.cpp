#include <keel/protocol/frame_window.h>

namespace keel::protocol {

void FrameWindow::add(const InputFrameMessage& frame) {
  if (frames_.empty()) first_tick_ = frame.tick;
  frames_.push_back(frame);
  while (frames_.size() > kMaxFrames) {
    frames_.pop_front();
    ++first_tick_;
  }
  runs_valid_ = false;
}

void FrameWindow::on_ack(uint64_t tick) {
  while (!frames_.empty() && first_tick_ <= tick) {
    frames_.pop_front();
    ++first_tick_;
    runs_valid_ = false;
  }
}

const std::vector<std::vector<uint8_t>>& FrameWindow::messages() {
  if (runs_valid_) return runs_;
  runs_.clear();
  const std::vector<InputFrameMessage> all(frames_.begin(), frames_.end());
  std::span<const InputFrameMessage> left(all);
  while (!left.empty()) {
    // The longest run that fits kRunBytes (one frame always goes, whatever its size).
    size_t n = left.size();
    std::vector<uint8_t> run = encode_input_frame_run(layout_, left.first(n));
    while (n > 1 && run.size() > kRunBytes) {
      n = (n + 1) / 2;
      run = encode_input_frame_run(layout_, left.first(n));
    }
    runs_.push_back(std::move(run));
    left = left.subspan(n);
  }
  runs_valid_ = true;
  return runs_;
}

DropReason FrameReceiver::receive(const InputFrameMessage& frame) {
  const uint64_t tick = frame.tick;
  if (started_ && tick <= contiguous_) return DropReason::Duplicate;
  if (started_ && tick - contiguous_ > kMaxAhead) return DropReason::OutOfRange;
  if (ahead_.count(tick) != 0) return DropReason::Duplicate;
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
