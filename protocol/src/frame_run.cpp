// Input frame runs: the frames a predicting client has not acknowledged, in one bit-packed
// message. Layout (BitWriter order), per frame:
//   state_hash:64
//   event_count:int[0, 2*kMaxPlayersPerMatch]  then per event  kind:int[0, 1] player:32
//   input_count:int[0, kMaxPlayersPerMatch]    then per input, with `prev` the input at the
//   same position in the frame before (none in the run's first frame):
//     [prev] same_player:1, else player:32 (ids strictly increasing)
//     the frame's values as a change against prev's when prev is the same player, else
//     in full (input_bits.h) — frames are always the game's quantised codes.
// A player holding a stick steady costs one or two bits a tick; the 64-bit hash is the
// bulk of a frame.
#include <keel/protocol/frame_window.h>

#include "input_bits.h"

#include <algorithm>

namespace keel::protocol {
namespace {

using namespace detail;

constexpr int64_t kMaxEvents = 2 * int64_t{game::kMaxPlayersPerMatch};

void write_input(BitWriter& w, const game::Layout& layout, const game::PlayerInput* prev, const game::PlayerInput& e) {
  const bool same_player = prev && prev->player == e.player;
  if (prev) w.write_bool(same_player);
  if (!same_player) w.write_bits(e.player, 32);
  if (same_player) {
    write_change(w, layout, prev->frame, e.frame);
  } else {
    write_full(w, layout, e.frame);
  }
}

bool read_input(BitReader& r, const game::Layout& layout, const game::PlayerInput* prev, game::PlayerInput& e) {
  const bool same_player = prev && r.read_bool();
  e.player = same_player ? prev->player : r.read_bits(32);
  return same_player ? read_change(r, layout, prev->frame, e.frame) : read_full(r, layout, e.frame);
}

// Views travel in their own field (ServerInputFrameRun.views), so a run of a game that
// never compensates lag carries none: per input of every frame, a changed flag against
// the view of the same position in the frame before (when the same player; else the
// present), then when changed lag:int[0, kMaxPoseHistoryTicks] and fraction:8.
const game::ViewStamp* prev_view(const std::vector<game::PlayerInput>& prev, size_t i, uint32_t player) {
  return i < prev.size() && prev[i].player == player ? &prev[i].view : nullptr;
}

std::vector<uint8_t> encode_run_views(std::span<const InputFrameMessage> frames) {
  bool any = false;
  for (const InputFrameMessage& f : frames) {
    for (const game::PlayerInput& in : f.inputs.inputs) any = any || in.view != game::ViewStamp{};
  }
  if (!any) return {};
  BitWriter w;
  const std::vector<game::PlayerInput> none;
  const std::vector<game::PlayerInput>* prev = &none;
  for (const InputFrameMessage& f : frames) {
    for (size_t i = 0; i < f.inputs.inputs.size(); ++i) {
      const game::PlayerInput& in = f.inputs.inputs[i];
      const game::ViewStamp* before = prev_view(*prev, i, in.player);
      const game::ViewStamp base = before ? *before : game::ViewStamp{};
      w.write_bool(in.view != base);
      if (in.view == base) continue;
      w.write_int(std::min<int64_t>(in.view.lag, game::kMaxPoseHistoryTicks), 0, game::kMaxPoseHistoryTicks);
      w.write_bits(in.view.fraction, 8);
    }
    prev = &f.inputs.inputs;
  }
  return w.finish();
}

DropReason decode_run_views(const fb::ServerInputFrameRun& run, std::vector<InputFrameMessage>& frames) {
  if (run.views() == nullptr || run.views()->size() == 0) return DropReason::None;
  BitReader r({run.views()->data(), run.views()->size()});
  const std::vector<game::PlayerInput> none;
  const std::vector<game::PlayerInput>* prev = &none;
  for (InputFrameMessage& f : frames) {
    for (size_t i = 0; i < f.inputs.inputs.size() && r.ok(); ++i) {
      game::PlayerInput& in = f.inputs.inputs[i];
      const game::ViewStamp* before = prev_view(*prev, i, in.player);
      in.view = before ? *before : game::ViewStamp{};
      if (!r.read_bool()) continue;
      const int64_t lag = r.read_int(0, game::kMaxPoseHistoryTicks);
      if (r.ok() && (lag < 0 || lag > game::kMaxPoseHistoryTicks)) return DropReason::OutOfRange;
      in.view.lag = uint16_t(lag);
      in.view.fraction = uint8_t(r.read_bits(8));
    }
    prev = &f.inputs.inputs;
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  return r.at_end() ? DropReason::None : DropReason::MalformedPayload;
}

// One frame as a run writes it, `prev` the run's frame before (empty for its first).
void write_frame(BitWriter& w, const game::Layout& layout, const std::vector<game::PlayerInput>& prev,
                 const InputFrameMessage& f) {
  w.write_u64(f.state_hash);
  w.write_int(int64_t(f.inputs.events.size()), 0, kMaxEvents);
  for (const game::PlayerEvent& e : f.inputs.events) {
    w.write_int(int64_t(e.kind), 0, 1);
    w.write_bits(e.player, 32);
  }
  w.write_int(int64_t(f.inputs.inputs.size()), 0, game::kMaxPlayersPerMatch);
  for (size_t i = 0; i < f.inputs.inputs.size(); ++i) {
    write_input(w, layout, i < prev.size() ? &prev[i] : nullptr, f.inputs.inputs[i]);
  }
}

}  // namespace

std::vector<uint8_t> encode_input_frame_run(const game::Layout& layout, std::span<const InputFrameMessage> frames) {
  BitWriter w;
  const std::vector<game::PlayerInput> none;
  const std::vector<game::PlayerInput>* prev = &none;
  for (const InputFrameMessage& f : frames) {
    write_frame(w, layout, *prev, f);
    prev = &f.inputs.inputs;
  }
  std::vector<uint8_t> payload = w.finish();
  const std::vector<uint8_t> views = encode_run_views(frames);
  flatbuffers::FlatBufferBuilder fbb(payload.size() + views.size() + 64);
  auto body = fb::CreateServerInputFrameRunDirect(fbb, frames.empty() ? 0 : frames.front().tick,
                                                  static_cast<uint16_t>(frames.size()), &payload,
                                                  views.empty() ? nullptr : &views);
  return finish_message(fbb, fb::Body::ServerInputFrameRun, body.Union());
}

size_t input_frames_that_fit(const game::Layout& layout, std::span<const InputFrameMessage> frames,
                             size_t payload_bytes) {
  BitWriter w;
  const std::vector<game::PlayerInput> none;
  const std::vector<game::PlayerInput>* prev = &none;
  size_t n = 0;
  for (const InputFrameMessage& f : frames) {
    write_frame(w, layout, *prev, f);
    if (n > 0 && (w.bit_count() + 7) / 8 > payload_bytes) break;
    ++n;
    prev = &f.inputs.inputs;
  }
  return n;
}

DropReason decode_input_frame_run(const game::Layout& layout, const fb::ServerInputFrameRun& run,
                                  std::vector<InputFrameMessage>& out) {
  out.clear();
  const uint32_t count = run.count();
  if (count == 0 || count > FrameWindow::kMaxFrames || run.payload() == nullptr) return DropReason::OutOfRange;
  if (run.first_tick() > UINT64_MAX - count) return DropReason::OutOfRange;
  BitReader r({run.payload()->data(), run.payload()->size()});
  std::vector<game::PlayerInput> prev, cur;
  for (uint32_t k = 0; k < count && r.ok(); ++k) {
    InputFrameMessage f;
    f.tick = run.first_tick() + k;
    f.state_hash = r.read_u64();
    const int64_t n_events = r.read_int(0, kMaxEvents);
    for (int64_t i = 0; i < n_events && r.ok(); ++i) {
      auto kind = static_cast<game::PlayerEvent::Kind>(r.read_int(0, 1));
      f.inputs.events.push_back({kind, r.read_bits(32)});
    }
    const int64_t n_inputs = r.read_int(0, game::kMaxPlayersPerMatch);
    cur.assign(size_t(r.ok() ? n_inputs : 0), game::PlayerInput{});
    for (size_t i = 0; i < cur.size() && r.ok(); ++i) {
      if (!read_input(r, layout, i < prev.size() ? &prev[i] : nullptr, cur[i])) {
        return r.ok() ? DropReason::OutOfRange : DropReason::MalformedPayload;
      }
      // Sorted, unique player ids: the order the match applies them in.
      if (i > 0 && cur[i - 1].player >= cur[i].player) return DropReason::OutOfRange;
    }
    f.inputs.inputs = cur;
    std::swap(prev, cur);
    out.push_back(std::move(f));
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  if (!r.at_end()) return DropReason::MalformedPayload;
  return decode_run_views(run, out);
}

}  // namespace keel::protocol
