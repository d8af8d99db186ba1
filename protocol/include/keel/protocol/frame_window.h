// Server input frames (every player's applied input for a tick, plus the state hash after
// it) travel to predicting clients the way client inputs travel to the server: each packet
// repeats every frame the client has not acknowledged (InputBatch.ack_input_frame_tick),
// so a lost packet loses no frame, and the client accepts each tick once. The frames go
// out as ServerInputFrameRun messages: consecutive ticks bit-packed together, each
// player's input as a change against the tick before (frame_run.cpp has the layout).
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>

#include <cstdint>
#include <set>
#include <span>
#include <vector>

namespace keel::protocol {

/// Encodes frames of consecutive ticks (1 .. FrameWindow::kMaxFrames) as one
/// ServerInputFrameRun message.
std::vector<uint8_t> encode_input_frame_run(const game::Layout& layout, std::span<const InputFrameMessage> frames);
/// How many frames from the front of `frames` one run holds with its payload (the frames'
/// bits, as encode_input_frame_run writes them) within `payload_bytes`: the most that fit,
/// and at least one (a frame goes whatever its size). One pass over the frames.
size_t input_frames_that_fit(const game::Layout& layout, std::span<const InputFrameMessage> frames,
                             size_t payload_bytes);
/// Decodes a verified ServerInputFrameRun into its frames: OutOfRange for a count outside
/// 1 .. kMaxFrames, an unknown event kind, an input out of range or unsorted player ids;
/// MalformedPayload for a payload that ends early or has bytes left over.
DropReason decode_input_frame_run(const game::Layout& layout, const fb::ServerInputFrameRun& run,
                                  std::vector<InputFrameMessage>& out);

/// Server side, one per client.
class FrameWindow {
 public:
  /// A window for frames of the game whose input layout is `layout` (default: no fields).
  FrameWindow() = default;
  explicit FrameWindow(game::Layout layout) : layout_(std::move(layout)) {}

  /// Frames kept unacknowledged at most; older ones are dropped (the client is then too
  /// far behind to predict and should resynchronise from a snapshot or checkpoint).
  static constexpr size_t kMaxFrames = 64;

  /// Adds the frame of the next tick (ticks must increase by one).
  void add(const InputFrameMessage& frame);
  /// The client holds every frame up to and including `tick`.
  void on_ack(uint64_t tick);
  /// ServerInputFrameRun messages holding every unacknowledged frame, oldest first; a run
  /// is cut where its payload would pass kRunBytes, so no message needs fragmenting (a lost
  /// fragment would lose the whole message).
  const std::vector<std::vector<uint8_t>>& messages();
  uint64_t first_tick() const { return first_tick_; }
  size_t pending() const { return frames_.size(); }

  static constexpr size_t kRunBytes = 900;
  /// What a run message holds beyond its payload, at most (the FlatBuffer and message
  /// framing, the views of a game that compensates lag aside): the payload is sized
  /// against kRunBytes less this, then the message itself is checked.
  static constexpr size_t kRunFramingBytes = 64;

 private:
  game::Layout layout_;
  uint64_t first_tick_ = 0;
  // Kept until acked, oldest first: a vector, so the runs read it as one span (at most
  // kMaxFrames, each moved, not copied, when the front goes).
  std::vector<InputFrameMessage> frames_;
  // runs_[i] holds run_frames_[i] frames; together they cover the first covered_ frames.
  std::vector<std::vector<uint8_t>> runs_;
  std::vector<size_t> run_frames_;
  size_t covered_ = 0;

  void drop_front(size_t n);
  void make_runs(std::span<const InputFrameMessage> frames, std::vector<std::vector<uint8_t>>& runs,
                 std::vector<size_t>& counts) const;
};

/// Client side.
class FrameReceiver {
 public:
  /// How far past the contiguous ack a frame may be (older or further ones are refused).
  static constexpr uint64_t kMaxAhead = 256;

  /// A receiver whose first expected frame is `first_tick` (ConnectionAccept.server_tick).
  /// Without it the first frame that arrives starts the chain, which can skip a frame
  /// lost or reordered at the very start.
  FrameReceiver() = default;
  explicit FrameReceiver(uint64_t first_tick)
      : started_(first_tick > 0), contiguous_(first_tick > 0 ? first_tick - 1 : 0) {}

  /// Accepts one decoded frame of a run: Duplicate for a tick already held, OutOfRange
  /// beyond the window.
  DropReason receive(const InputFrameMessage& frame);
  /// The newest tick up to which every frame has arrived (0 before the first).
  uint64_t ack_tick() const { return contiguous_; }

 private:
  bool started_ = false;
  uint64_t contiguous_ = 0;
  std::set<uint64_t> ahead_;  // received ticks past contiguous_, bounded by kMaxAhead
};

}  // namespace keel::protocol
