// libFuzzer: snapshot payloads decoded in full and as deltas against fixed baselines
// (with and without the older baseline used for prediction), with and without
// velocities, and as Snapshot messages through a SnapshotReceiver.
#include <keel/protocol/snapshot_stream.h>

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
  return 0;
}
