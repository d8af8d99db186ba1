// The contacts stage (see contacts_stage.h): new pairs from the broadphase, then the
// contact pass over every known contact and the new ones.
#include "contact/contacts_stage.h"

#include "ccd/ccd.h"
#include "collision/concave_scratch.h"
#include "collision/hull_geom.h"
#include "world_impl.h"

namespace keel::sim {

namespace {

// Moves the escaped colliders in the tree, in slot order on this thread, and finds the
// pairs they newly overlap (sorted keys, none already in the contact set). Reads the
// contact set's keys only, so it may run beside the contact pass.
void find_new_pairs(WorldImpl& w, const std::vector<uint8_t>& escaped, std::vector<uint64_t>& pairs) {
  // A falling pile leaves its bounds nearly all at once: then the movable tree is rebuilt
  // over the new bounds rather than each collider moved through it.
  size_t escaped_count = 0;
  for (uint8_t e : escaped) escaped_count += e;
  const bool rebuild = w.broadphase.rebuild_pays(escaped_count);
  for (uint32_t i = 0; i < w.shapes.size(); ++i) {
    if (!escaped[i]) continue;
    const Shape& s = w.shapes[i];
    if (rebuild) {
      w.broadphase.set_bounds(s.proxy, i, s.fat);
    } else {
      w.broadphase.move(s.proxy, i, s.fat, false);
    }
  }
  if (rebuild) w.broadphase.rebuild_movable();
  // The known pairs, as the dense sorted key array the contact set keeps: the queries
  // binary-search it many times. A tick on which no collider left its bounds (a resting
  // world) queries nothing.
  w.broadphase.collect_pairs(w.shapes, w.bodies, w.contacts.keys(), w.executor, w.scratch.workers.all_walks(), pairs);
}

// Adds the new pairs to the contact set, naming their bodies. Per-contact lists indexed
// as the set was (last tick's touching list, or this tick's contact-pass flags) move
// along with the contacts; the new contacts' flags are zero.
const std::vector<size_t>& add_new_contacts(WorldImpl& w, const std::vector<uint64_t>& pairs,
                                            std::vector<uint8_t>* flags) {
  const bool touching_valid = w.touching_generation == w.contacts.generation();
  const std::vector<size_t>& fresh =
      w.contacts.insert_new(pairs, touching_valid && !flags ? &w.touching_contacts : nullptr);
  if (touching_valid && !flags) w.touching_generation = w.contacts.generation();
  if (flags) w.contacts.follow_last_insert(*flags);
  auto& items = w.contacts.items();
  for (size_t at : fresh) {
    Contact& c = items[at];
    c.body_a = w.shapes[c.shape_a].body;
    c.body_b = w.shapes[c.shape_b].body;
  }
  return fresh;
}

// Recomputes one contact's manifold from its two colliders placed in world space,
// carrying impulses over by feature id.
void collide_placed(const Shape& sa, const Body& ba, const ShapeGeom& ga, const Shape& sb, const Body& bb,
                    const ShapeGeom& gb, Contact& c, bool flatten_friction, ConcaveScratch& scratch) {
  Manifold m;
  c.sensor = sa.is_trigger || sb.is_trigger;
  c.friction = combine_friction(sa.friction, sb.friction);
  c.static_friction = combine_friction(sa.static_friction, sb.static_friction);
  c.restitution = combine_restitution(sa.restitution, sb.restitution);
  collide(ga, gb, kSpeculativeDistance + ccd_margin(ba, bb), m, scratch);
  update_manifold(c, m, ba.center, bb.center, flatten_friction);
}

// Recomputes one contact's manifold. A null side is placed here (a collider whose body
// cannot move this tick is not placed for every pair it is in, only for those that get
// this far). `scratch` is the running thread's (a concave pair works in it).
void refresh_contact(WorldImpl& w, Contact& c, const ShapeGeom* ga, const ShapeGeom* gb, bool flatten_friction,
                     ConcaveScratch& scratch) {
  const Shape& sa = w.shapes[c.shape_a];
  const Shape& sb = w.shapes[c.shape_b];
  if (!overlaps(sa.aabb, sb.aabb)) {
    // Most pairs of a busy world (neighbours within the fattened bounds): an empty pair
    // stays empty without touching the rest of the contact. Its material fields are read
    // only while it has points, and are set whenever it gets them.
    if (c.count != 0) update_manifold(c, Manifold{}, Vec3(0.0f), Vec3(0.0f), flatten_friction);
    return;
  }
  const Body& ba = w.bodies[sa.body];
  const Body& bb = w.bodies[sb.body];
  if (ga && gb) return collide_placed(sa, ba, *ga, sb, bb, *gb, c, flatten_friction, scratch);
  if (ga) return collide_placed(sa, ba, *ga, sb, bb, placed_geom(sb, bb), c, flatten_friction, scratch);
  if (gb) return collide_placed(sa, ba, placed_geom(sa, ba), sb, bb, *gb, c, flatten_friction, scratch);
  collide_placed(sa, ba, placed_geom(sa, ba), sb, bb, placed_geom(sb, bb), c, flatten_friction, scratch);
}

// Per collider, whether its body can move: one dense byte the contact pass reads twice per
// pair, instead of a collider and a body each. Those colliders are placed in world space
// here, once each (hulls too), not once per pair.
void place_moving_colliders(WorldImpl& w, bool any_moves, ContactPassScratch& p) {
  p.geoms.resize(w.shapes.size());
  p.moves.assign(w.shapes.size(), 0);
  // With no body able to move (a world entirely asleep), no contact is recomputed.
  if (!any_moves) return;
  p.hull_slot.assign(w.shapes.size(), -1);
  size_t hull_count = 0;
  for (size_t i = 0; i < w.shapes.size(); ++i) {
    const Shape& s = w.shapes[i];
    if (s.alive && s.type == ShapeType::Hull && s.hull && w.bodies[s.body].can_move()) {
      p.hull_slot[i] = int32_t(hull_count++);
    }
  }
  if (p.hulls.size() < hull_count) p.hulls.resize(hull_count);
  w.executor.parallel_for(w.shapes.size(), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const Shape& s = w.shapes[i];
      if (!s.alive || !w.bodies[s.body].can_move()) continue;
      p.moves[i] = 1;
      p.geoms[i] = placed_geom(s, w.bodies[s.body]);
      if (p.hull_slot[i] < 0) continue;
      WorldHull& h = p.hulls[size_t(p.hull_slot[i])];
      place_hull(*p.geoms[i].hull, p.geoms[i].position, p.geoms[i].rotation, h);
      p.geoms[i].placed_hull = &h;
    }
  });
}

// One contact of the pass: reads only shapes and bodies, writes only the contact and its
// flag. A pair is read through its key (the lower collider slot, then the higher) until
// it needs its contact.
inline uint8_t pass_contact(WorldImpl& w, const ContactPassScratch& p, const std::vector<uint64_t>& keys, size_t i,
                            bool had, ConcaveScratch& scratch) {
  const uint64_t key = keys[i];
  const uint32_t shape_a = uint32_t(key >> 32), shape_b = uint32_t(key & 0xffffffffu);
  const Shape& sa = w.shapes[shape_a];
  const Shape& sb = w.shapes[shape_b];
  if (!overlaps(sa.fat, sb.fat)) {
    w.contacts.items()[i].count = 0;  // touches nothing any more: wakes no one before it is removed
    return kContactDead;
  }
  const bool ma = p.moves[shape_a] != 0, mb = p.moves[shape_b] != 0;
  if (!ma && !mb) return kContactHeld | (had ? kContactTouching : 0);
  // An empty pair whose tight bounds are apart stays empty: nothing to recompute.
  if (!had && !overlaps(sa.aabb, sb.aabb)) return 0;
  Contact& c = w.contacts.items()[i];
  refresh_contact(w, c, ma ? &p.geoms[shape_a] : nullptr, mb ? &p.geoms[shape_b] : nullptr, true, scratch);
  return c.count != 0 ? kContactTouching : 0;
}

// Recomputes every contact's manifold from the current poses (after place_moving_colliders)
// and flags the contacts whose fat bounds no longer overlap as dead. A contact neither of
// whose bodies can move this tick (asleep, static, a still kinematic body) keeps its
// manifold and impulses and is flagged held for refresh_woken_contacts. Reads the
// contact set's keys and writes only its contacts, so it may run beside find_new_pairs.
void update_contacts(WorldImpl& w, ContactPassScratch& p, std::vector<uint8_t>& flags) {
  auto& items = w.contacts.items();
  // Which contacts have points as the pass begins: last tick's touching list when it is
  // still valid (most of a busy world's pairs are neighbours without points, and the pass
  // then leaves them without reading them), else every contact's count.
  p.had.assign(items.size(), 0);
  if (w.touching_generation == w.contacts.generation()) {
    for (uint32_t i : w.touching_contacts) p.had[i] = 1;
  } else {
    w.executor.parallel_for(items.size(), 1024, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) p.had[i] = items[i].count != 0 ? 1 : 0;
    });
  }
  flags.assign(items.size(), 0);
  const std::vector<uint64_t>& keys = w.contacts.keys();
  w.executor.parallel_for(items.size(), 64, [&](size_t begin, size_t end) {
    ConcaveScratch& scratch = w.scratch.workers.concave(w.executor);  // this thread's
    for (size_t i = begin; i < end; ++i) flags[i] = pass_contact(w, p, keys, i, p.had[i] != 0, scratch);
  });
}

// The contact pass for the contacts add_new_contacts just made (they have no points yet).
void update_new_contacts(WorldImpl& w, const ContactPassScratch& p, const std::vector<size_t>& fresh,
                         std::vector<uint8_t>& flags) {
  const std::vector<uint64_t>& keys = w.contacts.keys();
  w.executor.parallel_for(fresh.size(), 64, [&](size_t begin, size_t end) {
    ConcaveScratch& scratch = w.scratch.workers.concave(w.executor);  // this thread's
    for (size_t k = begin; k < end; ++k) flags[fresh[k]] = pass_contact(w, p, keys, fresh[k], false, scratch);
  });
}

}  // namespace

void WorldImpl::refresh_contact_from_poses(Contact& c, bool flatten_friction) {
  // Called on one thread (the stepping one, or a restore before any step).
  scratch.workers.fit(executor);
  refresh_contact(*this, c, nullptr, nullptr, flatten_friction, scratch.workers.concave(executor));
}

// Pairs and contacts: the tree updates and the search for new pairs (which read the
// contact set's keys) run beside the contact pass over the contacts already known (which
// writes only those contacts); the new pairs then join the set and get their own pass.
// Each contact's pass reads only shapes and bodies, so the order cannot change a bit.
// On a still step nothing can have left its bounds: no pairs to find, but the set is
// kept right, and no contact needs a pass.
void contacts_stage(WorldImpl& w, bool still, bool any_moves, StepScratch& s) {
  if (still) {
    find_new_pairs(w, s.escaped, s.new_pairs);
    add_new_contacts(w, s.new_pairs, nullptr);
    return;
  }
  w.executor.invoke([&] { find_new_pairs(w, s.escaped, s.new_pairs); },
                    [&] {
                      place_moving_colliders(w, any_moves, s.pass);
                      update_contacts(w, s.pass, s.contact_flags);
                    });
  update_new_contacts(w, s.pass, add_new_contacts(w, s.new_pairs, &s.contact_flags), s.contact_flags);
}

}  // namespace keel::sim
