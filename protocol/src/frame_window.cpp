#include <keel/protocol/frame_window.h>

#include <algorithm>

namespace keel::protocol {

// The runs stay made between calls: each covers frames in order from the front, and
// only what changed is made again — the last run when a frame is added (the frame may
// join it), a run that an ack cut in two (over the frames it still holds). A window of
// many players' frames is then written about once per frame, not once per tick.
void FrameWindow::add(const InputFrameMessage& frame) {
  if (frames_.empty()) first_tick_ = frame.tick;
  frames_.push_back(frame);
  if (!run_frames_.empty()) {
    covered_ -= run_frames_.back();
    run_frames_.pop_back();
    runs_.pop_back();
  }
  if (frames_.size() > kMaxFrames) drop_front(frames_.size() - kMaxFrames);
}

void FrameWindow::on_ack(uint64_t tick) {
  if (frames_.empty() || tick < first_tick_) return;
  drop_front(static_cast<size_t>(std::min<uint64_t>(tick - first_tick_ + 1, frames_.size())));
}

void FrameWindow::drop_front(size_t n) {
  frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(n));
  first_tick_ += n;
  size_t gone = 0, whole = 0;
  while (whole < run_frames_.size() && gone + run_frames_[whole] <= n) gone += run_frames_[whole++];
  runs_.erase(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(whole));
  run_frames_.erase(run_frames_.begin(), run_frames_.begin() + static_cast<std::ptrdiff_t>(whole));
  covered_ -= gone;
  if (gone == n || run_frames_.empty()) return;
  // The first run lost its first frames: made again over the ones it still holds.
  const size_t kept = run_frames_.front() - (n - gone);
  std::vector<std::vector<uint8_t>> remade;
  std::vector<size_t> remade_frames;
  make_runs(std::span<const InputFrameMessage>(frames_).first(kept), remade, remade_frames);
  runs_.erase(runs_.begin());
  run_frames_.erase(run_frames_.begin());
  runs_.insert(runs_.begin(), std::make_move_iterator(remade.begin()), std::make_move_iterator(remade.end()));
  run_frames_.insert(run_frames_.begin(), remade_frames.begin(), remade_frames.end());
  covered_ = 0;
  for (size_t f : run_frames_) covered_ += f;
}

// The longest runs that fit kRunBytes (one frame always goes, whatever its size), each
// found in one pass over the frames left.
void FrameWindow::make_runs(std::span<const InputFrameMessage> left, std::vector<std::vector<uint8_t>>& runs,
                            std::vector<size_t>& counts) const {
  while (!left.empty()) {
    size_t n = input_frames_that_fit(layout_, left, kRunBytes - kRunFramingBytes);
    std::vector<uint8_t> run = encode_input_frame_run(layout_, left.first(n));
    while (n > 1 && run.size() > kRunBytes) {  // the views or the framing passed the estimate
      --n;
      run = encode_input_frame_run(layout_, left.first(n));
    }
    runs.push_back(std::move(run));
    counts.push_back(n);
    left = left.subspan(n);
  }
}

const std::vector<std::vector<uint8_t>>& FrameWindow::messages() {
  if (covered_ < frames_.size()) {
    make_runs(std::span<const InputFrameMessage>(frames_).subspan(covered_), runs_, run_frames_);
    covered_ = frames_.size();
  }
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
