// The soft-step solver: substepped, soft-constraint projected Gauss-Seidel.
//
// Per tick, after contacts are prepared once:
//   for each substep:  integrate velocities -> warm start -> solve (biased) ->
//                      integrate positions -> relax (unbiased)
//   then restitution, then the impulses are stored for next tick's warm start.
// That order is data, the tick schedule (solver/schedule.h), which the team of threads
// and every part solved whole on one thread walk alike; integration is integrate.cpp.
// Overlap is recovered by a soft spring (hertz, damping ratio) inside the biased solve;
// the relax pass removes the recovery velocity after positions have moved, so pushing
// out never adds kinetic energy. See docs/sim.md for the constants and why.
#pragma once

#include <keel/sim/math.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace keel::sim {

struct WorldImpl;

/// Spring coefficients for a soft constraint at a given substep (Box2D-style "soft step").
struct Softness {
  float bias_rate = 0.0f;      // 1/s: how much of the error becomes target velocity
  float mass_scale = 1.0f;     // how much of the rigid impulse is applied
  float impulse_scale = 0.0f;  // leak of the accumulated impulse
};

Softness make_softness(float hertz, float damping_ratio, float h);

/// The per-body state the solver works on. Index 0 is a shared immovable body that
/// stands in for every static body, so the inner loops need no branches.
struct SolverBody {
  Vec3 v{0.0f};
  Vec3 w{0.0f};
  Vec3 dp{0.0f};                            // translation of the centre since the tick began
  Quat dq{1.0f, 0.0f, 0.0f, 0.0f};          // rotation since the tick began
  float inv_mass = 0.0f;
  Mat3 inv_inertia{0.0f};                   // world frame, at the start of the tick
};

/// One tick's soft-step solve, in two steps. The preparation is serial and only reads the
/// world's bodies, contacts and joints (it writes the solver's own arrays, the world's
/// StepScratch::solver, and the step profile's solve counts), so `beside_prepare` runs at
/// the same time on another worker when one is free: it must only read the bodies and
/// contacts (World::step runs the contact events there). Then the run walks the tick
/// schedule (solver/schedule.h) and moves every awake body, writing the bodies and the
/// contacts' impulses; both have returned when this does.
void solve_soft_step(WorldImpl& world, float dt, const std::function<void()>& beside_prepare);

}  // namespace keel::sim
