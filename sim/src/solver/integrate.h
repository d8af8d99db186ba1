// Integration: the solver bodies' velocities (gravity, damping, speed guards) and their
// poses, over a range of solver bodies. Stages of the tick schedule (solver/schedule.h),
// run once per substep by the team in blocks and by a part over its own bodies.
#pragma once

#include "solver/solver.h"

#include <cstdint>

namespace keel::sim {

/// Per-body constants of the velocity integration.
struct BodyMotion {
  Vec3 gravity_dv{0.0f};       // velocity gained from gravity per substep
  float linear_factor = 1.0f;  // damping multiplier per substep
  float angular_factor = 1.0f;
};

/// Bodies [begin, end): gravity and damping over one substep, then the linear speed and
/// the rotation per substep clamped (guards against blow-ups; `inv_h` is 1 / substep).
void integrate_velocities(SolverBody* bodies, const BodyMotion* motion, uint32_t begin, uint32_t end, float inv_h);

/// Bodies [begin, end): their displacement and rotation since the tick began, moved on by
/// one substep `h` at their current velocities.
void integrate_positions(SolverBody* bodies, uint32_t begin, uint32_t end, float h);

}  // namespace keel::sim
