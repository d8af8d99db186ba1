// Snapshot interpolation: the decoded snapshots of the last second or so, and the pose of
// any body at any (fractional) server tick between them.
//
// A renderer draws the world a little in the past — the interpolation delay — so that
// the two snapshots around the drawn time have both arrived. The delay is picked from the
// snapshot rate and the measured arrival jitter (by default 3 snapshot intervals, plus
// twice the jitter when that is larger); when snapshots stop, poses are extrapolated
// from the last two for at most `max_extrapolation` seconds and then held, and every pose
// says whether it was extrapolated.
#pragma once

#include <keel/sim/math.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace keel::client {

struct InterpolationConfig {
  double delay_intervals = 3.0;   ///< delay in snapshot intervals (the usual knob)
  double jitter_factor = 2.0;     ///< the delay also covers this many times the jitter
  double fixed_delay = -1.0;      ///< s; >= 0 overrides the adaptive delay
  double max_extrapolation = 0.25;  ///< s past the newest snapshot, then poses hold
  size_t capacity = 128;          ///< snapshots kept, and samples per body (older ones are dropped)
};

/// A body's pose for rendering.
struct BodyPose {
  sim::Vec3 position{0.0f};
  sim::Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  bool extrapolated = false;  ///< past the newest snapshot
  bool held = false;          ///< extrapolation limit reached: pose frozen
};

class SnapshotBuffer {
 public:
  explicit SnapshotBuffer(const InterpolationConfig& config = {}) : config_(config) {}

  /// Adds a decoded whole-world snapshot (bodies sorted by id) of server tick `tick` that
  /// arrived at local time `now`: a body it does not hold is gone. Older-than-newest
  /// snapshots are ignored (returns false).
  bool add(uint64_t tick, std::vector<sim::BodyState> bodies, double now, uint32_t tick_rate);
  /// Adds a partial snapshot (interest management): `updated` bodies get a sample at
  /// `tick`, the others keep theirs, and the `left` ones (out of the client's interest)
  /// are dropped. Each body is interpolated between its own samples.
  bool add_partial(uint64_t tick, std::span<const sim::BodyState> updated, std::span<const uint32_t> left,
                   double now, uint32_t tick_rate);
  /// The pose of `body` at fractional server tick `tick`, or nullopt when the body is not
  /// held (never received, or gone / out of interest). Between the body's own samples it
  /// is interpolated; past its newest it is extrapolated from its last two, unless that
  /// sample is at rest (a resting body is simply not sent again).
  std::optional<BodyPose> sample(uint32_t body, double tick) const;

  /// Smoothed ticks between consecutive snapshots, and the arrival jitter (s).
  double interval_ticks() const { return interval_ticks_; }
  double jitter_seconds() const { return jitter_; }
  /// The delay the renderer should draw behind the newest snapshot, in seconds.
  double delay_seconds() const;
  bool empty() const { return snapshots_.empty(); }
  uint64_t newest_tick() const { return snapshots_.empty() ? 0 : snapshots_.back().tick; }
  uint64_t oldest_tick() const { return snapshots_.empty() ? 0 : snapshots_.front().tick; }
  size_t size() const { return snapshots_.size(); }
  /// The ticks of the snapshots held, oldest first.
  std::vector<uint64_t> ticks() const;
  void clear();
  /// Bodies held.
  size_t bodies() const { return tracks_.size(); }

 private:
  struct Entry {
    uint64_t tick = 0;
    double arrival = 0;
  };
  struct Sample {
    uint64_t tick = 0;
    sim::BodyState state;
  };
  using Track = std::deque<Sample>;
  bool note_arrival(uint64_t tick, double now, uint32_t tick_rate);
  void push(uint32_t id, uint64_t tick, const sim::BodyState& state);
  BodyPose extrapolate(const Track& track, double tick) const;

  InterpolationConfig config_;
  std::deque<Entry> snapshots_;
  std::unordered_map<uint32_t, Track> tracks_;
  uint32_t tick_rate_ = 60;
  double interval_ticks_ = 2.0;
  double jitter_ = 0;
  bool have_interval_ = false;
};

/// Linear position, normalised-linear rotation (shortest arc) between two poses; t in [0,1].
BodyPose blend(const sim::BodyState& a, const sim::BodyState& b, double t);

}  // namespace keel::client
