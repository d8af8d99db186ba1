#include "solver/solver.h"

#include "joint/joint.h"
#include "parallel/stage_plan.h"
#include "solver/batch_layout.h"
#include "solver/contact_batches.h"
#include "solver/contact_kernels.h"
#include "solver/gather4.h"
#include "solver/integrate.h"
#include "solver/schedule.h"
#include "solver/solve_parts.h"
#include "solver/solver_scratch.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <optional>

namespace keel::sim {

namespace {

constexpr float kPi = 3.14159265358979323846f;

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

// An eight-lane batch is packed as two halves of four lanes: half h is lanes 4h to 4h+3.

/// Four vectors (v[0..3]) as lanes.
Vec3x4 pack(const Vec3* v) {
  return {load4(v[0].x, v[1].x, v[2].x, v[3].x), load4(v[0].y, v[1].y, v[2].y, v[3].y),
          load4(v[0].z, v[1].z, v[2].z, v[3].z)};
}

/// Four floats (f[0..3]) as lanes.
Float4 pack(const float* f) { return load4(f); }

void put(Lanes& out, int half, Float4 f) { store4(f, out.v + 4 * half); }
void put(Lanes3& out, int half, const Vec3x4& v) {
  put(out.x, half, v.x);
  put(out.y, half, v.y);
  put(out.z, half, v.z);
}
/// A half's contact normals and tangents, packed once for all its points.
struct HalfBasis {
  Vec3x4 n, t1, t2;
};

/// Four 3x3 matrices, element by element (m[col][row] as glm stores them).
struct Mat3x4 {
  Float4 m[3][3];
};

Mat3x4 gather_inertia(const std::vector<SolverBody>& bodies, const uint32_t* idx) {
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

/// Four lanes of a WideRow.
struct Row4 {
  Vec3x4 ang_a, ang_b, iang_a, iang_b;
  Float4 mass, impulse;
};

void put(WideRow& out, int half, const Row4& row) {
  put(out.ang_a, half, row.ang_a);
  put(out.ang_b, half, row.ang_b);
  put(out.iang_a, half, row.iang_a);
  put(out.iang_b, half, row.iang_b);
  put(out.mass, half, row.mass);
  put(out.impulse, half, row.impulse);
}

/// A Jacobian row along `dir` for four lanes; lanes where `keep` is clear are all zero.
Row4 make_row(const WideSides& s, const Vec3x4& ra, const Vec3x4& rb, const Vec3x4& dir, Float4 impulse,
              Float4 keep) {
  Row4 row;
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

Vec3 lane_of(const Lanes3& v, int i) { return Vec3(v.x.v[i], v.y.v[i], v.z.v[i]); }

}  // namespace

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
    constants_ = KernelConstants{inv_h_, max_push_, world.settings.restitution_threshold};
  }

  // The tick's serial preparation: which bodies and constraints take part, the split into
  // parts, the team's layout and its joints. Reads the world's bodies, contacts and
  // joints and writes only the solver's own arrays (and the step profile).
  void prepare() {
    select_bodies();
    world_.profile.solve_parts = 0;
    world_.profile.team_bodies = 0;
    world_.profile.kernels = kernels_.name;
    active_ = body_slot_.size() > 1;
    if (!active_) return;  // nothing awake can move: no contact to solve
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
    all_joints_.emplace(JointPass{world_, bodies_, solver_index_, s_.joint_work, h_, world_.toggles.joint_warm_start});
    prepare_joints(*all_joints_);
    sort_joints_by_part();
    colour_joints();
    plan_stages();
  }

  // The stages (every body and contact written back), then breaking joints.
  void run() {
    if (!active_) return;
    auto block = [&](const StagePlan::Stage& st, uint32_t begin, uint32_t end) { run_block(st, begin, end); };
    if (!worth_sharing()) {
      plan_.run_alone(block);
    } else {
      // One team walks the stage list. Alone, a thread runs the same blocks in the same
      // order, so every thread count computes the same bits.
      plan_.arm(one_counter() ? 1 : world_.executor.threads());
      world_.executor.run_team([&](uint32_t member) { plan_.participate(member, block); });
    }
    // Breaking and the muscles' new rest poses read the bodies as written back.
    if (!s_.joint_work.empty()) finish_joints(*all_joints_);
  }

 private:
  // The team's stage list holds the schedule's stages (solver/schedule.h, their kind a
  // SolveStage) after one more of its own, first: the parts, a block each. Blocks of one
  // stage never write the same body or contact.
  static constexpr uint32_t kPartsStage = 0x100;

  // Whether the team's stages carry enough work to share: every stage costs the team a
  // hand-off (a spin on a counter another core wrote, far longer when that core was
  // descheduled), so below a measured amount of contact batches per stage one thread
  // runs the plan alone (docs/performance.md, "Small work on one thread").
  bool worth_sharing() const {
    if (!world_.executor.parallel()) return false;
    static const uint32_t min_per_stage = work_threshold("KEEL_SOLVE_MIN_BATCHES_PER_STAGE", kMinBatchesPerStage);
    const uint64_t batches = s_.layout.batch_end[s_.parts.parts];
    return batches >= uint64_t(min_per_stage) * plan_.size();
  }
  static constexpr uint32_t kMinBatchesPerStage = 8;

  // With KEEL_SOLVE_ONE_COUNTER=1 in the environment every member claims each stage's
  // blocks from one shared counter instead of from its own share first: for measuring
  // what the shares save (docs/performance.md); it never changes results.
  static bool one_counter() {
    static const bool set = [] {
      const char* v = std::getenv("KEEL_SOLVE_ONE_COUNTER");
      return v != nullptr && v[0] == '1' && v[1] == 0;
    }();
    return set;
  }

  void select_bodies();
  void split_into_parts();
  void renumber_bodies();
  void size_arrays();
  uint32_t part_body_begin(uint32_t part) const;
  void fill_bodies(uint32_t begin, uint32_t end);
  void plan_stages();
  void plan_groups(uint32_t kind, const std::vector<BatchGroup>& groups, uint32_t block);
  void run_block(const StagePlan::Stage& st, uint32_t begin, uint32_t end);
  void run_stage(SolveStage stage, uint32_t begin, uint32_t end);
  void run_part(uint32_t part);
  void sort_joints_by_part();
  void colour_joints();
  void run_joints(SolveStage stage, uint32_t begin, uint32_t end);
  void pack_batches(uint32_t begin, uint32_t end);
  void pack_batch(const uint32_t* contacts, int count, WideConstraint& out);
  void pack_point(const Contact* const* lanes, int j, int half, const WideSides& sides, const HalfBasis& basis,
                  const Bodies4& va, const Bodies4& vb, WideConstraint& w);
  void store_impulses(uint32_t begin, uint32_t end);
  float slip_speed(const Contact& k, const WideConstraint& c, int lane) const;
  void write_back(uint32_t begin, uint32_t end);

  WorldImpl& world_;
  uint32_t substeps_ = 4;
  float h_ = 0.0f;
  float inv_h_ = 0.0f;
  float max_push_ = 3.0f;
  Softness soft_;
  Softness static_soft_;
  std::optional<JointPass> all_joints_;   // every joint's work, part by part, colour by colour within
  bool active_ = false;                   // some awake body can move
  bool any_bounce_ = false;  // some manifold in the solve has restitution > 0
  const ContactKernels& kernels_ = contact_kernels();
  KernelConstants constants_;
  // The working arrays are the world's (solver/solver_scratch.h).
  SolverScratch& s_ = world_.scratch.solver;
  std::vector<uint32_t>& solver_index_ = s_.solver_index;
  std::vector<uint32_t>& body_slot_ = s_.body_slot;
  std::vector<SolverBody>& bodies_ = s_.bodies;
  std::vector<BodyMotion>& motion_ = s_.motion;
  BatchBuffer& batches_ = s_.batches;
  std::vector<BatchGroup>& groups_ = s_.groups;
  StagePlan& plan_ = s_.plan;
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
  for (uint32_t i : world_.body_sets.awake()) {  // ascending slots
    const Body& b = bodies[i];
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
  if (world_.toggles.solve_in_parts) {
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

// The team's stage list: the parts first, a block each (independent of each other and
// of the team), then the schedule over the team's bodies, batches and colours. Block sizes
// trade claiming cost against balance; a serial group (overflow) is one block, run in
// order by one thread.
void ContactSolver::plan_stages() {
  constexpr uint32_t kBodyBlock = 128;
  constexpr uint32_t kBatchBlock = 4;
  constexpr uint32_t kColourBlock = 2;
  constexpr uint32_t kJointBlock = 8;
  const SolveParts& parts = s_.parts;
  const BatchLayout& layout = s_.layout;
  const uint32_t team = parts.parts;
  const uint32_t body_begin = part_body_begin(team), body_end = uint32_t(body_slot_.size());
  const uint32_t batch_begin = layout.part_begin[team], batch_end = layout.batch_end[team];
  plan_.clear();
  plan_.add(kPartsStage, 0, 0, parts.parts, 1);
  walk_schedule(substeps_, any_bounce_, [&](const ScheduleEntry& e) {
    const uint32_t kind = uint32_t(e.stage);
    switch (e.items) {
      case StageItems::kBodies: plan_.add(kind, 0, body_begin, body_end, kBodyBlock); break;
      case StageItems::kBatches: plan_.add(kind, 0, batch_begin, batch_end, kBatchBlock); break;
      case StageItems::kContactColours: plan_groups(kind, groups_, kColourBlock); break;
      case StageItems::kJointColours: plan_groups(kind, s_.joint_groups, kJointBlock); break;
    }
  });
}

// One stage per colour group.
void ContactSolver::plan_groups(uint32_t kind, const std::vector<BatchGroup>& groups, uint32_t block) {
  for (const BatchGroup& g : groups) plan_.add(kind, 0, g.begin, g.end, g.serial ? g.end - g.begin : block);
}

void ContactSolver::pack_batches(uint32_t begin, uint32_t end) {
  const BatchLayout& l = s_.layout;
  for (uint32_t b = begin; b < end; ++b) pack_batch(&l.order[l.batch_first[b]], l.batch_count[b], batches_[b]);
}

void ContactSolver::run_block(const StagePlan::Stage& st, uint32_t begin, uint32_t end) {
  if (st.kind == kPartsStage) {
    for (uint32_t p = begin; p < end; ++p) run_part(p);
  } else {
    run_stage(SolveStage(st.kind), begin, end);
  }
}

// One stage of the schedule over items [begin, end) (bodies, batches or joint work, as
// the stage's items say).
void ContactSolver::run_stage(SolveStage stage, uint32_t begin, uint32_t end) {
  switch (stage) {
    case SolveStage::kFill: fill_bodies(begin, end); break;
    case SolveStage::kPack: pack_batches(begin, end); break;
    case SolveStage::kIntegrateVelocities:
      integrate_velocities(bodies_.data(), motion_.data(), begin, end, inv_h_);
      break;
    case SolveStage::kWarmStart: kernels_.warm_start(bodies_.data(), batches_.data(), begin, end); break;
    case SolveStage::kSolve: kernels_.solve(bodies_.data(), batches_.data(), begin, end, constants_, true); break;
    case SolveStage::kIntegratePositions: integrate_positions(bodies_.data(), begin, end, h_); break;
    case SolveStage::kRelax: kernels_.solve(bodies_.data(), batches_.data(), begin, end, constants_, false); break;
    case SolveStage::kRestitution:
      kernels_.restitution(bodies_.data(), batches_.data(), begin, end, constants_);
      break;
    case SolveStage::kStore: store_impulses(begin, end); break;
    case SolveStage::kWriteBack: write_back(begin, end); break;
    case SolveStage::kJointWarmStart:
    case SolveStage::kJointSolve:
    case SolveStage::kJointRelax: run_joints(stage, begin, end); break;
  }
}

// A whole part on this thread: its colours laid out, then the schedule the team walks,
// each stage over the part's own bodies, batches or joints. Its batches (and joints) lie
// colour by colour (overflow last), so walking them in order solves the colours in the
// team's sequence.
void ContactSolver::run_part(uint32_t part) {
  const uint32_t body_begin = part_body_begin(part), body_end = s_.parts.body_end[part];
  lay_out_part(s_.layout, part, body_begin, body_end, nullptr);
  const uint32_t first = s_.layout.part_begin[part], last = s_.layout.batch_end[part];
  const uint32_t joint_first = s_.joint_begin[part], joint_last = s_.joint_begin[part + 1];
  walk_schedule(substeps_, any_bounce_, [&](const ScheduleEntry& e) {
    switch (e.items) {
      case StageItems::kBodies: run_stage(e.stage, body_begin, body_end); break;
      case StageItems::kBatches:
      case StageItems::kContactColours: run_stage(e.stage, first, last); break;
      case StageItems::kJointColours:
        if (joint_first < joint_last) run_stage(e.stage, joint_first, joint_last);
        break;
    }
  });
}

// Joints [begin, end) of the work (one block of a team stage).
void ContactSolver::run_joints(SolveStage stage, uint32_t begin, uint32_t end) {
  JointPass run = *all_joints_;
  run.first = begin;
  run.last = end;
  if (stage == SolveStage::kJointWarmStart) {
    warm_start_joints(run);
  } else {
    solve_joints(run, stage == SolveStage::kJointSolve);
  }
}

// Colours each part's joints (the team's too), as the contacts are coloured: walking a
// part's run in joint-slot order, each joint takes the first of kColorCount colours in
// which neither side the solve moves is used yet; joints that fit none go last, one after
// another. The run is then laid out colour by colour (slot order within a colour). A part
// walks its run in that order on one thread and the team colour by colour across threads,
// so an island's joints are solved in the same order whichever solves it, and a colour's
// joints share no body the solve moves: which thread takes which never matters.
void ContactSolver::colour_joints() {
  std::vector<JointWork>& work = s_.joint_work;
  s_.joint_groups.clear();
  if (work.empty()) return;
  const std::vector<uint8_t>& movable = s_.layout.movable;
  std::vector<uint32_t>& bits = s_.joint_color_bits;
  std::vector<uint8_t>& colour = s_.joint_color;
  std::vector<JointWork>& sorted = s_.joint_scratch;
  bits.assign(body_slot_.size(), 0u);
  colour.resize(work.size());
  sorted.resize(work.size());
  const uint32_t team = s_.parts.parts;
  for (uint32_t part = 0; part <= team; ++part) {
    const uint32_t begin = s_.joint_begin[part], end = s_.joint_begin[part + 1];
    uint32_t per_colour[kColorCount + 1] = {};
    for (uint32_t k = begin; k < end; ++k) {
      const JointWork& jw = work[k];
      const bool ma = movable[jw.a] != 0, mb = movable[jw.b] != 0;
      int c = kColorCount;  // overflow
      for (int t = 0; t < kColorCount; ++t) {
        const uint32_t bit = 1u << t;
        if ((ma && (bits[jw.a] & bit)) || (mb && (bits[jw.b] & bit))) continue;
        c = t;
        break;
      }
      if (c < kColorCount) {
        if (ma) bits[jw.a] |= 1u << c;
        if (mb) bits[jw.b] |= 1u << c;
      }
      colour[k] = uint8_t(c);
      ++per_colour[c];
    }
    uint32_t cursor[kColorCount + 1];
    cursor[0] = begin;
    for (int c = 0; c < kColorCount; ++c) cursor[c + 1] = cursor[c] + per_colour[c];
    if (part == team) {
      for (int c = 0; c <= kColorCount; ++c) {
        if (per_colour[c] > 0) s_.joint_groups.push_back(BatchGroup{cursor[c], cursor[c] + per_colour[c], c == kColorCount});
      }
    }
    for (uint32_t k = begin; k < end; ++k) sorted[cursor[colour[k]]++] = work[k];
  }
  work.swap(sorted);
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
  float bias[kLanes] = {}, mscale[kLanes], iscale[kLanes] = {};
  w.point_count = 0;
  w.bounces = false;
  for (int i = 0; i < kLanes; ++i) {
    normal[i] = t1[i] = t2[i] = Vec3(0.0f);
    mscale[i] = 1.0f;
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
    // A gripping contact holds with its static friction, a sliding one drags with its
    // kinetic friction (store_impulses decides which for the next tick).
    friction[i] = k.sliding ? k.friction : k.static_friction;
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
  // Every half packs the batch's point slots (up to its largest point count), so each
  // lane's unused slots are zero whichever half it is in.
  for (int half = 0; half < 2; ++half) {
    const int o = 4 * half;
    const HalfBasis basis{pack(normal + o), pack(t1 + o), pack(t2 + o)};
    put(w.normal, half, basis.n);
    put(w.t1, half, basis.t1);
    put(w.t2, half, basis.t2);
    put(w.friction, half, pack(friction + o));
    put(w.restitution, half, pack(restitution + o));
    put(w.inv_mass_a, half, pack(ima + o));
    put(w.inv_mass_b, half, pack(imb + o));
    put(w.bias_rate, half, pack(bias + o));
    put(w.mass_scale, half, pack(mscale + o));
    put(w.impulse_scale, half, pack(iscale + o));
    const WideSides sides{pack(ima + o), pack(imb + o), gather_inertia(bodies_, w.body_a + o),
                          gather_inertia(bodies_, w.body_b + o)};
    const Bodies4 va = gather_velocity4(bodies_.data(), w.body_a + o);
    const Bodies4 vb = gather_velocity4(bodies_.data(), w.body_b + o);
    for (int j = 0; j < w.point_count; ++j) pack_point(lane_contact + o, j, half, sides, basis, va, vb, w);
  }
}

// Point j of four lanes (one half of the batch): anchors, the three rows, the separation
// offset and the approach speed, each lane computed exactly as its scalar formula would.
void ContactSolver::pack_point(const Contact* const* lanes, int j, int half, const WideSides& sides,
                               const HalfBasis& basis, const Bodies4& va, const Bodies4& vb, WideConstraint& w) {
  Vec3 ra[4], rb[4], friction_impulse[4];
  float neg_depth[4], normal_impulse[4];
  uint32_t keep_bits[4];
  for (int i = 0; i < 4; ++i) {
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
  float keep_f[4];
  std::memcpy(keep_f, keep_bits, sizeof keep_f);
  const Float4 keep = pack(keep_f);
  const Float4 zero = zero4();
  const Vec3x4 &n = basis.n, &t1 = basis.t1, &t2 = basis.t2;
  const Vec3x4 r_a = pack(ra), r_b = pack(rb);
  const Vec3x4 f = pack(friction_impulse);
  WidePoint& p = w.p[j];
  put(p.r_a, half, r_a);
  put(p.r_b, half, r_b);
  put(p.adjusted_separation, half, select(keep, pack(neg_depth) - dot(r_b - r_a, n), zero));
  put(p.normal, half, make_row(sides, r_a, r_b, n, pack(normal_impulse), keep));
  put(p.tangent1, half, make_row(sides, r_a, r_b, t1, dot(f, t1), keep));
  put(p.tangent2, half, make_row(sides, r_a, r_b, t2, dot(f, t2), keep));
  const Vec3x4 dv = vb.v + cross(vb.w, r_b) - va.v - cross(va.w, r_a);
  put(p.relative_velocity, half, select(keep, dot(n, dv), zero));
  put(p.max_normal_impulse, half, zero);
}

// Whether a contact's friction, as the solve left it, fills its cone: the sum of its
// points' friction impulses reaches the coefficient it was solved with times the sum of
// their normal impulses. Summed over the manifold, not judged per point: the solver may
// load one point more than another while the contact as a whole grips.
static bool friction_fills_cone(const Contact& k, const WideConstraint& c, int lane) {
  float normal = 0.0f, friction = 0.0f;
  for (int j = 0; j < k.count; ++j) {
    const WidePoint& p = c.p[j];
    const float f1 = p.tangent1.impulse.v[lane], f2 = p.tangent2.impulse.v[lane];
    normal += p.normal.impulse.v[lane];
    friction += std::sqrt(f1 * f1 + f2 * f2);
  }
  const float mu = k.sliding ? k.friction : k.static_friction;
  return normal > 0.0f && friction >= 0.999f * mu * normal;
}

// The fastest tangential slip among a contact's points, from the bodies' velocities at
// the end of the solve (each point's tangent rows: dot(vb - va, t) + wb . (rb x t) -
// wa . (ra x t)).
float ContactSolver::slip_speed(const Contact& k, const WideConstraint& c, int lane) const {
  const SolverBody& a = bodies_[c.body_a[lane]];
  const SolverBody& b = bodies_[c.body_b[lane]];
  const Vec3 dv = b.v - a.v, t1 = lane_of(c.t1, lane), t2 = lane_of(c.t2, lane);
  float fastest = 0.0f;
  for (int j = 0; j < k.count; ++j) {
    const WidePoint& p = c.p[j];
    const float v1 = glm::dot(dv, t1) + glm::dot(b.w, lane_of(p.tangent1.ang_b, lane)) -
                     glm::dot(a.w, lane_of(p.tangent1.ang_a, lane));
    const float v2 = glm::dot(dv, t2) + glm::dot(b.w, lane_of(p.tangent2.ang_b, lane)) -
                     glm::dot(a.w, lane_of(p.tangent2.ang_a, lane));
    fastest = std::max(fastest, std::sqrt(v1 * v1 + v2 * v2));
  }
  return fastest;
}

void ContactSolver::store_impulses(uint32_t begin, uint32_t end) {
  auto& contacts = world_.contacts.items();
  // A contact slides only if it both fills its cone and slips faster than gravity adds in
  // one substep: a resting contact whose friction touches the cone while it creeps at
  // round-off speed keeps its static grip (docs/sim.md, "Stacking").
  const float slip_floor = glm::length(world_.settings.gravity) * h_;
  for (uint32_t b = begin; b < end; ++b) {
    const WideConstraint& c = batches_[b];
    for (int i = 0; i < kLanes; ++i) {
      if (c.contact[i] == kNoContact) continue;
      Contact& k = contacts[c.contact[i]];
      Vec3 t1 = lane_of(c.t1, i), t2 = lane_of(c.t2, i);
      for (int j = 0; j < k.count; ++j) {
        const WidePoint& p = c.p[j];
        k.points[j].normal_impulse = p.normal.impulse.v[i];
        k.points[j].friction_impulse = p.tangent1.impulse.v[i] * t1 + p.tangent2.impulse.v[i] * t2;
        k.points[j].max_normal_impulse = p.max_normal_impulse.v[i];
      }
      if (k.static_friction > k.friction) k.sliding = friction_fills_cone(k, c, i) && slip_speed(k, c, i) > slip_floor;
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

Softness make_softness(float hertz, float damping_ratio, float h) {
  if (hertz == 0.0f) return Softness{0.0f, 1.0f, 0.0f};
  float omega = 2.0f * kPi * hertz;
  float a1 = 2.0f * damping_ratio + h * omega;
  float a2 = h * omega * a1;
  float a3 = 1.0f / (1.0f + a2);
  return Softness{omega / a1, a2 * a3, a3};
}

// The solver is made on the stack: its working arrays are the world's, so a solve
// allocates nothing once the world has reached its size.
void solve_soft_step(WorldImpl& world, float dt, const std::function<void()>& beside_prepare) {
  ContactSolver solver(world, dt);
  world.executor.invoke(beside_prepare, [&] { solver.prepare(); });
  solver.run();
}

}  // namespace keel::sim
