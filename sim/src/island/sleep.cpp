#include "island/sleep.h"

#include "island/union_find.h"

#include "world_impl.h"

#include <algorithm>

namespace keel::sim {

namespace {

bool is_moving_kinematic(const Body& b) {
  return b.motion == MotionType::Kinematic &&
         (b.linear_velocity != Vec3(0.0f) || b.angular_velocity != Vec3(0.0f));
}

bool is_awake_dynamic(const Body& b) { return b.motion == MotionType::Dynamic && !b.sleeping; }

// Wakes the sleepers filed under `island` (its members, read from the asleep set rather
// than from every body). The sets take them in at the next settle.
void wake_island(WorldImpl& w, uint32_t island) {
  BodySets& sets = current_body_sets(w, false);
  for (const BodySets::Sleeper& s : sets.island(island)) {
    Body& b = w.bodies[s.slot];
    if (!b.sleeping) continue;  // woken earlier, not yet settled
    b.sleeping = false;
    b.sleep_time = 0.0f;
    b.island = kNullIndex;
    sets.woke(s.slot);
  }
}

void settle(WorldImpl& w) {
  w.body_sets.settle([&](uint32_t slot) { return w.bodies[slot].sleeping; });
}

float point_speed(const Body& b) {
  return glm::length(b.linear_velocity) + glm::length(b.angular_velocity) * b.reach;
}

}  // namespace

BodySets& current_body_sets(WorldImpl& w, bool settled) {
  BodySets& sets = w.body_sets;
  if (!sets.valid()) {
    sets.reset();
    for (uint32_t i = 0; i < uint32_t(w.bodies.size()); ++i) {
      const Body& b = w.bodies[i];
      if (!b.alive || b.motion == MotionType::Static) continue;
      if (b.sleeping) {
        sets.add_asleep(b.island, i);
      } else {
        sets.add_awake(i);
      }
    }
    sets.finish_rebuild();
  } else if (settled) {
    settle(w);
  }
  return sets;
}

void wake_island_of(WorldImpl& w, uint32_t slot) {
  Body& b = w.bodies[slot];
  if (b.sleeping) wake_island(w, b.island);
  b.sleep_time = 0.0f;
}

void wake_islands_touching(WorldImpl& w, uint32_t slot) {
  for (const Contact& c : w.contacts.items()) {
    if (c.count == 0 || c.sensor) continue;
    if (c.body_a == slot) wake_island_of(w, c.body_b);
    if (c.body_b == slot) wake_island_of(w, c.body_a);
  }
}

bool wake_touched_islands(WorldImpl& w, const std::vector<uint8_t>* pass_flags) {
  // Only an awake dynamic body or a moving kinematic body wakes anything: a world that
  // has neither (everything asleep or still) skips the pass over its contacts.
  // Likewise a world with no sleeper (everything moving) has nothing to wake.
  const BodySets& sets = current_body_sets(w);
  if (!sets.any_asleep()) return false;
  bool any_waker = false;
  for (uint32_t slot : sets.awake()) {
    const Body& b = w.bodies[slot];
    any_waker |= is_awake_dynamic(b) || is_moving_kinematic(b);
  }
  if (!any_waker) return false;
  bool woke = false;
  auto wake = [&](const Body& sleeper) {
    wake_island(w, sleeper.island);
    woke = true;
  };
  // (Before the touching list of this tick exists: the woken contacts are refreshed next.)
  // One pass in key order, on the bodies as they are now: a body woken early in the pass
  // wakes what it touches later in it. Until the first wake, a held contact (neither side
  // could move) cannot wake anything, so with the pass's flags only unheld contacts with
  // points are read up to there.
  const auto& contacts = w.contacts.items();
  for (size_t i = 0; i < contacts.size(); ++i) {
    if (pass_flags && !woke && ((*pass_flags)[i] & (kContactTouching | kContactHeld)) != kContactTouching) continue;
    const Contact& c = contacts[i];
    if (c.count == 0 || c.sensor) continue;
    const Body& a = w.bodies[c.body_a];
    const Body& b = w.bodies[c.body_b];
    if (a.sleeping && (is_awake_dynamic(b) || is_moving_kinematic(b))) wake(a);
    if (b.sleeping && (is_awake_dynamic(a) || is_moving_kinematic(a))) wake(b);
  }
  // A joint wakes its sleeping side when the other side moves.
  for (const Joint& j : w.joints.items) {
    if (!j.alive || j.broken || j.body_b == kNullIndex) continue;
    const Body& a = w.bodies[j.body_a];
    const Body& b = w.bodies[j.body_b];
    if (a.sleeping && (is_awake_dynamic(b) || is_moving_kinematic(b))) wake(a);
    if (b.sleeping && (is_awake_dynamic(a) || is_moving_kinematic(a))) wake(b);
  }
  if (woke) settle(w);
  return woke;
}

void update_sleep(WorldImpl& w, float dt, SleepScratch& scratch) {
  const uint32_t n = uint32_t(w.bodies.size());
  BodySets& sets = current_body_sets(w);
  bool any_ready = false;
  for (uint32_t slot : sets.awake()) {
    Body& b = w.bodies[slot];
    if (!is_awake_dynamic(b)) continue;
    bool resting = b.can_sleep && point_speed(b) < kSleepSpeed;
    b.sleep_time = resting ? b.sleep_time + dt : 0.0f;
    any_ready |= b.sleep_time >= kSleepDelay;
  }
  // An island sleeps only when every member has rested kSleepDelay: with no awake body
  // that has (nothing awake, or everything still moving or only just come to rest),
  // nothing can fall asleep this tick and no island needs building.
  if (!any_ready) return;

  std::vector<uint32_t>& parent = scratch.parent;
  std::vector<uint8_t>& held = scratch.held;
  std::vector<float>& least_rest = scratch.least_rest;
  parent.resize(n);
  for (uint32_t i = 0; i < n; ++i) parent[i] = i;
  held.assign(n, 0);
  const auto& contacts = w.contacts.items();
  for (uint32_t ci : w.touching_contacts) {
    const Contact& c = contacts[ci];
    if (c.sensor) continue;
    const Body& a = w.bodies[c.body_a];
    const Body& b = w.bodies[c.body_b];
    bool da = is_awake_dynamic(a), db = is_awake_dynamic(b);
    if (da && db) join_sets(parent, c.body_a, c.body_b);
  }
  // Joints join islands too: a jointed pair sleeps and wakes together.
  for (const Joint& j : w.joints.items) {
    if (!j.alive || j.broken || j.body_b == kNullIndex) continue;
    if (is_awake_dynamic(w.bodies[j.body_a]) && is_awake_dynamic(w.bodies[j.body_b])) join_sets(parent, j.body_a, j.body_b);
  }
  // Held: a member touches something outside the island that stays put on its own.
  for (uint32_t ci : w.touching_contacts) {
    const Contact& c = contacts[ci];
    if (c.sensor) continue;
    const Body& a = w.bodies[c.body_a];
    const Body& b = w.bodies[c.body_b];
    if (is_awake_dynamic(a) && !is_awake_dynamic(b)) held[find_root(parent, c.body_a)] = 1;
    if (is_awake_dynamic(b) && !is_awake_dynamic(a)) held[find_root(parent, c.body_b)] = 1;
  }
  // A joint to the world or to a body that is not an awake dynamic one holds too.
  for (const Joint& j : w.joints.items) {
    if (!j.alive || j.broken) continue;
    const bool da = is_awake_dynamic(w.bodies[j.body_a]);
    const bool db = j.body_b != kNullIndex && is_awake_dynamic(w.bodies[j.body_b]);
    if (da && !db) held[find_root(parent, j.body_a)] = 1;
    if (db && !da) held[find_root(parent, j.body_b)] = 1;
  }
  least_rest.assign(n, kSleepDelay);
  for (uint32_t i : sets.awake()) {
    const Body& b = w.bodies[i];
    if (!is_awake_dynamic(b)) continue;
    uint32_t root = find_root(parent, i);
    least_rest[root] = std::min(least_rest[root], b.can_sleep ? b.sleep_time : 0.0f);
  }
  bool any_slept = false;
  for (uint32_t i : sets.awake()) {
    Body& b = w.bodies[i];
    if (!is_awake_dynamic(b)) continue;
    uint32_t root = find_root(parent, i);
    if (!held[root] || least_rest[root] < kSleepDelay) continue;
    any_slept = true;
    b.sleeping = true;
    b.island = root;
    sets.fell_asleep(root, i);
    b.linear_velocity = Vec3(0.0f);
    b.angular_velocity = Vec3(0.0f);
    // The stages that reset these each tick walk only the awake set.
    b.ccd_reach = 0.0f;
    b.ccd_sweep = Vec3(0.0f);
    // Tight bounds always describe the current pose (a restored world recomputes them
    // from it); an awake body refreshes them each tick, a sleeper here, once.
    for (uint32_t s : b.shapes) w.shapes[s].aabb = compute_shape_aabb(w.shapes[s], b.origin);
  }
  if (!any_slept) return;
  settle(w);
  // A sleeper's contacts keep their manifolds until it wakes; take them from the pose it
  // sleeps in, so they are a function of the saved state (a restored world recomputes
  // them the same way).
  for (Contact& c : w.contacts.items()) {
    if (!w.bodies[c.body_a].can_move() && !w.bodies[c.body_b].can_move() &&
        (w.bodies[c.body_a].sleeping || w.bodies[c.body_b].sleeping)) {
      w.refresh_contact_from_poses(c);
    }
  }
  w.touching_generation = ~uint64_t(0);  // counts changed outside the contact pass
}

}  // namespace keel::sim
