// Vector, quaternion and matrix types used by keel::sim, and the small helpers the
// sim needs on top of glm.
//
// Determinism: everything here is +, -, *, / and sqrt (IEEE correctly rounded).
// glm functions that call libm transcendental functions (angleAxis, eulerAngles,
// slerp, ...) are not used anywhere that steps a world; see det_math.h for our own
// sin/cos/atan2/acos.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cstdint>

namespace keel::sim {

using Vec3 = glm::vec3;
using Quat = glm::quat;  // storage x, y, z, w; glm's constructor takes (w, x, y, z)
using Mat3 = glm::mat3;  // column-major: column i is the image of local axis i

/// Builds a quaternion from components in file order (x, y, z, w).
inline Quat make_quat(float x, float y, float z, float w) { return Quat(w, x, y, z); }

inline Quat identity_quat() { return Quat(1.0f, 0.0f, 0.0f, 0.0f); }

/// A rigid pose: rotate by `rotation`, then translate by `position`.
struct Transform {
  Vec3 position{0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
};

/// Applies a transform to a point.
inline Vec3 transform_point(const Transform& t, const Vec3& p) { return t.rotation * p + t.position; }

/// Applies the inverse of a transform to a point.
inline Vec3 inverse_transform_point(const Transform& t, const Vec3& p) {
  return glm::conjugate(t.rotation) * (p - t.position);
}

/// Composes two transforms: the result maps x to a(b(x)).
inline Transform compose(const Transform& a, const Transform& b) {
  return Transform{a.rotation * b.position + a.position, a.rotation * b.rotation};
}

/// Axis-aligned bounding box.
struct AABB {
  Vec3 lower{0.0f};
  Vec3 upper{0.0f};
};

inline bool overlaps(const AABB& a, const AABB& b) {
  return a.lower.x <= b.upper.x && b.lower.x <= a.upper.x && a.lower.y <= b.upper.y &&
         b.lower.y <= a.upper.y && a.lower.z <= b.upper.z && b.lower.z <= a.upper.z;
}

inline bool contains(const AABB& outer, const AABB& inner) {
  return outer.lower.x <= inner.lower.x && outer.lower.y <= inner.lower.y &&
         outer.lower.z <= inner.lower.z && inner.upper.x <= outer.upper.x &&
         inner.upper.y <= outer.upper.y && inner.upper.z <= outer.upper.z;
}

inline AABB merge(const AABB& a, const AABB& b) {
  return AABB{glm::min(a.lower, b.lower), glm::max(a.upper, b.upper)};
}

inline float surface_area(const AABB& a) {
  Vec3 d = a.upper - a.lower;
  return 2.0f * (d.x * d.y + d.y * d.z + d.z * d.x);
}

}  // namespace keel::sim
