// XPBD joints (Müller et al. 2020, section 3.4): Ball (a shared point), Hinge (a shared
// point, aligned axes, an optional angle limit) and Fixed (a shared point, equal frames),
// each rigid (compliance 0). Other kinds and features are refused when the joint is added
// (joint/joint_api.cpp, xpbd_joint_support), never ignored.
#include "xpbd/xpbd.h"

#include <keel/sim/det_math.h>

#include "world_impl.h"

namespace keel::sim::xpbd {

namespace {

struct JointPose {
  XBody* a;
  XBody* b;
  Vec3 ra, rb;  // anchor arms (world)
  Quat fa, fb;  // frames (world)
};

// `world` stands in for body B when B is the world (it never moves; frame_b is in world
// space).
JointPose pose_of(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies, XBody& world) {
  JointPose p{&bodies[j.body_a], nullptr, {}, {}, {}, {}};
  const Body& ba = w.bodies[j.body_a];
  p.ra = p.a->q * (j.def.frame_a.position - ba.local_center);
  p.fa = p.a->q * j.def.frame_a.rotation;
  if (j.body_b == kNullIndex) {
    world = XBody{};
    world.x = j.def.frame_b.position;
    p.b = &world;
    p.rb = Vec3(0.0f);
    p.fb = j.def.frame_b.rotation;
  } else {
    p.b = &bodies[j.body_b];
    const Body& bb = w.bodies[j.body_b];
    p.rb = p.b->q * (j.def.frame_b.position - bb.local_center);
    p.fb = p.b->q * j.def.frame_b.rotation;
  }
  return p;
}

void solve_point(JointPose& p) {
  const Vec3 d = (p.a->x + p.ra) - (p.b->x + p.rb);
  const float c = glm::length(d);
  if (!(c > 0.0f)) return;
  apply_positional(*p.a, *p.b, p.ra, p.rb, d / c, c, 0.0f, 0.0f);
}

// Turns B's hinge axis onto A's.
void solve_axis(JointPose& p) {
  const Vec3 ax = p.fa * Vec3(1, 0, 0);
  const Vec3 bx = p.fb * Vec3(1, 0, 0);
  apply_angular(*p.a, *p.b, glm::cross(bx, ax));
}

// Keeps the angle of B about A's axis (the angle joint_info reports) within the limit.
void solve_angle_limit(JointPose& p, const JointLimit& limit) {
  const Vec3 n = p.fa * Vec3(1, 0, 0);
  const Vec3 ay = p.fa * Vec3(0, 1, 0);
  const Vec3 by = p.fb * Vec3(0, 1, 0);
  const float phi = dmath::atan2(glm::dot(glm::cross(ay, by), n), glm::dot(ay, by));
  if (phi < limit.lower) apply_angular(*p.a, *p.b, (limit.lower - phi) * n);
  if (phi > limit.upper) apply_angular(*p.a, *p.b, (limit.upper - phi) * n);
}

// Turns B's frame onto A's.
void solve_frames(JointPose& p) {
  Quat r = p.fa * glm::conjugate(p.fb);
  if (r.w < 0.0f) r = -r;
  apply_angular(*p.a, *p.b, 2.0f * Vec3(r.x, r.y, r.z));
}

}  // namespace

void solve_joint(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies);

void solve_joint_positions(const WorldImpl& w, std::vector<XBody>& bodies) {
  // Two passes: a light bob on a long arm turns more than it moves under one correction
  // (its rotational inverse mass dwarfs its linear one), and the linearised turn leaves
  // a residual a second pass removes.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Joint& j : w.joints.items) solve_joint(w, j, bodies);
  }
}

void solve_joint(const WorldImpl& w, const Joint& j, std::vector<XBody>& bodies) {
  {
    if (!j.alive || j.broken) return;
    const bool b_moves = j.body_b != kNullIndex && bodies[j.body_b].dynamic;
    if (!bodies[j.body_a].dynamic && !b_moves) return;
    // Angles first, the point last: the point is what a viewer sees come apart.
    XBody world;
    JointPose p = pose_of(w, j, bodies, world);
    switch (j.def.kind) {
      case JointKind::Hinge:
        solve_axis(p);
        p = pose_of(w, j, bodies, world);
        if (j.def.limit.enabled) {
          solve_angle_limit(p, j.def.limit);
          p = pose_of(w, j, bodies, world);
        }
        break;
      case JointKind::Fixed:
        solve_frames(p);
        p = pose_of(w, j, bodies, world);
        break;
      default: break;  // Ball: the point alone
    }
    solve_point(p);
  }
}

}  // namespace keel::sim::xpbd
