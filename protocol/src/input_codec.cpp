// The input batch codec: the first frame in full, then each frame as a change against
// the one before (input_bits.h has the bit layout of both forms).
#include <keel/protocol/input_codec.h>

#include "input_bits.h"

#include <algorithm>
#include <cmath>

namespace keel::protocol {

void write_values(BitWriter& w, const game::Layout& layout, const game::Values& v) { detail::write_full(w, layout, v); }
bool read_values(BitReader& r, const game::Layout& layout, game::Values& v) { return detail::read_full(r, layout, v); }
void write_values_change(BitWriter& w, const game::Layout& layout, const game::Values& before, const game::Values& v) {
  detail::write_change(w, layout, before, v);
}
bool read_values_change(BitReader& r, const game::Layout& layout, const game::Values& before, game::Values& v) {
  return detail::read_change(r, layout, before, v);
}

std::vector<uint8_t> encode_inputs(const game::Layout& layout, std::span<const game::InputFrame> frames) {
  BitWriter w;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i == 0) {
      detail::write_full(w, layout, frames[i]);
    } else {
      detail::write_change(w, layout, frames[i - 1], frames[i]);
    }
  }
  return w.finish();
}

DropReason decode_inputs(const game::Layout& layout, std::span<const uint8_t> bytes, uint32_t count,
                         std::vector<game::InputFrame>& out) {
  out.clear();
  if (count == 0 || count > MessageLimits::kMaxInputWindow) return DropReason::OutOfRange;
  BitReader r(bytes);
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    game::InputFrame f;
    bool ok = i == 0 ? detail::read_full(r, layout, f) : detail::read_change(r, layout, out.back(), f);
    if (!ok) return r.ok() ? DropReason::OutOfRange : DropReason::MalformedPayload;
    out.push_back(f);
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  return r.at_end() ? DropReason::None : DropReason::MalformedPayload;
}

void InputSender::add(uint64_t tick, const game::InputFrame& frame, const WireView& view) {
  if (frames_.empty()) first_tick_ = tick;
  frames_.push_back(frame);
  layout_.sanitize(frames_.back());
  WireView v = view;
  v.behind = std::clamp(v.behind, -kMaxWireViewBehind, kMaxWireViewBehind);
  views_.push_back(v);
  while (frames_.size() > MessageLimits::kMaxInputWindow) {
    frames_.pop_front();
    views_.pop_front();
    ++first_tick_;
  }
}

void InputSender::on_ack(uint64_t tick) {
  while (!frames_.empty() && first_tick_ <= tick) {
    frames_.pop_front();
    views_.pop_front();
    ++first_tick_;
  }
  if (frames_.empty() && tick >= first_tick_) first_tick_ = tick + 1;
}

std::vector<uint8_t> InputSender::build_batch(uint64_t ack_snapshot_tick,
                                              uint64_t ack_frame_tick) const {
  if (frames_.empty()) return {};
  std::vector<game::InputFrame> v(frames_.begin(), frames_.end());
  auto bits = encode_inputs(layout_, v);
  const std::vector<WireView> views(views_.begin(), views_.end());
  const std::vector<uint8_t> view_bits = encode_views(views);
  flatbuffers::FlatBufferBuilder fbb(bits.size() + view_bits.size() + 64);
  auto body = fb::CreateInputBatchDirect(fbb, first_tick_, static_cast<uint16_t>(v.size()), &bits,
                                         ack_snapshot_tick, ack_frame_tick, view_bits.empty() ? nullptr : &view_bits);
  return finish_message(fbb, fb::Body::InputBatch, body.Union());
}

DropReason InputReceiver::receive(const game::Layout& layout, const fb::InputBatch& batch, uint64_t server_tick,
                                  std::vector<std::pair<uint64_t, game::PlayerInput>>& fresh) {
  fresh.clear();
  uint64_t first = batch.first_tick();
  uint64_t last = first + batch.count() - 1;  // count >= 1 (check_message)
  if (first > server_tick + kMaxAhead || last + kMaxBehind < server_tick || last < first) {
    return DropReason::OutOfRange;
  }
  std::vector<game::InputFrame> frames;
  std::span<const uint8_t> bytes;
  if (batch.frames() != nullptr) bytes = {batch.frames()->data(), batch.frames()->size()};
  DropReason r = decode_inputs(layout, bytes, batch.count(), frames);
  if (r != DropReason::None) return r;
  std::vector<WireView> views;
  std::span<const uint8_t> view_bytes;
  if (batch.views() != nullptr) view_bytes = {batch.views()->data(), batch.views()->size()};
  r = decode_views(view_bytes, batch.count(), views);
  if (r != DropReason::None) return r;
  if (any_ && last <= newest_) return DropReason::Duplicate;
  // Frames arrive in tick order within a batch; a gap before `first` means frames the
  // client gave up on (its window overflowed) — they stay missing, the rule applies.
  for (uint64_t i = 0; i < frames.size(); ++i) {
    uint64_t tick = first + i;
    if (any_ && tick <= newest_) continue;
    bool clamped = false;
    const game::ViewStamp view = sanitize_view(views[i], clamped);
    if (clamped) ++views_clamped_;
    fresh.emplace_back(tick, game::PlayerInput(0, frames[i], view));
  }
  newest_ = last;
  any_ = true;
  return DropReason::None;
}

game::ViewStamp sanitize_view(const WireView& view, bool& clamped) {
  clamped = false;
  game::ViewStamp out;
  if (view.behind < 0) {  // the future: nobody has seen it
    clamped = true;
    return out;
  }
  const uint32_t most = game::kMaxPoseHistoryTicks;
  if (uint32_t(view.behind) > most) clamped = true;
  out.lag = uint16_t(std::min<uint32_t>(uint32_t(view.behind), most));
  out.fraction = out.lag == 0 ? 0 : view.fraction;
  if (out.lag == 0 && view.fraction != 0) clamped = true;
  return out;
}

WireView view_at(uint64_t frame_tick, double render_tick) {
  WireView v;
  if (!std::isfinite(render_tick) || render_tick < 0.0) render_tick = 0.0;
  const double floor_tick = std::floor(render_tick);
  const double behind = double(frame_tick) - floor_tick;
  v.behind = int32_t(std::clamp(behind, double(-kMaxWireViewBehind), double(kMaxWireViewBehind)));
  v.fraction = uint8_t(std::clamp(std::floor((render_tick - floor_tick) * 256.0), 0.0, 255.0));
  return v;
}

std::vector<uint8_t> encode_views(std::span<const WireView> views) {
  bool any = false;
  for (const WireView& v : views) any = any || v != WireView{};
  if (!any) return {};
  BitWriter w;
  WireView prev;
  for (const WireView& v : views) {
    w.write_bool(v != prev);
    if (v != prev) {
      w.write_golomb(std::clamp(v.behind, -kMaxWireViewBehind, kMaxWireViewBehind));
      w.write_bits(v.fraction, 8);
    }
    prev = v;
  }
  return w.finish();
}

DropReason decode_views(std::span<const uint8_t> bytes, uint32_t count, std::vector<WireView>& out) {
  out.assign(count, WireView{});
  if (bytes.empty()) return DropReason::None;
  BitReader r(bytes);
  WireView prev;
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    if (r.read_bool()) {
      const int64_t behind = r.read_golomb();
      if (behind < -kMaxWireViewBehind || behind > kMaxWireViewBehind) return DropReason::OutOfRange;
      prev.behind = int32_t(behind);
      prev.fraction = uint8_t(r.read_bits(8));
    }
    out[i] = prev;
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  return r.at_end() ? DropReason::None : DropReason::MalformedPayload;
}

}  // namespace keel::protocol
