// The world's joints: slot array with a free list (like bodies), the impulses each joint
// carries from tick to tick (warm start, part of the saved state), and the solver hooks.
#pragma once

#include <keel/sim/defs.h>
#include <keel/sim/joint.h>

#include <cstdint>
#include <vector>

namespace keel::sim {

struct WorldImpl;
struct SolverBody;
struct Softness;
class StateWriter;
class StateReader;

/// One joint. Everything here is state except where marked.
struct Joint {
  bool alive = false;
  bool broken = false;
  uint32_t generation = 0;
  uint32_t body_a = 0xffffffffu;  // body slot
  uint32_t body_b = 0xffffffffu;  // body slot, 0xffffffff = the world
  JointDef def;                   // body ids, frames, limits, motor, springs (length resolved)
  float steer = 0.0f;             // wheel: steering target, within steer_limit

  // Accumulated impulses (per substep), warm-started across ticks.
  Vec3 linear_impulse{0.0f};   // point block, or the two rows across the axis (x, y)
  Vec3 angular_impulse{0.0f};  // rotation block, hinge's two rows (x, y), wheel camber (x) and steer (y)
  float spring_impulse = 0.0f;
  float motor_impulse = 0.0f;
  float lower_impulse = 0.0f;  // limit rows (twist for Ball)
  float upper_impulse = 0.0f;
  float cone_impulse = 0.0f;
  float rigid_impulse = 0.0f;  // distance at a fixed length
  Vec3 hold_impulse{0.0f};     // holding torque (x only for Hinge)
  Quat hold_ref{1.0f, 0.0f, 0.0f, 0.0f};  // frame B in frame A when the joint last came to rest
  bool hold_saturated = false;            // the muscle gave way in the last substep
};

struct JointSet {
  std::vector<Joint> items;
  std::vector<uint32_t> free;  // stack: back() is reused first
  bool empty() const { return items.empty(); }
};

/// A limit row on its joint's constraint manifold, worked out for one pose of the two
/// bodies: its effective mass, the row with the shares its joint's held rows take of its
/// impulse (the impulse applied along it), and the linear rows' shares alone (breaking).
struct LimitManifold {
  float mass = 0.0f;
  Vec3 lin{0.0f}, ang_a{0.0f}, ang_b{0.0f};
  Vec3 linear_share{0.0f};
};

/// Per-tick solver data of one joint (never state).
struct JointWork {
  uint32_t joint = 0;
  uint32_t a = 0, b = 0;        // solver body indices (0 = the immovable stand-in)
  Vec3 ca{0.0f}, cb{0.0f};      // centres of mass at the start of the tick
  Quat qa{1, 0, 0, 0}, qb{1, 0, 0, 0};  // rotations at the start of the tick
  Vec3 la{0.0f}, lb{0.0f};      // anchors from the centre of mass, body frame
  Quat fa{1, 0, 0, 0}, fb{1, 0, 0, 0};  // frame rotations, body frame
  float peak_linear = 0.0f;     // largest linear impulse of a substep this tick (breaking)
  // The limits' manifolds (slot 0: angle, travel or twist; 1: cone) and the bodies' poses
  // (dp, dq) they were worked out at. A substep's relax pass and the next substep's warm
  // start and solve see the same poses, so each is worked out once per substep.
  LimitManifold limit_manifold[2];
  uint8_t limit_manifold_ready = 0;  // a bit per slot
  Vec3 pose_dp_a{0.0f}, pose_dp_b{0.0f};
  Quat pose_dq_a{1, 0, 0, 0}, pose_dq_b{1, 0, 0, 0};
};

/// Solver hooks. Warm start and solve take the work entries [first, last), one thread,
/// in order: the solve gives each part of the world (joints that share no body with any
/// other part's) its own range, in joint-slot order, so joints never depend on the thread
/// count. Prepare and finish take every entry.
struct JointPass {
  WorldImpl& world;
  std::vector<SolverBody>& bodies;
  const std::vector<uint32_t>& solver_index;
  std::vector<JointWork>& work;
  float h;
  bool warm_start_enabled;
  size_t first = 0;
  size_t last = ~size_t(0);  // clamped to work.size()
};
void prepare_joints(JointPass& p);
void warm_start_joints(JointPass& p);
void solve_joints(JointPass& p, bool use_bias);
/// After the bodies are written back: break overloaded joints, move holding references.
void finish_joints(JointPass& p);

/// Refuses, naming the kind and the feature, a joint the world's solver cannot solve (the
/// XPBD solver's subset: docs/sim.md, "Solvers"); ok for the soft step.
Status xpbd_joint_support(const JointDef& d, const WorldSettings& s);

/// Whether two body slots are joined by a joint that keeps them from colliding.
bool joint_blocks_collision(const WorldImpl& w, uint32_t slot_a, uint32_t slot_b);
/// Removes every joint of a body slot (the body is being removed).
void remove_joints_of(WorldImpl& w, uint32_t slot);
/// Rebuilds the per-body joint lists (after a restore).
void rebuild_joint_links(WorldImpl& w);

void write_joints(const WorldImpl& w, StateWriter& out);
/// Reads the joint section when the next bytes start one (worlds without joints have none).
void read_joints(StateReader& in, WorldImpl& w);

/// Relative rotation of frame B in frame A for current body poses (world = identity).
Quat joint_relative_rotation(const WorldImpl& w, const Joint& j);

}  // namespace keel::sim
