// The bounds stage: each collider's tight bounds at its body's pose, and new fat bounds for
// the colliders that left theirs. The tree itself is updated by the contacts stage
// (contact/contacts_stage.cpp), which queries it for new pairs.
#pragma once

#include "broadphase/broadphase.h"

#include <cstdint>
#include <vector>

namespace keel::sim {

struct WorldImpl;

inline AABB fatten(const AABB& box) {
  return AABB{box.lower - Vec3(kAabbMargin), box.upper + Vec3(kAabbMargin)};
}

// A fast body's fat bound also reaches as far ahead as it will travel in the next
// kFatAheadTicks ticks (its tight bound already covers this one), so a body in flight
// leaves it every few ticks rather than every tick: fewer tree updates, which run on one
// thread, and fewer queries. `sweep` is this tick's predicted displacement (ccd.h).
inline constexpr float kFatAheadTicks = 2.0f;
inline AABB fatten(const AABB& box, const Vec3& sweep) {
  AABB f = fatten(box);
  const Vec3 ahead = sweep * kFatAheadTicks;
  f.lower += glm::min(ahead, Vec3(0.0f));
  f.upper += glm::max(ahead, Vec3(0.0f));
  return f;
}

// Tight bounds of every collider on a body that can move, on the workers (each collider
// writes only itself); a collider that left its fat bounds gets new ones and is marked in
// `escaped`. The tree is not touched here (find_new_pairs).
void refit_bounds(WorldImpl& w, std::vector<uint8_t>& escaped);

}  // namespace keel::sim
