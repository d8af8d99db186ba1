// Tall columns and pyramids that must hold (docs/sim.md, "Stacking"): built in code, with
// the default solver settings, stepped 10 s at 60 Hz, each checked against a bound on how
// far its boxes move from where they were placed. Boxes are placed touching (or, for the
// gapped pyramid, 5 cm apart within a row), so an exact solver would leave every one where
// it is: what moves is the solver's softness, its relax and its friction.
#include "test_bodies.h"

#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace keel::sim {
namespace {

constexpr int kTenSeconds = 600;

struct Stack {
  World world;
  std::vector<BodyId> boxes;
  std::vector<Vec3> start;

  Stack() { world.add_body(test::box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(100, 0.5f, 100))); }

  void add_box(Vec3 position, float half, bool can_sleep) {
    BodyDef b = test::box_body(uint32_t(boxes.size() + 2), MotionType::Dynamic, position, Vec3(half));
    b.can_sleep = can_sleep;
    BodyId id = *world.add_body(b);
    boxes.push_back(id);
    start.push_back(position);
  }

  // The farthest any box now is from where it was placed.
  float max_drift() const {
    float worst = 0.0f;
    for (size_t i = 0; i < boxes.size(); ++i) {
      worst = std::max(worst, glm::length(world.body_state(boxes[i]).position - start[i]));
    }
    return worst;
  }

  float top_drift() const { return glm::length(world.body_state(boxes.back()).position - start.back()); }

  bool all_asleep() const {
    return std::all_of(boxes.begin(), boxes.end(), [&](BodyId id) { return world.body_state(id).sleeping; });
  }

  void step(int ticks) {
    for (int i = 0; i < ticks; ++i) world.step();
  }
};

// `count` boxes of edge `edge`, one on another, the lowest on the ground.
void build_column(Stack& s, int count, float edge) {
  for (int i = 0; i < count; ++i) s.add_box(Vec3(0, edge * (float(i) + 0.5f), 0), 0.5f * edge, false);
}

// A pyramid of 1 m boxes: `rows` on the ground, one fewer on each row above, each row
// centred on the one below; `gap` between neighbours of a row.
void build_pyramid(Stack& s, int rows, float gap, bool can_sleep) {
  const float pitch = 1.0f + gap;
  for (int row = 0; row < rows; ++row) {
    const int n = rows - row;
    for (int i = 0; i < n; ++i) {
      const float x = (float(i) - 0.5f * float(n - 1)) * pitch;
      s.add_box(Vec3(x, float(row) + 0.5f, 0), 0.5f, can_sleep);
    }
  }
}

// Twenty half-metre boxes: a column ten metres tall on a footprint of half a metre. The
// slightest lean the solver leaves in one contact is carried up by nineteen more.
TEST(Stacking, ColumnOfTwentyHalfMetreBoxesStands) {
  Stack s;
  build_column(s, 20, 0.5f);
  s.step(kTenSeconds);
  std::printf("column 20 x 0.5 m: top box moved %.4f m, farthest box %.4f m\n", s.top_drift(), s.max_drift());
  EXPECT_LT(s.top_drift(), 0.02f);
  // Standing, not fallen: the top box is still about 9.75 m up.
  EXPECT_GT(s.world.body_state(s.boxes.back()).position.y, 9.7f);
}

// Twenty one-metre boxes: the bottom contact carries nineteen tonnes against one box's
// mass, where a soft contact sinks most.
TEST(Stacking, ColumnOfTwentyOneMetreBoxesStands) {
  Stack s;
  build_column(s, 20, 1.0f);
  s.step(kTenSeconds);
  std::printf("column 20 x 1 m: top box moved %.4f m, farthest box %.4f m\n", s.top_drift(), s.max_drift());
  EXPECT_LT(s.top_drift(), 0.02f);
}

TEST(Stacking, TwentyRowPyramidHolds) {
  Stack s;
  build_pyramid(s, 20, 0.0f, false);
  s.step(kTenSeconds);
  std::printf("pyramid 20 rows: farthest box moved %.4f m\n", s.max_drift());
  EXPECT_LT(s.max_drift(), 0.015f);
}

// 465 boxes: the bottom row carries up to 30 boxes' weight through each contact.
TEST(Stacking, ThirtyRowPyramidCreepsLessThanTwoAndAHalfCentimetres) {
  Stack s;
  build_pyramid(s, 30, 0.0f, false);
  s.step(kTenSeconds);
  std::printf("pyramid 30 rows: farthest box moved %.4f m\n", s.max_drift());
  EXPECT_LT(s.max_drift(), 0.025f);
}

// With 5 cm between neighbours each box above rests on two boxes that do not touch each
// other, so nothing holds the row below together but friction on the ground: it must
// grip, and the pyramid settle and fall asleep.
TEST(Stacking, PyramidWithGapsSettlesAndSleepsWithinFourSeconds) {
  Stack s;
  build_pyramid(s, 20, 0.05f, true);
  int asleep_at = -1;
  for (int tick = 1; tick <= 240 && asleep_at < 0; ++tick) {
    s.world.step();
    if (s.all_asleep()) asleep_at = tick;
  }
  std::printf("gapped pyramid 20 rows: asleep at tick %d, farthest box moved %.4f m\n", asleep_at, s.max_drift());
  EXPECT_GT(asleep_at, 30);  // it rests for 0.5 s before it sleeps: not asleep from the start
  EXPECT_GT(asleep_at, 0) << "not asleep within 4 s";
  EXPECT_LT(s.max_drift(), 0.05f);
}

}  // namespace
}  // namespace keel::sim
