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
  have_interval_ = false;
  jitter_ = 0;
}

bool SnapshotBuffer::add(uint64_t tick, std::vector<sim::BodyState> bodies, double now,
                         uint32_t tick_rate) {
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
  snapshots_.push_back({tick, now, std::move(bodies)});
  while (snapshots_.size() > config_.capacity) snapshots_.pop_front();
  return true;
}

double SnapshotBuffer::delay_seconds() const {
  if (config_.fixed_delay >= 0) return config_.fixed_delay;
  double interval = interval_ticks_ / tick_rate_;
  return std::max(config_.delay_intervals * interval, interval + config_.jitter_factor * jitter_);
}

const sim::BodyState* SnapshotBuffer::find(const Entry& e, uint32_t body) {
  auto it = std::lower_bound(e.bodies.begin(), e.bodies.end(), body,
                             [](const sim::BodyState& s, uint32_t id) { return s.id < id; });
  return it != e.bodies.end() && it->id == body ? &*it : nullptr;
}

BodyPose SnapshotBuffer::extrapolate(uint32_t body, double tick) const {
  const Entry& last = snapshots_.back();
  const sim::BodyState* b = find(last, body);
  BodyPose p{b->position, b->rotation, true, false};
  double ahead = tick - static_cast<double>(last.tick);
  double limit = config_.max_extrapolation * tick_rate_;
  if (ahead > limit) {
    ahead = limit;
    p.held = true;
  }
  if (snapshots_.size() < 2) return p;
  const Entry& prev = snapshots_[snapshots_.size() - 2];
  const sim::BodyState* a = find(prev, body);
  if (a == nullptr || last.tick == prev.tick) return p;
  // Straight-line velocity from the last two snapshots; rotation holds (a spinning
  // guess looks worse than a pause).
  float per_tick = static_cast<float>(ahead / static_cast<double>(last.tick - prev.tick));
  p.position = b->position + (b->position - a->position) * per_tick;
  return p;
}

std::optional<BodyPose> SnapshotBuffer::sample(uint32_t body, double tick) const {
  if (snapshots_.empty()) return std::nullopt;
  // The last snapshot at or before `tick`.
  auto it = std::upper_bound(snapshots_.begin(), snapshots_.end(), tick,
                             [](double t, const Entry& e) { return t < static_cast<double>(e.tick); });
  if (it == snapshots_.end()) {
    if (find(snapshots_.back(), body) == nullptr) return std::nullopt;
    if (tick == static_cast<double>(snapshots_.back().tick)) {
      const sim::BodyState* s = find(snapshots_.back(), body);
      return BodyPose{s->position, s->rotation, false, false};
    }
    return extrapolate(body, tick);
  }
  if (it == snapshots_.begin()) {
    const sim::BodyState* s = find(*it, body);  // before the oldest: the oldest
    if (s == nullptr) return std::nullopt;
    return BodyPose{s->position, s->rotation, false, false};
  }
  const Entry& e0 = *(it - 1);
  const Entry& e1 = *it;
  const sim::BodyState* a = find(e0, body);
  const sim::BodyState* b = find(e1, body);
  if (a == nullptr && b == nullptr) return std::nullopt;
  if (a == nullptr) return BodyPose{b->position, b->rotation, false, false};
  if (b == nullptr) return BodyPose{a->position, a->rotation, false, false};
  double t = (tick - static_cast<double>(e0.tick)) / static_cast<double>(e1.tick - e0.tick);
  if (t <= 0.0) return BodyPose{a->position, a->rotation, false, false};  // exactly on e0
  return blend(*a, *b, t);
}

}  // namespace keel::client
