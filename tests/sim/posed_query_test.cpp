// Queries against past poses (raycast_posed and its siblings): a movable body listed at its
// present pose answers as the plain query does, one listed elsewhere is found there and
// not where it is, one not listed is left out, and static bodies are always where they are.
#include <keel/sim/query.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

// A static floor box (id 1) and a grid of 5 x 5 dynamic spheres and kinematic boxes
// (ids 10..34) above it, all at rest (no gravity).
World grid_world() {
  World w;
  EXPECT_TRUE(w.add_body(box_body(1, MotionType::Static, Vec3(0, -1, 0), Vec3(20.0f, 0.5f, 20.0f))));
  uint32_t id = 10;
  for (int i = 0; i < 5; ++i) {
    for (int k = 0; k < 5; ++k) {
      const Vec3 at(float(i) * 2.0f - 4.0f, 1.0f, float(k) * 2.0f - 4.0f);
      if ((i + k) % 2 == 0) EXPECT_TRUE(w.add_body(sphere_body(id++, MotionType::Dynamic, at, 0.5f)));
      else EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Kinematic, at, Vec3(0.4f))));
    }
  }
  return w;
}

std::vector<PosedBody> present_poses(const World& w) {
  std::vector<PosedBody> out;
  for (BodyId id : w.bodies()) {
    const BodyState b = w.body_state(id);
    if (b.motion != MotionType::Static) out.push_back({b.id, b.position, b.rotation});
  }
  return out;
}

TEST(PosedQuery, BodiesAtTheirPresentPosesAnswerAsThePlainQueries) {
  World w = grid_world();
  const std::vector<PosedBody> posed = present_poses(w);
  ASSERT_EQ(posed.size(), 25u);
  int hits = 0;
  for (int a = 0; a < 40; ++a) {
    const Vec3 origin(-6.0f + 0.3f * float(a), 1.2f - 0.05f * float(a % 7), -8.0f);
    const Vec3 dir(0.05f * float(a % 5) - 0.1f, -0.02f * float(a % 3), 1.0f);
    const auto plain = raycast(w, origin, dir, 30.0f);
    const auto past = raycast_posed(w, posed, origin, dir, 30.0f);
    ASSERT_EQ(plain.has_value(), past.has_value()) << a;
    if (!plain) continue;
    ++hits;
    EXPECT_EQ(past->body_id, plain->body_id) << a;
    EXPECT_EQ(past->distance, plain->distance) << a;
    const auto plain_cast = shape_cast(w, QueryShape::sphere(0.3f), Transform{origin, Quat(1, 0, 0, 0)}, dir, 30.0f);
    const auto past_cast =
        shape_cast_posed(w, posed, QueryShape::sphere(0.3f), Transform{origin, Quat(1, 0, 0, 0)}, dir, 30.0f);
    ASSERT_TRUE(plain_cast && past_cast) << a;
    EXPECT_EQ(past_cast->body_id, plain_cast->body_id) << a;
    EXPECT_EQ(past_cast->distance, plain_cast->distance) << a;
  }
  EXPECT_GT(hits, 20);
  const Transform middle{Vec3(0.0f, 1.0f, 0.0f), Quat(1, 0, 0, 0)};
  const auto plain_overlap = overlap(w, QueryShape::box(Vec3(2.5f)), middle);
  const auto past_overlap = overlap_posed(w, posed, QueryShape::box(Vec3(2.5f)), middle);
  ASSERT_EQ(plain_overlap.size(), past_overlap.size());
  for (size_t i = 0; i < plain_overlap.size(); ++i) EXPECT_EQ(plain_overlap[i].body_id, past_overlap[i].body_id);
}

TEST(PosedQuery, ABodyIsFoundWhereItIsListedAndUnlistedOnesAreLeftOut) {
  World w = grid_world();
  std::vector<PosedBody> posed = present_poses(w);
  // Body 10 (a sphere at (-4, 1, -4)) "was" at (0, 1, -8): a ray down +x at z = -8 hits
  // it there (its surface at x = -0.5), though nothing is there now.
  const Vec3 origin(-10.0f, 1.0f, -8.0f), dir(1.0f, 0.0f, 0.0f);
  EXPECT_FALSE(raycast(w, origin, dir, 20.0f));
  for (PosedBody& p : posed) {
    if (p.body_id == 10) p.position = Vec3(0.0f, 1.0f, -8.0f);
  }
  auto hit = raycast_posed(w, posed, origin, dir, 20.0f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 10u);
  EXPECT_NEAR(hit->distance, 9.5f, 1e-3f);
  // Where it is now, the posed query does not find it: a ray at z = -4 meets body 10's
  // neighbour at x = -2 (id 15) instead... unless that one is unlisted too.
  const Vec3 row(-10.0f, 1.0f, -4.0f);
  auto now = raycast(w, row, dir, 20.0f);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->body_id, 10u);
  auto then = raycast_posed(w, posed, row, dir, 20.0f);
  ASSERT_TRUE(then);
  EXPECT_EQ(then->body_id, 15u);
  std::erase_if(posed, [](const PosedBody& p) { return p.body_id == 15u; });
  then = raycast_posed(w, posed, row, dir, 20.0f);
  ASSERT_TRUE(then);
  EXPECT_EQ(then->body_id, 20u);  // the next along the row, at x = 0
  // The static floor is found with nothing listed at all.
  auto floor = raycast_posed(w, {}, Vec3(0.0f, 5.0f, 0.0f), Vec3(0.0f, -1.0f, 0.0f), 20.0f);
  ASSERT_TRUE(floor);
  EXPECT_EQ(floor->body_id, 1u);
  // A non-finite pose finds nothing rather than feeding the tests.
  posed[0].position.x = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(raycast_posed(w, posed, origin, dir, 20.0f));
}

}  // namespace
}  // namespace keel::sim
