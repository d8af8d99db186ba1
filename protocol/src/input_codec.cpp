// Bit layout of an input batch (BitWriter order): the first frame in full, then each
// following frame as `same:1`, or `0` then three change groups:
//   move_changed:1 [dx dz]  yaw_changed:1 [dyaw]  buttons_changed:1 [buttons:8]
// where dx, dz are the differences of the move components and dyaw the difference of
// yaw taken the short way round (-32768 .. 32767), each an exp-Golomb code
// (BitWriter::write_golomb), so a smoothly turning, smoothly steering player costs a few
// bits a frame. A full frame is move_x:8 move_z:8 yaw:16 buttons:8 (two's complement).
#include <keel/protocol/input_codec.h>

#include "input_bits.h"

#include <algorithm>
#include <cmath>

namespace keel::protocol {
namespace detail {

void write_full(BitWriter& w, const QuantInput& f) {
  w.write_bits(static_cast<uint8_t>(f.move_x), 8);
  w.write_bits(static_cast<uint8_t>(f.move_z), 8);
  w.write_bits(f.yaw, 16);
  w.write_bits(f.buttons, 8);
}

void read_full(BitReader& r, QuantInput& f) {
  f.move_x = static_cast<int8_t>(static_cast<uint8_t>(r.read_bits(8)));
  f.move_z = static_cast<int8_t>(static_cast<uint8_t>(r.read_bits(8)));
  f.yaw = static_cast<uint16_t>(r.read_bits(16));
  f.buttons = static_cast<uint8_t>(r.read_bits(8));
}

void write_change(BitWriter& w, const QuantInput& p, const QuantInput& f) {
  w.write_bool(f == p);
  if (f == p) return;
  bool move = f.move_x != p.move_x || f.move_z != p.move_z;
  w.write_bool(move);
  if (move) {
    w.write_golomb(int{f.move_x} - p.move_x);
    w.write_golomb(int{f.move_z} - p.move_z);
  }
  w.write_bool(f.yaw != p.yaw);
  if (f.yaw != p.yaw) w.write_golomb(static_cast<int16_t>(static_cast<uint16_t>(f.yaw - p.yaw)));
  w.write_bool(f.buttons != p.buttons);
  if (f.buttons != p.buttons) w.write_bits(f.buttons, 8);
}

bool read_change(BitReader& r, const QuantInput& before, QuantInput& f) {
  f = before;
  if (r.read_bool()) return true;
  if (r.read_bool()) {
    int64_t x = f.move_x + r.read_golomb();
    int64_t z = f.move_z + r.read_golomb();
    if (x < -kMoveSteps || x > kMoveSteps || z < -kMoveSteps || z > kMoveSteps) {
      r.fail();
      return false;
    }
    f.move_x = static_cast<int8_t>(x);
    f.move_z = static_cast<int8_t>(z);
  }
  if (r.read_bool()) {
    int64_t dy = r.read_golomb();
    if (dy < -32768 || dy > 32767) {
      r.fail();
      return false;
    }
    f.yaw = static_cast<uint16_t>(f.yaw + static_cast<uint16_t>(static_cast<int16_t>(dy)));
  }
  if (r.read_bool()) f.buttons = static_cast<uint8_t>(r.read_bits(8));
  return true;
}

bool valid(const QuantInput& f) {
  int x = f.move_x, z = f.move_z;
  return x != -128 && z != -128 && x * x + z * z <= kMoveSteps * kMoveSteps + 2 * kMoveSteps &&
         (f.buttons & ~sim::kKnownButtons) == 0;
}

}  // namespace detail

namespace {

using namespace detail;

constexpr double kPi = 3.14159265358979323846;

int8_t quantize_move(float v) {
  return static_cast<int8_t>(std::lround(std::clamp(double(v), -1.0, 1.0) * kMoveSteps));
}

}  // namespace

QuantInput quantize_input(const sim::InputFrame& frame) {
  sim::InputFrame f = frame;
  sim::sanitize(f);
  QuantInput q;
  q.move_x = quantize_move(f.move_x);
  q.move_z = quantize_move(f.move_z);
  double turn = (double(f.look_yaw) + kPi) / (2 * kPi);  // [0, 1)
  q.yaw = static_cast<uint16_t>(static_cast<uint32_t>(std::lround(turn * 65536.0)) & 0xffffu);
  q.buttons = static_cast<uint8_t>(f.buttons & sim::kKnownButtons);
  return q;
}

sim::InputFrame dequantize_input(const QuantInput& q) {
  sim::InputFrame f;
  f.move_x = float(q.move_x) / kMoveSteps;
  f.move_z = float(q.move_z) / kMoveSteps;
  f.look_yaw = float(-kPi + double(q.yaw) * (2 * kPi / 65536.0));
  f.buttons = q.buttons;
  return f;
}

std::vector<uint8_t> encode_inputs(std::span<const QuantInput> frames) {
  BitWriter w;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i == 0) {
      write_full(w, frames[i]);
    } else {
      write_change(w, frames[i - 1], frames[i]);
    }
  }
  return w.finish();
}

DropReason decode_inputs(std::span<const uint8_t> bytes, uint32_t count,
                         std::vector<QuantInput>& out) {
  out.clear();
  if (count == 0 || count > MessageLimits::kMaxInputWindow) return DropReason::OutOfRange;
  BitReader r(bytes);
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    QuantInput f;
    if (i == 0) {
      read_full(r, f);
    } else if (!read_change(r, out.back(), f)) {
      return DropReason::OutOfRange;
    }
    if (!valid(f)) return DropReason::OutOfRange;
    out.push_back(f);
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  return r.at_end() ? DropReason::None : DropReason::MalformedPayload;
}

void InputSender::add(uint64_t tick, const QuantInput& frame) {
  if (frames_.empty()) first_tick_ = tick;
  frames_.push_back(frame);
  while (frames_.size() > MessageLimits::kMaxInputWindow) {
    frames_.pop_front();
    ++first_tick_;
  }
}

void InputSender::on_ack(uint64_t tick) {
  while (!frames_.empty() && first_tick_ <= tick) {
    frames_.pop_front();
    ++first_tick_;
  }
  if (frames_.empty() && tick >= first_tick_) first_tick_ = tick + 1;
}

std::vector<uint8_t> InputSender::build_batch(uint64_t ack_snapshot_tick,
                                              uint64_t ack_frame_tick) const {
  if (frames_.empty()) return {};
  std::vector<QuantInput> v(frames_.begin(), frames_.end());
  auto bits = encode_inputs(v);
  flatbuffers::FlatBufferBuilder fbb(bits.size() + 64);
  auto body = fb::CreateInputBatchDirect(fbb, first_tick_, static_cast<uint16_t>(v.size()), &bits,
                                         ack_snapshot_tick, ack_frame_tick);
  return finish_message(fbb, fb::Body::InputBatch, body.Union());
}

DropReason InputReceiver::receive(const fb::InputBatch& batch, uint64_t server_tick,
                                  std::vector<std::pair<uint64_t, QuantInput>>& fresh) {
  fresh.clear();
  uint64_t first = batch.first_tick();
  uint64_t last = first + batch.count() - 1;  // count >= 1 (check_message)
  if (first > server_tick + kMaxAhead || last + kMaxBehind < server_tick || last < first) {
    return DropReason::OutOfRange;
  }
  std::vector<QuantInput> frames;
  std::span<const uint8_t> bytes;
  if (batch.frames() != nullptr) bytes = {batch.frames()->data(), batch.frames()->size()};
  DropReason r = decode_inputs(bytes, batch.count(), frames);
  if (r != DropReason::None) return r;
  if (any_ && last <= newest_) return DropReason::Duplicate;
  // Frames arrive in tick order within a batch; a gap before `first` means frames the
  // client gave up on (its window overflowed) — they stay missing, the rule applies.
  for (uint64_t i = 0; i < frames.size(); ++i) {
    uint64_t tick = first + i;
    if (any_ && tick <= newest_) continue;
    fresh.emplace_back(tick, frames[i]);
  }
  newest_ = last;
  any_ = true;
  return DropReason::None;
}

}  // namespace keel::protocol
