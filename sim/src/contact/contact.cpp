#include "contact/contact.h"

#include "parallel/executor.h"

#include <algorithm>

namespace keel::sim {

bool ContactSet::contains(uint64_t key) {
  const std::vector<uint64_t>& known = keys();
  return std::binary_search(known.begin(), known.end(), key);
}

const std::vector<size_t>& ContactSet::insert_new(const std::vector<uint64_t>& keys, Executor& executor,
                                                  std::vector<uint32_t>* indices) {
  inserted_at_.clear();
  // Keep only the pairs not yet known, and rebuild the list only when there are some (a
  // ball rolling beside a sleeping field would otherwise copy every contact each time it
  // re-finds the ground). The broadphase already leaves known pairs out on its workers;
  // this keeps the set right for any caller.
  fresh_keys_.clear();
  for (uint64_t k : keys) {
    if (!contains(k)) fresh_keys_.push_back(k);
  }
  if (fresh_keys_.empty()) return inserted_at_;
  // Fresh key j goes before the first old contact with a larger key, so old contact i
  // moves up by the number of fresh keys placed at or before it. Each chunk of old
  // contacts finds its first shift by binary search and copies on any worker.
  const size_t fresh = fresh_keys_.size();
  fresh_at_.resize(fresh);
  for (size_t j = 0; j < fresh; ++j) {
    fresh_at_[j] = size_t(std::lower_bound(keys_.begin(), keys_.end(), fresh_keys_[j]) - keys_.begin());
  }
  merge_scratch_.resize(items_.size() + fresh);
  key_scratch_.resize(items_.size() + fresh);
  executor.parallel_for(items_.size(), kCopyChunk, [&](size_t begin, size_t end) {
    size_t j = size_t(std::upper_bound(fresh_at_.begin(), fresh_at_.end(), begin) - fresh_at_.begin());
    for (size_t i = begin; i < end; ++i) {
      while (j < fresh && fresh_at_[j] <= i) ++j;
      merge_scratch_[i + j] = items_[i];
      key_scratch_[i + j] = items_[i].key;
    }
  });
  for (size_t j = 0; j < fresh; ++j) {
    Contact c;
    c.key = fresh_keys_[j];
    c.shape_a = uint32_t(c.key >> 32);
    c.shape_b = uint32_t(c.key & 0xffffffffu);
    merge_scratch_[fresh_at_[j] + j] = c;
    key_scratch_[fresh_at_[j] + j] = c.key;
    inserted_at_.push_back(fresh_at_[j] + j);
  }
  items_.swap(merge_scratch_);
  keys_.swap(key_scratch_);
  if (indices) {
    size_t j = 0;
    for (uint32_t& i : *indices) {
      while (j < fresh && fresh_at_[j] <= i) ++j;
      i += uint32_t(j);
    }
  }
  ++generation_;
  return inserted_at_;
}

void ContactSet::remove_shape(uint32_t shape) {
  items_.erase(std::remove_if(items_.begin(), items_.end(),
                              [&](const Contact& c) { return c.shape_a == shape || c.shape_b == shape; }),
               items_.end());
  rebuild_keys();
}

void ContactSet::rebuild_keys() {
  ++generation_;
  keys_.resize(items_.size());
  for (size_t i = 0; i < items_.size(); ++i) keys_[i] = items_[i].key;
}

void ContactSet::remove_flagged(const std::vector<uint8_t>& flags, Executor& executor) {
  auto dead = [](uint8_t f) { return (f & kContactDead) != 0; };
  // Most ticks remove nothing: look for a dead contact before copying any (a resting
  // world would otherwise copy every contact each tick).
  if (std::none_of(flags.begin(), flags.end(), dead)) return;
  // Fixed chunks: each counts its survivors, then copies them to where the counts before
  // it say, on any worker.
  const size_t n = items_.size();
  const size_t chunks = (n + kCopyChunk - 1) / kCopyChunk;
  kept_before_.assign(chunks + 1, 0);
  executor.parallel_for(chunks, 1, [&](size_t first, size_t last) {
    for (size_t k = first; k < last; ++k) {
      const size_t end = std::min(n, (k + 1) * kCopyChunk);
      size_t kept = 0;
      for (size_t i = k * kCopyChunk; i < end; ++i) kept += dead(flags[i]) ? 0 : 1;
      kept_before_[k + 1] = kept;
    }
  });
  for (size_t k = 0; k < chunks; ++k) kept_before_[k + 1] += kept_before_[k];
  merge_scratch_.resize(kept_before_[chunks]);
  key_scratch_.resize(kept_before_[chunks]);
  executor.parallel_for(chunks, 1, [&](size_t first, size_t last) {
    for (size_t k = first; k < last; ++k) {
      const size_t end = std::min(n, (k + 1) * kCopyChunk);
      size_t out = kept_before_[k];
      for (size_t i = k * kCopyChunk; i < end; ++i) {
        if (dead(flags[i])) continue;
        merge_scratch_[out] = items_[i];
        key_scratch_[out++] = items_[i].key;
      }
    }
  });
  items_.swap(merge_scratch_);
  keys_.swap(key_scratch_);
  ++generation_;
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
