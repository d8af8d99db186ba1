#include "contact/contact.h"

#include <algorithm>

namespace keel::sim {

bool ContactSet::contains(uint64_t key) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), key,
                             [](const Contact& c, uint64_t k) { return c.key < k; });
  return it != items_.end() && it->key == key;
}

void ContactSet::insert_new(const std::vector<uint64_t>& keys) {
  // Keep only the pairs not yet known, and rebuild the list only when there are some (a
  // ball rolling beside a sleeping field would otherwise copy every contact each time it
  // re-finds the ground). The broadphase already leaves known pairs out on its workers;
  // this keeps the set right for any caller.
  fresh_keys_.clear();
  for (uint64_t k : keys) {
    if (!contains(k)) fresh_keys_.push_back(k);
  }
  if (fresh_keys_.empty()) return;
  merge_scratch_.clear();
  merge_scratch_.reserve(items_.size() + fresh_keys_.size());
  size_t i = 0;
  for (uint64_t k : fresh_keys_) {
    while (i < items_.size() && items_[i].key < k) merge_scratch_.push_back(items_[i++]);
    Contact c;
    c.key = k;
    c.shape_a = uint32_t(k >> 32);
    c.shape_b = uint32_t(k & 0xffffffffu);
    merge_scratch_.push_back(c);
  }
  while (i < items_.size()) merge_scratch_.push_back(items_[i++]);
  items_.swap(merge_scratch_);
}

void ContactSet::remove_shape(uint32_t shape) {
  items_.erase(std::remove_if(items_.begin(), items_.end(),
                              [&](const Contact& c) { return c.shape_a == shape || c.shape_b == shape; }),
               items_.end());
}

void ContactSet::remove_flagged(const std::vector<uint8_t>& dead) {
  // Most ticks remove nothing: find the first dead contact before copying any (a resting
  // world would otherwise copy every contact onto itself each tick).
  size_t w = 0;
  while (w < items_.size() && !dead[w]) ++w;
  for (size_t r = w; r < items_.size(); ++r) {
    if (!dead[r]) items_[w++] = items_[r];
  }
  items_.resize(w);
}

void update_manifold(Contact& c, const Manifold& m, const Vec3& center_a, const Vec3& center_b,
                     bool flatten_friction) {
  // Only what carries over (plain arrays, no default initialisation: most pairs of a busy
  // world have no points, and this runs for each of them every tick).
  const int old_count = c.count;
  uint32_t old_id[kMaxManifoldPoints];
  float old_normal[kMaxManifoldPoints];
  float old_friction[kMaxManifoldPoints][3];
  for (int i = 0; i < old_count; ++i) {
    old_id[i] = c.points[i].id;
    old_normal[i] = c.points[i].normal_impulse;
    for (int k = 0; k < 3; ++k) old_friction[i][k] = c.points[i].friction_impulse[k];
  }

  c.normal = m.normal;
  c.count = m.count;
  for (int i = 0; i < m.count; ++i) {
    const ManifoldPoint& mp = m.points[i];
    ContactPoint& p = c.points[i];
    p = ContactPoint{};
    p.anchor_a = mp.point - center_a;
    p.anchor_b = mp.point - center_b;
    p.point = mp.point;
    p.depth = mp.depth;
    p.id = mp.id;
    for (int j = 0; j < old_count; ++j) {
      if (old_id[j] != mp.id) continue;
      p.normal_impulse = old_normal[j];
      // Keep only the part of last tick's friction that lies in today's contact plane.
      Vec3 f(old_friction[j][0], old_friction[j][1], old_friction[j][2]);
      p.friction_impulse = flatten_friction ? f - glm::dot(f, m.normal) * m.normal : f;
      break;
    }
  }
}

}  // namespace keel::sim
