// keel-sleep-bench: what a resting world costs asleep against awake.
//
// A flat field of N x N one-metre boxes (1.5 m pitch) on a ground box settles for 120
// ticks; then 120 more ticks are timed, once with sleeping allowed (everything asleep)
// and once with every body kept awake. Prints the median step of each and their ratio,
// and the median step of the sleeping field while one ball rolls across the ground beside
// it (a world partly awake: what the sleepers cost while something else moves).
//   keel-sleep-bench [N]        (default 100: 10,000 boxes)
#include <keel/sim/world.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using namespace keel::sim;

enum class Mode { Asleep, Awake, OneBallRolling };

double median_step_ms(Mode mode, int side, int& awake) {
  const bool can_sleep = mode != Mode::Awake;
  World w;
  BodyDef ground;
  ground.id = 1;
  ground.motion = MotionType::Static;
  ground.position = Vec3(0, -0.5f, 0);
  ColliderDef g;
  g.shape = ShapeType::Box;
  g.half_extents = Vec3(0.75f * float(side) + 10.0f, 0.5f, 0.75f * float(side) + 10.0f);
  ground.colliders.push_back(g);
  w.add_body(ground);
  uint32_t id = 2;
  for (int i = 0; i < side; ++i) {
    for (int k = 0; k < side; ++k) {
      BodyDef b;
      b.id = id++;
      b.position = Vec3(1.5f * float(i - side / 2), 0.5f, 1.5f * float(k - side / 2));
      b.can_sleep = can_sleep;
      ColliderDef c;
      c.shape = ShapeType::Box;
      c.half_extents = Vec3(0.5f);
      b.colliders.push_back(c);
      w.add_body(b);
    }
  }
  for (int t = 0; t < 120; ++t) w.step();
  if (mode == Mode::OneBallRolling) {
    // Rolls along the field's edge, 5 m clear of it, touching only the ground.
    BodyDef ball;
    ball.id = id++;
    ball.position = Vec3(-0.75f * float(side), 0.5f, -0.75f * float(side) - 5.0f);
    ball.linear_velocity = Vec3(3.0f, 0.0f, 0.0f);
    ball.can_sleep = false;
    ColliderDef c;
    c.shape = ShapeType::Sphere;
    c.radius = 0.5f;
    ball.colliders.push_back(c);
    w.add_body(ball);
  }
  std::vector<double> ms;
  for (int t = 0; t < 120; ++t) {
    auto t0 = std::chrono::steady_clock::now();
    w.step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  awake = 0;
  for (BodyId b : w.bodies()) {
    BodyState s = w.body_state(b);
    awake += s.motion == MotionType::Dynamic && !s.sleeping;
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int side = argc > 1 ? std::atoi(argv[1]) : 100;
  if (side < 1 || side > 400) {
    std::fprintf(stderr, "usage: keel-sleep-bench [N]   (1 <= N <= 400: an N x N field)\n");
    return 2;
  }
  int awake_asleep = 0, awake_awake = 0, awake_partly = 0;
  double asleep = median_step_ms(Mode::Asleep, side, awake_asleep);
  double awake = median_step_ms(Mode::Awake, side, awake_awake);
  double partly = median_step_ms(Mode::OneBallRolling, side, awake_partly);
  std::printf("bodies=%d asleep_step_ms_p50=%.4f (awake bodies %d) awake_step_ms_p50=%.4f (awake bodies %d) ratio=%.2f%%"
              " one_ball_rolling_step_ms_p50=%.4f (awake bodies %d) ratio=%.2f%%\n",
              side * side, asleep, awake_asleep, awake, awake_awake, 100.0 * asleep / awake, partly, awake_partly,
              100.0 * partly / awake);
  return 0;
}
