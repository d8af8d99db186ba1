// Server input frames (every player's applied input for a tick, plus the state hash after
// it) travel to predicting clients the way client inputs travel to the server: each packet
// repeats every frame the client has not acknowledged (InputBatch.ack_input_frame_tick),
// so a lost packet loses no frame, and the client accepts each tick once.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>

#include <cstdint>
#include <deque>
#include <set>
#include <vector>

namespace keel::protocol {

/// Server side, one per client.
class FrameWindow {
 public:
  /// Frames kept unacknowledged at most; older ones are dropped (the client is then too
  /// far behind to predict and should resynchronise from a snapshot or checkpoint).
  static constexpr size_t kMaxFrames = 64;

  /// Adds the frame of the next tick (ticks must increase by one).
  void add(const InputFrameMessage& frame);
  /// The client holds every frame up to and including `tick`.
  void on_ack(uint64_t tick);
  /// Encoded ServerInputFrame messages for every unacknowledged frame, oldest first.
  const std::deque<std::vector<uint8_t>>& messages() const { return encoded_; }
  uint64_t first_tick() const { return first_tick_; }

 private:
  uint64_t first_tick_ = 0;
  std::deque<std::vector<uint8_t>> encoded_;  // encoded once, resent until acked
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

  /// Accepts a checked ServerInputFrame. Duplicate for a tick already held; OutOfRange
  /// beyond the window or when its contents fail decode_server_input_frame.
  DropReason receive(const fb::ServerInputFrame& message, InputFrameMessage& out);
  /// The newest tick up to which every frame has arrived (0 before the first).
  uint64_t ack_tick() const { return contiguous_; }

 private:
  bool started_ = false;
  uint64_t contiguous_ = 0;
  std::set<uint64_t> ahead_;  // received ticks past contiguous_, bounded by kMaxAhead
};

}  // namespace keel::protocol
