// keel-solver-compare: the soft step and XPBD side by side (docs/performance.md, "Soft
// step versus XPBD"; docs/sim.md, "Solvers"). For each solver, in alternating rounds:
//   ms/step   median over rounds of a scene's mean step time (sleep off, every body awake)
//   creep     how far the top box of a 10-box stack drifts over 60 s (sleep off)
//   depth     the stack's deepest contact overlap at 60 s (bottom box under its half size)
//   bounce    energy of a ball (restitution 1) after 60 s, over its start energy
//   pendulum  energy of a 1 m ball-joint pendulum released at 30 degrees after 60 s
// With --stacking, also the stacking scenes of tests/sim/stacking_test.cpp (20 x 0.5 m and
// 20 x 1 m columns, 20- and 30-row pyramids of touching 1 m boxes, sleep off), each
// stepped 10 s under each solver (the order alternating scene by scene): mean ms/step,
// how far the top box and the farthest box moved, and the deepest bottom-row overlap.
// --substeps N sets the substeps of these built-in scenes (default: the default settings').
// Usage: keel-solver-compare [--rounds N] [--ticks N] [--substeps N] [--stacking] SCENE.json...
#include <keel/scene/scene.h>
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace keel::sim;

constexpr float kG = 9.81f;
constexpr int kTicks60s = 3600;

// The settings of the built-in scenes: the defaults, with --substeps N when given.
uint32_t g_substeps = 0;
WorldSettings base_settings() {
  WorldSettings s;
  if (g_substeps > 0) s.substeps = g_substeps;
  return s;
}

WorldSettings with_solver(WorldSettings s, SolverKind kind) {
  s.solver_kind = kind;
  return s;
}

BodyDef box(uint32_t id, MotionType m, Vec3 p, Vec3 half) {
  BodyDef b;
  b.id = id;
  b.motion = m;
  b.position = p;
  b.can_sleep = false;
  ColliderDef c;
  c.shape = ShapeType::Box;
  c.half_extents = half;
  b.colliders.push_back(c);
  return b;
}

double ms_per_step(const SceneDef& scene, SolverKind kind, int ticks) {
  SceneDef s = scene;
  s.settings = with_solver(s.settings, kind);
  for (BodyDef& b : s.bodies) b.can_sleep = false;
  auto w = World::from_scene(s);
  if (!w) {
    std::fprintf(stderr, "%s: %s\n", to_string(kind), w.error().message.c_str());
    std::exit(1);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < ticks; ++t) w->step();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / ticks;
}

struct Stack {
  float creep = 0.0f, depth = 0.0f;
};

Stack stack_of_ten(SolverKind kind) {
  World w(with_solver(base_settings(), kind));
  w.add_body(box(1, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(20.0f, 0.5f, 20.0f)));
  for (uint32_t i = 0; i < 10; ++i) w.add_body(box(10 + i, MotionType::Dynamic, Vec3(0.0f, 0.5f + float(i), 0.0f), Vec3(0.5f)));
  for (int t = 0; t < 60; ++t) w.step();  // settle
  const Vec3 top0 = w.body_state(w.find_body(19)).position;
  for (int t = 0; t < kTicks60s; ++t) w.step();
  Stack out;
  out.creep = glm::length(w.body_state(w.find_body(19)).position - top0);
  out.depth = 0.5f - w.body_state(w.find_body(10)).position.y;
  return out;
}

float bounce_energy(SolverKind kind) {
  World w(with_solver(base_settings(), kind));
  w.add_body(box(1, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(20.0f, 0.5f, 20.0f)));
  BodyDef ball = box(2, MotionType::Dynamic, Vec3(0.0f, 2.1f, 0.0f), Vec3(0.0f));
  ball.colliders[0].shape = ShapeType::Sphere;
  ball.colliders[0].radius = 0.1f;
  ball.colliders[0].restitution = 1.0f;
  ball.mass = 1.0f;
  w.add_body(ball);
  auto energy = [&] {
    const BodyState s = w.body_state(w.find_body(2));
    return kG * (s.position.y - 0.1f) + 0.5f * glm::dot(s.linear_velocity, s.linear_velocity);
  };
  const float e0 = energy();
  for (int t = 0; t < kTicks60s; ++t) w.step();
  return energy() / e0;
}

float pendulum_energy(SolverKind kind) {
  World w(with_solver(base_settings(), kind));
  const float theta = 30.0f * 3.14159265f / 180.0f;
  const Vec3 bob(std::sin(theta), -std::cos(theta), 0.0f);
  BodyDef b = box(1, MotionType::Dynamic, bob, Vec3(0.0f));
  b.colliders[0].shape = ShapeType::Sphere;
  b.colliders[0].radius = 0.05f;
  b.mass = 1.0f;
  w.add_body(b);
  JointDef j;
  j.kind = JointKind::Ball;
  j.body_a = 1;
  j.body_b = kWorldBodyId;
  j.frame_a.position = -bob;
  add_joint(w, j);
  auto energy = [&] {
    const BodyState s = w.body_state(w.find_body(1));
    return kG * (s.position.y + 1.0f) + 0.5f * glm::dot(s.linear_velocity, s.linear_velocity);
  };
  const float e0 = energy();
  for (int t = 0; t < kTicks60s; ++t) w.step();
  return energy() / e0;
}

// ---- stacking scenes (tests/sim/stacking_test.cpp) ----------------------------------

struct StackScene {
  const char* name;
  bool column;
  int count;    // column: boxes; pyramid: rows
  float edge;   // box edge (m)
};

struct StackResult {
  double ms = 0.0;
  float top = 0.0f, farthest = 0.0f, overlap = 0.0f;
};

StackResult run_stack(const StackScene& sc, SolverKind kind) {
  World w(with_solver(base_settings(), kind));
  w.add_body(box(1, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(100.0f, 0.5f, 100.0f)));
  std::vector<Vec3> start;
  std::vector<bool> bottom;
  auto add = [&](Vec3 p, bool on_ground) {
    w.add_body(box(uint32_t(start.size() + 2), MotionType::Dynamic, p, Vec3(0.5f * sc.edge)));
    start.push_back(p);
    bottom.push_back(on_ground);
  };
  if (sc.column) {
    for (int i = 0; i < sc.count; ++i) add(Vec3(0.0f, sc.edge * (float(i) + 0.5f), 0.0f), i == 0);
  } else {
    for (int row = 0; row < sc.count; ++row) {
      const int n = sc.count - row;
      for (int i = 0; i < n; ++i) add(Vec3(float(i) - 0.5f * float(n - 1), float(row) + 0.5f, 0.0f), row == 0);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < 600; ++t) w.step();
  StackResult r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 600.0;
  for (size_t i = 0; i < start.size(); ++i) {
    const Vec3 p = w.body_state(w.find_body(uint32_t(i + 2))).position;
    const float moved = glm::length(p - start[i]);
    r.farthest = std::max(r.farthest, moved);
    if (i + 1 == start.size()) r.top = moved;  // the last box placed is the top one
    if (bottom[i]) r.overlap = std::max(r.overlap, 0.5f * sc.edge - p.y);
  }
  return r;
}

void compare_stacking(const SolverKind (&kinds)[2]) {
  const StackScene scenes[] = {{"column 20 x 0.5 m", true, 20, 0.5f},
                               {"column 20 x 1 m", true, 20, 1.0f},
                               {"pyramid 20 rows", false, 20, 1.0f},
                               {"pyramid 30 rows", false, 30, 1.0f}};
  int n = 0;
  for (const StackScene& sc : scenes) {
    StackResult r[2];
    for (int k = 0; k < 2; ++k) {
      const int which = (k + n) % 2;
      r[which] = run_stack(sc, kinds[which]);
    }
    ++n;
    for (int k = 0; k < 2; ++k) {
      std::printf("%-18s %-9s %8.3f ms/step  top moved %.4f m  farthest %.4f m  bottom overlap %.5f m\n", sc.name,
                  to_string(kinds[k]), r[k].ms, r[k].top, r[k].farthest, r[k].overlap);
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, ticks = 120;
  std::vector<std::string> scenes;
  bool stacking = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--stacking") {
      stacking = true;
    } else if (a == "--substeps" && i + 1 < argc) {
      const long n = std::strtol(argv[++i], nullptr, 10);
      if (n < 1 || n > 64) {
        std::fprintf(stderr, "--substeps must be 1 to 64\n");
        return 2;
      }
      g_substeps = uint32_t(n);
    } else if ((a == "--rounds" || a == "--ticks") && i + 1 < argc) {
      const long n = std::strtol(argv[++i], nullptr, 10);
      if (n < 1 || n > 100000) {
        std::fprintf(stderr, "%s must be 1 to 100000\n", a.c_str());
        return 2;
      }
      (a == "--rounds" ? rounds : ticks) = int(n);
    } else {
      scenes.push_back(a);
    }
  }
  const SolverKind kinds[2] = {SolverKind::SoftStep, SolverKind::Xpbd};
  for (const std::string& path : scenes) {
    auto scene = keel::scene::load_scene_file(path);
    if (!scene) {
      std::fprintf(stderr, "%s\n", scene.error().message.c_str());
      return 1;
    }
    std::vector<double> ms[2];
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 2; ++k) ms[(k + r) % 2].push_back(ms_per_step(*scene, kinds[(k + r) % 2], ticks));
    }
    const double soft = median(ms[0]), xp = median(ms[1]);
    std::printf("%-32s soft_step %8.3f ms/step  xpbd %8.3f ms/step  xpbd/soft %.2f\n", path.c_str(), soft, xp, xp / soft);
  }
  for (SolverKind k : kinds) {
    const Stack s = stack_of_ten(k);
    std::printf("%-9s stack of 10: creep %.4f m over 60 s, bottom overlap %.5f m; bounce energy %.3f; pendulum energy %.3f\n",
                to_string(k), s.creep, s.depth, bounce_energy(k), pendulum_energy(k));
  }
  if (stacking) compare_stacking(kinds);
  return 0;
}
