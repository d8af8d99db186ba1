// keel-lag-bench: what lag compensation costs. A field of N x N kinematic spheres crossing
// at 10 m/s over a static floor; one player. Measured in alternating rounds, medians:
//   step    Match::step + Match::hash per tick, and Match::step alone, the game keeping 60
//           ticks of pose history and keeping none (the history's recording, its bytes
//           and their hash);
//   query   a ray across the field: raycast_as_seen at lag 0 (the plain query), lag 6,
//           and lag 6 with a fraction (blended poses).
// Usage: keel-lag-bench [N=16] [ROUNDS=5]
#include <keel/game/match.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

using namespace keel;

namespace {

class FieldRules final : public game::Rules {
 public:
  explicit FieldRules(uint32_t history) : history_(history) {}
  game::GameSpec spec() const override {
    game::GameSpec s;
    s.name = "lagbench";
    s.pose_history_ticks = history_;
    s.input.add_bool("fire");
    return s;
  }

 private:
  uint32_t history_;
};

sim::SceneDef field(int n) {
  sim::SceneDef scene;
  scene.name = "field";
  scene.settings.gravity = sim::Vec3(0.0f);
  sim::BodyDef floor;
  floor.id = 1;
  floor.motion = sim::MotionType::Static;
  floor.position = sim::Vec3(0.0f, -1.0f, 0.0f);
  sim::ColliderDef slab;
  slab.shape = sim::ShapeType::Box;
  slab.half_extents = sim::Vec3(500.0f, 0.5f, 500.0f);
  floor.colliders.push_back(slab);
  scene.bodies.push_back(floor);
  uint32_t id = 10;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < n; ++k) {
      sim::BodyDef b;
      b.id = id++;
      b.motion = sim::MotionType::Kinematic;
      b.position = sim::Vec3(float(i) * 2.0f, 0.5f, float(k) * 2.0f);
      b.linear_velocity = sim::Vec3(10.0f, 0.0f, 0.0f);
      b.can_sleep = false;
      sim::ColliderDef ball;
      ball.shape = sim::ShapeType::Sphere;
      ball.radius = 0.5f;
      b.colliders.push_back(ball);
      scene.bodies.push_back(b);
    }
  }
  return scene;
}

game::Match make(int n, uint32_t history) {
  auto m = game::Match::create(field(n), std::make_unique<FieldRules>(history));
  if (!m) {
    std::fprintf(stderr, "%s\n", m.error().message.c_str());
    std::exit(1);
  }
  return std::move(*m);
}

game::TickInputs inputs(uint64_t tick, game::ViewStamp view) {
  game::TickInputs in;
  if (tick == 0) in.events.push_back({game::PlayerEvent::Kind::Join, 1});
  in.inputs.push_back({1, game::InputFrame{}, view});
  return in;
}

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Microseconds per step (+ hash) over `ticks` ticks.
double time_steps(game::Match& m, int ticks, bool hash = true) {
  volatile uint64_t sink = 0;
  const auto t0 = Clock::now();
  for (int t = 0; t < ticks; ++t) {
    m.step(inputs(m.tick(), {6, 0}));
    if (hash) sink = sink + m.hash();
  }
  return us_since(t0) / ticks;
}

// Microseconds per raycast_as_seen, with the player's view set to `view` by one step.
double time_queries(game::Match& m, game::ViewStamp view, int n, int queries) {
  m.step(inputs(m.tick(), view));
  volatile float sink = 0.0f;
  const auto t0 = Clock::now();
  for (int q = 0; q < queries; ++q) {
    const float z = float(q % n) * 2.0f;
    auto hit = m.raycast_as_seen(1, sim::Vec3(-50.0f, 0.5f, z), sim::Vec3(1.0f, 0.0f, 0.0f), 200.0f);
    sink = sink + (hit ? hit->distance : 0.0f);
  }
  return us_since(t0) / queries;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 16;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n < 1 || n > 100 || rounds < 1 || rounds > 100) {
    std::fprintf(stderr, "usage: keel-lag-bench [N 1..100] [ROUNDS 1..100]\n");
    return 2;
  }
  std::vector<double> step_none, step_hist, only_none, only_hist, q0, q6, q6f;
  for (int r = 0; r < rounds; ++r) {
    game::Match plain = make(n, 0);
    game::Match hist = make(n, 60);
    time_steps(plain, 60);  // warm: the history fills
    time_steps(hist, 60);
    step_none.push_back(time_steps(plain, 300));
    step_hist.push_back(time_steps(hist, 300));
    only_none.push_back(time_steps(plain, 300, false));
    only_hist.push_back(time_steps(hist, 300, false));
    q0.push_back(time_queries(hist, {0, 0}, n, 2000));
    q6.push_back(time_queries(hist, {6, 0}, n, 2000));
    q6f.push_back(time_queries(hist, {6, 128}, n, 2000));
  }
  std::printf("bodies %d movable, history 60 ticks (%zu bytes)\n", n * n,
              size_t(61) * (12 + size_t(n) * n * game::kPastPoseBytes));
  std::printf("step+hash us: no history %.2f, history %.2f (ratio %.2f)\n", median(step_none), median(step_hist),
              median(step_hist) / median(step_none));
  std::printf("step alone us: no history %.2f, history %.2f (ratio %.2f)\n", median(only_none), median(only_hist),
              median(only_hist) / median(only_none));
  std::printf("raycast_as_seen us: lag 0 %.2f, lag 6 %.2f (ratio %.1f), lag 6 + fraction %.2f (ratio %.1f)\n",
              median(q0), median(q6), median(q6) / median(q0), median(q6f), median(q6f) / median(q0));
  return 0;
}
