// The snapshot codec: world state as a few hundred bytes per client per tick.
//
// Quantisation (both ends agree on a SnapshotConfig, derived from the scene):
//   - positions on a grid of 1/position_resolution m inside the match bounds;
//   - orientations as "smallest three": the largest component's index (2 bits) and the
//     other three in [-1/sqrt2, 1/sqrt2] with rotation_bits each (>= 9);
//   - an at-rest flag (speed under a threshold, or asleep);
//   - velocities optionally, on a grid of 1/velocity_resolution.
// The server quantises, encodes, and from then on treats the *quantised* state as the
// truth it sent; the client's decoded QuantSnapshot equals it exactly, integer for integer.
//
// Encoding: a full snapshot, or a delta against a baseline the client acknowledged —
// bodies removed (indices into the baseline), bodies added (full), and the bodies that
// changed (a bitmask over the kept bodies or a list of index gaps, whichever is
// shorter), each as per-field differences with a shared bit width. Changed positions are
// predicted by extrapolating from the baseline and an optional older baseline, so a body
// moving steadily costs a few bits. docs/protocol.md has the bit layout.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/sim/defs.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <span>
#include <vector>

namespace keel::protocol {

struct SnapshotConfig {
  sim::Vec3 bounds_min{-256.0f, -64.0f, -256.0f};
  sim::Vec3 bounds_max{256.0f, 192.0f, 256.0f};
  uint32_t position_resolution = 512;  ///< grid steps per metre: error <= 1/1024 m
  /// Per smallest-three component, 9 .. 15. The worst-case angle error is about
  /// 2*sqrt(12)*(sqrt2/2)/(2^bits - 2) radians: 0.27 degrees at 10 bits, 0.14 at 11.
  uint32_t rotation_bits = 11;
  bool velocities = false;
  float max_speed = 64.0f;             ///< m/s and rad/s, velocities clamp to it
  uint32_t velocity_resolution = 64;   ///< steps per m/s (rad/s)
  float at_rest_speed = 0.01f;         ///< m/s and rad/s below which a body is at rest

  /// Bounds that hold every body of a scene with `margin` metres to spare on each side.
  static SnapshotConfig for_scene(const sim::SceneDef& scene, float margin = 64.0f);
  /// False when the grid would need more than 24 bits per axis or rotation_bits is out
  /// of range.
  bool valid() const;
  friend bool operator==(const SnapshotConfig&, const SnapshotConfig&) = default;
};

inline constexpr uint32_t kMaxSnapshotBodies = 65535;

/// One body as it goes on the wire: integers only.
struct QuantBody {
  uint32_t id = 0;
  uint32_t pos[3] = {0, 0, 0};
  uint8_t largest = 3;        ///< index (x, y, z, w) of the dropped largest component
  uint32_t rot[3] = {0, 0, 0};
  bool at_rest = false;
  uint32_t lin[3] = {0, 0, 0};  ///< with config.velocities only
  uint32_t ang[3] = {0, 0, 0};

  friend bool operator==(const QuantBody&, const QuantBody&) = default;
};

struct QuantSnapshot {
  uint64_t tick = 0;
  std::vector<QuantBody> bodies;  ///< sorted by id, unique

  friend bool operator==(const QuantSnapshot&, const QuantSnapshot&) = default;
};

/// Quantises body states (any order; the result is sorted by id).
QuantSnapshot quantize(std::span<const sim::BodyState> bodies, uint64_t tick,
                       const SnapshotConfig& config);
/// The position, rotation (and velocities) a quantised body stands for.
sim::BodyState dequantize(const QuantBody& body, const SnapshotConfig& config);
/// The moving (non-static) bodies of a world, the usual content of a snapshot.
std::vector<sim::BodyState> snapshot_bodies(const sim::World& world);

/// Baselines for a delta: the snapshot the client acknowledged, and optionally an older
/// acknowledged one that lets positions be extrapolated.
struct Baselines {
  const QuantSnapshot* base = nullptr;
  const QuantSnapshot* older = nullptr;
};

/// Encodes `current`, as a delta when baselines.base is set, else in full.
std::vector<uint8_t> encode_snapshot(const QuantSnapshot& current, const Baselines& baselines,
                                     const SnapshotConfig& config);
/// Decodes a payload made by encode_snapshot with the same baselines. `tick` comes from
/// the enclosing message. Every count, index and value is range-checked: OutOfRange or
/// MalformedPayload on failure, and `out` is then unspecified.
DropReason decode_snapshot(std::span<const uint8_t> payload, uint64_t tick,
                           const Baselines& baselines, const SnapshotConfig& config,
                           QuantSnapshot& out);

/// For a delta payload against baseline tick `base_tick`: the tick of the older baseline
/// it extrapolates from (the receiver looks it up in its history), or 0 when none.
uint64_t snapshot_older_tick(std::span<const uint8_t> payload, uint64_t base_tick);

}  // namespace keel::protocol
