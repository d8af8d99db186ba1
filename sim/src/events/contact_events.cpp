#include "events/contact_events.h"

#include "world_impl.h"

#include <algorithm>
#include <cmath>

namespace keel::sim {

namespace {

using Touch = ContactTouch;

Vec3 point_velocity(const Body& b, const Vec3& p) {
  return b.linear_velocity + glm::cross(b.angular_velocity, p - b.center);
}

// The normal as it acts on each body: contacts push A along -n and B along +n. The first
// of two equal candidates keeps its place (strict comparisons), in pair order.
void reduce_normals(ContactOutput& out, const Vec3& acting) {
  if (!out.supported) {
    out.supported = true;
    out.support_normal = acting;
    out.block_normal = acting;
    return;
  }
  if (acting.y > out.support_normal.y) out.support_normal = acting;
  if (std::abs(acting.y) < std::abs(out.block_normal.y)) out.block_normal = acting;
}

// An event for a touching pair: the first point of its first contact, the normal turned
// to run from the lower id to the higher, and the closing speed before the solve.
ContactEvent make_event(const WorldImpl& w, ContactEvent::Kind kind, const Touch& t) {
  const Contact& c = w.contacts.items()[t.contact];
  const Body& a = w.bodies[c.body_a];
  const Body& b = w.bodies[c.body_b];
  ContactEvent e;
  e.kind = kind;
  e.body_a = uint32_t(t.key >> 32);
  e.body_b = uint32_t(t.key);
  e.point = c.points[0].point;
  float flip = a.id == e.body_a ? 1.0f : -1.0f;
  e.normal = flip * c.normal;
  Vec3 closing = point_velocity(a, e.point) - point_velocity(b, e.point);
  e.approach_speed = glm::dot(closing, c.normal);
  return e;
}

// Trigger events: each trigger collider that overlaps something it senses is keyed by
// (its body's id, the other body's id); the set of last tick's keys is state.
void update_trigger_events(WorldImpl& w, std::vector<uint64_t>& now) {
  now.clear();
  const auto& contacts = w.contacts.items();
  for (uint32_t ci : w.touching_contacts) {
    const Contact& c = contacts[ci];
    if (!c.sensor) continue;
    const Shape& sa = w.shapes[c.shape_a];
    const Shape& sb = w.shapes[c.shape_b];
    const Body& a = w.bodies[c.body_a];
    const Body& b = w.bodies[c.body_b];
    if (sa.is_trigger && b.motion != MotionType::Static) now.push_back(uint64_t(a.id) << 32 | b.id);
    if (sb.is_trigger && a.motion != MotionType::Static) now.push_back(uint64_t(b.id) << 32 | a.id);
  }
  std::sort(now.begin(), now.end());
  now.erase(std::unique(now.begin(), now.end()), now.end());
  w.trigger_events.clear();
  const std::vector<uint64_t>& before = w.sensed_pairs;
  auto emit = [&](TriggerEvent::Kind kind, uint64_t key) {
    w.trigger_events.push_back(TriggerEvent{kind, uint32_t(key >> 32), uint32_t(key)});
  };
  size_t i = 0, j = 0;
  while (i < now.size() || j < before.size()) {
    if (j == before.size() || (i < now.size() && now[i] < before[j])) {
      emit(TriggerEvent::Kind::Enter, now[i++]);
    } else if (i == now.size() || before[j] < now[i]) {
      emit(TriggerEvent::Kind::Exit, before[j++]);
    } else {
      emit(TriggerEvent::Kind::Stay, now[i++]);
      ++j;
    }
  }
  w.sensed_pairs = now;
}

}  // namespace

uint32_t update_contact_events(WorldImpl& w, ContactEventScratch& scratch) {
  w.contact_outputs.assign(w.bodies.size(), ContactOutput{});
  std::vector<Touch>& now = scratch.touches;
  now.clear();
  const auto& contacts = w.contacts.items();
  const uint32_t touching = uint32_t(w.touching_contacts.size());
  for (uint32_t i : w.touching_contacts) {
    const Contact& c = contacts[i];
    if (c.sensor) continue;
    const Body& a = w.bodies[c.body_a];
    const Body& b = w.bodies[c.body_b];
    reduce_normals(w.contact_outputs[c.body_a], -c.normal);
    reduce_normals(w.contact_outputs[c.body_b], c.normal);
    uint32_t lo = std::min(a.id, b.id), hi = std::max(a.id, b.id);
    now.push_back(Touch{uint64_t(lo) << 32 | hi, i, !a.can_move() && !b.can_move()});
  }
  // Unique keys per body pair, first contact kept: a stable sort keeps pair-key order
  // among a pair's contacts, so "first" is decided by IDs.
  auto by_key = [](const Touch& x, const Touch& y) { return x.key < y.key; };
  if (!std::is_sorted(now.begin(), now.end(), by_key)) std::stable_sort(now.begin(), now.end(), by_key);
  now.erase(std::unique(now.begin(), now.end(), [](const Touch& x, const Touch& y) { return x.key == y.key; }),
            now.end());

  // Which event each pair gets is a merge of two sorted lists (cheap, here); what a
  // Began or Stayed event carries is read from its contact and bodies on the workers.
  // A pair that was held last tick and still is (neither body could move, so neither its
  // manifold nor the velocities changed) carries exactly what its last event carried:
  // that is copied, so a large sleeping field beside one moving body does not rebuild
  // an event per resting pair. (Held on both ticks, not only this one: the tick an island
  // falls asleep its contacts are refreshed after that tick's events were built.)
  std::vector<ContactEvent>& next = scratch.next;
  std::vector<uint32_t>& touch_of = scratch.touch_of;  // per event: its place in `now`, or none
  std::vector<uint32_t>& reuse_of = scratch.reuse_of;  // per event: last tick's event to copy, or none
  next.clear();
  touch_of.clear();
  reuse_of.clear();
  constexpr uint32_t kNone = ~0u;
  const std::vector<uint64_t>& before = w.touching_pairs;
  const std::vector<ContactEvent>& last = w.events;  // last tick's; its non-Ended ones follow `before`
  const bool held_known = w.touching_held.size() == before.size();
  size_t last_at = 0;  // the next of last tick's events not yet passed
  auto last_event_of = [&](uint64_t key) -> uint32_t {
    while (last_at < last.size() && last[last_at].kind == ContactEvent::Kind::Ended) ++last_at;
    if (last_at == last.size()) return kNone;
    const ContactEvent& e = last[last_at];
    if ((uint64_t(e.body_a) << 32 | e.body_b) != key) return kNone;  // (after a restore: none kept)
    return uint32_t(last_at++);
  };
  auto add = [&](ContactEvent::Kind kind, uint64_t key, uint32_t touch, uint32_t reuse) {
    ContactEvent e;
    e.kind = kind;
    e.body_a = uint32_t(key >> 32);
    e.body_b = uint32_t(key);
    next.push_back(e);
    touch_of.push_back(touch);
    reuse_of.push_back(reuse);
  };
  size_t i = 0, j = 0;
  while (i < now.size() || j < before.size()) {
    if (j == before.size() || (i < now.size() && now[i].key < before[j])) {
      add(ContactEvent::Kind::Began, now[i].key, uint32_t(i), kNone);
      ++i;
    } else if (i == now.size() || before[j] < now[i].key) {
      last_event_of(before[j]);
      add(ContactEvent::Kind::Ended, before[j], kNone, kNone);
      ++j;
    } else {
      uint32_t from = last_event_of(before[j]);
      bool reuse = from != kNone && held_known && w.touching_held[j] && now[i].held;
      add(ContactEvent::Kind::Stayed, now[i].key, uint32_t(i), reuse ? from : kNone);
      ++i;
      ++j;
    }
  }
  w.executor.parallel_for(next.size(), 256, [&](size_t begin, size_t end) {
    for (size_t e = begin; e < end; ++e) {
      if (reuse_of[e] != kNone) {
        next[e] = last[reuse_of[e]];
        next[e].kind = ContactEvent::Kind::Stayed;
      } else if (touch_of[e] != kNone) {
        next[e] = make_event(w, next[e].kind, now[touch_of[e]]);
      }
    }
  });
  w.events.swap(next);
  w.touching_pairs.clear();
  w.touching_held.clear();
  for (const Touch& t : now) {
    w.touching_pairs.push_back(t.key);
    w.touching_held.push_back(t.held ? 1 : 0);
  }
  update_trigger_events(w, scratch.sensed);
  w.shortcuts.events_repeated = false;
  return touching;
}

void repeat_contact_events(WorldImpl& w) {
  if (w.shortcuts.events_repeated) return;
  w.shortcuts.events_repeated = true;
  size_t n = 0;
  for (const ContactEvent& e : w.events) {
    if (e.kind == ContactEvent::Kind::Ended) continue;
    w.events[n] = e;
    w.events[n++].kind = ContactEvent::Kind::Stayed;
  }
  w.events.resize(n);
  n = 0;
  for (const TriggerEvent& e : w.trigger_events) {
    if (e.kind == TriggerEvent::Kind::Exit) continue;
    w.trigger_events[n] = e;
    w.trigger_events[n++].kind = TriggerEvent::Kind::Stay;
  }
  w.trigger_events.resize(n);
}

// Contact events from the touching contacts and the pre-solve velocities, or (a still
// step after a still step: the contacts, poses and velocities are those the last events
// were built from) the last events repeated. Returns the touching count for the profile.
uint32_t events_stage(WorldImpl& w, bool repeat_events, ContactEventScratch& scratch) {
  if (!repeat_events) return update_contact_events(w, scratch);
  repeat_contact_events(w);
  return w.shortcuts.last_touching;
}

}  // namespace keel::sim
