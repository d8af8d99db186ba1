// Islands and sleeping: a resting island sleeps whole after 0.5 s and only while held,
// wakes whole on the tick something could push it, and never sleeps leaning.
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

#include <cmath>

namespace keel::sim {
namespace {

using test::box_body;

struct Tower {
  World world;
  BodyId floor;
  std::vector<BodyId> boxes;
};

void build_tower(Tower& t, int height) {
  t.floor = *t.world.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20)));
  for (int i = 0; i < height; ++i) {
    t.boxes.push_back(*t.world.add_body(box_body(10 + i, MotionType::Dynamic, Vec3(0, 0.5f + i, 0), Vec3(0.5f))));
  }
}

bool all_asleep(const World& w, const std::vector<BodyId>& ids) {
  for (BodyId id : ids) {
    if (!w.body_state(id).sleeping) return false;
  }
  return true;
}

TEST(Sleep, RestingTowerSleepsWholeAfterHalfASecond) {
  Tower t;
  build_tower(t, 5);
  int first_asleep = -1;
  for (int i = 1; i <= 120 && first_asleep < 0; ++i) {
    t.world.step();
    if (t.world.body_state(t.boxes[0]).sleeping) first_asleep = i;
  }
  // At rest from the first ticks: asleep after 0.5 s (30 ticks) plus settling.
  ASSERT_GT(first_asleep, 29);
  ASSERT_LT(first_asleep, 90);
  EXPECT_TRUE(all_asleep(t.world, t.boxes));  // the whole island on the same tick
  uint64_t before = t.world.hash();
  std::vector<uint8_t> state = t.world.save_state();
  for (int i = 0; i < 60; ++i) t.world.step();
  EXPECT_TRUE(all_asleep(t.world, t.boxes));
  for (BodyId id : t.boxes) EXPECT_EQ(t.world.body_state(id).linear_velocity, Vec3(0.0f));
  EXPECT_NE(t.world.hash(), before);  // the tick counter moved, nothing else should
  World copy;
  ASSERT_TRUE(copy.restore_state(state));
  for (int i = 0; i < 60; ++i) copy.step();
  EXPECT_EQ(copy.hash(), t.world.hash());
}

TEST(Sleep, BallDroppedOnSleepingTowerWakesItOnTheImpactTick) {
  Tower t;
  build_tower(t, 4);
  for (int i = 0; i < 120; ++i) t.world.step();
  ASSERT_TRUE(all_asleep(t.world, t.boxes));
  BodyDef ball;
  ball.id = 99;
  ball.position = Vec3(0.2f, 5.0f, 0);
  ColliderDef s;
  s.shape = ShapeType::Sphere;
  s.radius = 0.3f;
  ball.colliders.push_back(s);
  BodyId b = *t.world.add_body(ball);
  bool woke_together = false;
  for (int i = 0; i < 60; ++i) {
    t.world.step();
    bool top = !t.world.body_state(t.boxes.back()).sleeping;
    bool bottom = !t.world.body_state(t.boxes.front()).sleeping;
    if (top || bottom) {
      woke_together = top && bottom;
      break;
    }
  }
  EXPECT_TRUE(woke_together);
  EXPECT_FALSE(t.world.body_state(b).sleeping);
}

TEST(Sleep, RemovingTheFloorMakesTheStackFallOnThatTick) {
  Tower t;
  build_tower(t, 3);
  for (int i = 0; i < 120; ++i) t.world.step();
  ASSERT_TRUE(all_asleep(t.world, t.boxes));
  std::vector<float> y0;
  for (BodyId id : t.boxes) y0.push_back(t.world.body_state(id).position.y);
  t.world.remove_body(t.floor);
  t.world.step();
  // One tick of free fall with 6 substeps drops a body g h^2 n(n+1)/2 = 1.59 mm (n = 6,
  // h = 1/360 s). Every box falls on this very tick; as the stack's contact springs let
  // go the lower boxes drop a little more than that and the upper ones a little less.
  const float h = 1.0f / 360.0f, drop = 9.81f * h * h * 21.0f;
  for (size_t i = 0; i < t.boxes.size(); ++i) {
    EXPECT_FALSE(t.world.body_state(t.boxes[i]).sleeping);
    EXPECT_LT(t.world.body_state(t.boxes[i]).position.y, y0[i] - 0.8f * drop) << i;
  }
}

TEST(Sleep, ApiVelocityWakesTheIsland) {
  Tower t;
  build_tower(t, 2);
  for (int i = 0; i < 120; ++i) t.world.step();
  ASSERT_TRUE(all_asleep(t.world, t.boxes));
  t.world.set_linear_velocity(t.boxes[0], Vec3(1, 0, 0));
  EXPECT_FALSE(t.world.body_state(t.boxes[1]).sleeping);
}

TEST(Sleep, CanSleepFalseNeverSleeps) {
  World w;
  w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20)));
  BodyDef d = box_body(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), Vec3(0.5f));
  d.can_sleep = false;
  BodyId id = *w.add_body(d);
  for (int i = 0; i < 180; ++i) w.step();
  EXPECT_FALSE(w.body_state(id).sleeping);
}

// An island held by nothing never sleeps: a box floating with gravity off.
TEST(Sleep, UnheldIslandNeverSleeps) {
  WorldSettings s;
  s.gravity = Vec3(0.0f);
  World w(s);
  BodyId id = *w.add_body(box_body(2, MotionType::Dynamic, Vec3(0, 3, 0), Vec3(0.5f)));
  for (int i = 0; i < 180; ++i) w.step();
  EXPECT_FALSE(w.body_state(id).sleeping);
}

// A tall box set just past balance on a ledge corner tips over slowly; while it leans
// (between 5 and 80 degrees) it must never be asleep.
TEST(Sleep, TippingBoxDoesNotSleepLeaning) {
  World w;
  w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20)));
  // 0.4 x 2 x 0.4 box tilted 12 degrees about Z: its centre is past the pivot edge.
  const float a = 12.0f * 3.14159265f / 180.0f;
  Quat q = make_quat(0, 0, std::sin(a / 2), std::cos(a / 2));
  Vec3 half(0.2f, 1.0f, 0.2f);
  Vec3 corner = q * Vec3(half.x, -half.y, 0);  // lower right corner rests on the floor
  BodyId id = *w.add_body(box_body(2, MotionType::Dynamic, Vec3(0, 0, 0) - corner, half, q));
  bool slept_leaning = false;
  float max_lean = 0.0f;
  for (int i = 0; i < 300; ++i) {
    w.step();
    BodyState s = w.body_state(id);
    Vec3 up = s.rotation * Vec3(0, 1, 0);
    float lean = std::acos(std::min(1.0f, std::abs(up.y))) * 180.0f / 3.14159265f;
    max_lean = std::max(max_lean, lean);
    if (s.sleeping && lean > 5.0f && lean < 80.0f) slept_leaning = true;
  }
  EXPECT_GT(max_lean, 80.0f);  // it did fall over
  EXPECT_FALSE(slept_leaning);
}

// A world whose every body sleeps steps without looking at its bodies or contacts until
// the API edits it. Such a step must be indistinguishable from a full one: each tick it
// is checked against a world restored from the same state (a restored world always takes
// the full step), by hash, events (contacts and a trigger) and per-body outputs; then an
// impulse wakes the tower in both on the same tick.
void expect_same_outputs(const World& a, const World& b, const std::vector<BodyId>& ids, int tick) {
  ASSERT_EQ(a.hash(), b.hash()) << "tick " << tick;
  ASSERT_EQ(a.contact_events().size(), b.contact_events().size()) << "tick " << tick;
  for (size_t i = 0; i < a.contact_events().size(); ++i) {
    const ContactEvent& x = a.contact_events()[i];
    const ContactEvent& y = b.contact_events()[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.body_a, y.body_a);
    EXPECT_EQ(x.body_b, y.body_b);
    EXPECT_EQ(x.point, y.point);
    EXPECT_EQ(x.normal, y.normal);
    EXPECT_EQ(x.approach_speed, y.approach_speed);
  }
  ASSERT_EQ(a.trigger_events().size(), b.trigger_events().size()) << "tick " << tick;
  for (size_t i = 0; i < a.trigger_events().size(); ++i) {
    EXPECT_EQ(a.trigger_events()[i].kind, b.trigger_events()[i].kind);
    EXPECT_EQ(a.trigger_events()[i].trigger, b.trigger_events()[i].trigger);
    EXPECT_EQ(a.trigger_events()[i].other, b.trigger_events()[i].other);
  }
  for (BodyId id : ids) {
    const BodyState x = a.body_state(id), y = b.body_state(id);
    EXPECT_EQ(x.sleeping, y.sleeping);
    EXPECT_EQ(x.supported, y.supported);
    EXPECT_EQ(x.support_normal, y.support_normal);
    EXPECT_EQ(x.block_normal, y.block_normal);
  }
}

TEST(Sleep, AWorldEntirelyAsleepStepsLikeAFullStepUntilEdited) {
  Tower t;
  build_tower(t, 3);
  BodyDef sensor = box_body(2, MotionType::Static, Vec3(0, 2.5f, 0), Vec3(1.0f, 0.2f, 1.0f));
  sensor.colliders[0].is_trigger = true;  // around the top box
  ASSERT_TRUE(t.world.add_body(sensor));
  int ticks = 0;
  while (!all_asleep(t.world, t.boxes) && ticks < 300) {
    t.world.step();
    ++ticks;
  }
  ASSERT_TRUE(all_asleep(t.world, t.boxes));
  int dormant_steps = 0;
  for (int i = 0; i < 40; ++i) {
    World full;
    ASSERT_TRUE(full.restore_state(t.world.save_state()));
    if (i == 30) {
      // An edit (3 m/s on the 1000 kg top box): both worlds take the full step, and the
      // tower wakes in both.
      t.world.apply_impulse(t.boxes[2], Vec3(3000.0f, 0.0f, 0.0f), t.world.body_state(t.boxes[2]).position);
      full.apply_impulse(t.boxes[2], Vec3(3000.0f, 0.0f, 0.0f), full.body_state(t.boxes[2]).position);
    }
    t.world.step();
    full.step();
    const StepProfile& p = t.world.profile();
    if (p.ccd_ms == 0.0 && p.contacts_ms == 0.0 && p.solve_ms == 0.0) ++dormant_steps;
    expect_same_outputs(t.world, full, t.boxes, i);
    EXPECT_FALSE(t.world.contact_events().empty());
    EXPECT_FALSE(t.world.trigger_events().empty()) << "the trigger still senses the top box";
    if (i == 30) {
      EXPECT_FALSE(all_asleep(t.world, t.boxes)) << "woken on the tick of the impulse";
      EXPECT_GT(t.world.body_state(t.boxes[2]).linear_velocity.x, 0.5f);
    }
  }
  // The first step after the island fell asleep is a full one; so is the one after the
  // edit and every step while the tower moves.
  EXPECT_GE(dormant_steps, 25);
  EXPECT_LE(dormant_steps, 30);
}

}  // namespace
}  // namespace keel::sim
