#include "body/mass.h"

#include <keel/sim/hull.h>

namespace keel::sim {

namespace {

constexpr float kPi = 3.14159265358979323846f;

Mat3 diagonal(float x, float y, float z) {
  Mat3 m(0.0f);
  m[0][0] = x;
  m[1][1] = y;
  m[2][2] = z;
  return m;
}

// Inertia of a point mass m at offset d from the reference point: m (|d|^2 E - d d^T).
Mat3 parallel_axis(float m, const Vec3& d) {
  Mat3 out = diagonal(1.0f, 1.0f, 1.0f) * (m * glm::dot(d, d));
  out -= m * glm::outerProduct(d, d);
  return out;
}

}  // namespace

namespace {

// The part's hull: the one handed in, else built from its points (null if they do not
// build; validation refuses such points before a body is added).
std::shared_ptr<const ConvexHull> hull_of(const ColliderDef& c, const ConvexHull* given) {
  if (given) return std::shared_ptr<const ConvexHull>(std::shared_ptr<const ConvexHull>{}, given);
  auto built = build_hull(c.points);
  return built ? *built : nullptr;
}

}  // namespace

float shape_volume(const ColliderDef& c, const ConvexHull* given) {
  switch (c.shape) {
    case ShapeType::Sphere:
      return (4.0f / 3.0f) * kPi * c.radius * c.radius * c.radius;
    case ShapeType::Box:
      return 8.0f * c.half_extents.x * c.half_extents.y * c.half_extents.z;
    case ShapeType::Capsule: {
      float r = c.radius;
      return kPi * r * r * (2.0f * c.half_height) + (4.0f / 3.0f) * kPi * r * r * r;
    }
    case ShapeType::Hull: {
      auto hull = hull_of(c, given);
      return hull ? hull->volume : 0.0f;
    }
    default: break;  // meshes and heightfields are surfaces of static bodies: no volume
  }
  return 0.0f;
}

Mat3 shape_unit_inertia(const ColliderDef& c, const ConvexHull* given) {
  if (c.shape == ShapeType::Hull) {
    auto hull = hull_of(c, given);
    return hull ? hull->inertia : Mat3(0.0f);
  }
  float m = shape_volume(c);
  switch (c.shape) {
    case ShapeType::Sphere: {
      float i = 0.4f * m * c.radius * c.radius;
      return diagonal(i, i, i);
    }
    case ShapeType::Box: {
      Vec3 e = c.half_extents;
      float k = m / 3.0f;
      return diagonal(k * (e.y * e.y + e.z * e.z), k * (e.x * e.x + e.z * e.z),
                      k * (e.x * e.x + e.y * e.y));
    }
    case ShapeType::Capsule: {
      // A cylinder of height h plus two hemispherical caps (together one sphere of mass
      // ms), the caps' centroids 3r/8 beyond the cylinder's ends.
      float r = c.radius;
      float h = 2.0f * c.half_height;
      float mc = kPi * r * r * h;
      float ms = (4.0f / 3.0f) * kPi * r * r * r;
      float axial = mc * (0.5f * r * r) + ms * (0.4f * r * r);
      float side = mc * (h * h / 12.0f + 0.25f * r * r) +
                   ms * (0.4f * r * r + 0.25f * h * h + 0.375f * h * r);
      return diagonal(side, axial, side);
    }
    default: break;
  }
  return Mat3(0.0f);
}

Vec3 shape_centroid(const ColliderDef& c, const ConvexHull* given) {
  if (c.shape != ShapeType::Hull) return c.center;
  auto hull = hull_of(c, given);
  return hull ? c.center + glm::normalize(c.rotation) * hull->centroid : c.center;
}

MassProperties compute_mass_properties(const std::vector<ColliderDef>& parts, const BuiltHulls* hulls) {
  MassProperties out;
  Vec3 moment(0.0f);
  // Each part's hull, built once here unless the caller has built them.
  BuiltHulls own;
  if (!hulls) {
    own.resize(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].shape == ShapeType::Hull) own[i] = hull_of(parts[i], nullptr);
    }
    hulls = &own;
  }
  std::vector<float> volume(parts.size());
  std::vector<Vec3> centroid(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const ColliderDef& c = parts[i];
    const ConvexHull* hull = i < hulls->size() ? (*hulls)[i].get() : nullptr;
    volume[i] = shape_volume(c, hull);
    centroid[i] = shape_centroid(c, hull);
    float m = c.density * volume[i];
    out.mass += m;
    moment += m * centroid[i];
  }
  if (out.mass <= 0.0f) return MassProperties{};
  out.center = moment / out.mass;
  for (size_t i = 0; i < parts.size(); ++i) {
    const ColliderDef& c = parts[i];
    Mat3 r = glm::mat3_cast(c.rotation);
    const ConvexHull* hull = i < hulls->size() ? (*hulls)[i].get() : nullptr;
    Mat3 local = c.density * shape_unit_inertia(c, hull);
    out.inertia += r * local * glm::transpose(r);
    out.inertia += parallel_axis(c.density * volume[i], centroid[i] - out.center);
  }
  return out;
}

MassProperties compute_mass_properties(const std::vector<ColliderDef>& parts, float mass, const BuiltHulls* hulls) {
  // Distribute the given mass as if every part had the same density, unless the parts'
  // own densities already give a distribution.
  MassProperties p = compute_mass_properties(parts, hulls);
  if (p.mass <= 0.0f) {
    std::vector<ColliderDef> unit = parts;
    for (ColliderDef& c : unit) c.density = 1.0f;
    p = compute_mass_properties(unit, hulls);
  }
  if (p.mass <= 0.0f) {
    MassProperties point;
    point.mass = mass;
    return point;  // no volume: a point mass (rotation will be frozen)
  }
  float scale = mass / p.mass;
  p.mass = mass;
  p.inertia *= scale;
  return p;
}

}  // namespace keel::sim
