// The ranges a world's numbers must stay within, so that every product the step forms
// stays finite and every position keeps useful float precision. Scenes, World::add_body
// (and so bodies that game rules spawn), add_joint, World::from_scene and
// World::restore_state all refuse values outside them, naming the field
// (docs/scene-format.md, "Limits", lists them with their reasons).
//
// The figures leave wide margins above every shipped scene (the largest: a 200 m ground
// box, 80 kg bodies, a few m/s) and stay far below where floats give out (3.4e38):
//   - a coordinate of 1e5 m still has 8 mm float spacing; further out contacts jitter;
//   - the largest momentum-like product, mass * speed^2 = 1e12 kg * (1e4 m/s)^2 = 1e20,
//     and an inertia, mass * size^2 = 1e12 * (1e4 m)^2 = 1e20, leave 18 decades;
//   - the smallest mass (1e-3 kg) and size (1e-3 m) bound the inverse mass and inverse
//     inertia (1e3 and about 1e9), so impulses over them cannot overflow.
#pragma once

namespace keel::sim {

/// m: the largest |coordinate| of a body's position, a collider's centre, a mesh vertex,
/// a heightfield's extent and heights, a joint frame and a spawn point.
inline constexpr float kMaxWorldExtent = 1.0e5f;
/// m: the largest radius, half height, half extent and |hull point coordinate|.
inline constexpr float kMaxShapeSize = 1.0e4f;
/// m: the smallest radius and half extent (a half height may be 0).
inline constexpr float kMinShapeSize = 1.0e-3f;
/// kg: the range of a dynamic body's mass, given or computed from its densities.
inline constexpr float kMinBodyMass = 1.0e-3f;
inline constexpr float kMaxBodyMass = 1.0e12f;
/// kg/m^3: the largest collider density (osmium is 2.3e4).
inline constexpr float kMaxDensity = 1.0e5f;
/// m/s and rad/s: the largest |component| of a body's linear and angular velocity as it
/// enters a world. (The solver itself caps what it integrates lower still: 400 m/s, and
/// a quarter turn per substep.)
inline constexpr float kMaxLinearVelocity = 1.0e4f;
/// m/N: the softest XPBD contact a world takes (1 mm under 1 N); softer is no contact.
inline constexpr float kMaxContactCompliance = 1.0e-3f;
inline constexpr float kMaxAngularVelocity = 1.0e4f;
/// 1/s: the largest linear or angular damping (a body stops within a tick long before).
inline constexpr float kMaxDamping = 1.0e4f;
/// The largest |gravity_scale|.
inline constexpr float kMaxGravityScale = 1.0e3f;
/// The largest friction coefficient, and the largest restitution: above 2 a body gains
/// more than twice its speed on each bounce and leaves any bound within a few ticks.
inline constexpr float kMaxFriction = 1.0e3f;
inline constexpr float kMaxRestitution = 2.0f;
/// m/s^2: the largest |component| of the world's gravity (about 100 g).
inline constexpr float kMaxGravity = 1.0e3f;
/// The largest joint force or torque (motor force, holding torque, break force; N or N·m)
/// and joint speed (m/s or rad/s): even that force on the lightest body for a tick gives
/// a finite velocity (about 2e13 m/s), whose square is still finite.
inline constexpr float kMaxJointForce = 1.0e12f;
inline constexpr float kMaxJointSpeed = 1.0e4f;
/// m, m/s and rad/s: the largest |coordinate| and |velocity component| a running world
/// may reach. Bodies enter within the limits above, but a body that falls off a level
/// keeps falling (at 1g it takes about five days to get here). Past this, squares and
/// products with the largest mass would leave float range, so the step's end-of-tick
/// check (World::first_non_finite_body) reports a body beyond it as it does a NaN, and
/// World::restore_state refuses it; anything within it, a world may save and restore.
inline constexpr float kMaxStateMagnitude = 1.0e12f;
/// Hz and ratio: the largest spring frequency and damping ratio (joints and contacts).
inline constexpr float kMaxSpringHertz = 1.0e4f;
inline constexpr float kMaxDampingRatio = 1.0e4f;

}  // namespace keel::sim
