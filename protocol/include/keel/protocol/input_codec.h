// The input codec: a player's per-tick input (the game's declared input layout,
// keel/game/layout.h) on the wire.
//
// Inputs are quantised before anything uses them — the client predicts with, the server
// applies and the recording stores the same codes — so prediction and replay see exactly
// what the server stepped. A client sends every input the server has not yet
// acknowledged (a bounded window) in each InputBatch, delta-encoded frame to frame with
// bit packing, so a lost packet loses no input. docs/protocol.md has the bit layout.
#pragma once

#include <keel/game/layout.h>
#include <keel/protocol/bitstream.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace keel::protocol {

/// Bit-packs consecutive frames, each as a change against the one before it.
std::vector<uint8_t> encode_inputs(const game::Layout& layout, std::span<const game::InputFrame> frames);
/// Decodes `count` frames (1 .. kMaxInputWindow); range-checks every field against the
/// layout (OutOfRange), trailing or missing bits are MalformedPayload.
DropReason decode_inputs(const game::Layout& layout, std::span<const uint8_t> bytes, uint32_t count,
                         std::vector<game::InputFrame>& out);

/// Field values in a bit stream, in full or as a change (the pieces every codec of game
/// values uses: inputs, input frame runs, game events).
void write_values(BitWriter& w, const game::Layout& layout, const game::Values& v);
bool read_values(BitReader& r, const game::Layout& layout, game::Values& v);
void write_values_change(BitWriter& w, const game::Layout& layout, const game::Values& before,
                         const game::Values& v);
bool read_values_change(BitReader& r, const game::Layout& layout, const game::Values& before,
                        game::Values& v);

/// Client side: keeps the frames the server has not acknowledged.
class InputSender {
 public:
  /// A sender of frames of `layout` (default: no fields).
  InputSender() = default;
  explicit InputSender(game::Layout layout) : layout_(std::move(layout)) {}
  /// Adds the frame for `tick` (ticks must be consecutive), sanitised against the layout.
  /// Past kMaxInputWindow unacked frames the oldest is dropped: by then the server has
  /// used its missing-input rule.
  void add(uint64_t tick, const game::InputFrame& frame);
  /// The server reports holding every frame up to `tick`.
  void on_ack(uint64_t tick);
  /// An InputBatch message with every unacknowledged frame, or empty when none.
  std::vector<uint8_t> build_batch(uint64_t ack_snapshot_tick, uint64_t ack_frame_tick) const;
  size_t pending() const { return frames_.size(); }
  const game::Layout& layout() const { return layout_; }

 private:
  game::Layout layout_;
  uint64_t first_tick_ = 0;
  std::deque<game::InputFrame> frames_;
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
  DropReason receive(const game::Layout& layout, const fb::InputBatch& batch, uint64_t server_tick,
                     std::vector<std::pair<uint64_t, game::InputFrame>>& fresh);
  /// The newest tick up to which every frame has arrived (what to acknowledge).
  uint64_t ack_tick() const { return newest_; }

 private:
  uint64_t newest_ = 0;
  bool any_ = false;
};

}  // namespace keel::protocol
