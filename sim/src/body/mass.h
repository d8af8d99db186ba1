// Mass properties of a body from its collider parts: exact for spheres, boxes,
// capsules and hulls (tetrahedral decomposition, see hull.h), each part rotated into the body frame and shifted to the common centre of
// mass by the parallel-axis theorem.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/math.h>

#include <memory>
#include <vector>

namespace keel::sim {

struct ConvexHull;

/// The built hull of each collider of a body, in collider order (null for a part that is
/// not a hull). Built once when the body is added and handed to each stage that needs
/// it: a hull build is the costliest part of adding a body.
using BuiltHulls = std::vector<std::shared_ptr<const ConvexHull>>;

struct MassProperties {
  float mass = 0.0f;
  Vec3 center{0.0f};     // body frame
  Mat3 inertia{0.0f};    // about `center`, body frame
};

/// Volume of one part.
/// `hull` is the part's built hull when it is a hull (built from its points when null).
float shape_volume(const ColliderDef& c, const ConvexHull* hull = nullptr);
/// Inertia of one part of unit density about its own centroid, in its own frame.
Mat3 shape_unit_inertia(const ColliderDef& c, const ConvexHull* hull = nullptr);
/// Centroid of one part in the body frame: its center, or for a hull the hull's centroid
/// placed by the collider's center and rotation.
Vec3 shape_centroid(const ColliderDef& c, const ConvexHull* hull = nullptr);

/// Mass properties from the parts' densities. Every part counts, including triggers and
/// disabled parts: switching collision off does not change how heavy a body is.
/// `hulls`, when given, holds each part's built hull (see BuiltHulls).
MassProperties compute_mass_properties(const std::vector<ColliderDef>& parts, const BuiltHulls* hulls = nullptr);

/// As above, rescaled so the total mass is `mass` (the distribution stays the parts').
MassProperties compute_mass_properties(const std::vector<ColliderDef>& parts, float mass,
                                       const BuiltHulls* hulls = nullptr);

}  // namespace keel::sim
