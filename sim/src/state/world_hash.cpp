// The state hash (keel/sim/state_hash.h) of a world, without writing its state: each
// section of state/hash_sections.h computed from the world's arrays, with digests kept
// between hashes so that a hash costs what changed.
//
// What is kept, and what drops it (StateDigests, world_impl.h):
//   - per body and collider slot, the digest of the bytes only the API changes, and the
//     moving bytes with the slot digest made from them. Any non-const use of the World
//     drops the first (World::ImplPtr), but a step, which cannot change them (it moves
//     bodies, sets characters' gravity scale and refits bounds, nothing else in a slot),
//     and the edits that write only moving bytes or drop the slots they change
//     (ImplPtr::keeping_slot_digests: velocities, poses, impulses, gravity, a body's
//     kind, adding and removing bodies, a character's input).
//     The moving bytes are written from the body every hash and compared with the kept
//     ones: a body that did not move (asleep, or static) costs that compare, and its
//     digest is reused.
//   - the pairs' digest, for as long as the contact set's generation (which changes with
//     every contact added or removed) and the slot digests last;
//   - every section, while the world is dormant (a step then changes only the tick, which
//     is in the head, hashed every time).
// Contacts with points, the free lists and everything after the contacts are written
// and hashed every time (a few bytes per touching contact).
#include <keel/sim/state_hash.h>
#include <keel/sim/world.h>

#include "state/hash_sections.h"
#include "world_impl.h"

#include <algorithm>
#include <cstring>

namespace keel::sim {

namespace {

using namespace hash_sections;
static_assert(sizeof(StateDigests::sections) / sizeof(uint64_t) == kSectionCount);
static_assert(sizeof(BodyDigest::moving) == kBodyMovingBytes && sizeof(ShapeDigest::moving) == kShapeMovingBytes);

uint64_t xxh3_le(std::span<const uint8_t> bytes) { return little_endian(XXH3_64bits(bytes.data(), bytes.size())); }

// The moving bytes of a live body, written from it in the canonical order and encoding
// (kBodyMoving: origin, centre, linear and angular velocity; gravity scale, sleep time,
// island; sleeping).
void body_moving(const Body& b, uint8_t* out) {
  RecordWriter<kBodyMovingBytes> w;
  w.transform(b.origin);
  w.vec3(b.center);
  w.vec3(b.linear_velocity);
  w.vec3(b.angular_velocity);
  w.f32(b.gravity_scale);
  w.f32(b.sleep_time);
  w.u32(b.island);
  w.flag(b.sleeping);
  std::memcpy(out, w.written().data(), kBodyMovingBytes);
}

// A live collider's moving bytes (kShapeMoving: its fat bounds).
void shape_moving(const Shape& s, uint8_t* out) {
  RecordWriter<kShapeMovingBytes> w;
  w.vec3(s.fat.lower);
  w.vec3(s.fat.upper);
  std::memcpy(out, w.written().data(), kShapeMovingBytes);
}

// A slot made again from its canonical bytes (after an API change): its kept digests.
template <class Kept, class Slot, class Write>
void remake_slot(Kept& k, const Slot& slot, std::span<const Range> moving, std::vector<uint8_t>& scratch, Write write) {
  StateWriter w(scratch, 0);
  write(w, slot);
  w.finish();
  k.stale = false;
  k.alive = slot.alive;
  if (!slot.alive) {
    k.digest = xxh3_le(scratch);
    return;
  }
  k.fixed = fixed_digest(scratch, moving);
  gather_moving(scratch, moving, k.moving);
  k.digest = little_endian(slot_digest(k.fixed, k.moving));
}

// A slot kept since the last hash: its digest again if its moving bytes did not change.
template <class Kept>
void refresh_slot(Kept& k, const uint8_t* now) {
  if (std::memcmp(now, k.moving, sizeof k.moving) == 0) return;
  std::memcpy(k.moving, now, sizeof k.moving);
  k.digest = little_endian(slot_digest(k.fixed, k.moving));
}

uint64_t body_section(const WorldImpl& world, StateDigests& d) {
  // Slots added since the last hash start stale; after a change the slots did not
  // report themselves (World::ImplPtr), every slot is.
  const bool remake = !d.records_valid;
  if (remake) d.bodies.assign(world.bodies.size(), BodyDigest{});
  else d.bodies.resize(world.bodies.size());
  d.slot_digests.resize(world.bodies.size());
  uint8_t now[kBodyMovingBytes];
  for (size_t i = 0; i < world.bodies.size(); ++i) {
    const Body& b = world.bodies[i];
    BodyDigest& k = d.bodies[i];
    if (remake || k.stale || k.alive != b.alive) {
      remake_slot(k, b, kBodyMoving, d.scratch, [](StateWriter& w, const Body& s) { write_body_slot(w, s); });
    } else if (b.alive) {
      body_moving(b, now);
      refresh_slot(k, now);
    }
    d.slot_digests[i] = k.digest;
  }
  return little_endian(list_digest(d.slot_digests));
}

uint64_t shape_section(const WorldImpl& world, StateDigests& d) {
  // Slots added since the last hash start stale; after a change the slots did not
  // report themselves (World::ImplPtr), every slot is.
  const bool remake = !d.records_valid;
  if (remake) d.shapes.assign(world.shapes.size(), ShapeDigest{});
  else d.shapes.resize(world.shapes.size());
  d.slot_digests.resize(world.shapes.size());
  uint8_t now[kShapeMovingBytes];
  for (size_t i = 0; i < world.shapes.size(); ++i) {
    const Shape& s = world.shapes[i];
    ShapeDigest& k = d.shapes[i];
    if (remake || k.stale || k.alive != s.alive) {
      remake_slot(k, s, kShapeMoving, d.scratch, [](StateWriter& w, const Shape& x) { write_shape_slot(w, x); });
    } else if (s.alive) {
      shape_moving(s, now);
      refresh_slot(k, now);
    }
    d.slot_digests[i] = k.digest;
  }
  return little_endian(list_digest(d.slot_digests));
}

uint64_t free_list_section(const std::vector<uint32_t>& list, std::vector<uint8_t>& scratch) {
  StateWriter w(scratch, 0);
  write_free_list(w, list);
  w.finish();
  return xxh3_le(scratch);
}

// Every contact's pair, as the contact set's dense key array holds it (pair_key: the
// lower slot high), little-endian.
uint64_t pair_section(const WorldImpl& world, StateDigests& d) {
  const uint64_t generation = world.contacts.generation();
  if (d.records_valid && d.pairs_valid && d.pairs_generation == generation) return d.sections[kPairs];
  const std::vector<uint64_t>& keys = world.contacts.keys();
  uint64_t digest = 0;
  if constexpr (std::endian::native == std::endian::little) {
    digest = list_digest(keys);
  } else {
    d.slot_digests.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) d.slot_digests[i] = little_endian(keys[i]);
    digest = list_digest(d.slot_digests);
  }
  d.pairs_valid = true;
  d.pairs_generation = generation;
  return little_endian(digest);
}

// The contacts with points, written as save_state writes them. While the touching list
// is current (WorldImpl::touching_generation, which the contact pass relies on too) only
// the contacts it names have points; otherwise every contact's count is read.
uint64_t point_section(const WorldImpl& world, std::vector<uint8_t>& scratch) {
  const auto& contacts = world.contacts.items();
  StateWriter w(scratch, 0);
  if (world.touching_generation == world.contacts.generation()) {
    for (uint32_t i : world.touching_contacts) {
      if (contacts[i].count > 0) write_contact(w, contacts[i]);
    }
  } else {
    for (const Contact& c : contacts) {
      if (c.count > 0) write_contact(w, c);
    }
  }
  w.finish();
  return xxh3_le(scratch);
}

uint64_t tail_section(const WorldImpl& world, std::vector<uint8_t>& scratch) {
  StateWriter w(scratch, 0);
  write_state_tail(world, w);
  w.finish();
  return xxh3_le(scratch);
}

void every_section_but_the_head(const WorldImpl& world, StateDigests& d) {
  d.sections[kBodies] = body_section(world, d);
  d.sections[kBodyFree] = free_list_section(world.free_bodies, d.scratch);
  d.sections[kShapes] = shape_section(world, d);
  d.sections[kShapeFree] = free_list_section(world.free_shapes, d.scratch);
  d.sections[kPairs] = pair_section(world, d);
  d.sections[kPoints] = point_section(world, d.scratch);
  d.sections[kTail] = tail_section(world, d.scratch);
  d.records_valid = true;
  d.valid = true;
}

}  // namespace

void World::ImplPtr::mark_changed() {
  if (!p_) return;
  p_->digests.valid = false;
  p_->digests.records_valid = false;
  p_->body_sets.invalidate();  // the change may add, remove or re-flag a body
}

WorldImpl& World::ImplPtr::keeping_slot_digests() {
  p_->digests.valid = false;
  return *p_;
}

uint64_t World::hash() const { return hash_after({}); }

uint64_t World::hash_after(std::span<const uint8_t> prefix) const {
  const WorldImpl& world = *impl_;
  StateDigests& d = world.digests;
  // The head: the caller's bytes, then the world's header (magic to next_auto_id).
  d.head.assign(prefix.begin(), prefix.end());
  {
    StateWriter w(d.head);
    write_state_header(world, w);
  }
  // The bytes' hash takes the world to start at the first magic that walks as a state
  // (state/hash.cpp). Should the caller's bytes hold one, that rule is followed to the
  // letter on the whole bytes rather than assumed.
  if (std::search(d.head.begin(), d.head.end(), std::begin(kMagic), std::end(kMagic)) - d.head.begin() !=
      ptrdiff_t(prefix.size())) {
    StateWriter w(d.head, prefix.size());
    write_state(world, w);
    w.finish();
    return state_hash(d.head);
  }
  if (!d.valid) every_section_but_the_head(world, d);
  d.sections[kHead] = xxh3_le(d.head);
  return combine(d.sections);
}

}  // namespace keel::sim
