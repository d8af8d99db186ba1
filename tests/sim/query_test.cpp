// Scene queries against every shape kind, with answers worked out by hand in the comments.
#include <keel/sim/query.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <cmath>

#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;
using test::capsule_body;
using test::sphere_body;

constexpr float kTol = 1.0e-3f;

void expect_vec(const Vec3& got, const Vec3& want, float tol = kTol) {
  EXPECT_NEAR(got.x, want.x, tol);
  EXPECT_NEAR(got.y, want.y, tol);
  EXPECT_NEAR(got.z, want.z, tol);
}

// Box 1 (half 1) at the origin, sphere 2 (r 1) at x = 5, upright capsule 3 (r 0.5, half
// height 1) at x = 10, kinematic sphere 4 (r 0.5) at (0, 5, 0), trigger box 5 (half 0.5)
// at z = 5, and box 6 (half 1) at z = -10 turned 45 degrees about Y.
World make_world() {
  World w;
  EXPECT_TRUE(w.add_body(box_body(1, MotionType::Static, Vec3(0, 0, 0), Vec3(1.0f))));
  EXPECT_TRUE(w.add_body(sphere_body(2, MotionType::Static, Vec3(5, 0, 0), 1.0f)));
  EXPECT_TRUE(w.add_body(capsule_body(3, MotionType::Static, Vec3(10, 0, 0), 0.5f, 1.0f)));
  EXPECT_TRUE(w.add_body(sphere_body(4, MotionType::Kinematic, Vec3(0, 5, 0), 0.5f)));
  BodyDef trigger = box_body(5, MotionType::Static, Vec3(0, 0, 5), Vec3(0.5f));
  trigger.colliders[0].is_trigger = true;
  EXPECT_TRUE(w.add_body(trigger));
  const float s = 0.38268343f, c = 0.92387953f;  // sin, cos of 22.5 degrees
  EXPECT_TRUE(w.add_body(box_body(6, MotionType::Static, Vec3(0, 0, -10), Vec3(1.0f), make_quat(0, s, 0, c))));
  return w;
}

TEST(Raycast, ClosestHitOnABoxFace) {
  World w = make_world();
  // From x = -5 along +x the box's face at x = -1 is 4 m away.
  auto hit = raycast(w, Vec3(-5, 0, 0), Vec3(1, 0, 0), 100.0f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 1u);
  EXPECT_NEAR(hit->distance, 4.0f, kTol);
  expect_vec(hit->point, Vec3(-1, 0, 0));
  expect_vec(hit->normal, Vec3(-1, 0, 0));
}

TEST(Raycast, AllHitsInOrder) {
  World w = make_world();
  // Box face x = -1 (4 m), sphere front x = 4 (9 m), capsule side x = 9.5 (14.5 m).
  auto hits = raycast_all(w, Vec3(-5, 0, 0), Vec3(2, 0, 0), 20.0f);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].body_id, 1u);
  EXPECT_EQ(hits[1].body_id, 2u);
  EXPECT_EQ(hits[2].body_id, 3u);
  EXPECT_NEAR(hits[0].distance, 4.0f, kTol);
  EXPECT_NEAR(hits[1].distance, 9.0f, kTol);
  EXPECT_NEAR(hits[2].distance, 14.5f, kTol);
  for (const QueryHit& h : hits) expect_vec(h.normal, Vec3(-1, 0, 0));
  // Shorter than the capsule: two hits.
  EXPECT_EQ(raycast_all(w, Vec3(-5, 0, 0), Vec3(1, 0, 0), 14.0f).size(), 2u);
}

TEST(Raycast, CapsuleCapAndSphereAtAnAngle) {
  World w = make_world();
  // Straight down onto the capsule: its top cap is at y = 1 + 0.5.
  auto cap = raycast(w, Vec3(10, 5, 0), Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(cap);
  EXPECT_EQ(cap->body_id, 3u);
  EXPECT_NEAR(cap->distance, 3.5f, kTol);
  expect_vec(cap->normal, Vec3(0, 1, 0));
  // Along +z at height 0.5 past the sphere's centre: it enters at z = -sqrt(1 - 0.25).
  auto sph = raycast(w, Vec3(5, 0.5f, -5), Vec3(0, 0, 1), 10.0f);
  ASSERT_TRUE(sph);
  EXPECT_EQ(sph->body_id, 2u);
  EXPECT_NEAR(sph->distance, 5.0f - 0.8660254f, kTol);
  expect_vec(sph->normal, Vec3(0, 0.5f, -0.8660254f));
}

TEST(Raycast, TurnedBox) {
  World w = make_world();
  // Box 6's local +z face has normal (sin 45, 0, cos 45) and lies 1 m from its centre:
  // 0.7071 (0.5) + 0.7071 (z + 10) = 1  ->  z = -9.0858, 4.0858 m from z = -5.
  auto hit = raycast(w, Vec3(0.5f, 0, -5), Vec3(0, 0, -1), 10.0f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 6u);
  EXPECT_NEAR(hit->distance, 4.0858f, kTol);
  expect_vec(hit->normal, Vec3(0.7071068f, 0, 0.7071068f));
}

TEST(Raycast, StartingInsideHitsAtZero) {
  World w = make_world();
  auto hit = raycast(w, Vec3(0.2f, 0, 0), Vec3(0, 1, 0), 10.0f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 1u);
  EXPECT_EQ(hit->distance, 0.0f);
  expect_vec(hit->normal, Vec3(0, -1, 0));
}

TEST(Raycast, Filters) {
  World w = make_world();
  // Excluding the box, the first hit along +x is the sphere.
  QueryFilter no_box;
  no_box.exclude = w.find_body(1);
  auto hit = raycast(w, Vec3(-5, 0, 0), Vec3(1, 0, 0), 100.0f, no_box);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 2u);
  // A mask with no layer in common hits nothing.
  QueryFilter none;
  none.mask = 2;
  EXPECT_FALSE(raycast(w, Vec3(-5, 0, 0), Vec3(1, 0, 0), 100.0f, none));
  // From z = 10 along -z: the trigger's face (z = 5.5) only when triggers are asked for,
  // else the box's face at z = 1.
  auto solid = raycast(w, Vec3(0, 0, 10), Vec3(0, 0, -1), 100.0f);
  ASSERT_TRUE(solid);
  EXPECT_EQ(solid->body_id, 1u);
  EXPECT_NEAR(solid->distance, 9.0f, kTol);
  QueryFilter triggers;
  triggers.hit_triggers = true;
  auto trig = raycast(w, Vec3(0, 0, 10), Vec3(0, 0, -1), 100.0f, triggers);
  ASSERT_TRUE(trig);
  EXPECT_EQ(trig->body_id, 5u);
  EXPECT_NEAR(trig->distance, 4.5f, kTol);
  // Too short a ray misses.
  EXPECT_FALSE(raycast(w, Vec3(-5, 0, 0), Vec3(1, 0, 0), 3.9f));
}

TEST(Raycast, TiesGoToTheLowerId) {
  World w;
  // Two identical boxes, the higher id added first (so it has the lower slot).
  ASSERT_TRUE(w.add_body(box_body(21, MotionType::Static, Vec3(0, 0, 0), Vec3(1.0f))));
  ASSERT_TRUE(w.add_body(box_body(20, MotionType::Static, Vec3(0, 0, 0), Vec3(1.0f))));
  auto hit = raycast(w, Vec3(0, 5, 0), Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->body_id, 20u);
  auto all = raycast_all(w, Vec3(0, 5, 0), Vec3(0, -1, 0), 10.0f);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].body_id, 20u);
  EXPECT_EQ(all[1].body_id, 21u);
}

TEST(ShapeCast, SphereBoxAndCapsule) {
  World w = make_world();
  // A 0.5 m sphere along +x from x = -5 touches the box face x = -1 with its centre at -1.5.
  auto s = shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(-5, 0, 0)}, Vec3(1, 0, 0), 20.0f);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->body_id, 1u);
  EXPECT_NEAR(s->distance, 3.5f, kTol);
  expect_vec(s->point, Vec3(-1, 0, 0));
  expect_vec(s->normal, Vec3(-1, 0, 0));
  // A 0.5 m box cast down from y = 3 lands on the box's top (y = 1) with its centre at 1.5.
  auto b = shape_cast(w, QueryShape::box(Vec3(0.5f)), Transform{Vec3(0, 3, 0)}, Vec3(0, -1, 0), 2.0f);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body_id, 1u);
  EXPECT_NEAR(b->distance, 1.5f, kTol);
  EXPECT_NEAR(b->point.y, 1.0f, kTol);
  expect_vec(b->normal, Vec3(0, 1, 0));
  // An upright capsule (r 0.25, half height 0.5) along +x meets the sphere (r 1 at x = 5)
  // with its segment's middle: centre at x = 5 - 1.25, 1.25 m from x = 2.5.
  auto c = shape_cast(w, QueryShape::capsule(0.25f, 0.5f), Transform{Vec3(2.5f, 0, 0)}, Vec3(1, 0, 0), 5.0f);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->body_id, 2u);
  EXPECT_NEAR(c->distance, 1.25f, kTol);
  expect_vec(c->point, Vec3(4, 0, 0));
  expect_vec(c->normal, Vec3(-1, 0, 0));
}

TEST(ShapeCast, LyingCapsuleOntoCapsuleAndBoxOntoKinematicSphere) {
  World w = make_world();
  // A capsule turned to lie along x (r 0.25), cast down from y = 4 onto the upright
  // capsule's cap (top at y = 1.5): it stops with its centre at 1.75, 2.25 m down.
  const float h = 0.70710678f;
  Transform lying{Vec3(10, 4, 0), make_quat(0, 0, h, h)};
  auto c = shape_cast(w, QueryShape::capsule(0.25f, 0.5f), lying, Vec3(0, -1, 0), 5.0f);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->body_id, 3u);
  EXPECT_NEAR(c->distance, 2.25f, kTol);
  expect_vec(c->normal, Vec3(0, 1, 0));
  // A box (half 0.25) cast up from y = 2 under the kinematic sphere (bottom at y = 4.5)
  // stops with its centre at 4.25: 2.25 m. The box's top face is hit by the sphere's bottom.
  auto b = shape_cast(w, QueryShape::box(Vec3(0.25f)), Transform{Vec3(0, 2, 0)}, Vec3(0, 1, 0), 5.0f);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body_id, 4u);
  EXPECT_NEAR(b->distance, 2.25f, kTol);
  expect_vec(b->normal, Vec3(0, -1, 0));
  expect_vec(b->point, Vec3(0, 4.5f, 0));
}

TEST(ShapeCast, BoxAgainstCapsuleSideAndMisses) {
  World w = make_world();
  // A box (half 0.5) along -x from x = 14 meets the capsule's side (x = 10.5): 3 m.
  auto b = shape_cast(w, QueryShape::box(Vec3(0.5f)), Transform{Vec3(14, 0, 0)}, Vec3(-1, 0, 0), 5.0f);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body_id, 3u);
  EXPECT_NEAR(b->distance, 3.0f, kTol);
  expect_vec(b->normal, Vec3(1, 0, 0));
  // Passing above everything.
  EXPECT_FALSE(shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(-5, 3, 0)}, Vec3(1, 0, 0), 20.0f));
  // Starting inside the box hits at 0; a shape touching the box's top and moving along it
  // (or away) does not.
  auto inside = shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 0, 0)}, Vec3(1, 0, 0), 5.0f);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->distance, 0.0f);
  EXPECT_FALSE(shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 1.5f, 0)}, Vec3(1, 0, 0), 0.5f));
  // Sunk 1 cm into the box's top, a sphere cast along it finds nothing; cast down, the
  // box at distance 0 with the top's normal.
  EXPECT_FALSE(shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 1.49f, 0)}, Vec3(1, 0, 0), 0.5f));
  auto down = shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 1.49f, 0)}, Vec3(0, -1, 0), 0.5f);
  ASSERT_TRUE(down);
  EXPECT_EQ(down->distance, 0.0f);
  expect_vec(down->normal, Vec3(0, 1, 0));
}

TEST(Overlap, EveryShapeKind) {
  World w = make_world();
  auto ids = [](const std::vector<OverlapHit>& hits) {
    std::vector<uint32_t> out;
    for (const OverlapHit& h : hits) out.push_back(h.body_id);
    return out;
  };
  // A 0.5 m sphere 0.4 m from the box's face overlaps it; 0.6 m away it does not.
  EXPECT_EQ(ids(overlap(w, QueryShape::sphere(0.5f), Transform{Vec3(1.4f, 0, 0)})), std::vector<uint32_t>{1});
  EXPECT_TRUE(overlap(w, QueryShape::sphere(0.5f), Transform{Vec3(1.6f, 0, 0)}).empty());
  // A box (half 0.5) reaching to x = 4.1 overlaps the sphere (surface at x = 4); to 3.9 not.
  EXPECT_EQ(ids(overlap(w, QueryShape::box(Vec3(0.5f)), Transform{Vec3(3.6f, 0, 0)})), std::vector<uint32_t>{2});
  EXPECT_TRUE(overlap(w, QueryShape::box(Vec3(0.5f)), Transform{Vec3(3.4f, 0, 0)}).empty());
  // A capsule lying along x over the upright capsule's cap: 0.2 m above it, no; 0.2 m into it, yes.
  const float h = 0.70710678f;
  const Quat lying = make_quat(0, 0, h, h);
  EXPECT_TRUE(overlap(w, QueryShape::capsule(0.25f, 1.0f), Transform{Vec3(10, 1.95f, 0), lying}).empty());
  EXPECT_EQ(ids(overlap(w, QueryShape::capsule(0.25f, 1.0f), Transform{Vec3(10, 1.55f, 0), lying})),
            std::vector<uint32_t>{3});
  // A 6 m sphere at x = 5 reaches the box, the sphere and the capsule (9.5 < 11); the
  // kinematic sphere is 7.07 - 0.5 = 6.57 m away and the trigger 6.36 m: neither.
  EXPECT_EQ(ids(overlap(w, QueryShape::sphere(6.0f), Transform{Vec3(5, 0, 0)})), (std::vector<uint32_t>{1, 2, 3}));
  QueryFilter with_triggers;
  with_triggers.hit_triggers = true;
  EXPECT_EQ(ids(overlap(w, QueryShape::sphere(1.0f), Transform{Vec3(0, 0, 4)}, with_triggers)),
            (std::vector<uint32_t>{5}));
  EXPECT_TRUE(overlap(w, QueryShape::sphere(1.0f), Transform{Vec3(0, 0, 4)}).empty());
}

TEST(Query, UnusableInputFindsNothing) {
  World w = make_world();
  const float nan = std::nanf("");
  EXPECT_FALSE(raycast(w, Vec3(nan, 0, 0), Vec3(1, 0, 0), 10.0f));
  EXPECT_FALSE(raycast(w, Vec3(-5, 0, 0), Vec3(0.0f), 10.0f));
  EXPECT_TRUE(raycast_all(w, Vec3(-5, 0, 0), Vec3(1, 0, 0), nan).empty());
  EXPECT_FALSE(shape_cast(w, QueryShape::sphere(0.0f), Transform{Vec3(-5, 0, 0)}, Vec3(1, 0, 0), 10.0f));
  EXPECT_FALSE(shape_cast(w, QueryShape::box(Vec3(1.0f)), Transform{Vec3(-5, 0, 0), make_quat(0, 0, 0, 0)},
                          Vec3(1, 0, 0), 10.0f));
  EXPECT_TRUE(overlap(w, QueryShape::capsule(0.5f, -1.0f), Transform{Vec3(0.0f)}).empty());
}

TEST(Query, FindsABodyThatOutranItsBroadphaseBound) {
  // A sphere moving 0.5 m per tick leaves its fat bound (0.1 m margin) during the step:
  // a query after the step must still find it where it is.
  WorldSettings settings;
  settings.gravity = Vec3(0.0f);
  World w(settings);
  BodyDef ball = sphere_body(1, MotionType::Dynamic, Vec3(0, 0, 0), 0.25f);
  ball.linear_velocity = Vec3(30, 0, 0);
  ASSERT_TRUE(w.add_body(ball));
  w.step();
  const float x = w.body_state(w.find_body(1)).position.x;
  EXPECT_NEAR(x, 0.5f, 1.0e-4f);
  auto hit = raycast(w, Vec3(x, 5, 0), Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(hit);
  EXPECT_NEAR(hit->distance, 4.75f, kTol);
  EXPECT_EQ(overlap(w, QueryShape::sphere(0.1f), Transform{Vec3(x, 0, 0)}).size(), 1u);
}

}  // namespace
}  // namespace keel::sim
