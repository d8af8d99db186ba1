// libFuzzer: snapshot payloads decoded in full and as deltas against fixed baselines
// (with and without the older baseline used for prediction), with and without
// velocities, and as Snapshot messages through a SnapshotReceiver; the same bytes as a
// PartialSnapshot payload through an InterestReceiver holding per-body baselines, and
// PartialSnapshot messages. Whatever a receiver accepts must keep it within its bounds.
#include <keel/protocol/interest.h>
#include <keel/protocol/snapshot_stream.h>

#include <cstdlib>

#include <cstddef>
#include <cstdint>

namespace kp = keel::protocol;

namespace {

kp::QuantSnapshot baseline(uint64_t tick, uint32_t shift) {
  kp::QuantSnapshot s;
  s.tick = tick;
  for (uint32_t i = 0; i < 40; ++i) {
    kp::QuantBody b;
    b.id = 1 + i * 2;
    b.pos[0] = 1000 + i * 30 + shift;
    b.pos[1] = 500 + shift;
    b.pos[2] = 2000 - i;
    b.largest = 3;
    b.rot[0] = b.rot[1] = b.rot[2] = 1023;
    b.at_rest = (i % 3) == 0;
    s.bodies.push_back(b);
  }
  return s;
}

// A receiver holding bodies 1, 3, .. 79 at ticks 100 and 104 (what interest_test's seeds
// were made against), so deltas in the input can find their baselines.
kp::InterestReceiver holding_receiver(const kp::SnapshotConfig& config) {
  kp::InterestReceiver rx(config);
  kp::InterestSender tx(config);
  for (uint64_t tick : {100u, 104u}) {
    kp::QuantSnapshot s = baseline(tick, uint32_t(tick - 100));
    std::vector<keel::sim::Vec3> pos(s.bodies.size(), keel::sim::Vec3(0.0f));
    std::vector<uint8_t> m = tx.encode({&s, pos, {}, std::nullopt}, 1e9);
    const kp::fb::Message* msg = nullptr;
    if (kp::check_message(m, msg) == kp::DropReason::None) rx.receive(*msg->body_as_PartialSnapshot());
    tx.on_ack(tick);
  }
  return rx;
}

void check_partial(const kp::fb::PartialSnapshot& message) {
  static const kp::InterestReceiver holding = holding_receiver(kp::SnapshotConfig{});
  kp::InterestReceiver rx = holding;  // a copy: each input starts from the same baselines
  const size_t before = rx.bodies();
  const uint64_t before_tick = rx.ack_tick();
  if (rx.receive(message) == kp::DropReason::None) {
    if (rx.bodies() > kp::InterestLimits::kMaxInterestBodies || rx.ack_tick() <= before_tick) std::abort();
    for (const kp::QuantBody& b : rx.last().bodies) {
      if (rx.find(b.id) == nullptr || !(*rx.find(b.id) == b)) std::abort();
    }
  } else if (rx.bodies() != before || rx.ack_tick() != before_tick) {
    std::abort();  // a refused message changes nothing
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  static const kp::QuantSnapshot older = baseline(90, 0);
  static const kp::QuantSnapshot base = baseline(100, 5);
  kp::SnapshotConfig config;
  kp::QuantSnapshot out;
  for (bool velocities : {false, true}) {
    config.velocities = velocities;
    kp::decode_snapshot(bytes, 110, {}, config, out);
    kp::decode_snapshot(bytes, 110, {&base, nullptr}, config, out);
    kp::decode_snapshot(bytes, 110, {&base, &older}, config, out);
  }
  kp::snapshot_older_tick(bytes, 100);
  const kp::fb::Message* m = nullptr;
  if (kp::check_message(bytes, m) == kp::DropReason::None &&
      m->body_type() == kp::fb::Body::Snapshot) {
    kp::SnapshotReceiver receiver(kp::SnapshotConfig{});
    receiver.receive(*m->body_as_Snapshot());
  }
  if (m != nullptr && m->body_type() == kp::fb::Body::PartialSnapshot) {
    check_partial(*m->body_as_PartialSnapshot());
  }
  for (uint32_t tick : {105u, 200u}) {
    flatbuffers::FlatBufferBuilder fbb(size + 64);
    auto payload = fbb.CreateVector(data, size);
    auto body = kp::fb::CreatePartialSnapshot(fbb, tick, payload);
    std::vector<uint8_t> message = kp::finish_message(fbb, kp::fb::Body::PartialSnapshot, body.Union());
    const kp::fb::Message* pm = nullptr;
    if (kp::check_message(message, pm) == kp::DropReason::None) check_partial(*pm->body_as_PartialSnapshot());
  }
  return 0;
}
