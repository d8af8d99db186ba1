// Lag compensation: the match's pose history (a ring of every movable body's pose per
// tick, part of the match's state when the game keeps one) and the queries that test
// against it "as a player saw the world".
#include <keel/game/match.h>

#include <keel/base/byte_io.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace keel::game {

namespace {

// A frame at most holds every body a world can hold; the bytes left bound it first.
constexpr uint32_t kMaxPosesPerFrame = 1u << 24;

bool finite_pose(const PastPose& p) {
  return std::isfinite(p.position.x) && std::isfinite(p.position.y) && std::isfinite(p.position.z) &&
         std::isfinite(p.rotation.x) && std::isfinite(p.rotation.y) && std::isfinite(p.rotation.z) &&
         std::isfinite(p.rotation.w);
}

sim::PosedBody posed(const PastPose& p) { return sim::PosedBody{p.body_id, p.position, p.rotation}; }

// The pose `t` of the way from a to b (t = fraction / 256, exact in a float): positions
// lerped, rotations nlerped the short way round. Plain + - * / and one sqrt, so the same
// bits on every machine (docs/determinism.md).
sim::PosedBody blend(const PastPose& a, const PastPose& b, float t) {
  sim::Quat qb = b.rotation;
  const float dot = a.rotation.x * qb.x + a.rotation.y * qb.y + a.rotation.z * qb.z + a.rotation.w * qb.w;
  if (dot < 0.0f) qb = -qb;
  sim::Quat q = a.rotation * (1.0f - t) + qb * t;
  const float len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  q = len > 0.0f ? q / len : a.rotation;
  return sim::PosedBody{a.body_id, a.position + (b.position - a.position) * t, q};
}

void write_frame(const PoseFrame& f, std::vector<uint8_t>& out);  // below, with the stores

}  // namespace

void Match::record_poses() {
  if (spec_.pose_history_ticks == 0) return;
  // The oldest frame's storage is reused for the newest once the ring is full.
  PoseFrame frame;
  std::vector<uint8_t> bytes;
  if (history_.size() > spec_.pose_history_ticks) {
    frame = std::move(history_.front());
    history_.pop_front();
    if (!history_bytes_.empty()) {
      bytes = std::move(history_bytes_.front());
      history_bytes_.pop_front();
    }
  }
  frame.tick = world_.tick();
  frame.poses.clear();
  for (sim::BodyId id : world_.bodies()) {
    const sim::BodyState b = world_.body_state(id);
    if (b.motion == sim::MotionType::Static) continue;  // never moves: the present is its past
    frame.poses.push_back(PastPose{b.id, b.position, b.rotation});
  }
  std::sort(frame.poses.begin(), frame.poses.end(),
            [](const PastPose& a, const PastPose& b) { return a.body_id < b.body_id; });
  write_frame(frame, bytes);
  history_.push_back(std::move(frame));
  history_bytes_.push_back(std::move(bytes));
}

namespace {
// Little-endian stores into bytes already sized (the layout ByteWriter writes, without a
// push_back per byte: the ring is written and hashed every tick).
uint8_t* store_u32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
  return p + 4;
}
uint8_t* store_f32(uint8_t* p, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return store_u32(p, bits);
}
uint8_t* store_u64(uint8_t* p, uint64_t v) { return store_u32(store_u32(p, uint32_t(v)), uint32_t(v >> 32)); }
}  // namespace

namespace {
// One frame's canonical bytes: tick, pose count, then each pose (id, position, rotation).
void write_frame(const PoseFrame& f, std::vector<uint8_t>& out) {
  out.resize(12 + f.poses.size() * kPastPoseBytes);
  uint8_t* p = store_u64(out.data(), f.tick);
  p = store_u32(p, uint32_t(f.poses.size()));
  for (const PastPose& q : f.poses) {
    p = store_u32(p, q.body_id);
    p = store_f32(p, q.position.x);
    p = store_f32(p, q.position.y);
    p = store_f32(p, q.position.z);
    p = store_f32(p, q.rotation.x);
    p = store_f32(p, q.rotation.y);
    p = store_f32(p, q.rotation.z);
    p = store_f32(p, q.rotation.w);
  }
}
}  // namespace

void Match::rebuild_history_bytes() {
  history_bytes_.clear();
  for (const PoseFrame& f : history_) {
    history_bytes_.emplace_back();
    write_frame(f, history_bytes_.back());
  }
}

void Match::write_history(std::vector<uint8_t>& out) const {
  // The frames' bytes were written as they were recorded; the same layout, field by
  // field, as a frame written now (history_bytes_ follows history_ one for one).
  size_t bytes = 4;
  for (const std::vector<uint8_t>& f : history_bytes_) bytes += f.size();
  const size_t at = out.size();
  out.resize(at + bytes);
  uint8_t* p = store_u32(out.data() + at, uint32_t(history_.size()));
  for (const std::vector<uint8_t>& f : history_bytes_) {
    std::memcpy(p, f.data(), f.size());
    p += f.size();
  }
}

bool Match::read_history(std::span<const uint8_t> bytes, size_t& at, std::deque<PoseFrame>& out) const {
  keel::ByteReader r(bytes.subspan(std::min(at, bytes.size())));
  const uint32_t frames = r.count(12, spec_.pose_history_ticks + 1, "pose history frame");
  for (uint32_t i = 0; i < frames && r.ok(); ++i) {
    PoseFrame f;
    f.tick = r.u64();
    if (i > 0 && f.tick != out.back().tick + 1) return false;  // consecutive ticks only
    const uint32_t n = r.count(kPastPoseBytes, kMaxPosesPerFrame, "pose");
    f.poses.resize(n);
    for (uint32_t k = 0; k < n && r.ok(); ++k) {
      PastPose& p = f.poses[k];
      p.body_id = r.u32();
      const float px = r.f32(), py = r.f32(), pz = r.f32();  // in order: arguments are not sequenced
      p.position = sim::Vec3(px, py, pz);
      const float x = r.f32(), y = r.f32(), z = r.f32(), wq = r.f32();
      p.rotation = sim::make_quat(x, y, z, wq);
      if (!finite_pose(p) || (k > 0 && p.body_id <= f.poses[k - 1].body_id)) return false;
    }
    out.push_back(std::move(f));
  }
  if (!r.ok()) return false;
  at += r.position();
  return true;
}

bool Match::clamp_view(ViewStamp& view) const {
  const ViewStamp asked = view;
  view.lag = uint16_t(std::min<uint32_t>(view.lag, max_view_lag()));
  if (view.lag == 0) view.fraction = 0;  // the tick after the present has not happened
  return view == asked;
}

std::pair<uint64_t, uint8_t> Match::view_of(uint32_t player) const {
  const PlayerSlot* slot = find_player(player);
  if (slot == nullptr) return {tick(), 0};
  return {tick() - std::min<uint64_t>(slot->view.lag, tick()), slot->view.fraction};
}

std::vector<sim::PosedBody> Match::poses_seen(const ViewStamp& asked) const {
  ViewStamp view = asked;
  clamp_view(view);
  std::vector<sim::PosedBody> out;
  if (view.lag == 0 || history_.empty()) return out;
  // history_.back() is this tick's frame, so lag L is L frames before it.
  const PoseFrame& a = history_[history_.size() - 1 - view.lag];
  const PoseFrame& b = history_[history_.size() - view.lag];
  out.reserve(a.poses.size());
  if (view.fraction == 0) {
    for (const PastPose& p : a.poses) out.push_back(posed(p));
    return out;
  }
  // Both frames are sorted by id: a body in both is blended, one only in the earlier
  // (removed since) stays where it was, one only in the later (not there yet) is left out.
  const float t = float(view.fraction) / 256.0f;
  size_t j = 0;
  for (const PastPose& p : a.poses) {
    while (j < b.poses.size() && b.poses[j].body_id < p.body_id) ++j;
    if (j < b.poses.size() && b.poses[j].body_id == p.body_id) out.push_back(blend(p, b.poses[j], t));
    else out.push_back(posed(p));
  }
  return out;
}

namespace {
ViewStamp view_stamp_of(const Match& m, uint32_t player) {
  const PlayerSlot* slot = m.find_player(player);
  return slot != nullptr ? slot->view : ViewStamp{};
}
}  // namespace

std::optional<sim::QueryHit> Match::raycast_as_seen(uint32_t player, const sim::Vec3& origin,
                                                    const sim::Vec3& direction, float max_distance,
                                                    const sim::QueryFilter& filter) const {
  const ViewStamp view = view_stamp_of(*this, player);
  if (view.lag == 0 || history_.empty()) return sim::raycast(world_, origin, direction, max_distance, filter);
  const std::vector<sim::PosedBody> seen = poses_seen(view);
  return sim::raycast_posed(world_, seen, origin, direction, max_distance, filter);
}

std::optional<sim::QueryHit> Match::shape_cast_as_seen(uint32_t player, const sim::QueryShape& shape,
                                                       const sim::Transform& start, const sim::Vec3& direction,
                                                       float max_distance, const sim::QueryFilter& filter) const {
  const ViewStamp view = view_stamp_of(*this, player);
  if (view.lag == 0 || history_.empty()) return sim::shape_cast(world_, shape, start, direction, max_distance, filter);
  const std::vector<sim::PosedBody> seen = poses_seen(view);
  return sim::shape_cast_posed(world_, seen, shape, start, direction, max_distance, filter);
}

std::vector<sim::OverlapHit> Match::overlap_as_seen(uint32_t player, const sim::QueryShape& shape,
                                                    const sim::Transform& pose,
                                                    const sim::QueryFilter& filter) const {
  const ViewStamp view = view_stamp_of(*this, player);
  if (view.lag == 0 || history_.empty()) return sim::overlap(world_, shape, pose, filter);
  const std::vector<sim::PosedBody> seen = poses_seen(view);
  return sim::overlap_posed(world_, seen, shape, pose, filter);
}

}  // namespace keel::game
