// keel-sleep-bench: what a resting world costs asleep against awake.
//
// A flat field of N x N one-metre boxes (1.5 m pitch) on a ground box settles for 120
// ticks; then 120 more ticks are timed, once with sleeping allowed (everything asleep)
// and once with every body kept awake. Prints the median step of each and their ratio.
//   keel-sleep-bench [N]        (default 100: 10,000 boxes)
#include <keel/sim/world.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using namespace keel::sim;

double median_step_ms(bool can_sleep, int side, int& awake) {
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
  int awake_asleep = 0, awake_awake = 0;
  double asleep = median_step_ms(true, side, awake_asleep);
  double awake = median_step_ms(false, side, awake_awake);
  std::printf("bodies=%d asleep_step_ms_p50=%.4f (awake bodies %d) awake_step_ms_p50=%.4f (awake bodies %d) ratio=%.2f%%\n",
              side * side, asleep, awake_asleep, awake, awake_awake, 100.0 * asleep / awake);
  return 0;
}
