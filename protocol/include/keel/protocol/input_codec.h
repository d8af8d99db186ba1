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
#include <keel/game/match.h>
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

/// What a client says it saw when it sampled a frame (lag compensation): the tick it was
/// rendering, as ticks `behind` the frame's own tick (negative: ahead of it, which no
/// honest client sends), and `fraction`/256 of the way on to the tick after.
struct WireView {
  int32_t behind = 0;
  uint8_t fraction = 0;
  friend bool operator==(const WireView&, const WireView&) = default;
};

/// The farthest a client may say it is behind or ahead on the wire; senders clamp to it.
inline constexpr int32_t kMaxWireViewBehind = 1 << 16;

/// The server's rule for a client's view (docs/protocol.md, "View stamps"): a view from
/// the future is the present, one older than any game's history (kMaxPoseHistoryTicks)
/// that far back, the present has no fraction. `clamped` is set when it changed anything;
/// the match clamps further, into the history it holds.
game::ViewStamp sanitize_view(const WireView& view, bool& clamped);
/// A client's view from the tick it rendered (fractional, its interpolation tick) for the
/// frame of `frame_tick`, quantised to 1/256 of a tick.
WireView view_at(uint64_t frame_tick, double render_tick);

/// The views of an InputBatch's frames, bit-packed: per frame a changed flag (against the
/// frame before; the first against the present) and, when changed, behind as a signed
/// exp-Golomb code and fraction in 8 bits. Empty when every view is the present.
std::vector<uint8_t> encode_views(std::span<const WireView> views);
/// Decodes `count` views; absent bytes are `count` present views. MalformedPayload when
/// the bits end early or run on.
DropReason decode_views(std::span<const uint8_t> bytes, uint32_t count, std::vector<WireView>& out);

/// Client side: keeps the frames the server has not acknowledged.
class InputSender {
 public:
  /// A sender of frames of `layout` (default: no fields).
  InputSender() = default;
  explicit InputSender(game::Layout layout) : layout_(std::move(layout)) {}
  /// Adds the frame for `tick` (ticks must be consecutive), sanitised against the layout.
  /// Past kMaxInputWindow unacked frames the oldest is dropped: by then the server has
  /// used its missing-input rule.
  void add(uint64_t tick, const game::InputFrame& frame, const WireView& view = {});
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
  std::deque<WireView> views_;  // one per frame
};

/// Server side: accepts each tick's frame once from a player's batches.
class InputReceiver {
 public:
  /// How far ahead of and behind the server's tick a batch may reach.
  static constexpr uint64_t kMaxAhead = 120;
  static constexpr uint64_t kMaxBehind = 256;

  /// Decodes a checked InputBatch and returns, through `fresh`, the frames for ticks not
  /// received before (tick, frame with its sanitised view; the player id is left 0),
  /// oldest first. Ticks outside the window around `server_tick` are OutOfRange.
  DropReason receive(const game::Layout& layout, const fb::InputBatch& batch, uint64_t server_tick,
                     std::vector<std::pair<uint64_t, game::PlayerInput>>& fresh);
  /// Fresh frames whose view sanitize_view changed (from the future, or too old).
  uint64_t views_clamped() const { return views_clamped_; }
  /// The newest tick up to which every frame has arrived (what to acknowledge).
  uint64_t ack_tick() const { return newest_; }

 private:
  uint64_t newest_ = 0;
  bool any_ = false;
  uint64_t views_clamped_ = 0;
};

}  // namespace keel::protocol
