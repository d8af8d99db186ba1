// Collision filtering: a pair collides only when each body's layer is in the other's
// mask; a disabled collider has no contacts and no events.
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;

// Drops a box on a floor with the given filters; returns its height after 1 s.
float height_after_drop(uint32_t floor_layer, uint32_t floor_mask, uint32_t box_layer, uint32_t box_mask,
                        bool box_enabled = true) {
  World w;
  BodyDef floor = box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10));
  floor.layer = floor_layer;
  floor.collides_with = floor_mask;
  w.add_body(floor);
  BodyDef box = box_body(2, MotionType::Dynamic, Vec3(0, 1.0f, 0), Vec3(0.5f));
  box.layer = box_layer;
  box.collides_with = box_mask;
  box.colliders[0].enabled = box_enabled;
  BodyId id = *w.add_body(box);
  for (int t = 0; t < 60; ++t) {
    w.step();
    if (!box_enabled) {
      EXPECT_TRUE(w.contact_events().empty());
    }
  }
  return w.body_state(id).position.y;
}

TEST(Filtering, LayersAndMasksMustAcceptBothWays) {
  EXPECT_NEAR(height_after_drop(1, ~0u, 2, ~0u), 0.5f, 0.01f);  // both accept: rests
  EXPECT_LT(height_after_drop(1, ~0u, 2, ~1u), -1.0f);          // box ignores layer 1: falls through
  EXPECT_LT(height_after_drop(1, ~2u, 2, ~0u), -1.0f);          // floor ignores layer 2: falls through
  EXPECT_NEAR(height_after_drop(4, 2, 2, 4), 0.5f, 0.01f);      // exact bits match
}

TEST(Filtering, DisabledColliderHasNoContacts) {
  EXPECT_LT(height_after_drop(1, ~0u, 1, ~0u, false), -1.0f);
}

}  // namespace
}  // namespace keel::sim
