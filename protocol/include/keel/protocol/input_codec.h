// The input codec: a player's per-tick input (move vector, look yaw, buttons) on the wire.
//
// Inputs are quantised before anything uses them — the client predicts with, the server
// applies and the recording stores the quantised frame — so prediction and replay see
// exactly what the server stepped. A client sends every input the server has not yet
// acknowledged (a bounded window) in each InputBatch, delta-encoded frame to frame, so
// a lost packet loses no input. docs/protocol.md has the bit layout.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>
#include <keel/sim/match.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace keel::protocol {

/// A quantised input frame: move components in 1/127 steps, yaw in 2^16 steps of a turn.
struct QuantInput {
  int8_t move_x = 0;     ///< -127 .. 127
  int8_t move_z = 0;     ///< -127 .. 127
  uint16_t yaw = 0;      ///< yaw = -pi + yaw * 2pi / 65536
  uint8_t buttons = 0;   ///< sim::Button bits

  friend bool operator==(const QuantInput&, const QuantInput&) = default;
};

/// Sanitises (sim::sanitize) and quantises a frame.
QuantInput quantize_input(const sim::InputFrame& frame);
/// The frame a quantised input stands for (what the match applies).
sim::InputFrame dequantize_input(const QuantInput& input);

/// Bit-packs consecutive frames, each as a change against the one before it.
std::vector<uint8_t> encode_inputs(std::span<const QuantInput> frames);
/// Decodes `count` frames (1 .. kMaxInputWindow); range-checks every field (a move vector
/// longer than 1, unknown buttons, trailing bits are OutOfRange / MalformedPayload).
DropReason decode_inputs(std::span<const uint8_t> bytes, uint32_t count,
                         std::vector<QuantInput>& out);

/// Client side: keeps the frames the server has not acknowledged.
class InputSender {
 public:
  /// Adds the frame for `tick` (ticks must be consecutive). Past kMaxInputWindow unacked
  /// frames the oldest is dropped: by then the server has used its missing-input rule.
  void add(uint64_t tick, const QuantInput& frame);
  /// The server reports holding every frame up to `tick`.
  void on_ack(uint64_t tick);
  /// An InputBatch message with every unacknowledged frame, or empty when none.
  std::vector<uint8_t> build_batch(uint64_t ack_snapshot_tick, uint64_t ack_frame_tick) const;
  size_t pending() const { return frames_.size(); }

 private:
  uint64_t first_tick_ = 0;
  std::deque<QuantInput> frames_;
};

/// Server side: accepts each tick's frame once from a player's batches.
class InputReceiver {
 public:
  /// How far ahead of and behind the server's tick a batch may reach.
  static constexpr uint64_t kMaxAhead = 120;
  static constexpr uint64_t kMaxBehind = 256;

  /// Decodes a checked InputBatch and returns, through `fresh`, the frames for ticks not
  /// received before (tick, frame), oldest first. Ticks outside the window around
  /// `server_tick` are OutOfRange.
  DropReason receive(const fb::InputBatch& batch, uint64_t server_tick,
                     std::vector<std::pair<uint64_t, QuantInput>>& fresh);
  /// The newest tick up to which every frame has arrived (what to acknowledge).
  uint64_t ack_tick() const { return newest_; }

 private:
  uint64_t newest_ = 0;
  bool any_ = false;
};

}  // namespace keel::protocol
