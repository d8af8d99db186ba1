#include "solver/solver.h"

#include "joint/joint.h"
#include "parallel/stage_plan.h"
#include "solver/batch_layout.h"
#include "solver/contact_batches.h"
#include "solver/solve_parts.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

namespace keel::sim {

namespace {

constexpr float kPi = 3.14159265358979323846f;
constexpr float kMaxLinearSpeed = 400.0f;              // m/s: a guard against blow-ups, above any bullet
constexpr float kMaxRotationPerSubstep = 0.25f * kPi;  // rad: keeps the quaternion update valid

/// Per-body constants of the velocity integration.
struct BodyMotion {
  Vec3 gravity_dv{0.0f};       // velocity gained from gravity per substep
  float linear_factor = 1.0f;  // damping multiplier per substep
  float angular_factor = 1.0f;
};

/// A fixed orthonormal tangent basis for a normal. Chosen from the normal alone, so the
/// same normal always gets the same tangents.
void tangent_basis(const Vec3& normal, Vec3& t1_out, Vec3& t2_out) {
  // In locals: the outputs may alias the normal as far as the compiler knows, so writing
  // t1 first made it read t1 back in a wider piece than it wrote (a stall).
  const Vec3 n = normal;
  const Vec3 t1 = std::abs(n.x) >= 0.57735027f ? glm::normalize(Vec3(n.y, -n.x, 0.0f))
                                                : glm::normalize(Vec3(0.0f, n.z, -n.y));
  t1_out = t1;
  t2_out = glm::cross(n, t1);
}

// ---- packing lanes ------------------------------------------------------------------
//
// A batch is prepared four lanes at a time with the same operations, in the same order,
// as the scalar formulas they replace (glm's cross, dot and matrix-vector products are
// plain left-to-right sums of products), so each lane's bits are what a scalar
// preparation of that manifold gives. Lanes or points that do not exist are masked to
// +0 everywhere, so they apply no impulse.

Vec3x4 pack(const Vec3 (&v)[kLanes]) {
  return {load4(v[0].x, v[1].x, v[2].x, v[3].x), load4(v[0].y, v[1].y, v[2].y, v[3].y),
          load4(v[0].z, v[1].z, v[2].z, v[3].z)};
}

Float4 pack(const float (&f)[kLanes]) { return load4(f[0], f[1], f[2], f[3]); }

/// Four 3x3 matrices, element by element (m[col][row] as glm stores them).
struct Mat3x4 {
  Float4 m[3][3];
};

Mat3x4 gather_inertia(const std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes]) {
  const Mat3& m0 = bodies[idx[0]].inv_inertia;
  const Mat3& m1 = bodies[idx[1]].inv_inertia;
  const Mat3& m2 = bodies[idx[2]].inv_inertia;
  const Mat3& m3 = bodies[idx[3]].inv_inertia;
  Mat3x4 out;
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) out.m[c][r] = load4(m0[c][r], m1[c][r], m2[c][r], m3[c][r]);
  }
  return out;
}

/// m * v, summed in glm's order: m[0][r] v.x + m[1][r] v.y + m[2][r] v.z.
Vec3x4 mul(const Mat3x4& m, const Vec3x4& v) {
  return {m.m[0][0] * v.x + m.m[1][0] * v.y + m.m[2][0] * v.z,
          m.m[0][1] * v.x + m.m[1][1] * v.y + m.m[2][1] * v.z,
          m.m[0][2] * v.x + m.m[1][2] * v.y + m.m[2][2] * v.z};
}

Vec3x4 mask(Float4 keep, const Vec3x4& v) {
  const Float4 zero = zero4();
  return {select(keep, v.x, zero), select(keep, v.y, zero), select(keep, v.z, zero)};
}

/// The per-side constants of a batch's lanes.
struct WideSides {
  Float4 inv_mass_a, inv_mass_b;
  Mat3x4 inv_inertia_a, inv_inertia_b;
};

/// A Jacobian row along `dir` for four lanes; lanes where `keep` is clear are all zero.
WideRow make_row(const WideSides& s, const Vec3x4& ra, const Vec3x4& rb, const Vec3x4& dir, Float4 impulse,
                 Float4 keep) {
  WideRow row;
  const Vec3x4 ang_a = cross(ra, dir);
  const Vec3x4 ang_b = cross(rb, dir);
  const Vec3x4 iang_a = mul(s.inv_inertia_a, ang_a);
  const Vec3x4 iang_b = mul(s.inv_inertia_b, ang_b);
  const Float4 k = s.inv_mass_a + s.inv_mass_b + dot(ang_a, iang_a) + dot(ang_b, iang_b);
  const Float4 zero = zero4();
  const Float4 positive = greater(k, zero);
  // 1/k only where k > 0 (k is never negative); the division sees 1 elsewhere.
  const Float4 inv_k = splat(1.0f) / select(positive, k, splat(1.0f));
  row.ang_a = mask(keep, ang_a);
  row.ang_b = mask(keep, ang_b);
  row.iang_a = mask(keep, iang_a);
  row.iang_b = mask(keep, iang_b);
  row.mass = select(keep, select(positive, inv_k, zero), zero);
  row.impulse = select(keep, impulse, zero);
  return row;
}

float lane(Float4 f, int i) {
  float out[kLanes];
  store4(f, out);
  return out[i];
}

Vec3 lane(const Vec3x4& v, int i) { return Vec3(lane(v.x, i), lane(v.y, i), lane(v.z, i)); }

// ---- gathering body state for four lanes --------------------------------------------

struct WideBodies {
  Vec3x4 v, w;
};

struct WideDelta {
  Vec3x4 dp;
  Vec3x4 qv;
  Float4 qw;
};

/// Rotates four vectors by four unit quaternions: v + 2 (w (q x v) + q x (q x v)).
Vec3x4 rotate(const Vec3x4& qv, Float4 qw, const Vec3x4& v) {
  Vec3x4 t = cross(qv, v);
  Vec3x4 u = cross(qv, t);
  Float4 two = splat(2.0f);
  return v + two * (qw * t + u);
}

#if KEEL_FLOAT4_SSE2
// SSE2: each body's v and w (and dp and dq) are adjacent floats, so four bodies come in
// with two unaligned 16-byte loads each and two 4x4 transposes, and go back out the same
// way. Pure data movement: the same bits as the element-by-element path below.
static_assert(offsetof(SolverBody, w) == offsetof(SolverBody, v) + 12, "v and w must be adjacent");
static_assert(offsetof(SolverBody, dp) == offsetof(SolverBody, w) + 12, "w and dp must be adjacent");
static_assert(offsetof(SolverBody, dq) == offsetof(SolverBody, dp) + 12, "dp and dq must be adjacent");
static_assert(offsetof(SolverBody, inv_mass) == offsetof(SolverBody, dq) + 16, "dq and inv_mass adjacent");
static_assert(sizeof(Quat) == 16, "quaternion of four floats");

inline __m128 load_at(const float* p) { return _mm_loadu_ps(p); }

/// Quaternion components in memory order (glm stores x, y, z, w unless told otherwise).
inline const float* quat_data(const Quat& q) { return &q[0]; }
inline float* quat_data(Quat& q) { return &q[0]; }

WideBodies gather_velocity(const std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes]) {
  // Row i: [v.x v.y v.z w.x] and [w.x w.y w.z dp.x] of lane i's body.
  __m128 r0 = load_at(&bodies[idx[0]].v.x), r1 = load_at(&bodies[idx[1]].v.x);
  __m128 r2 = load_at(&bodies[idx[2]].v.x), r3 = load_at(&bodies[idx[3]].v.x);
  __m128 s0 = load_at(&bodies[idx[0]].w.x), s1 = load_at(&bodies[idx[1]].w.x);
  __m128 s2 = load_at(&bodies[idx[2]].w.x), s3 = load_at(&bodies[idx[3]].w.x);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _MM_TRANSPOSE4_PS(s0, s1, s2, s3);
  return {{{r0}, {r1}, {r2}}, {{s0}, {s1}, {s2}}};
}

// Writes lanes back in lane order. Lanes that share a body are only ever the static
// stand-in or a kinematic body, whose velocities the solve never changes.
void scatter_velocity(std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes], const WideBodies& s) {
  __m128 r0 = s.v.x.v, r1 = s.v.y.v, r2 = s.v.z.v, r3 = s.w.x.v;  // rows become [v.x v.y v.z w.x]
  __m128 t0 = s.w.y.v, t1 = s.w.z.v, t2 = s.w.y.v, t3 = s.w.z.v;  // rows become [w.y w.z w.y w.z]
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _MM_TRANSPOSE4_PS(t0, t1, t2, t3);
  const __m128 rows[kLanes] = {r0, r1, r2, r3};
  const __m128 tails[kLanes] = {t0, t1, t2, t3};
  for (int i = 0; i < kLanes; ++i) {
    SolverBody& b = bodies[idx[i]];
    if (b.inv_mass == 0.0f) continue;  // static or kinematic: unchanged by contacts
    _mm_storeu_ps(&b.v.x, rows[i]);
    _mm_storel_pi(reinterpret_cast<__m64*>(&b.w.y), tails[i]);
  }
}

WideDelta gather_delta(const std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes]) {
  // Row i: [dp.x dp.y dp.z q.x] and [q.y q.z q.w inv_mass] of lane i's body.
  __m128 r0 = load_at(&bodies[idx[0]].dp.x), r1 = load_at(&bodies[idx[1]].dp.x);
  __m128 r2 = load_at(&bodies[idx[2]].dp.x), r3 = load_at(&bodies[idx[3]].dp.x);
  __m128 s0 = load_at(quat_data(bodies[idx[0]].dq) + 1), s1 = load_at(quat_data(bodies[idx[1]].dq) + 1);
  __m128 s2 = load_at(quat_data(bodies[idx[2]].dq) + 1), s3 = load_at(quat_data(bodies[idx[3]].dq) + 1);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _MM_TRANSPOSE4_PS(s0, s1, s2, s3);
  return {{{r0}, {r1}, {r2}}, {{r3}, {s0}, {s1}}, {s2}};
}

#else

WideBodies gather_velocity(const std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes]) {
  const SolverBody& b0 = bodies[idx[0]];
  const SolverBody& b1 = bodies[idx[1]];
  const SolverBody& b2 = bodies[idx[2]];
  const SolverBody& b3 = bodies[idx[3]];
  return {{load4(b0.v.x, b1.v.x, b2.v.x, b3.v.x), load4(b0.v.y, b1.v.y, b2.v.y, b3.v.y),
           load4(b0.v.z, b1.v.z, b2.v.z, b3.v.z)},
          {load4(b0.w.x, b1.w.x, b2.w.x, b3.w.x), load4(b0.w.y, b1.w.y, b2.w.y, b3.w.y),
           load4(b0.w.z, b1.w.z, b2.w.z, b3.w.z)}};
}

// Writes lanes back in lane order. Lanes that share a body are only ever the static
// stand-in or a kinematic body, whose velocities the solve never changes.
void scatter_velocity(std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes], const WideBodies& s) {
  float vx[4], vy[4], vz[4], wx[4], wy[4], wz[4];
  store4(s.v.x, vx);
  store4(s.v.y, vy);
  store4(s.v.z, vz);
  store4(s.w.x, wx);
  store4(s.w.y, wy);
  store4(s.w.z, wz);
  for (int i = 0; i < kLanes; ++i) {
    SolverBody& b = bodies[idx[i]];
    if (b.inv_mass == 0.0f) continue;  // static or kinematic: unchanged by contacts
    b.v = Vec3(vx[i], vy[i], vz[i]);
    b.w = Vec3(wx[i], wy[i], wz[i]);
  }
}

WideDelta gather_delta(const std::vector<SolverBody>& bodies, const uint32_t (&idx)[kLanes]) {
  const SolverBody& b0 = bodies[idx[0]];
  const SolverBody& b1 = bodies[idx[1]];
  const SolverBody& b2 = bodies[idx[2]];
  const SolverBody& b3 = bodies[idx[3]];
  WideDelta d;
  d.dp = {load4(b0.dp.x, b1.dp.x, b2.dp.x, b3.dp.x), load4(b0.dp.y, b1.dp.y, b2.dp.y, b3.dp.y),
          load4(b0.dp.z, b1.dp.z, b2.dp.z, b3.dp.z)};
  d.qv = {load4(b0.dq.x, b1.dq.x, b2.dq.x, b3.dq.x), load4(b0.dq.y, b1.dq.y, b2.dq.y, b3.dq.y),
          load4(b0.dq.z, b1.dq.z, b2.dq.z, b3.dq.z)};
  d.qw = load4(b0.dq.w, b1.dq.w, b2.dq.w, b3.dq.w);
  return d;
}

#endif

inline Float4 row_velocity(const WideRow& r, const Vec3x4& dir, const WideBodies& a, const WideBodies& b) {
  return dot(b.v - a.v, dir) + dot(b.w, r.ang_b) - dot(a.w, r.ang_a);
}

inline void apply_row(const WideRow& r, const Vec3x4& dir, Float4 l, Float4 ma, Float4 mb, WideBodies& a,
                      WideBodies& b) {
  a.v = a.v - (ma * l) * dir;
  a.w = a.w - l * r.iang_a;
  b.v = b.v + (mb * l) * dir;
  b.w = b.w + l * r.iang_b;
}

// ---- the solver ---------------------------------------------------------------------

class ContactSolver {
 public:
  ContactSolver(WorldImpl& world, float dt) : world_(world) {
    substeps_ = std::max<uint32_t>(1, world.settings.substeps);
    h_ = dt / float(substeps_);
    inv_h_ = 1.0f / h_;
    float substep_rate = float(substeps_) * float(world.settings.tick_rate);
    float hertz = std::min(world.settings.contact_hertz, 0.25f * substep_rate);
    soft_ = make_softness(hertz, world.settings.contact_damping_ratio, h_);
    // Contacts against immovable bodies take twice the stiffness, still within the
    // quarter-substep-rate bound that keeps the spring from ringing.
    static_soft_ = make_softness(std::min(2.0f * hertz, 0.25f * substep_rate),
                                 world.settings.contact_damping_ratio, h_);
    max_push_ = world.settings.contact_push_max_speed;
  }

  void run() {
    select_bodies();
    world_.profile.solve_parts = 0;
    world_.profile.team_bodies = 0;
    if (body_slot_.size() == 1) return;  // nothing awake can move: no contact to solve
    split_into_parts();
    renumber_bodies();
    size_arrays();
    // The team's colours are its stages, so it is laid out here; each part lays itself
    // out on whichever thread runs it.
    const uint32_t team = s_.parts.parts;
    groups_.clear();
    lay_out_part(s_.layout, team, part_body_begin(team), uint32_t(body_slot_.size()), &groups_);
    world_.profile.solve_parts = team;
    world_.profile.team_bodies = uint32_t(body_slot_.size()) - part_body_begin(team);
    // Joints: prepared here from the world bodies (serial, cheap), then each part solves
    // its own run of them and the team its run.
    JointPass joints{world_, bodies_, solver_index_, s_.joint_work, h_, world_.joint_warm_start};
    prepare_joints(joints);
    sort_joints_by_part();
    JointPass team_joints = joints;
    team_joints.first = s_.joint_begin[team];
    team_joints.last = s_.joint_begin[team + 1];
    joints_ = &team_joints;
    plan_stages();
    auto block = [&](const StagePlan::Stage& st, uint32_t begin, uint32_t end) { run_block(st, begin, end); };
    if (world_.executor.threads() == 1) {
      plan_.run_alone(block);
    } else {
      // One team walks the stage list. Alone, a thread runs the same blocks in the same
      // order, so every thread count computes the same bits.
      plan_.arm();
      world_.executor.run_team([&](uint32_t) { plan_.participate(block); });
    }
    // Breaking and the muscles' new rest poses read the bodies as written back.
    if (!s_.joint_work.empty()) finish_joints(joints);
  }

 private:
  // What a stage does; blocks of one stage never write the same body or contact.
  enum Kind : uint32_t { kPart, kFill, kPack, kIntegrateVelocities, kWarmStart, kSolve, kIntegratePositions, kRelax,
                         kRestitution, kStore, kWriteBack, kJointWarmStart, kJointSolve, kJointRelax };

  void select_bodies();
  void split_into_parts();
  void renumber_bodies();
  void size_arrays();
  uint32_t part_body_begin(uint32_t part) const;
  void fill_bodies(uint32_t begin, uint32_t end);
  void plan_stages();
  void plan_groups(Kind kind);
  void run_block(const StagePlan::Stage& st, uint32_t begin, uint32_t end);
  void run_part(uint32_t part);
  void sort_joints_by_part();
  void pack_batches(uint32_t begin, uint32_t end);
  void pack_batch(const uint32_t* contacts, int count, WideConstraint& out);
  void pack_point(const Contact* const (&lanes)[kLanes], int j, const WideSides& sides, const WideBodies& va,
                  const WideBodies& vb, WideConstraint& w);
  void integrate_velocities(uint32_t begin, uint32_t end);
  void integrate_positions(uint32_t begin, uint32_t end);
#if KEEL_FLOAT4_SSE2
  void integrate_positions_wide(uint32_t i);
#endif
  void warm_start(WideConstraint& c);
  void solve(WideConstraint& c, bool use_bias);
  void apply_restitution(WideConstraint& c);
  void store_impulses(uint32_t begin, uint32_t end);
  void write_back(uint32_t begin, uint32_t end);

  WorldImpl& world_;
  StagePlan& plan_ = plan();
  uint32_t substeps_ = 4;
  float h_ = 0.0f;
  float inv_h_ = 0.0f;
  float max_push_ = 3.0f;
  Softness soft_;
  Softness static_soft_;
  JointPass* joints_ = nullptr;  // the team's run of joints
  bool any_bounce_ = false;  // some manifold in the solve has restitution > 0
  // Working arrays live on beyond one tick (per thread) so a step allocates nothing
  // once the world has reached its size.
  struct Scratch {
    std::vector<uint32_t> solver_index;  // per body slot; 0 = the static stand-in
    std::vector<uint32_t> body_slot;     // per solver body (index 0 unused)
    std::vector<SolverBody> bodies;
    std::vector<BodyMotion> motion;
    BatchBuffer batches;
    std::vector<BatchGroup> groups;     // the team's colours, one stage each
    BatchLayout layout;                 // manifolds, colours and batches, part by part
    std::vector<JointWork> joint_work;  // joints with a side that can move: part by part, slot order within
    std::vector<JointWork> joint_scratch;
    std::vector<uint32_t> joint_begin;  // per part (the team last) and one past: its run in joint_work
    std::vector<SolveLink> joint_links;
    SolveParts parts;
    std::vector<uint32_t> scratch_slots;
    std::vector<uint8_t> scratch_flags;
  };
  static StagePlan& plan() {
    static thread_local StagePlan p;
    return p;
  }
  static Scratch& scratch() {
    static thread_local Scratch s;
    return s;
  }
  Scratch& s_ = scratch();
  std::vector<uint32_t>& solver_index_ = s_.solver_index;
  std::vector<uint32_t>& body_slot_ = s_.body_slot;
  std::vector<SolverBody>& bodies_ = s_.bodies;
  std::vector<BodyMotion>& motion_ = s_.motion;
  BatchBuffer& batches_ = s_.batches;
  std::vector<BatchGroup>& groups_ = s_.groups;
};

// Which bodies take part, in slot order (cheap, serial); their state is filled in once
// the split into parts has fixed where each one goes.
void ContactSolver::select_bodies() {
  const auto& bodies = world_.bodies;
  solver_index_.assign(bodies.size(), 0);
  body_slot_.clear();
  body_slot_.push_back(kNullIndex);  // index 0: the static stand-in
  std::vector<uint8_t>& movable = s_.layout.movable;
  movable.assign(1, 0);
  for (uint32_t i = 0; i < bodies.size(); ++i) {
    const Body& b = bodies[i];
    if (!b.alive || b.motion == MotionType::Static || b.sleeping) continue;
    solver_index_[i] = uint32_t(body_slot_.size());
    body_slot_.push_back(i);
    movable.push_back(b.motion == MotionType::Dynamic && b.inv_mass > 0.0f ? 1 : 0);
  }
}

// Every manifold the solve takes (a touching, non-sensor contact with a side that can
// move), in pair-key order, and every joint with a side that can move, split into parts
// that no constraint crosses.
void ContactSolver::split_into_parts() {
  const auto& contacts = world_.contacts.items();
  BatchLayout& layout = s_.layout;
  layout.links.clear();
  layout.link_contact.clear();
  for (uint32_t ci : world_.touching_contacts) {
    const Contact& k = contacts[ci];
    if (k.sensor) continue;
    const SolveLink link{solver_index_[k.body_a], solver_index_[k.body_b]};
    if (link.a == 0 && link.b == 0) continue;  // nothing here can move (e.g. both asleep)
    any_bounce_ |= k.restitution > 0.0f;
    layout.links.push_back(link);
    layout.link_contact.push_back(ci);
  }
  std::vector<SolveLink>& joint_links = s_.joint_links;
  joint_links.clear();
  for (const Joint& j : world_.joints.items) {
    if (!j.alive || j.broken) continue;
    SolveLink l{solver_index_[j.body_a], j.body_b == kNullIndex ? 0 : solver_index_[j.body_b]};
    if (l.a != 0 || l.b != 0) joint_links.push_back(l);
  }
  const uint32_t body_count = uint32_t(body_slot_.size());
  if (world_.solve_in_parts) {
    split_solve(body_count, layout.links, joint_links, s_.parts);
  } else {
    solve_as_one_team(body_count, s_.parts);
  }
  bucket_by_part(s_.parts, layout);
}

// Lays the solver bodies out part by part (the team's last), so a part's bodies are one
// run of indices, and renames them wherever the solve refers to them.
void ContactSolver::renumber_bodies() {
  const std::vector<uint32_t>& to = s_.parts.new_index;
  BatchLayout& layout = s_.layout;
  std::vector<uint32_t>& old_slots = s_.scratch_slots;
  old_slots.assign(body_slot_.begin(), body_slot_.end());
  std::vector<uint8_t>& movable = s_.scratch_flags;
  movable.assign(layout.movable.begin(), layout.movable.end());
  for (uint32_t i = 1; i < old_slots.size(); ++i) {
    body_slot_[to[i]] = old_slots[i];
    solver_index_[old_slots[i]] = to[i];
    layout.movable[to[i]] = movable[i];
  }
  for (SolveLink& k : layout.links) k = SolveLink{to[k.a], to[k.b]};
}

// Sizes the per-body and per-batch arrays; each part (and the team) fills its own share.
void ContactSolver::size_arrays() {
  const size_t n = body_slot_.size();
  bodies_.resize(n);
  motion_.resize(n);
  bodies_[0] = SolverBody{};  // the stand-in: no mass, no motion
  motion_[0] = BodyMotion{};
  s_.layout.color_bits.resize(n);
  s_.layout.next_color.resize(n);
  batches_.reserve_for(s_.layout.links.size());
}

uint32_t ContactSolver::part_body_begin(uint32_t part) const {
  return part == 0 ? 1 : s_.parts.body_end[part - 1];
}

// Solver state of bodies [begin, end), each written whole from its world body.
void ContactSolver::fill_bodies(uint32_t begin, uint32_t end) {
  const auto& bodies = world_.bodies;
  const Vec3 gravity = world_.settings.gravity;
  for (uint32_t k = begin; k < end; ++k) {
    const Body& b = bodies[body_slot_[k]];
    // Written in place, field by field: a body built on the stack and copied whole was
    // read back in wider pieces than it was written (a stall per body).
    SolverBody& sb = bodies_[k];
    BodyMotion& m = motion_[k];
    sb.v = b.linear_velocity;
    sb.w = b.angular_velocity;
    sb.dp = Vec3(0.0f);
    sb.dq = Quat(1.0f, 0.0f, 0.0f, 0.0f);
    if (b.motion == MotionType::Dynamic) {
      sb.inv_mass = b.inv_mass;
      Mat3 r = glm::mat3_cast(b.origin.rotation);
      sb.inv_inertia = r * b.inv_inertia_local * glm::transpose(r);
      m.gravity_dv = (h_ * b.gravity_scale) * gravity;
      m.linear_factor = 1.0f / (1.0f + h_ * b.linear_damping);
      m.angular_factor = b.freeze_rotation ? 0.0f : 1.0f / (1.0f + h_ * b.angular_damping);
    } else {
      sb.inv_mass = 0.0f;
      sb.inv_inertia = Mat3(0.0f);
      m = BodyMotion{};
    }
  }
}

// The tick as a list of stages. Block sizes trade claiming cost against balance; a
// serial group (overflow) is one block, run in order by one thread.
void ContactSolver::plan_stages() {
  constexpr uint32_t kBodyBlock = 128;
  constexpr uint32_t kBatchBlock = 8;
  const SolveParts& parts = s_.parts;
  const BatchLayout& layout = s_.layout;
  const uint32_t team = parts.parts;
  const uint32_t body_begin = part_body_begin(team), body_end = uint32_t(body_slot_.size());
  const uint32_t batch_begin = layout.part_begin[team], batch_end = layout.batch_end[team];
  plan_.clear();
  // The parts first, a block each: independent of each other and of the team.
  plan_.add(kPart, 0, 0, parts.parts, 1);
  // The team: every stage of its own, the members sharing each. Joints are solved
  // serially (one block, joint-slot order) before the contacts of each pass, so contacts
  // have the last word and the order never depends on threads.
  plan_.add(kFill, 0, body_begin, body_end, kBodyBlock);
  const bool team_has_joints = s_.joint_begin[team] < s_.joint_begin[team + 1];
  auto joint_stage = [&](Kind kind) {
    if (team_has_joints) plan_.add(kind, 0, 0, 1, 1);
  };
  plan_.add(kPack, 0, batch_begin, batch_end, kBatchBlock);
  for (uint32_t i = 0; i < substeps_; ++i) {
    plan_.add(kIntegrateVelocities, 0, body_begin, body_end, kBodyBlock);
    joint_stage(kJointWarmStart);
    plan_groups(kWarmStart);
    joint_stage(kJointSolve);
    plan_groups(kSolve);
    plan_.add(kIntegratePositions, 0, body_begin, body_end, kBodyBlock);
    joint_stage(kJointRelax);
    plan_groups(kRelax);
  }
  // (With no restitution anywhere the bounce pass changes nothing: its stages, and the
  // hand-offs between them, are left out.)
  if (any_bounce_) plan_groups(kRestitution);
  plan_.add(kStore, 0, batch_begin, batch_end, kBatchBlock);
  plan_.add(kWriteBack, 0, body_begin, body_end, kBodyBlock);
}

void ContactSolver::plan_groups(Kind kind) {
  constexpr uint32_t kBatchBlock = 4;
  for (const BatchGroup& g : groups_) plan_.add(kind, 0, g.begin, g.end, g.serial ? g.end - g.begin : kBatchBlock);
}

void ContactSolver::pack_batches(uint32_t begin, uint32_t end) {
  const BatchLayout& l = s_.layout;
  for (uint32_t b = begin; b < end; ++b) pack_batch(&l.order[l.batch_first[b]], l.batch_count[b], batches_[b]);
}

void ContactSolver::run_block(const StagePlan::Stage& st, uint32_t begin, uint32_t end) {
  switch (st.kind) {
    case kPart:
      for (uint32_t p = begin; p < end; ++p) run_part(p);
      break;
    case kFill: fill_bodies(begin, end); break;
    case kPack: pack_batches(begin, end); break;
    case kIntegrateVelocities: integrate_velocities(begin, end); break;
    case kWarmStart:
      for (uint32_t b = begin; b < end; ++b) warm_start(batches_[b]);
      break;
    case kSolve:
      for (uint32_t b = begin; b < end; ++b) solve(batches_[b], true);
      break;
    case kIntegratePositions: integrate_positions(begin, end); break;
    case kRelax:
      for (uint32_t b = begin; b < end; ++b) solve(batches_[b], false);
      break;
    case kRestitution:
      for (uint32_t b = begin; b < end; ++b) apply_restitution(batches_[b]);
      break;
    case kStore: store_impulses(begin, end); break;
    case kWriteBack: write_back(begin, end); break;
    case kJointWarmStart: warm_start_joints(*joints_); break;
    case kJointSolve: solve_joints(*joints_, true); break;
    case kJointRelax: solve_joints(*joints_, false); break;
  }
}

// A whole part on this thread, from its bodies' state and colours to writing them back:
// the team's stages, in the team's order, over the part's bodies and batches. Its
// batches lie colour by colour (overflow last), so walking them in order solves the
// colours in the team's sequence.
void ContactSolver::run_part(uint32_t part) {
  const uint32_t body_begin = part_body_begin(part), body_end = s_.parts.body_end[part];
  fill_bodies(body_begin, body_end);
  lay_out_part(s_.layout, part, body_begin, body_end, nullptr);
  const uint32_t first = s_.layout.part_begin[part], last = s_.layout.batch_end[part];
  pack_batches(first, last);
  JointPass joints{world_, bodies_, solver_index_, s_.joint_work, h_, world_.joint_warm_start,
                   s_.joint_begin[part], s_.joint_begin[part + 1]};
  const bool any_joint = joints.first < joints.last;
  for (uint32_t i = 0; i < substeps_; ++i) {
    integrate_velocities(body_begin, body_end);
    if (any_joint) warm_start_joints(joints);
    for (uint32_t b = first; b < last; ++b) warm_start(batches_[b]);
    if (any_joint) solve_joints(joints, true);
    for (uint32_t b = first; b < last; ++b) solve(batches_[b], true);
    integrate_positions(body_begin, body_end);
    if (any_joint) solve_joints(joints, false);
    for (uint32_t b = first; b < last; ++b) solve(batches_[b], false);
  }
  if (any_bounce_) {
    for (uint32_t b = first; b < last; ++b) apply_restitution(batches_[b]);
  }
  store_impulses(first, last);
  write_back(body_begin, body_end);
}

// Orders the joints' work part by part (the team's last), joint-slot order within a
// part, and records where each part's run starts. A joint's part is that of its first
// side that can move (bodies are numbered part by part by now).
void ContactSolver::sort_joints_by_part() {
  std::vector<JointWork>& work = s_.joint_work;
  const std::vector<uint32_t>& body_end = s_.parts.body_end;
  std::vector<uint32_t>& begin = s_.joint_begin;
  begin.assign(s_.parts.parts + 2, 0);
  if (work.empty()) return;
  auto part_of = [&](const JointWork& jw) {
    const uint32_t body = jw.a != 0 ? jw.a : jw.b;
    return uint32_t(std::upper_bound(body_end.begin(), body_end.end(), body) - body_end.begin());
  };
  for (const JointWork& jw : work) ++begin[part_of(jw) + 1];
  for (size_t p = 1; p < begin.size(); ++p) begin[p] += begin[p - 1];
  std::vector<uint32_t>& cursor = s_.scratch_slots;
  cursor.assign(begin.begin(), begin.end() - 1);
  std::vector<JointWork>& sorted = s_.joint_scratch;
  sorted.resize(work.size());
  for (const JointWork& jw : work) sorted[cursor[part_of(jw)]++] = jw;
  work.swap(sorted);
}

void ContactSolver::pack_batch(const uint32_t* ids, int count, WideConstraint& w) {
  const auto& contacts = world_.contacts.items();
  const Contact* lane_contact[kLanes] = {};
  Vec3 normal[kLanes], t1[kLanes], t2[kLanes];
  float friction[kLanes] = {}, restitution[kLanes] = {}, ima[kLanes] = {}, imb[kLanes] = {};
  float bias[kLanes] = {}, mscale[kLanes] = {1, 1, 1, 1}, iscale[kLanes] = {};
  w.point_count = 0;
  w.bounces = false;
  for (int i = 0; i < kLanes; ++i) {
    normal[i] = t1[i] = t2[i] = Vec3(0.0f);
    w.body_a[i] = w.body_b[i] = 0;
    w.contact[i] = kNoContact;
    if (i >= count) continue;
    const Contact& k = contacts[ids[i]];
    lane_contact[i] = &k;
    w.contact[i] = ids[i];
    w.body_a[i] = solver_index_[k.body_a];
    w.body_b[i] = solver_index_[k.body_b];
    const SolverBody& a = bodies_[w.body_a[i]];
    const SolverBody& b = bodies_[w.body_b[i]];
    normal[i] = k.normal;
    tangent_basis(k.normal, t1[i], t2[i]);
    friction[i] = k.friction;
    restitution[i] = k.restitution;
    w.bounces |= k.restitution > 0.0f;
    ima[i] = a.inv_mass;
    imb[i] = b.inv_mass;
    const Softness& s = (a.inv_mass == 0.0f || b.inv_mass == 0.0f) ? static_soft_ : soft_;
    bias[i] = s.bias_rate;
    mscale[i] = s.mass_scale;
    iscale[i] = s.impulse_scale;
    w.point_count = std::max(w.point_count, k.count);
  }
  w.normal = pack(normal);
  w.t1 = pack(t1);
  w.t2 = pack(t2);
  w.friction = pack(friction);
  w.restitution = pack(restitution);
  w.inv_mass_a = pack(ima);
  w.inv_mass_b = pack(imb);
  w.bias_rate = pack(bias);
  w.mass_scale = pack(mscale);
  w.impulse_scale = pack(iscale);
  const WideSides sides{w.inv_mass_a, w.inv_mass_b, gather_inertia(bodies_, w.body_a),
                        gather_inertia(bodies_, w.body_b)};
  const WideBodies va = gather_velocity(bodies_, w.body_a);
  const WideBodies vb = gather_velocity(bodies_, w.body_b);
  for (int j = 0; j < w.point_count; ++j) pack_point(lane_contact, j, sides, va, vb, w);
}

// Point j of every lane: anchors, the three rows, the separation offset and the approach
// speed, each lane computed exactly as its scalar formula would.
void ContactSolver::pack_point(const Contact* const (&lanes)[kLanes], int j, const WideSides& sides,
                               const WideBodies& va, const WideBodies& vb, WideConstraint& w) {
  Vec3 ra[kLanes], rb[kLanes], friction_impulse[kLanes];
  float neg_depth[kLanes], normal_impulse[kLanes];
  uint32_t keep_bits[kLanes];
  for (int i = 0; i < kLanes; ++i) {
    const bool exists = lanes[i] != nullptr && j < lanes[i]->count;
    keep_bits[i] = exists ? 0xffffffffu : 0u;
    if (!exists) {
      ra[i] = rb[i] = friction_impulse[i] = Vec3(0.0f);
      neg_depth[i] = normal_impulse[i] = 0.0f;
      continue;
    }
    const ContactPoint& kp = lanes[i]->points[j];
    ra[i] = kp.anchor_a;
    rb[i] = kp.anchor_b;
    neg_depth[i] = -kp.depth;  // IEEE negation, as the scalar formula has it
    normal_impulse[i] = kp.normal_impulse;
    friction_impulse[i] = kp.friction_impulse;
  }
  float keep_f[kLanes];
  std::memcpy(keep_f, keep_bits, sizeof keep_f);
  const Float4 keep = pack(keep_f);
  const Float4 zero = zero4();
  WidePoint& p = w.p[j];
  p.r_a = pack(ra);
  p.r_b = pack(rb);
  const Vec3x4 f = pack(friction_impulse);
  p.adjusted_separation = select(keep, pack(neg_depth) - dot(p.r_b - p.r_a, w.normal), zero);
  p.normal = make_row(sides, p.r_a, p.r_b, w.normal, pack(normal_impulse), keep);
  p.tangent1 = make_row(sides, p.r_a, p.r_b, w.t1, dot(f, w.t1), keep);
  p.tangent2 = make_row(sides, p.r_a, p.r_b, w.t2, dot(f, w.t2), keep);
  const Vec3x4 dv = vb.v + cross(vb.w, p.r_b) - va.v - cross(va.w, p.r_a);
  p.relative_velocity = select(keep, dot(w.normal, dv), zero);
  p.max_normal_impulse = zero;
}

void ContactSolver::integrate_velocities(uint32_t begin, uint32_t end) {
  float max_w = kMaxRotationPerSubstep * inv_h_;
  for (uint32_t i = begin; i < end; ++i) {
    SolverBody& b = bodies_[i];
    const BodyMotion& m = motion_[i];
    b.v = m.gravity_dv + m.linear_factor * b.v;
    b.w = m.angular_factor * b.w;
    float v2 = glm::dot(b.v, b.v);
    if (v2 > kMaxLinearSpeed * kMaxLinearSpeed) b.v *= kMaxLinearSpeed / std::sqrt(v2);
    float w2 = glm::dot(b.w, b.w);
    if (w2 > max_w * max_w) b.w *= max_w / std::sqrt(w2);
  }
}

void ContactSolver::integrate_positions(uint32_t begin, uint32_t end) {
  uint32_t i = begin;
#if KEEL_FLOAT4_SSE2
  for (; i + kLanes <= end; i += kLanes) integrate_positions_wide(i);
#endif
  for (; i < end; ++i) {
    SolverBody& b = bodies_[i];
    // Everything is read before anything is stored: a store into dp followed by a wide
    // load over dp and dq (as the compiler packs them) stalls on every body.
    const Vec3 v = b.v, w = b.w, dp = b.dp;
    const Quat dq = b.dq;
    const Quat spin(0.0f, w.x, w.y, w.z);
    const Quat q = dq + (0.5f * h_) * (spin * dq);
    b.dp = dp + h_ * v;
    b.dq = glm::normalize(q);
  }
}

#if KEEL_FLOAT4_SSE2
// integrate_positions for bodies i .. i+3 at once, each lane with the very operations
// (and order) of the scalar loop: glm's quaternion product, sum and normalisation are
// written out below as glm evaluates them.
void ContactSolver::integrate_positions_wide(uint32_t i) {
  SolverBody* b[kLanes] = {&bodies_[i], &bodies_[i + 1], &bodies_[i + 2], &bodies_[i + 3]};
  // Rows [v.x v.y v.z w.x], [w.x w.y w.z dp.x], [dp.x dp.y dp.z q.x], [q.x q.y q.z q.w].
  __m128 v0 = load_at(&b[0]->v.x), v1 = load_at(&b[1]->v.x), v2 = load_at(&b[2]->v.x), v3 = load_at(&b[3]->v.x);
  __m128 w0 = load_at(&b[0]->w.x), w1 = load_at(&b[1]->w.x), w2 = load_at(&b[2]->w.x), w3 = load_at(&b[3]->w.x);
  __m128 p0 = load_at(&b[0]->dp.x), p1 = load_at(&b[1]->dp.x), p2 = load_at(&b[2]->dp.x), p3 = load_at(&b[3]->dp.x);
  __m128 q0 = load_at(quat_data(b[0]->dq)), q1 = load_at(quat_data(b[1]->dq));
  __m128 q2 = load_at(quat_data(b[2]->dq)), q3 = load_at(quat_data(b[3]->dq));
  _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
  _MM_TRANSPOSE4_PS(w0, w1, w2, w3);
  _MM_TRANSPOSE4_PS(p0, p1, p2, p3);
  _MM_TRANSPOSE4_PS(q0, q1, q2, q3);
  const Float4 vx{v0}, vy{v1}, vz{v2}, wx{w0}, wy{w1}, wz{w2};
  const Float4 qx{q0}, qy{q1}, qz{q2}, qw{q3};
  const Float4 h = splat(h_), zero = zero4();
  // spin * dq with spin = (w: 0, x: wx, y: wy, z: wz), as glm's product.
  const Float4 mw = zero * qw - wx * qx - wy * qy - wz * qz;
  const Float4 mx = zero * qx + wx * qw + wy * qz - wz * qy;
  const Float4 my = zero * qy + wy * qw + wz * qx - wx * qz;
  const Float4 mz = zero * qz + wz * qw + wx * qy - wy * qx;
  const Float4 half_h = splat(0.5f * h_);
  const Float4 nw = qw + mw * half_h, nx = qx + mx * half_h, ny = qy + my * half_h, nz = qz + mz * half_h;
  // glm::normalize: the length from (w w + x x) + (y y + z z); identity when not above 0.
  const Float4 len = sqrt4((nw * nw + nx * nx) + (ny * ny + nz * nz));
  const Float4 not_positive = less_equal(len, zero);
  const Float4 inv = splat(1.0f) / len;
  const Float4 rw = select(not_positive, splat(1.0f), nw * inv);
  const Float4 rx = select(not_positive, zero, nx * inv);
  const Float4 ry = select(not_positive, zero, ny * inv);
  const Float4 rz = select(not_positive, zero, nz * inv);
  const Float4 dx = Float4{p0} + h * vx, dy = Float4{p1} + h * vy, dz = Float4{p2} + h * vz;
  // Back to rows: [dp.x dp.y dp.z -] is stored first, then [q.x q.y q.z q.w] over its tail.
  __m128 d0 = dx.v, d1 = dy.v, d2 = dz.v, d3 = rx.v;
  __m128 o0 = rx.v, o1 = ry.v, o2 = rz.v, o3 = rw.v;
  _MM_TRANSPOSE4_PS(d0, d1, d2, d3);
  _MM_TRANSPOSE4_PS(o0, o1, o2, o3);
  const __m128 drows[kLanes] = {d0, d1, d2, d3};
  const __m128 qrows[kLanes] = {o0, o1, o2, o3};
  for (int k = 0; k < kLanes; ++k) {
    _mm_storeu_ps(&b[k]->dp.x, drows[k]);
    _mm_storeu_ps(quat_data(b[k]->dq), qrows[k]);
  }
}
#endif

void ContactSolver::warm_start(WideConstraint& c) {
  WideBodies a = gather_velocity(bodies_, c.body_a);
  WideBodies b = gather_velocity(bodies_, c.body_b);
  for (int j = 0; j < c.point_count; ++j) {
    const WidePoint& p = c.p[j];
    apply_row(p.normal, c.normal, p.normal.impulse, c.inv_mass_a, c.inv_mass_b, a, b);
    apply_row(p.tangent1, c.t1, p.tangent1.impulse, c.inv_mass_a, c.inv_mass_b, a, b);
    apply_row(p.tangent2, c.t2, p.tangent2.impulse, c.inv_mass_a, c.inv_mass_b, a, b);
  }
  scatter_velocity(bodies_, c.body_a, a);
  scatter_velocity(bodies_, c.body_b, b);
}

// One Gauss-Seidel pass over four manifolds: the normal rows first, then friction, so
// the friction cone is clamped against this pass's normal impulse.
void ContactSolver::solve(WideConstraint& c, bool use_bias) {
  WideBodies a = gather_velocity(bodies_, c.body_a);
  WideBodies b = gather_velocity(bodies_, c.body_b);
  WideDelta da = gather_delta(bodies_, c.body_a);
  WideDelta db = gather_delta(bodies_, c.body_b);
  const Vec3x4 dp = db.dp - da.dp;
  const Float4 zero = zero4(), one = splat(1.0f), inv_h = splat(inv_h_);
  // Soft spring terms for overlap; the relax pass (use_bias = false) solves rigidly
  // with no recovery, taking back the velocity the biased pass added.
  const Float4 bias_rate = use_bias ? c.bias_rate : zero;
  const Float4 mass_scale = use_bias ? c.mass_scale : one;
  const Float4 impulse_scale = use_bias ? c.impulse_scale : zero;
  const Float4 min_bias = splat(-max_push_);

  for (int j = 0; j < c.point_count; ++j) {
    WidePoint& p = c.p[j];
    // Separation now, from how far each body has moved and turned this tick.
    Vec3x4 pra = rotate(da.qv, da.qw, p.r_a);
    Vec3x4 prb = rotate(db.qv, db.qw, p.r_b);
    Float4 s = dot(dp + prb - pra, c.normal) + p.adjusted_separation;
    // Speculative (s > 0): close exactly the gap this substep, rigidly.
    Float4 spec = greater(s, zero);
    Float4 bias = select(spec, s * inv_h, max4(bias_rate * s, min_bias));
    Float4 ms = select(spec, one, mass_scale);
    Float4 is = select(spec, zero, impulse_scale);
    WideRow& row = p.normal;
    Float4 vn = row_velocity(row, c.normal, a, b);
    Float4 impulse = zero - row.mass * ms * (vn + bias) - is * row.impulse;
    Float4 total = max4(row.impulse + impulse, zero);
    impulse = total - row.impulse;
    row.impulse = total;
    p.max_normal_impulse = max4(p.max_normal_impulse, impulse);
    apply_row(row, c.normal, impulse, c.inv_mass_a, c.inv_mass_b, a, b);
  }

  for (int j = 0; j < c.point_count; ++j) {
    WidePoint& p = c.p[j];
    Float4 l1 = p.tangent1.impulse - p.tangent1.mass * row_velocity(p.tangent1, c.t1, a, b);
    Float4 l2 = p.tangent2.impulse - p.tangent2.mass * row_velocity(p.tangent2, c.t2, a, b);
    // Coulomb cone: clamp the two tangent impulses together, not each on its own.
    Float4 max_f = c.friction * p.normal.impulse;
    Float4 len2 = l1 * l1 + l2 * l2;
    Float4 over = greater(len2, max_f * max_f);
    // Mostly every lane grips (a resting pile): then the scale is one in each lane and the
    // square root and division are skipped (x * 1 is x, so the bits are the same).
    if (any(over)) {
      Float4 scale = select(over, max_f / sqrt4(select(over, len2, one)), one);
      l1 = l1 * scale;
      l2 = l2 * scale;
    }
    apply_row(p.tangent1, c.t1, l1 - p.tangent1.impulse, c.inv_mass_a, c.inv_mass_b, a, b);
    apply_row(p.tangent2, c.t2, l2 - p.tangent2.impulse, c.inv_mass_a, c.inv_mass_b, a, b);
    p.tangent1.impulse = l1;
    p.tangent2.impulse = l2;
  }
  scatter_velocity(bodies_, c.body_a, a);
  scatter_velocity(bodies_, c.body_b, b);
}

// Bounce: after the substeps, push each point that approached faster than the
// threshold (and actually carried load) to `restitution` times its approach speed.
void ContactSolver::apply_restitution(WideConstraint& c) {
  const Float4 zero = zero4();
  const Float4 threshold = splat(-world_.settings.restitution_threshold);
  if (!c.bounces) return;
  WideBodies a = gather_velocity(bodies_, c.body_a);
  WideBodies b = gather_velocity(bodies_, c.body_b);
  for (int j = 0; j < c.point_count; ++j) {
    WidePoint& p = c.p[j];
    // Active where restitution > 0, approach faster than the threshold, and loaded.
    Float4 active = greater(c.restitution, zero);
    Float4 fast = greater(threshold, p.relative_velocity);
    Float4 loaded = greater(p.max_normal_impulse, zero);
    Float4 mask = select(active, select(fast, loaded, zero), zero);
    WideRow& row = p.normal;
    Float4 vn = row_velocity(row, c.normal, a, b);
    Float4 impulse = zero - row.mass * (vn + c.restitution * p.relative_velocity);
    Float4 total = max4(row.impulse + impulse, zero);
    impulse = select(mask, total - row.impulse, zero);
    row.impulse = row.impulse + impulse;
    p.max_normal_impulse = max4(p.max_normal_impulse, impulse);
    apply_row(row, c.normal, impulse, c.inv_mass_a, c.inv_mass_b, a, b);
  }
  scatter_velocity(bodies_, c.body_a, a);
  scatter_velocity(bodies_, c.body_b, b);
}

void ContactSolver::store_impulses(uint32_t begin, uint32_t end) {
  auto& contacts = world_.contacts.items();
  for (uint32_t b = begin; b < end; ++b) {
    const WideConstraint& c = batches_[b];
    for (int i = 0; i < kLanes; ++i) {
      if (c.contact[i] == kNoContact) continue;
      Contact& k = contacts[c.contact[i]];
      Vec3 t1 = lane(c.t1, i), t2 = lane(c.t2, i);
      for (int j = 0; j < k.count; ++j) {
        const WidePoint& p = c.p[j];
        k.points[j].normal_impulse = lane(p.normal.impulse, i);
        k.points[j].friction_impulse = lane(p.tangent1.impulse, i) * t1 + lane(p.tangent2.impulse, i) * t2;
        k.points[j].max_normal_impulse = lane(p.max_normal_impulse, i);
      }
    }
  }
}

void ContactSolver::write_back(uint32_t begin, uint32_t end) {
  for (uint32_t i = begin; i < end; ++i) {
    const SolverBody& sb = bodies_[i];
    Body& b = world_.bodies[body_slot_[i]];
    b.linear_velocity = sb.v;
    b.angular_velocity = sb.w;
    b.center += sb.dp;
    b.origin.rotation = glm::normalize(sb.dq * b.origin.rotation);
    b.sync_origin();
  }
}

}  // namespace

Softness make_softness(float hertz, float damping_ratio, float h) {
  if (hertz == 0.0f) return Softness{0.0f, 1.0f, 0.0f};
  float omega = 2.0f * kPi * hertz;
  float a1 = 2.0f * damping_ratio + h * omega;
  float a2 = h * omega * a1;
  float a3 = 1.0f / (1.0f + a2);
  return Softness{omega / a1, a2 * a3, a3};
}

void solve_tick(WorldImpl& world, float dt) {
  ContactSolver solver(world, dt);
  solver.run();
}

}  // namespace keel::sim
