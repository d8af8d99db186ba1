#include <keel/client/interpolation.h>

#include <algorithm>
#include <cmath>

namespace keel::client {

BodyPose blend(const sim::BodyState& a, const sim::BodyState& b, double t) {
  float f = static_cast<float>(std::clamp(t, 0.0, 1.0));
  BodyPose p;
  p.position = a.position + (b.position - a.position) * f;
  // Shortest arc: q and -q are the same rotation.
  sim::Quat qb = glm::dot(a.rotation, b.rotation) < 0.0f ? -b.rotation : b.rotation;
  sim::Quat q = a.rotation * (1.0f - f) + qb * f;
  float len = std::sqrt(glm::dot(q, q));
  p.rotation = len > 0.0f ? q * (1.0f / len) : a.rotation;
  return p;
}

std::vector<uint64_t> SnapshotBuffer::ticks() const {
  std::vector<uint64_t> out;
  out.reserve(snapshots_.size());
  for (const Entry& e : snapshots_) out.push_back(e.tick);
  return out;
}

void SnapshotBuffer::clear() {
  snapshots_.clear();
  tracks_.clear();
  have_interval_ = false;
  jitter_ = 0;
}

// The snapshot's timing: the interval between snapshots and the arrival jitter, which
// the delay follows, whatever bodies each one carries.
bool SnapshotBuffer::note_arrival(uint64_t tick, double now, uint32_t tick_rate) {
  if (!snapshots_.empty() && tick <= snapshots_.back().tick) return false;
  tick_rate_ = tick_rate == 0 ? 60 : tick_rate;
  if (!snapshots_.empty()) {
    const Entry& last = snapshots_.back();
    double gap = static_cast<double>(tick - last.tick);
    // Idle worlds send a snapshot only every few ticks: cap what one gap may teach.
    gap = std::min(gap, 30.0);
    interval_ticks_ = have_interval_ ? interval_ticks_ + 0.1 * (gap - interval_ticks_) : gap;
    have_interval_ = true;
    // Arrival jitter: how far the arrival gap strays from the tick gap.
    double expected = gap / tick_rate_;
    double deviation = std::fabs((now - last.arrival) - expected);
    jitter_ += 0.1 * (std::min(deviation, 1.0) - jitter_);
  }
  snapshots_.push_back({tick, now});
  while (snapshots_.size() > config_.capacity) snapshots_.pop_front();
  return true;
}

// A body keeps at most `capacity` samples, and none older than the oldest snapshot held
// but its newest two (a body not sent for a while still needs them).
void SnapshotBuffer::push(uint32_t id, uint64_t tick, const sim::BodyState& state) {
  Track& t = tracks_[id];
  t.push_back({tick, state});
  const uint64_t oldest = snapshots_.front().tick;
  while (t.size() > config_.capacity || (t.size() > 2 && t.front().tick < oldest)) t.pop_front();
}

bool SnapshotBuffer::add(uint64_t tick, std::vector<sim::BodyState> bodies, double now, uint32_t tick_rate) {
  if (!note_arrival(tick, now, tick_rate)) return false;
  // A whole-world snapshot: what it does not hold is gone.
  auto held = [&](uint32_t id) {
    auto it = std::lower_bound(bodies.begin(), bodies.end(), id,
                               [](const sim::BodyState& b, uint32_t v) { return b.id < v; });
    return it != bodies.end() && it->id == id;
  };
  std::erase_if(tracks_, [&](const auto& kv) { return !held(kv.first); });
  for (const sim::BodyState& b : bodies) push(b.id, tick, b);
  return true;
}

bool SnapshotBuffer::add_partial(uint64_t tick, std::span<const sim::BodyState> updated,
                                 std::span<const uint32_t> left, double now, uint32_t tick_rate) {
  if (!note_arrival(tick, now, tick_rate)) return false;
  for (uint32_t id : left) tracks_.erase(id);
  for (const sim::BodyState& b : updated) push(b.id, tick, b);
  return true;
}

double SnapshotBuffer::delay_seconds() const {
  if (config_.fixed_delay >= 0) return config_.fixed_delay;
  double interval = interval_ticks_ / tick_rate_;
  return std::max(config_.delay_intervals * interval, interval + config_.jitter_factor * jitter_);
}

BodyPose SnapshotBuffer::extrapolate(const Track& track, double tick) const {
  const Sample& last = track.back();
  BodyPose p{last.state.position, last.state.rotation, true, false};
  // A body at rest is not sent again until it moves: its newest sample is its pose now.
  if (last.state.sleeping) return BodyPose{last.state.position, last.state.rotation, false, false};
  double ahead = tick - static_cast<double>(last.tick);
  double limit = config_.max_extrapolation * tick_rate_;
  if (ahead > limit) {
    ahead = limit;
    p.held = true;
  }
  if (track.size() < 2) return p;
  const Sample& prev = track[track.size() - 2];
  // Straight-line velocity from the last two samples; rotation holds (a spinning
  // guess looks worse than a pause).
  float per_tick = static_cast<float>(ahead / static_cast<double>(last.tick - prev.tick));
  p.position = last.state.position + (last.state.position - prev.state.position) * per_tick;
  return p;
}

std::optional<BodyPose> SnapshotBuffer::sample(uint32_t body, double tick) const {
  auto found = tracks_.find(body);
  if (found == tracks_.end() || found->second.empty()) return std::nullopt;
  const Track& track = found->second;
  // The body's last sample at or before `tick`.
  auto it = std::upper_bound(track.begin(), track.end(), tick,
                             [](double t, const Sample& s) { return t < static_cast<double>(s.tick); });
  if (it == track.end()) {
    const Sample& s = track.back();
    if (tick == static_cast<double>(s.tick)) return BodyPose{s.state.position, s.state.rotation, false, false};
    return extrapolate(track, tick);
  }
  if (it == track.begin()) return BodyPose{it->state.position, it->state.rotation, false, false};  // the oldest
  const Sample& a = *(it - 1);
  const Sample& b = *it;
  // A body at rest is not sent again until it moves: after a gap, it stayed where it was
  // until about one snapshot interval before its next sample, and moves only then.
  double from = static_cast<double>(a.tick);
  if (a.state.sleeping) from = std::max(from, static_cast<double>(b.tick) - std::max(1.0, interval_ticks_));
  if (tick <= from) return BodyPose{a.state.position, a.state.rotation, false, false};
  double t = (tick - from) / (static_cast<double>(b.tick) - from);
  if (t <= 0.0) return BodyPose{a.state.position, a.state.rotation, false, false};  // exactly on a
  return blend(a.state, b.state, t);
}

}  // namespace keel::client
