#include "contact/contact.h"

#include <algorithm>
#include <cassert>

namespace keel::sim {

bool ContactSet::contains(uint64_t key) const {
  const std::vector<uint64_t>& known = keys();
  return std::binary_search(known.begin(), known.end(), key);
}

void ContactSet::make_room(size_t count) {
  // Growth by half again: a pile that gains pairs tick after tick moves its contacts to
  // new memory (and takes its page faults) a few times, not every tick.
  if (items_.capacity() >= count) return;
  items_.reserve(count + count / 2);
  keys_.reserve(count + count / 2);
}

// In place, from the back: fresh key j goes before old entry fresh_at_[j], so the old
// entries from there up to the next fresh key's place move up by j + 1. Only the entries
// after the first fresh key move, each once; the gaps get fill(j).
template <class List, class Fill>
void ContactSet::open_gaps(List& list, Fill&& fill) const {
  const size_t fresh = inserted_at_.size();
  size_t end = list.size();  // old entries [0, end) are still where they were
  list.resize(end + fresh);
  for (size_t j = fresh; j-- > 0;) {
    const size_t from = fresh_at_[j];
    std::move_backward(list.begin() + from, list.begin() + end, list.begin() + end + j + 1);
    list[from + j] = fill(j);
    end = from;
  }
}

void ContactSet::follow_last_insert(std::vector<uint8_t>& values) const {
  assert(values.size() + inserted_at_.size() == items_.size());
  open_gaps(values, [](size_t) { return uint8_t(0); });
}

const std::vector<size_t>& ContactSet::insert_new(const std::vector<uint64_t>& keys, std::vector<uint32_t>* indices) {
  inserted_at_.clear();
  // Keep only the pairs not yet known, and change the list only when there are some (a
  // ball rolling beside a sleeping field would otherwise move every contact each time it
  // re-finds the ground). The broadphase already leaves known pairs out; this keeps the
  // set right for any caller.
  fresh_keys_.clear();
  for (uint64_t k : keys) {
    if (!contains(k)) fresh_keys_.push_back(k);
  }
  if (fresh_keys_.empty()) return inserted_at_;
  const size_t fresh = fresh_keys_.size();
  const size_t old_count = items_.size();
  fresh_at_.resize(fresh);
  for (size_t j = 0; j < fresh; ++j) {
    fresh_at_[j] = size_t(std::lower_bound(keys_.begin(), keys_.end(), fresh_keys_[j]) - keys_.begin());
  }
  make_room(old_count + fresh);
  auto fresh_contact = [&](size_t j) {
    Contact c;
    c.key = fresh_keys_[j];
    c.shape_a = uint32_t(c.key >> 32);
    c.shape_b = uint32_t(c.key & 0xffffffffu);
    return c;
  };
  inserted_at_.resize(fresh);
  for (size_t j = 0; j < fresh; ++j) inserted_at_[j] = fresh_at_[j] + j;
  open_gaps(items_, fresh_contact);
  open_gaps(keys_, [&](size_t j) { return fresh_keys_[j]; });
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

void ContactSet::remove_flagged(const std::vector<uint8_t>& flags) {
  auto dead = [](uint8_t f) { return (f & kContactDead) != 0; };
  // Most ticks remove nothing: look for a dead contact before moving any.
  const size_t n = items_.size();
  size_t out = size_t(std::find_if(flags.begin(), flags.begin() + n, dead) - flags.begin());
  if (out == n) return;
  // In place, front to back: each run of survivors after the first dead contact moves
  // down as one block.
  size_t i = out;
  while (i < n) {
    while (i < n && dead(flags[i])) ++i;
    size_t run_end = i;
    while (run_end < n && !dead(flags[run_end])) ++run_end;
    std::move(items_.begin() + i, items_.begin() + run_end, items_.begin() + out);
    std::move(keys_.begin() + i, keys_.begin() + run_end, keys_.begin() + out);
    out += run_end - i;
    i = run_end;
  }
  items_.resize(out);
  keys_.resize(out);
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
  if (c.count == 0) c.sliding = false;  // a contact that parted grips when it touches again
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
