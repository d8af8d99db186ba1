// Plain descriptions of worlds, bodies and colliders: what a scene file says, what game
// code passes to World::add_body, and what the world keeps in its saved state.
//
// Field names and defaults follow the scene format (docs/scene-format.md). The sim knows
// nothing about JSON or FlatBuffers: keel::protocol turns a scene file into a SceneDef.
#pragma once

#include <keel/base/expected.h>
#include <keel/sim/joint_def.h>
#include <keel/sim/math.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace keel::sim {

enum class MotionType : uint8_t { Static = 0, Kinematic = 1, Dynamic = 2 };

/// Shape kinds. Sphere, box, capsule and hull are convex; Mesh and Heightfield are concave,
/// static-only shapes (see docs/sim.md, "Triangle meshes and heightfields").
enum class ShapeType : uint8_t { Sphere = 0, Box = 1, Capsule = 2, Hull = 3, Mesh = 4, Heightfield = 5 };

/// Returns "Static", "Kinematic" or "Dynamic".
const char* to_string(MotionType m);
/// Returns "Sphere", "Box", "Capsule", "Hull", "Mesh" or "Heightfield".
const char* to_string(ShapeType s);

/// Limits on concave geometry (untrusted input): far above a level's needs, low enough
/// that feature ids (triangle index << 8) and saved states stay bounded.
inline constexpr uint32_t kMaxMeshVertices = 1u << 20;
inline constexpr uint32_t kMaxMeshTriangles = 1u << 20;
inline constexpr uint32_t kMaxHeightfieldSamples = 1u << 22;  ///< e.g. 2048 x 2048

/// One part of a body's collision shape, placed in the body's frame.
struct ColliderDef {
  ShapeType shape = ShapeType::Sphere;
  Vec3 center{0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  float radius = 0.5f;       ///< sphere, capsule
  float half_height = 0.0f;  ///< capsule: segment along local +Y, this far either side of center
  Vec3 half_extents{0.5f};   ///< box
  /// Hull: the point cloud whose convex hull is the shape, in the collider frame (see
  /// hull.h for the limits: 4..4096 points, at most 64 hull vertices kept).
  /// Mesh: vertex positions in the collider's frame. Triangles are `indices` taken three at
  /// a time, counter-clockwise seen from the solid side's outside (the side they push to).
  std::vector<Vec3> points;
  std::vector<uint32_t> indices;  ///< mesh: three vertex indices per triangle
  /// Heightfield: a grid of `rows` x `columns` heights (row-major: heights[r * columns + c])
  /// at local (c * cell_size, heights[..], r * cell_size); solid below the surface.
  uint32_t rows = 0;
  uint32_t columns = 0;
  float cell_size = 1.0f;
  std::vector<float> heights;
  float friction = 0.6f;  ///< kinetic: the friction of a sliding contact
  /// The friction that holds a contact at rest: a contact point grips while the friction
  /// impulse that stops its sliding fits within static_friction times its normal
  /// impulse, and drags with `friction` once it needs more (docs/sim.md, "Friction").
  /// Negative: the same as `friction`; otherwise at least `friction`.
  float static_friction = -1.0f;
  float restitution = 0.0f;
  float density = 1000.0f;  ///< kg/m^3, used when the body's mass is 0
  bool is_trigger = false;
  bool enabled = true;
};

/// Marks a BodyDef whose id the world should assign.
inline constexpr uint32_t kAutoBodyId = std::numeric_limits<uint32_t>::max();

struct BodyDef {
  uint32_t id = kAutoBodyId;  ///< unique per world; stable for the body's life
  MotionType motion = MotionType::Dynamic;
  float mass = 0.0f;  ///< 0 = computed from the colliders' densities
  Vec3 position{0.0f};
  Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  Vec3 linear_velocity{0.0f};
  Vec3 angular_velocity{0.0f};
  float linear_damping = 0.0f;   ///< 1/s
  float angular_damping = 0.0f;  ///< 1/s
  float gravity_scale = 1.0f;
  bool freeze_rotation = false;
  bool can_sleep = true;
  /// Continuous collision every tick (dynamic bodies): the body's contacts are made as far
  /// ahead as it moves in a tick, so it cannot pass through thin walls. Bodies faster than
  /// the automatic threshold get the same treatment without the flag (docs/sim.md).
  bool bullet = false;
  uint32_t layer = 1;
  uint32_t collides_with = 0xffffffffu;
  std::vector<ColliderDef> colliders;
  /// The game's label for what the body is (a number the game defines: ball, crate, 0 =
  /// none). The world keeps it with the body (saved, hashed and restored, so every state a
  /// match restores from knows what its bodies are) but no stage reads it; clients receive
  /// it with the body's description (docs/protocol.md, "World description").
  uint32_t kind = 0;
};

/// World-wide settings. Solver constants that every peer must agree on are part of the
/// saved state, so a restored world steps exactly as the one that saved it.
/// Which solver steps the world (docs/sim.md, "Solvers"). Values are state: append only.
enum class SolverKind : uint8_t {
  SoftStep = 0,  ///< substepped soft-constraint Gauss-Seidel (solver/)
  Xpbd = 1,      ///< substepped extended position-based dynamics (xpbd/)
};

/// The solver's scene name ("soft_step", "xpbd").
const char* to_string(SolverKind k);

struct WorldSettings {
  uint32_t tick_rate = 60;  ///< ticks per second
  Vec3 gravity{0.0f, -9.81f, 0.0f};
  uint32_t substeps = 6;                ///< solver substeps per tick
  /// Contact spring stiffness, clamped to a quarter of the substep rate (90 Hz at 6 x 60 Hz):
  /// stiff enough that a 20-box column sinks millimetres, not centimetres (docs/sim.md, "Stacking").
  float contact_hertz = 90.0f;
  /// Contact spring damping: critical, so an overlap is pushed out within a few substeps
  /// instead of leaking out slowly while the boxes above slide on it.
  float contact_damping_ratio = 1.0f;
  float contact_push_max_speed = 3.0f;  ///< m/s, cap on overlap recovery speed
  float restitution_threshold = 1.0f;   ///< m/s, approach speeds below this do not bounce
  uint32_t threads = 1;                 ///< worker threads; never changes results
  SolverKind solver_kind = SolverKind::SoftStep;
  /// m/N: XPBD contact compliance (inverse stiffness); 0 = rigid. Read by XPBD only.
  float contact_compliance = 0.0f;
};

/// Checks a body description for values the sim cannot step: non-finite numbers,
/// non-positive radius / half extents, negative half_height, friction, restitution or
/// damping, a non-normalisable rotation, a dynamic body whose mass is <= 0 with no
/// collider that has volume and density. The message names the body id and the field,
/// e.g. "body 12: colliders[0].radius must be > 0 (got -1)".
Status validate_body(const BodyDef& def);

/// Checks world settings against keel/sim/limits.h: tick_rate 1..1000, substeps 1..64,
/// |gravity| components up to kMaxGravity, contact_hertz in (0, kMaxSpringHertz],
/// contact_damping_ratio in [0, kMaxDampingRatio], contact_push_max_speed and
/// restitution_threshold in [0, kMaxLinearVelocity], solver_kind a known kind,
/// contact_compliance in [0, kMaxContactCompliance]. The message names the field, e.g.
/// "settings: gravity.y must be within +-1000 (got 1e+30)".
Status validate_settings(const WorldSettings& settings);

// Character controller descriptions (the API is in character.h).

/// One segment of a scripted walk: for `ticks` ticks the character asks for `move`
/// (world-space horizontal velocity, m/s) and holds jump when `jump` is set.
struct CharacterScriptStep {
  uint32_t ticks = 1;
  Vec3 move{0.0f};
  bool jump = false;
};

struct CharacterSettings {
  float slope_limit = 0.78539816f;  ///< radians: steeper ground is a wall or a slide (45 deg)
  float step_height = 0.35f;        ///< m: steps up to this are climbed; also the snap-down reach
  float push_force = 400.0f;        ///< N: the most the character pushes a dynamic body with
  float jump_speed = 5.0f;          ///< m/s upwards, from the ground only
  float air_acceleration = 5.0f;    ///< m/s^2: steering off the ground (0: keeps its momentum)
  /// A scripted walk replayed in a loop from tick 0 of the world; when not empty it
  /// replaces the input set with set_character_input (scenes use it for scripted walkers).
  std::vector<CharacterScriptStep> script;
};

/// A definition in a scene: which body is a character, and how it behaves.
struct CharacterDef {
  uint32_t body = 0;  ///< user id of a dynamic body (capsule collider, rotation frozen)
  CharacterSettings settings;
};

struct SceneDef {
  std::string name;
  WorldSettings settings;
  std::vector<BodyDef> bodies;
  std::vector<Transform> spawn_points;
  std::vector<CharacterDef> characters;  ///< bodies driven by the character controller
  std::vector<JointDef> joints;          ///< added after the bodies, in this order
};

}  // namespace keel::sim
