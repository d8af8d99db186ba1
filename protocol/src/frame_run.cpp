// Input frame runs: the frames a predicting client has not acknowledged, in one bit-packed
// message. Layout (BitWriter order), per frame:
//   state_hash:64
//   event_count:int[0, 2*kMaxPlayersPerMatch]  then per event  kind:int[0, 1] player:32
//   input_count:int[0, kMaxPlayersPerMatch]    then per input, with `prev` the input at the
//   same position in the frame before (none in the run's first frame):
//     [prev] same_player:1, else player:32 (ids strictly increasing)
//     quantised:1
//       1: the frame is exactly a dequantised QuantInput (what the server applies for
//          inputs it received): a change record against prev's QuantInput when prev is the
//          same player and quantised too, else the full 40-bit form;
//       0: [prev same player] same:1 (bit-identical to prev), else
//          move_x:f32 move_z:f32 look_yaw:f32 buttons:32 — exact floats for any frame
//          that is not a quantised one.
// A player holding a stick steady costs one or two bits a tick; the 64-bit hash is the
// bulk of a frame.
#include <keel/protocol/frame_window.h>

#include "input_bits.h"

#include <cstring>

namespace keel::protocol {
namespace {

using namespace detail;

constexpr int64_t kMaxEvents = 2 * int64_t{sim::kMaxPlayersPerMatch};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_bits(const sim::InputFrame& a, const sim::InputFrame& b) {
  return same_bits(a.move_x, b.move_x) && same_bits(a.move_z, b.move_z) &&
         same_bits(a.look_yaw, b.look_yaw) && a.buttons == b.buttons;
}

// The QuantInput a frame is exactly, if it is one.
std::optional<QuantInput> as_quantised(const sim::InputFrame& f) {
  QuantInput q = quantize_input(f);
  if (!valid(q) || !same_bits(dequantize_input(q), f)) return std::nullopt;
  return q;
}

struct Entry {
  uint32_t player = 0;
  sim::InputFrame frame;
  std::optional<QuantInput> quant;
};

void write_input(BitWriter& w, const Entry* prev, const Entry& e) {
  const bool same_player = prev && prev->player == e.player;
  if (prev) w.write_bool(same_player);
  if (!same_player) w.write_bits(e.player, 32);
  w.write_bool(e.quant.has_value());
  if (e.quant) {
    if (same_player && prev->quant) {
      write_change(w, *prev->quant, *e.quant);
    } else {
      write_full(w, *e.quant);
    }
    return;
  }
  const bool same = same_player && same_bits(prev->frame, e.frame);
  if (same_player) w.write_bool(same);
  if (same) return;
  w.write_float(e.frame.move_x);
  w.write_float(e.frame.move_z);
  w.write_float(e.frame.look_yaw);
  w.write_bits(e.frame.buttons, 32);
}

bool read_input(BitReader& r, const Entry* prev, Entry& e) {
  const bool same_player = prev && r.read_bool();
  e.player = same_player ? prev->player : r.read_bits(32);
  e.quant.reset();
  if (r.read_bool()) {
    QuantInput q;
    if (same_player && prev->quant) {
      if (!read_change(r, *prev->quant, q)) return false;
    } else {
      read_full(r, q);
    }
    if (!valid(q)) return false;
    e.quant = q;
    e.frame = dequantize_input(q);
    return true;
  }
  if (same_player && r.read_bool()) {
    e.frame = prev->frame;
    return true;
  }
  e.frame.move_x = r.read_float();  // read_float refuses NaN and infinities
  e.frame.move_z = r.read_float();
  e.frame.look_yaw = r.read_float();
  e.frame.buttons = r.read_bits(32);
  return true;
}

}  // namespace

std::vector<uint8_t> encode_input_frame_run(std::span<const InputFrameMessage> frames) {
  BitWriter w;
  std::vector<Entry> prev, cur;
  for (const InputFrameMessage& f : frames) {
    w.write_u64(f.state_hash);
    w.write_int(int64_t(f.inputs.events.size()), 0, kMaxEvents);
    for (const sim::PlayerEvent& e : f.inputs.events) {
      w.write_int(int64_t(e.kind), 0, 1);
      w.write_bits(e.player, 32);
    }
    w.write_int(int64_t(f.inputs.inputs.size()), 0, sim::kMaxPlayersPerMatch);
    cur.clear();
    for (size_t i = 0; i < f.inputs.inputs.size(); ++i) {
      const sim::PlayerInput& in = f.inputs.inputs[i];
      cur.push_back(Entry{in.player, in.frame, as_quantised(in.frame)});
      write_input(w, i < prev.size() ? &prev[i] : nullptr, cur.back());
    }
    std::swap(prev, cur);
  }
  std::vector<uint8_t> payload = w.finish();
  flatbuffers::FlatBufferBuilder fbb(payload.size() + 64);
  auto body = fb::CreateServerInputFrameRunDirect(
      fbb, frames.empty() ? 0 : frames.front().tick, static_cast<uint16_t>(frames.size()), &payload);
  return finish_message(fbb, fb::Body::ServerInputFrameRun, body.Union());
}

DropReason decode_input_frame_run(const fb::ServerInputFrameRun& run, std::vector<InputFrameMessage>& out) {
  out.clear();
  const uint32_t count = run.count();
  if (count == 0 || count > FrameWindow::kMaxFrames || run.payload() == nullptr) return DropReason::OutOfRange;
  if (run.first_tick() > UINT64_MAX - count) return DropReason::OutOfRange;
  BitReader r({run.payload()->data(), run.payload()->size()});
  std::vector<Entry> prev, cur;
  for (uint32_t k = 0; k < count && r.ok(); ++k) {
    InputFrameMessage f;
    f.tick = run.first_tick() + k;
    f.state_hash = r.read_u64();
    const int64_t n_events = r.read_int(0, kMaxEvents);
    for (int64_t i = 0; i < n_events && r.ok(); ++i) {
      auto kind = static_cast<sim::PlayerEvent::Kind>(r.read_int(0, 1));
      f.inputs.events.push_back({kind, r.read_bits(32)});
    }
    const int64_t n_inputs = r.read_int(0, sim::kMaxPlayersPerMatch);
    cur.assign(size_t(r.ok() ? n_inputs : 0), Entry{});
    for (size_t i = 0; i < cur.size() && r.ok(); ++i) {
      if (!read_input(r, i < prev.size() ? &prev[i] : nullptr, cur[i])) return DropReason::OutOfRange;
      // Sorted, unique player ids: the order the match applies them in.
      if (i > 0 && cur[i - 1].player >= cur[i].player) return DropReason::OutOfRange;
      f.inputs.inputs.push_back({cur[i].player, cur[i].frame});
    }
    std::swap(prev, cur);
    out.push_back(std::move(f));
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  return r.at_end() ? DropReason::None : DropReason::MalformedPayload;
}

}  // namespace keel::protocol
