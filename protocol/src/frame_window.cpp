#include <keel/protocol/frame_window.h>

#include <algorithm>

namespace keel::protocol {

void FrameWindow::add(const InputFrameMessage& frame) {
  if (frames_.empty()) first_tick_ = frame.tick;
  frames_.push_back(frame);
  if (frames_.size() > kMaxFrames) {
    const size_t drop = frames_.size() - kMaxFrames;
    frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(drop));
    first_tick_ += drop;
  }
  runs_valid_ = false;
}

void FrameWindow::on_ack(uint64_t tick) {
  if (frames_.empty() || tick < first_tick_) return;
  const size_t drop = static_cast<size_t>(std::min<uint64_t>(tick - first_tick_ + 1, frames_.size()));
  frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(drop));
  first_tick_ += drop;
  runs_valid_ = false;
}

const std::vector<std::vector<uint8_t>>& FrameWindow::messages() {
  if (runs_valid_) return runs_;
  runs_.clear();
  std::span<const InputFrameMessage> left(frames_);
  while (!left.empty()) {
    // The longest run that fits kRunBytes (one frame always goes, whatever its size),
    // found in one pass: a window of many players' frames is written about twice per
    // message, not once per trial length.
    size_t n = input_frames_that_fit(layout_, left, kRunBytes - kRunFramingBytes);
    std::vector<uint8_t> run = encode_input_frame_run(layout_, left.first(n));
    while (n > 1 && run.size() > kRunBytes) {  // the views or the framing passed the estimate
      --n;
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
