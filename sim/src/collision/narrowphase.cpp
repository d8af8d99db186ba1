// Narrowphase dispatch: picks the routine for a pair of shape types.
//
// Each routine is written for one order of its two shapes (sphere < capsule < box < hull). A pair
// in the other order is computed swapped and its normal negated; the points, depths and
// feature ids are the same either way because they do not depend on which side is "A".
#include "narrowphase.h"

#include "concave_scratch.h"
#include "geometry.h"

#include <memory>

namespace keel::sim {
namespace {

using Routine = void (*)(const ShapeGeom&, const ShapeGeom&, float, Manifold&);

/// Position of a shape type in the routine order; -1 for a value outside the enum.
int routine_rank(ShapeType t) {
  switch (t) {
    case ShapeType::Sphere:
      return 0;
    case ShapeType::Capsule:
      return 1;
    case ShapeType::Box:
      return 2;
    case ShapeType::Hull:
      return 3;
    default:
      return -1;
  }
  return -1;
}

/// kRoutines[i][j] handles rank i as A and rank j as B, for i <= j.
constexpr Routine kRoutines[4][4] = {
    {collide_sphere_sphere, collide_sphere_capsule, collide_sphere_box, collide_sphere_hull},
    {nullptr, collide_capsule_capsule, collide_capsule_box, collide_capsule_hull},
    {nullptr, nullptr, collide_box_box, collide_box_hull},
    {nullptr, nullptr, nullptr, collide_hull_hull},
};

// Two convex shapes: the routine for their ranks.
void collide_convex(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  const int ra = routine_rank(a.type);
  const int rb = routine_rank(b.type);
  if (ra < 0 || rb < 0 || (ra == 3 && !a.hull) || (rb == 3 && !b.hull)) {
    np::reset(out);  // a corrupt type never collides rather than crashing
    return;
  }
  if (ra <= rb) {
    kRoutines[ra][rb](a, b, margin, out);
    return;
  }
  kRoutines[rb][ra](b, a, margin, out);
  out.normal = -out.normal;
}

}  // namespace

void collide(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out, ConcaveScratch& scratch) {
  // Concave shapes collide triangle by triangle; two of them never make contacts.
  if (!is_concave(a.type) && !is_concave(b.type)) return collide_convex(a, b, margin, out);
  if (is_concave(a.type) && is_concave(b.type)) {
    np::reset(out);
  } else if (is_concave(a.type)) {
    collide_concave(a, b, margin, out, scratch);
  } else {
    collide_concave(b, a, margin, out, scratch);
    out.normal = -out.normal;
  }
}

// Off the stepping path (tests, tools): a concave pair gets a scratch of its own.
void collide(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  if (!is_concave(a.type) && !is_concave(b.type)) return collide_convex(a, b, margin, out);
  const auto scratch = std::make_unique<ConcaveScratch>();
  collide(a, b, margin, out, *scratch);
}

void collide_concave(const ShapeGeom& a, const ShapeGeom& b, float margin, Manifold& out) {
  const auto scratch = std::make_unique<ConcaveScratch>();
  collide_concave(a, b, margin, out, *scratch);
}

}  // namespace keel::sim
