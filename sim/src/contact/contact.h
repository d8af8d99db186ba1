// Contacts: one per collider pair whose fat bounds overlap, kept sorted by pair key
// (lower collider slot first). The order of this array is the solver's Gauss-Seidel
// order, so it is a pure function of the IDs, never of discovery order.
#pragma once

#include "collision/narrowphase.h"
#include "memory/large_page_allocator.h"

#include <keel/sim/math.h>

#include <cmath>

#include <cstdint>
#include <vector>

namespace keel::sim {

struct ContactPoint {
  Vec3 anchor_a{0.0f};  // contact point relative to A's centre of mass (world axes)
  Vec3 anchor_b{0.0f};  // relative to B's centre of mass
  Vec3 point{0.0f};     // world point at collide time (for events)
  float depth = 0.0f;   // penetration at collide time (negative: speculative gap)
  uint32_t id = 0;      // narrowphase feature id
  // Warm-start cache, carried across ticks and part of the saved state.
  float normal_impulse = 0.0f;
  Vec3 friction_impulse{0.0f};  // world vector: survives a turning normal
  // Solver outputs of the last step (not state: recomputed every step).
  float max_normal_impulse = 0.0f;
};

struct Contact {
  uint64_t key = 0;
  uint32_t shape_a = 0;  // lower collider slot
  uint32_t shape_b = 0;
  uint32_t body_a = 0;
  uint32_t body_b = 0;
  Vec3 normal{0.0f, 1.0f, 0.0f};  // A -> B
  int count = 0;
  ContactPoint points[kMaxManifoldPoints];
  float friction = 0.0f;         // kinetic
  float static_friction = 0.0f;  // while gripping; at least friction
  // Warm-start state like the impulses (saved, false without points): the last solve's
  // friction filled its cone, so this tick the contact drags with `friction`. Only ever
  // set when static_friction > friction.
  bool sliding = false;
  float restitution = 0.0f;
  bool sensor = false;  // a trigger is involved: sensed, never solved
};

/// Friction of a pair: the geometric mean, so a zero-friction surface is slippery
/// against anything and two equal materials keep their value.
inline float combine_friction(float a, float b) { return std::sqrt(a * b); }
/// Restitution of a pair: the larger, so a bouncy ball bounces on any floor.
inline float combine_restitution(float a, float b) { return a > b ? a : b; }

/// What the contact pass found for each contact, as bits of one byte per contact.
inline constexpr uint8_t kContactDead = 1;      // its fat bounds parted: removed this tick
inline constexpr uint8_t kContactHeld = 2;      // neither body could move: manifold kept as it was
inline constexpr uint8_t kContactTouching = 4;  // it has points after the pass

class ContactSet {
 public:
  using Items = std::vector<Contact, LargePageAllocator<Contact>>;
  Items& items() { return items_; }
  const Items& items() const { return items_; }
  /// Every contact's key, in order, kept beside the contacts: the broadphase searches
  /// the known pairs many times a tick, and a contact is far larger than its key.
  const std::vector<uint64_t>& keys() const { return keys_; }
  /// Must follow any change of the contacts' number or keys through items() (a restore).
  void rebuild_keys();
  /// Changes whenever contacts are added or removed (indices into items() then move): a
  /// list of indices made at one generation is valid while it lasts.
  uint64_t generation() const { return generation_; }

  bool contains(uint64_t key) const;
  /// Adds contacts for sorted, unique keys not yet present, keeping key order, in place:
  /// the contacts after the first new key move up (a busy world holds thousands of pairs
  /// and gains some every tick while things fall). `indices` (sorted indices into
  /// items(), optional) are moved along with their contacts. Returns where the new
  /// contacts are, in key order.
  const std::vector<size_t>& insert_new(const std::vector<uint64_t>& sorted_keys,
                                        std::vector<uint32_t>* indices = nullptr);
  /// Removes every contact touching a collider slot.
  void remove_shape(uint32_t shape);
  /// Removes the contacts whose byte in `flags` (same length as items()) has kContactDead,
  /// in place: the survivors after the first dead contact move down.
  void remove_flagged(const std::vector<uint8_t>& flags);
  /// Moves per-contact values, indexed as the contacts were before the last insert_new,
  /// to where those contacts are now; the contacts it inserted get 0.
  void follow_last_insert(std::vector<uint8_t>& values) const;
  void clear() {
    items_.clear();
    keys_.clear();
    ++generation_;
  }

 private:
  /// Capacity for `count` contacts, with room to grow.
  void make_room(size_t count);
  /// Moves a per-contact list's entries as the last insert_new moved the contacts.
  template <class List, class Fill>
  void open_gaps(List& list, Fill&& fill) const;

  Items items_;
  std::vector<uint64_t> keys_;
  std::vector<uint64_t> fresh_keys_;
  std::vector<size_t> fresh_at_;     // per fresh key: the old contact it goes before
  std::vector<size_t> inserted_at_;  // where the last insert_new put its contacts
  uint64_t generation_ = 0;
};

/// Replaces a contact's points with a fresh manifold, carrying each point's cached
/// impulses over from the old point with the same feature id (friction flattened onto
/// the new contact plane unless `flatten_friction` is false: a restored world rebuilding
/// the very manifold it saved copies the impulses bit for bit).
void update_manifold(Contact& c, const Manifold& m, const Vec3& center_a, const Vec3& center_b,
                     bool flatten_friction = true);

}  // namespace keel::sim
