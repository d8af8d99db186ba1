// World: the public API over WorldImpl, and the step pipeline (WorldImpl::step):
//   ccd -> bounds -> pairs and contacts -> characters -> touching -> events beside the
//   solve (solver/schedule.h: fill, pack, substeps of integrate / warm start / solve /
//   relax, restitution, store, write back) -> sleep -> tick counter.
#include <keel/sim/world.h>

#include <keel/sim/det_math.h>
#include <keel/sim/joint.h>

#include "body/mass.h"
#include "body/validate.h"
#include "ccd/ccd.h"
#include "collision/concave_scratch.h"
#include "collision/hull_geom.h"
#include "character/character.h"
#include "events/contact_events.h"
#include "island/sleep.h"
#include "world_impl.h"

#include "solver/solver.h"

#include <keel/sim/limits.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>

namespace keel::sim {

// ---------------------------------------------------------------------------------------
// WorldImpl: bodies, colliders and the step pipeline

Body* WorldImpl::get(BodyId id) {
  if (id.index >= bodies.size()) return nullptr;
  Body& b = bodies[id.index];
  return b.alive && b.generation == id.generation ? &b : nullptr;
}

const Body* WorldImpl::get(BodyId id) const { return const_cast<WorldImpl*>(this)->get(id); }

uint32_t WorldImpl::allocate_body_slot() {
  if (!free_bodies.empty()) {
    uint32_t slot = free_bodies.back();
    free_bodies.pop_back();
    return slot;
  }
  bodies.emplace_back();
  return uint32_t(bodies.size() - 1);
}

uint32_t WorldImpl::allocate_shape_slot() {
  if (!free_shapes.empty()) {
    uint32_t slot = free_shapes.back();
    free_shapes.pop_back();
    return slot;
  }
  shapes.emplace_back();
  return uint32_t(shapes.size() - 1);
}

namespace {

AABB fatten(const AABB& box) {
  return AABB{box.lower - Vec3(kAabbMargin), box.upper + Vec3(kAabbMargin)};
}

// A fast body's fat bound also reaches as far ahead as it will travel in the next
// kFatAheadTicks ticks (its tight bound already covers this one), so a body in flight
// leaves it every few ticks rather than every tick: fewer tree updates, which run on one
// thread, and fewer queries. `sweep` is this tick's predicted displacement (ccd.h).
constexpr float kFatAheadTicks = 2.0f;
AABB fatten(const AABB& box, const Vec3& sweep) {
  AABB f = fatten(box);
  const Vec3 ahead = sweep * kFatAheadTicks;
  f.lower += glm::min(ahead, Vec3(0.0f));
  f.upper += glm::max(ahead, Vec3(0.0f));
  return f;
}

}  // namespace

void WorldImpl::create_shape(uint32_t body_slot, const ColliderDef& def, std::shared_ptr<const ConvexHull> hull) {
  uint32_t slot = allocate_shape_slot();
  Body& body = bodies[body_slot];
  Shape& s = shapes[slot];
  s = Shape{};
  s.alive = true;
  s.body = body_slot;
  s.type = def.shape;
  s.local = Transform{def.center, glm::normalize(def.rotation)};
  s.radius = def.radius;
  s.half_height = def.half_height;
  s.half_extents = def.half_extents;
  if (def.shape == ShapeType::Hull) s.hull = std::move(hull);  // built by validate_body
  if (def.shape == ShapeType::Mesh) s.mesh = build_mesh(def.points, def.indices);
  if (def.shape == ShapeType::Heightfield) {
    s.heightfield = build_heightfield(def.rows, def.columns, def.cell_size, def.heights);
  }
  s.friction = def.friction;
  s.static_friction = def.static_friction < 0.0f ? def.friction : def.static_friction;
  s.restitution = def.restitution;
  s.density = def.density;
  s.is_trigger = def.is_trigger;
  s.enabled = def.enabled;
  s.is_static = body.motion == MotionType::Static;
  s.aabb = compute_shape_aabb(s, body.origin);
  if (s.enabled) {
    s.fat = fatten(s.aabb);
    s.proxy = broadphase.add(slot, s.fat, s.is_static);
  }
  body.shapes.push_back(slot);
}

void WorldImpl::destroy_shape(uint32_t slot) {
  Shape& s = shapes[slot];
  if (s.proxy >= 0) broadphase.remove(s.proxy, s.is_static);
  broadphase.forget_moved(slot);
  contacts.remove_shape(slot);
  s = Shape{};
  free_shapes.push_back(slot);
}

void WorldImpl::rebuild_broadphase() {
  broadphase.clear();
  for (uint32_t i = 0; i < shapes.size(); ++i) {
    Shape& s = shapes[i];
    if (!s.alive) continue;
    s.aabb = compute_shape_aabb(s, bodies[s.body].origin);
    s.proxy = s.enabled ? broadphase.add(i, s.fat, s.is_static) : -1;
  }
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Tight bounds of every collider on a body that can move, on the workers (each collider
// writes only itself); a collider that left its fat bounds gets new ones and is marked in
// `escaped`. The tree is not touched here (find_new_pairs).
void refit_bounds(WorldImpl& w, std::vector<uint8_t>& escaped) {
  escaped.assign(w.shapes.size(), 0);
  // Blocks of 256: a moving pile's thousand colliders in four blocks took 0.013 ms a
  // tick off the broadphase at two threads (0.118 to 0.104 ms), more than the serial tree
  // updates lose reading bounds another core wrote.
  w.executor.parallel_for(w.shapes.size(), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      Shape& s = w.shapes[i];
      if (!s.alive || s.proxy < 0 || s.is_static) continue;
      const Body& b = w.bodies[s.body];
      if (b.sleeping) continue;
      s.aabb = compute_shape_aabb(s, b.origin);
      if (b.ccd_reach > 0.0f) {
        // Continuous collision: the bounds cover the whole tick's travel.
        s.aabb.lower += glm::min(b.ccd_sweep, Vec3(0.0f));
        s.aabb.upper += glm::max(b.ccd_sweep, Vec3(0.0f));
      }
      if (contains(s.fat, s.aabb)) continue;
      escaped[i] = 1;
      s.fat = fatten(s.aabb, b.ccd_sweep);
    }
  });
}

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

// Contacts that were held because both sides slept, where one side has just been woken,
// get their manifold now, before the solve (their poses have not changed while asleep,
// but the manifold must come from the poses alone so a restored world computes the same).
void refresh_woken_contacts(WorldImpl& w, std::vector<uint8_t>& flags) {
  auto& items = w.contacts.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (!(flags[i] & kContactHeld)) continue;
    Contact& c = items[i];
    if (!w.bodies[c.body_a].can_move() && !w.bodies[c.body_b].can_move()) continue;
    w.refresh_contact_from_poses(c);
    flags[i] = kContactHeld | (c.count != 0 ? kContactTouching : 0);
  }
}

// Fills w.touching_contacts, from the contact pass's flags when given (no contact is
// read; the dead ones are then removed and the list counts past them), else from the
// contacts; and records the contact set's generation the list belongs to. Fixed chunks,
// each found on any worker into its own list and joined in chunk order, so the list is
// the same whoever found what.
void collect_touching_contacts(WorldImpl& w, const std::vector<uint8_t>* flags) {
  constexpr size_t kChunk = 1024;
  const auto& items = w.contacts.items();
  const size_t count = flags ? flags->size() : items.size();
  const size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<std::vector<uint32_t>>& found = w.scratch.touching_found;
  std::vector<uint32_t>& dead = w.scratch.touching_dead;  // per chunk: dead contacts in it
  if (found.size() < chunks) found.resize(chunks);
  dead.assign(chunks, 0);
  w.executor.parallel_for(chunks, 1, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      std::vector<uint32_t>& out = found[k];
      out.clear();
      const size_t last = std::min(count, (k + 1) * kChunk);
      uint32_t gone = 0;  // dead contacts so far in this chunk
      for (size_t i = k * kChunk; i < last; ++i) {
        if (!flags) {
          if (items[i].count != 0) out.push_back(uint32_t(i));
        } else if ((*flags)[i] & kContactDead) {
          ++gone;
        } else if ((*flags)[i] & kContactTouching) {
          out.push_back(uint32_t(i) - gone);  // shifted by the chunk's dead; the earlier chunks' below
        }
      }
      dead[k] = gone;
    }
  });
  w.touching_contacts.clear();
  uint32_t dead_before = 0;
  for (size_t k = 0; k < chunks; ++k) {
    for (uint32_t i : found[k]) w.touching_contacts.push_back(i - dead_before);
    dead_before += dead[k];
  }
  if (flags) w.contacts.remove_flagged(*flags);
  w.touching_generation = w.contacts.generation();
}

}  // namespace

void WorldImpl::refresh_contact_from_poses(Contact& c, bool flatten_friction) {
  // Called on one thread (the stepping one, or a restore before any step).
  scratch.workers.fit(executor);
  refresh_contact(*this, c, nullptr, nullptr, flatten_friction, scratch.workers.concave(executor));
}

namespace {

bool any_body_can_move(const WorldImpl& w) {
  for (const Body& b : w.bodies) {
    if (b.alive && b.can_move()) return true;
  }
  return false;
}

// Whether some body is neither static nor asleep (a still kinematic body counts: the
// solver still takes it).
bool any_body_awake(const WorldImpl& w) {
  for (const Body& b : w.bodies) {
    if (b.alive && b.motion != MotionType::Static && !b.sleeping) return true;
  }
  return false;
}

// A step whose bodies and contact pairs (last tick's, the pass's work) are too few to
// share runs on this thread alone: the pass and the tree's chunks would be split into a
// few pieces each, and each hand-off to the other core costs more than its piece
// (docs/performance.md, "Small work on one thread"). Who computes never changes bits.
void share_only_large_steps(WorldImpl& w) {
  constexpr uint32_t kStepMinWork = 1000;
  static const uint32_t min_work = work_threshold("KEEL_STEP_MIN_WORK", kStepMinWork);
  w.executor.set_serial(uint64_t(w.contacts.items().size()) + w.bodies.size() < min_work);
}

// Times one stage of the step into its profile bucket.
template <class Fn>
void timed(double& bucket_ms, Fn&& stage) {
  const auto t0 = Clock::now();
  stage();
  bucket_ms = ms_since(t0);
}

// Pairs and contacts: the tree updates and the search for new pairs (which read the
// contact set's keys) run beside the contact pass over the contacts already known (which
// writes only those contacts); the new pairs then join the set and get their own pass.
// Each contact's pass reads only shapes and bodies, so the order cannot change a bit.
// On a still step nothing can have left its bounds: no pairs to find, but the set is
// kept right, and no contact needs a pass.
void pairs_and_contacts_stage(WorldImpl& w, bool still, bool any_moves, StepScratch& s) {
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

// Waking and the touching list. A character's tick stage may set a body moving after the
// pass; without characters, only the pass's unheld touching contacts can wake anything,
// and only a woken island has held contacts to refresh. A still step after a still step
// keeps the last touching list (its events are repeated).
void touching_stage(WorldImpl& w, bool still, bool repeat_events, std::vector<uint8_t>& dead) {
  if (still) {
    if (!repeat_events) collect_touching_contacts(w, nullptr);
    return;
  }
  const bool with_characters = !w.characters.items.empty();
  const bool woke = wake_touched_islands(w, with_characters ? nullptr : &dead);
  if (woke || with_characters) refresh_woken_contacts(w, dead);
  collect_touching_contacts(w, &dead);
}

// Contact events from the touching contacts and the pre-solve velocities, or (a still
// step after a still step: the contacts, poses and velocities are those the last events
// were built from) the last events repeated. Returns the touching count for the profile.
uint32_t events_stage(WorldImpl& w, bool repeat_events, ContactEventScratch& scratch) {
  if (!repeat_events) return update_contact_events(w, scratch);
  repeat_contact_events(w);
  return w.last_touching;
}

}  // namespace

// The step as its stages, each timed into the profile bucket of its name.
void WorldImpl::step() {
  // Nothing awake and nothing edited since a still step: every stage below would find
  // nothing to do (no body to place, collide, solve or put to sleep), at a cost per body.
  if (dormant_step_due()) return step_dormant();
  const auto t0 = Clock::now();
  share_only_large_steps(*this);
  // The step's working lists are the world's (memory/step_scratch.h).
  scratch.begin(executor);
  const float dt = 1.0f / float(settings.tick_rate);

  timed(profile.ccd_ms, [&] { update_ccd(*this, dt); });
  timed(profile.bounds_ms, [&] { refit_bounds(*this, scratch.escaped); });
  // A still step: no body can move and the API changed nothing since the last step. Then
  // no fat bound changed (so no contact ends), every contact is held as it is (neither
  // side can move), and nothing can wake an island: the contact passes would change
  // nothing, so a world asleep skips them and pays per body, not per contact.
  // A world with characters is never still: a sleeping character wakes itself when its
  // input or its script asks it to move, which only its tick stage can see.
  const bool any_moves = any_body_can_move(*this);
  const bool still = !edited && characters.items.empty() && !any_moves;
  const bool repeat_events = still && last_step_still;
  edited = false;
  timed(profile.contacts_ms, [&] { pairs_and_contacts_stage(*this, still, any_moves, scratch); });
  timed(profile.characters_ms, [&] {
    if (!still) update_characters(*this, dt, scratch.characters);
  });
  timed(profile.touching_ms, [&] { touching_stage(*this, still, repeat_events, scratch.contact_flags); });
  // The events run beside the solve's preparation: both only read the contacts and
  // bodies, and both are done before any body moves. (events_ms overlaps solve_ms.)
  uint32_t touching = last_touching;
  timed(profile.solve_ms, [&] {
    TickSolve solve(*this, dt);
    executor.invoke([&] { timed(profile.events_ms, [&] { touching = events_stage(*this, repeat_events, scratch.events); }); },
                    [&] { solve.prepare(); });
    solve.run();
  });
  last_step_still = still;
  last_touching = touching;
  timed(profile.sleep_ms, [&] { update_sleep(*this, dt, scratch.sleep); });
  scratch.end();
  ++tick;
  dormant = still && !any_body_awake(*this);

  profile.total_ms = ms_since(t0);
  profile.contact_pairs = uint32_t(contacts.items().size());
  profile.touching_pairs = touching;
}

void WorldImpl::step_dormant() {
  const auto t0 = Clock::now();
  repeat_contact_events(*this);
  last_step_still = true;
  ++tick;
  const double total_ms = ms_since(t0);
  const char* kernels = profile.kernels;
  profile = StepProfile{};  // every other stage is skipped: its bucket reads 0
  profile.kernels = kernels;
  profile.events_ms = total_ms;
  profile.total_ms = total_ms;
  profile.contact_pairs = uint32_t(contacts.items().size());
  profile.touching_pairs = last_touching;
}

// ---------------------------------------------------------------------------------------
// World: the public API

namespace {

// The farthest any collider extends from the body origin (for the sleep point speed).
float body_reach(const std::vector<ColliderDef>& colliders, const BuiltHulls& hulls) {
  float reach = 0.0f;
  for (size_t i = 0; i < colliders.size(); ++i) {
    const ColliderDef& c = colliders[i];
    float extent = 0.0f;
    switch (c.shape) {
      case ShapeType::Sphere: extent = c.radius; break;
      case ShapeType::Capsule: extent = c.half_height + c.radius; break;
      case ShapeType::Box: extent = glm::length(c.half_extents); break;
      case ShapeType::Hull:
        if (hulls[i]) {
          for (const Vec3& v : hulls[i]->vertices) extent = std::max(extent, glm::length(v));
        }
        break;
      default: break;  // meshes and heightfields are static: nothing to put to sleep
    }
    reach = std::max(reach, glm::length(c.center) + extent);
  }
  return reach;
}

}  // namespace

World::World(const WorldSettings& settings) : impl_(std::make_unique<WorldImpl>()) {
  impl_->settings = settings;
  impl_->executor.set_threads(settings.threads);
}
World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

World::ImplPtr::ImplPtr(std::unique_ptr<WorldImpl> p) : p_(std::move(p)) {}
World::ImplPtr::ImplPtr(ImplPtr&&) noexcept = default;
World::ImplPtr& World::ImplPtr::operator=(ImplPtr&&) noexcept = default;
World::ImplPtr& World::ImplPtr::operator=(std::unique_ptr<WorldImpl> p) {
  p_ = std::move(p);
  return *this;
}
World::ImplPtr::~ImplPtr() = default;

Expected<World> World::from_scene(const SceneDef& scene) {
  if (Status st = validate_settings(scene.settings); !st) return st.error();
  World world(scene.settings);
  for (const BodyDef& def : scene.bodies) {
    auto id = world.add_body(def);
    if (!id) return id.error();
  }
  for (size_t i = 0; i < scene.joints.size(); ++i) {
    auto joint = add_joint(world, scene.joints[i]);
    if (!joint) return Error{"joints[" + std::to_string(i) + "]: " + joint.error().message};
  }
  for (const CharacterDef& c : scene.characters) {
    if (Status st = add_character(world, world.find_body(c.body), c.settings); !st) {
      return Error{"character on body " + std::to_string(c.body) + ": " + st.error().message};
    }
  }
  return world;
}

const WorldSettings& World::settings() const { return impl_->settings; }

bool World::set_gravity(const Vec3& gravity) {
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(gravity[i]) || std::fabs(gravity[i]) > kMaxGravity) return false;
  }
  WorldImpl& w = *impl_;
  w.edited = true;
  w.settings.gravity = gravity;
  // Slot order: the same bodies wake in the same order everywhere.
  for (uint32_t i = 0; i < uint32_t(w.bodies.size()); ++i) {
    if (w.bodies[i].alive && w.bodies[i].motion == MotionType::Dynamic) wake_island_of(w, i);
  }
  return true;
}
void World::set_threads(uint32_t threads) {
  impl_->settings.threads = threads == 0 ? 1 : threads;
  impl_->executor.set_threads(impl_->settings.threads);
}

Expected<BodyId> World::add_body(const BodyDef& def) {
  WorldImpl& w = *impl_;
  BuiltHulls hulls;  // each hull collider's hull, built once for every stage below
  if (Status st = validate_body(def, &hulls); !st) return st.error();
  uint32_t user_id = def.id;
  if (user_id == kAutoBodyId) {
    while (w.id_to_slot.count(w.next_auto_id) != 0) ++w.next_auto_id;
    user_id = w.next_auto_id++;
  } else if (w.id_to_slot.count(user_id) != 0) {
    return Error{"body " + std::to_string(user_id) + ": id is already used by another body"};
  }

  w.edited = true;
  w.membership_stamp = WorldImpl::fresh_membership_stamp();
  uint32_t slot = w.allocate_body_slot();
  // A reused slot's contact outputs were another body's.
  if (slot < w.contact_outputs.size()) w.contact_outputs[slot] = ContactOutput{};
  Body& b = w.bodies[slot];
  uint32_t generation = b.generation + 1;
  b = Body{};
  b.alive = true;
  b.generation = generation;
  b.id = user_id;
  b.motion = def.motion;
  b.origin = Transform{def.position, glm::normalize(def.rotation)};
  b.linear_velocity = def.linear_velocity;
  b.angular_velocity = def.angular_velocity;
  b.linear_damping = def.linear_damping;
  b.angular_damping = def.angular_damping;
  b.gravity_scale = def.gravity_scale;
  b.freeze_rotation = def.freeze_rotation;
  b.can_sleep = def.can_sleep;
  b.bullet = def.bullet;
  b.layer = def.layer;
  b.collides_with = def.collides_with;
  b.kind = def.kind;

  if (def.motion == MotionType::Dynamic) {
    MassProperties mp = def.mass > 0.0f ? compute_mass_properties(def.colliders, def.mass, &hulls)
                                        : compute_mass_properties(def.colliders, &hulls);
    b.mass = mp.mass;
    b.inv_mass = 1.0f / mp.mass;
    b.local_center = mp.center;
    b.inertia_local = mp.inertia;
    float det = glm::determinant(mp.inertia);
    if (!def.freeze_rotation && det > 0.0f) b.inv_inertia_local = glm::inverse(mp.inertia);
  } else {
    b.linear_velocity = def.motion == MotionType::Static ? Vec3(0.0f) : def.linear_velocity;
    b.angular_velocity = def.motion == MotionType::Static ? Vec3(0.0f) : def.angular_velocity;
  }
  b.center = transform_point(b.origin, b.local_center);
  b.reach = body_reach(def.colliders, hulls);
  for (size_t i = 0; i < def.colliders.size(); ++i) w.create_shape(slot, def.colliders[i], hulls[i]);
  w.id_to_slot[user_id] = slot;
  return BodyId{slot, generation};
}

bool World::remove_body(BodyId id) {
  WorldImpl& w = *impl_;
  Body* b = w.get(id);
  if (!b) return false;
  w.edited = true;
  w.membership_stamp = WorldImpl::fresh_membership_stamp();
  // Whatever rested on it falls on the next tick.
  wake_islands_touching(w, id.index);
  forget_character(w, id.index);
  remove_joints_of(w, id.index);
  for (uint32_t s : b->shapes) w.destroy_shape(s);
  w.id_to_slot.erase(b->id);
  uint32_t generation = b->generation;
  *b = Body{};
  b->generation = generation;
  w.free_bodies.push_back(id.index);
  return true;
}

BodyId World::find_body(uint32_t user_id) const {
  auto it = impl_->id_to_slot.find(user_id);
  if (it == impl_->id_to_slot.end()) return BodyId{};
  return BodyId{it->second, impl_->bodies[it->second].generation};
}

uint64_t WorldImpl::fresh_membership_stamp() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

uint64_t World::membership_stamp() const { return impl_->membership_stamp; }

bool World::is_valid(BodyId id) const { return impl_->get(id) != nullptr; }
uint32_t World::body_count() const { return uint32_t(impl_->id_to_slot.size()); }

std::vector<BodyId> World::bodies() const {
  std::vector<BodyId> out;
  out.reserve(impl_->id_to_slot.size());
  for (uint32_t i = 0; i < impl_->bodies.size(); ++i) {
    const Body& b = impl_->bodies[i];
    if (b.alive) out.push_back(BodyId{i, b.generation});
  }
  return out;
}

BodyState World::body_state(BodyId id) const {
  const Body* b = impl_->get(id);
  if (!b) return BodyState{};
  const auto& outputs = impl_->contact_outputs;
  const ContactOutput o = id.index < outputs.size() ? outputs[id.index] : ContactOutput{};
  return BodyState{b->id,       b->motion,           b->origin.position, b->origin.rotation, b->linear_velocity,
                   b->angular_velocity, b->sleeping, o.supported,        o.support_normal,   o.block_normal,
                   b->kind};
}

void World::set_body_kind(BodyId id, uint32_t kind) {
  Body* b = impl_->get(id);
  if (b) b->kind = kind;
}

void World::set_linear_velocity(BodyId id, const Vec3& v) {
  Body* b = impl_->get(id);
  if (!b || b->motion == MotionType::Static) return;
  impl_->edited = true;
  wake_island_of(*impl_, id.index);
  b->linear_velocity = v;
}

void World::set_angular_velocity(BodyId id, const Vec3& w) {
  Body* b = impl_->get(id);
  if (!b || b->motion == MotionType::Static) return;
  impl_->edited = true;
  wake_island_of(*impl_, id.index);
  b->angular_velocity = w;
}

void World::set_transform(BodyId id, const Transform& pose) {
  WorldImpl& w = *impl_;
  Body* b = w.get(id);
  if (!b) return;
  w.edited = true;
  wake_island_of(w, id.index);
  wake_islands_touching(w, id.index);
  b->origin = Transform{pose.position, glm::normalize(pose.rotation)};
  b->center = transform_point(b->origin, b->local_center);
  for (uint32_t s : b->shapes) {
    Shape& shape = w.shapes[s];
    shape.aabb = compute_shape_aabb(shape, b->origin);
    if (shape.proxy < 0) continue;
    shape.fat = fatten(shape.aabb);
    w.broadphase.move(shape.proxy, s, shape.fat, shape.is_static);
  }
}

void World::move_kinematic(BodyId id, const Transform& target) {
  Body* b = impl_->get(id);
  if (!b || b->motion != MotionType::Kinematic) return;
  impl_->edited = true;
  const float inv_dt = float(impl_->settings.tick_rate);
  const Quat rotation = glm::normalize(target.rotation);
  // The centre moves in a straight line; the solver integrates the centre's velocity.
  const Vec3 target_center = target.position + rotation * b->local_center;
  b->linear_velocity = (target_center - b->center) * inv_dt;
  // The turn that takes today's rotation to the target, as a rotation vector per tick
  // (own atan2 inside: no libm in the step).
  const Quat turn = rotation * glm::conjugate(b->origin.rotation);
  b->angular_velocity = dmath::to_rotation_vector(turn) * inv_dt;
}

void World::apply_impulse(BodyId id, const Vec3& impulse, const Vec3& world_point) {
  Body* b = impl_->get(id);
  if (!b || b->motion != MotionType::Dynamic) return;
  impl_->edited = true;
  wake_island_of(*impl_, id.index);
  b->linear_velocity += b->inv_mass * impulse;
  Mat3 r = glm::mat3_cast(b->origin.rotation);
  Mat3 inv_i = r * b->inv_inertia_local * glm::transpose(r);
  b->angular_velocity += inv_i * glm::cross(world_point - b->center, impulse);
}

float World::mass(BodyId id) const {
  const Body* b = impl_->get(id);
  return b ? b->mass : 0.0f;
}

Mat3 World::local_inertia(BodyId id) const {
  const Body* b = impl_->get(id);
  return b ? b->inertia_local : Mat3(0.0f);
}

std::vector<ColliderDef> World::colliders(BodyId id) const {
  std::vector<ColliderDef> out;
  const Body* b = impl_->get(id);
  if (!b) return out;
  for (uint32_t slot : b->shapes) {
    const Shape& s = impl_->shapes[slot];
    ColliderDef c;
    c.shape = s.type;
    c.center = s.local.position;
    c.rotation = s.local.rotation;
    c.radius = s.radius;
    c.half_height = s.half_height;
    c.half_extents = s.half_extents;
    if (s.hull) c.points = s.hull->points;
    if (s.mesh) {
      c.points = s.mesh->vertices;
      c.indices = s.mesh->indices;
    }
    if (s.heightfield) {
      c.rows = s.heightfield->rows;
      c.columns = s.heightfield->columns;
      c.cell_size = s.heightfield->cell_size;
      c.heights = s.heightfield->heights;
    }
    c.friction = s.friction;
    c.static_friction = s.static_friction;
    c.restitution = s.restitution;
    c.density = s.density;
    c.is_trigger = s.is_trigger;
    c.enabled = s.enabled;
    out.push_back(c);
  }
  return out;
}

Vec3 World::local_center_of_mass(BodyId id) const {
  const Body* b = impl_->get(id);
  return b ? b->local_center : Vec3(0.0f);
}

void World::step() {
  // A dormant step changes nothing in the state but the tick, which the cached state
  // digests patch in (state/hash.cpp): only that step keeps them.
  WorldImpl& w = impl_.keeping_digests();
  if (w.dormant_step_due()) return w.step_dormant();
  impl_->step();
}
uint64_t World::tick() const { return impl_->tick; }
const StepProfile& World::profile() const { return impl_->profile; }
std::span<const ContactEvent> World::contact_events() const { return impl_->events; }
std::span<const TriggerEvent> World::trigger_events() const { return impl_->trigger_events; }

std::vector<ContactView> World::contacts() const {
  std::vector<ContactView> out;
  for (const Contact& c : impl_->contacts.items()) {
    if (c.count == 0) continue;
    ContactView v;
    v.body_a = impl_->bodies[c.body_a].id;
    v.body_b = impl_->bodies[c.body_b].id;
    v.normal = c.normal;
    v.sensor = c.sensor;
    v.count = c.count;
    for (int i = 0; i < c.count; ++i) {
      const ContactPoint& p = c.points[i];
      v.points[i] = ContactView::Point{p.point, p.depth, p.id, p.normal_impulse, p.friction_impulse};
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace keel::sim
