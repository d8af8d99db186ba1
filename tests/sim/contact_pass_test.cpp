// The contact pass leaves a pair without points unread when last tick's touching list
// says it has none. A restored world has no such list and reads every contact instead, so
// stepping a world restored from each tick's state and the world itself must agree bit for
// bit on every tick, through everything that changes which contacts have points: a fall,
// neighbours that never touch, islands falling asleep (their contacts refreshed outside
// the pass), an API push waking one, a body removed and a joint added.
#include "test_bodies.h"

#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

// Three short columns of boxes a little apart (so their fat bounds overlap but the boxes
// never touch), falling onto the ground, and a ball on its own.
World staggered_columns() {
  World w;
  EXPECT_TRUE(w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(20, 0.5f, 20))));
  uint32_t id = 2;
  for (int c = 0; c < 3; ++c) {
    for (int k = 0; k < 3; ++k) {
      const Vec3 at(1.1f * float(c), 0.6f + 1.05f * float(k), 0.0f);
      EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, at, Vec3(0.5f))));
    }
  }
  EXPECT_TRUE(w.add_body(sphere_body(id++, MotionType::Dynamic, Vec3(-3, 0.5f, 0), 0.4f)));
  return w;
}

TEST(ContactPass, EveryTickRestoredStepsLikeTheWorldItself) {
  World w = staggered_columns();
  bool slept = false;
  for (int t = 1; t <= 240; ++t) {
    // Edits between steps, each on a tick of its own.
    if (t == 120) w.set_linear_velocity(w.find_body(5), Vec3(0.0f, 0.0f, 0.5f));  // wakes its column
    if (t == 160) {
      ASSERT_TRUE(w.remove_body(w.find_body(8)));  // the third column's base
    }
    if (t == 200) {
      JointDef j;
      j.kind = JointKind::Ball;
      j.body_a = 3;
      j.body_b = 6;
      j.frame_a = Transform{Vec3(0.55f, 0.0f, 0.0f), identity_quat()};
      j.frame_b = Transform{Vec3(-0.55f, 0.0f, 0.0f), identity_quat()};
      ASSERT_TRUE(add_joint(w, j));  // drops the contacts between the two
    }
    World restored;
    ASSERT_TRUE(restored.restore_state(w.save_state())) << "tick " << t;
    w.step();
    restored.step();
    ASSERT_EQ(restored.hash(), w.hash()) << "tick " << t;
    slept = slept || w.body_state(w.find_body(2)).sleeping;
  }
  EXPECT_TRUE(slept) << "the first column fell asleep at some point";
}

}  // namespace
}  // namespace keel::sim
