// Physics checked against numbers computed by hand: free fall, restitution, friction
// on a floor and on ramps. Each expectation is derived in the comment above it.
#include <keel/sim/det_math.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace keel::sim {
namespace {

constexpr float kG = 9.81f;

ColliderDef sphere(float r, float friction = 0.6f, float restitution = 0.0f) {
  ColliderDef c;
  c.shape = ShapeType::Sphere;
  c.radius = r;
  c.friction = friction;
  c.restitution = restitution;
  return c;
}

ColliderDef box(Vec3 half, float friction = 0.6f) {
  ColliderDef c;
  c.shape = ShapeType::Box;
  c.half_extents = half;
  c.friction = friction;
  return c;
}

BodyDef body(uint32_t id, MotionType m, Vec3 pos, ColliderDef c, Quat rot = identity_quat()) {
  BodyDef b;
  b.id = id;
  b.motion = m;
  b.position = pos;
  b.rotation = rot;
  b.colliders.push_back(c);
  return b;
}

Quat about_z(float angle) { return make_quat(0.0f, 0.0f, std::sin(0.5f * angle), std::cos(0.5f * angle)); }

// With S substeps of h = 1/(60 S) s, semi-implicit Euler gives after n substeps
//   v_n = n h g           and   y_n = y_0 + h^2 g n (n + 1) / 2.
// After 1 s (n = 60 S, so n h = 1): v = -9.81 m/s and y = y_0 - g (n + 1) / (2 n);
// with the default 6 substeps, y_0 - 9.81 * 361 / 720 = y_0 - 4.918625 m.
TEST(WorldPhysics, FreeFallMatchesIntegrator) {
  World world;
  BodyId id = *world.add_body(body(1, MotionType::Dynamic, Vec3(0, 100, 0), sphere(0.5f)));
  for (int i = 0; i < 60; ++i) world.step();
  BodyState s = world.body_state(id);
  const float n = 60.0f * float(world.settings().substeps);
  EXPECT_NEAR(s.linear_velocity.y, -kG * 1.0f, 1e-4f);
  EXPECT_NEAR(s.position.y, 100.0f - kG * (n + 1.0f) / (2.0f * n), 1e-3f);
  EXPECT_NEAR(s.position.x, 0.0f, 1e-6f);
  // And the continuous answer g t^2 / 2 = 4.905 m is within the integrator's O(h) error.
  EXPECT_NEAR(100.0f - s.position.y, 0.5f * kG, kG / n);
}

// Equal masses, restitution 1, head on: momentum and energy conservation give an
// exchange of velocities. Sphere A at 2 m/s hits B at rest: A stops, B leaves at 2 m/s.
TEST(WorldPhysics, EqualSpheresExchangeVelocities) {
  WorldSettings settings;
  settings.gravity = Vec3(0.0f);
  World world(settings);
  BodyDef a = body(1, MotionType::Dynamic, Vec3(-2, 0, 0), sphere(0.5f, 0.0f, 1.0f));
  a.linear_velocity = Vec3(2, 0, 0);
  BodyId ia = *world.add_body(a);
  BodyId ib = *world.add_body(body(2, MotionType::Dynamic, Vec3(0, 0, 0), sphere(0.5f, 0.0f, 1.0f)));
  for (int i = 0; i < 90; ++i) world.step();
  EXPECT_NEAR(world.body_state(ia).linear_velocity.x, 0.0f, 0.04f);
  EXPECT_NEAR(world.body_state(ib).linear_velocity.x, 2.0f, 0.04f);
  EXPECT_GT(world.body_state(ib).position.x, world.body_state(ia).position.x + 1.0f);
}

// Restitution 0.5 against a static wall: the normal speed after impact is half the
// normal speed before (±2%); the tangential speed is untouched with zero friction.
TEST(WorldPhysics, SphereBouncesOffWallAtHalfSpeed) {
  WorldSettings settings;
  settings.gravity = Vec3(0.0f);
  World world(settings);
  ColliderDef wall = box(Vec3(0.5f, 5, 5), 0.0f);
  wall.restitution = 0.5f;
  world.add_body(body(1, MotionType::Static, Vec3(5.5f, 0, 0), wall));
  BodyDef ball = body(2, MotionType::Dynamic, Vec3(0, 0, 0), sphere(0.5f, 0.0f, 0.5f));
  ball.linear_velocity = Vec3(6, 0, 1);
  BodyId id = *world.add_body(ball);
  for (int i = 0; i < 120; ++i) world.step();
  Vec3 v = world.body_state(id).linear_velocity;
  EXPECT_NEAR(v.x, -3.0f, 0.06f);
  EXPECT_NEAR(v.z, 1.0f, 1e-3f);
}

// A 1 m box released with its bottom 1.5 m above a box resting on the floor arrives at
// sqrt(2 g 1.5) = 5.42 m/s, 9 cm per tick: more than the 2 cm speculative distance, so
// the contact must be made as far ahead as the box travels. It then lands on the tick it
// arrives, with restitution 0: it does not sink into the lower box, and neither box is
// thrown back up (which is what a box driven 7 cm into the other and pushed back out at
// up to 3 m/s does, or a lower box driven into the floor for a substep). The bounds
// (5 mm, 2 mm, 0.1 m/s) leave room for the contact springs' give and the settling of a
// stack solved one pass per substep, and are an order below the bounce they rule out.
TEST(WorldPhysics, BoxDroppedOnRestingBoxLandsWithoutBouncing) {
  World world;
  world.add_body(body(1, MotionType::Static, Vec3(0, -0.5f, 0), box(Vec3(100, 0.5f, 100))));
  BodyId lower = *world.add_body(body(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), box(Vec3(0.5f))));
  BodyId upper = *world.add_body(body(3, MotionType::Dynamic, Vec3(0, 3.0f, 0), box(Vec3(0.5f))));
  float deepest = 0.0f, lower_highest = 0.5f, fastest_up = 0.0f;
  for (int i = 0; i < 90; ++i) {
    world.step();
    BodyState a = world.body_state(lower), b = world.body_state(upper);
    deepest = std::max(deepest, (a.position.y + 0.5f) - (b.position.y - 0.5f));
    lower_highest = std::max(lower_highest, a.position.y);
    if (b.position.y < 1.6f) fastest_up = std::max(fastest_up, b.linear_velocity.y);
  }
  EXPECT_LT(deepest, 0.005f);
  EXPECT_LT(lower_highest, 0.5f + 0.002f);
  EXPECT_LT(fastest_up, 0.1f);
  EXPECT_NEAR(world.body_state(upper).position.y, 1.5f, 0.005f);
  EXPECT_LT(glm::length(world.body_state(upper).linear_velocity), 0.01f);
}

// A box sliding at 3 m/s with combined friction 0.5 decelerates at mu g = 4.905 m/s^2
// and stops after v / (mu g) = 0.6116 s, having slid v^2 / (2 mu g) = 0.9174 m.
TEST(WorldPhysics, SlidingBoxStopsAfterVOverMuG) {
  World world;
  world.add_body(body(1, MotionType::Static, Vec3(0, -0.5f, 0), box(Vec3(50, 0.5f, 50), 0.5f)));
  BodyDef b = body(2, MotionType::Dynamic, Vec3(0, 0.5f, 0), box(Vec3(0.5f), 0.5f));
  b.linear_velocity = Vec3(3, 0, 0);
  BodyId id = *world.add_body(b);
  const float dt = 1.0f / 60.0f;
  float prev_v = 3.0f, stop_time = -1.0f;
  for (int i = 1; i <= 120 && stop_time < 0.0f; ++i) {
    world.step();
    float v = world.body_state(id).linear_velocity.x;
    if (v < 1e-3f) {
      // Constant deceleration: interpolate the zero crossing within this tick.
      stop_time = (i - 1) * dt + dt * prev_v / (prev_v - v);
    }
    prev_v = v;
  }
  const float expected = 3.0f / (0.5f * kG);
  EXPECT_NEAR(stop_time, expected, 0.03f * expected);
  EXPECT_NEAR(world.body_state(id).position.x, 9.0f / (2.0f * 0.5f * kG), 0.03f * 0.9174f);
  EXPECT_NEAR(world.body_state(id).position.y, 0.5f, 0.01f);
}

struct Ramp {
  World world;
  BodyId box;
  Vec3 down_slope;  // unit vector along the ramp, pointing down
};

// A 30° ramp (a static box turned about Z) with a 1 m box resting on its surface.
void build_ramp(Ramp& r, float friction) {
  const float angle = 30.0f * 3.14159265f / 180.0f;
  Quat q = about_z(angle);
  r.world.add_body(body(1, MotionType::Static, Vec3(0), box(Vec3(10, 0.5f, 2), friction), q));
  Vec3 up = q * Vec3(0, 1, 0);
  Vec3 along = q * Vec3(1, 0, 0);  // points up the slope
  r.down_slope = -along;
  r.box = *r.world.add_body(body(2, MotionType::Dynamic, up * 1.0f, box(Vec3(0.5f), friction), q));
}

// tan 30° = 0.577 < 0.6: static friction holds the box.
TEST(WorldPhysics, BoxStaysOnRampWithFriction06) {
  Ramp r;
  build_ramp(r, 0.6f);
  Vec3 start = r.world.body_state(r.box).position;
  for (int i = 0; i < 180; ++i) r.world.step();
  Vec3 moved = r.world.body_state(r.box).position - start;
  EXPECT_LT(glm::length(moved), 0.01f);
}

// With mu = 0.3 the box slides with a = g (sin 30° - 0.3 cos 30°) = 2.3563 m/s^2.
// Measured as the change of speed along the slope between 0.5 s and 1.5 s.
TEST(WorldPhysics, BoxSlidesDownRampWithFriction03) {
  Ramp r;
  build_ramp(r, 0.3f);
  float v_half = 0.0f, v_late = 0.0f;
  for (int i = 1; i <= 90; ++i) {
    r.world.step();
    float v = glm::dot(r.world.body_state(r.box).linear_velocity, r.down_slope);
    if (i == 30) v_half = v;
    if (i == 90) v_late = v;
  }
  const float expected = kG * (0.5f - 0.3f * std::sqrt(3.0f) / 2.0f);
  EXPECT_NEAR((v_late - v_half) / 1.0f, expected, 0.03f * expected);
}

// A kinematic body moves by its velocity alone (no gravity) and is an immovable wall to
// what it hits: a 2 m/s kinematic paddle sweeps a resting box along at 2 m/s and keeps
// its own speed exactly; a static body never moves.
TEST(WorldPhysics, KinematicPushesAndIsNotPushed) {
  World world;
  BodyId ground = *world.add_body(body(1, MotionType::Static, Vec3(0, -0.5f, 0), box(Vec3(50, 0.5f, 50), 0.0f)));
  BodyDef paddle = body(2, MotionType::Kinematic, Vec3(-3, 1.0f, 0), box(Vec3(0.25f, 1.0f, 2.0f), 0.0f));
  paddle.linear_velocity = Vec3(2, 0, 0);
  BodyId ip = *world.add_body(paddle);
  BodyId ib = *world.add_body(body(3, MotionType::Dynamic, Vec3(0, 0.5f, 0), box(Vec3(0.5f), 0.0f)));
  for (int i = 0; i < 120; ++i) world.step();
  BodyState p = world.body_state(ip);
  EXPECT_NEAR(p.position.x, -3.0f + 2.0f * 2.0f, 1e-4f);
  EXPECT_NEAR(p.position.y, 1.0f, 1e-6f);
  EXPECT_EQ(p.linear_velocity, Vec3(2, 0, 0));
  BodyState b = world.body_state(ib);
  // Carried at the paddle's speed; the soft contact's overlap recovery may hand the box a
  // few per cent more at the first impact (restitution 0 allows no more than that).
  EXPECT_GE(b.linear_velocity.x, 1.98f);
  EXPECT_LE(b.linear_velocity.x, 2.10f);
  EXPECT_GT(b.position.x, p.position.x + 0.25f + 0.5f - 0.02f);  // in front of the paddle's face
  EXPECT_EQ(world.body_state(ground).position, Vec3(0, -0.5f, 0));
}

// A dumbbell (two spheres on one body) rests on both parts: the contact points of both
// parts hold it level, and its centre of mass is midway.
TEST(WorldPhysics, CompoundBodyRestsOnAllParts) {
  World world;
  world.add_body(body(1, MotionType::Static, Vec3(0, -0.5f, 0), box(Vec3(50, 0.5f, 50))));
  BodyDef bell;
  bell.id = 2;
  bell.position = Vec3(0, 1.0f, 0);
  for (float x : {-1.0f, 1.0f}) {
    ColliderDef c = sphere(0.5f);
    c.center = Vec3(x, 0, 0);
    bell.colliders.push_back(c);
  }
  BodyId id = *world.add_body(bell);
  for (int i = 0; i < 120; ++i) world.step();
  BodyState s = world.body_state(id);
  EXPECT_NEAR(s.position.y, 0.5f, 0.005f);
  Vec3 axis = s.rotation * Vec3(1, 0, 0);
  EXPECT_NEAR(axis.y, 0.0f, 1e-3f);
  EXPECT_LT(glm::length(s.linear_velocity), 1e-3f);
}

}  // namespace
}  // namespace keel::sim

namespace keel::sim {
namespace {

// A kinematic platform moving at 1 m/s carries a box resting on it through friction:
// over 3 s the rider moves 3 m (± 2 cm) with it. (Started together: a platform jerked
// from rest to 1 m/s would first slip under the box for v^2 / (2 mu g) = 8.5 cm, which is
// physics, not carrying.)
TEST(WorldPhysics, KinematicPlatformCarriesRider) {
  World world;
  world.add_body(body(1, MotionType::Static, Vec3(0, -0.5f, 0), box(Vec3(50, 0.5f, 50))));
  BodyDef platform = body(2, MotionType::Kinematic, Vec3(0, 1.0f, 0), box(Vec3(2, 0.25f, 2)));
  platform.linear_velocity = Vec3(1, 0, 0);
  BodyId ip = *world.add_body(platform);
  BodyDef rider_def = body(3, MotionType::Dynamic, Vec3(0, 1.75f, 0), box(Vec3(0.5f)));
  rider_def.linear_velocity = Vec3(1, 0, 0);
  BodyId rider = *world.add_body(rider_def);
  for (int i = 0; i < 30; ++i) world.step();  // settle onto the moving platform
  Vec3 start = world.body_state(rider).position;
  float platform_start = world.body_state(ip).position.x;
  for (int i = 0; i < 180; ++i) world.step();
  Vec3 moved = world.body_state(rider).position - start;
  EXPECT_NEAR(moved.x, 3.0f, 0.02f);
  EXPECT_NEAR(moved.y, 0.0f, 0.01f);
  EXPECT_NEAR(world.body_state(ip).position.x - platform_start, 3.0f, 1e-4f);
}

// The same carrier driven by a target pose each tick (what a game moving a platform along
// a path does): each tick's target is 1/60 m further along x, which the world turns into
// 1 m/s. Over 3 s the platform moves 3 m and its rider 3 m (± 2 cm).
TEST(WorldPhysics, KinematicTargetPoseCarriesRider) {
  World world;
  world.add_body(body(1, MotionType::Static, Vec3(0, -0.5f, 0), box(Vec3(50, 0.5f, 50))));
  BodyId ip = *world.add_body(body(2, MotionType::Kinematic, Vec3(0, 1.0f, 0), box(Vec3(2, 0.25f, 2))));
  BodyDef rider_def = body(3, MotionType::Dynamic, Vec3(0, 1.75f, 0), box(Vec3(0.5f)));
  rider_def.linear_velocity = Vec3(1, 0, 0);
  BodyId rider = *world.add_body(rider_def);
  int tick = 0;
  auto step_along_path = [&] {
    ++tick;
    world.move_kinematic(ip, Transform{Vec3(float(tick) / 60.0f, 1.0f, 0.0f), identity_quat()});
    world.step();
  };
  for (int i = 0; i < 30; ++i) step_along_path();  // settle onto the moving platform
  EXPECT_NEAR(world.body_state(ip).linear_velocity.x, 1.0f, 1e-3f);
  Vec3 start = world.body_state(rider).position;
  for (int i = 0; i < 180; ++i) step_along_path();
  Vec3 moved = world.body_state(rider).position - start;
  EXPECT_NEAR(moved.x, 3.0f, 0.02f);
  EXPECT_NEAR(moved.y, 0.0f, 0.01f);
  // The platform is where its last target put it: 210 ticks of 1/60 m.
  EXPECT_NEAR(world.body_state(ip).position.x, 3.5f, 1e-3f);
}

// A target rotation becomes an angular velocity: a kinematic box told to turn a quarter
// turn about Y in 60 steps of 1.5 degrees turns at pi/2 rad/s and ends on the target.
TEST(WorldPhysics, KinematicTargetRotation) {
  World world;
  BodyId id = *world.add_body(body(1, MotionType::Kinematic, Vec3(0, 2, 0), box(Vec3(1, 0.1f, 0.5f))));
  const float step_angle = 0.5f * 3.14159265f / 60.0f;
  for (int i = 1; i <= 60; ++i) {
    world.move_kinematic(id, Transform{Vec3(0, 2, 0), dmath::axis_angle(Vec3(0, 1, 0), step_angle * float(i))});
    world.step();
  }
  BodyState s = world.body_state(id);
  EXPECT_NEAR(s.angular_velocity.y, 0.5f * 3.14159265f, 1e-3f);
  EXPECT_NEAR(glm::length(s.position - Vec3(0, 2, 0)), 0.0f, 1e-5f);
  // The box's x axis now points along -z (a quarter turn about +Y).
  Vec3 x_axis = s.rotation * Vec3(1, 0, 0);
  EXPECT_NEAR(x_axis.x, 0.0f, 1e-3f);
  EXPECT_NEAR(x_axis.z, -1.0f, 1e-3f);
}

}  // namespace
}  // namespace keel::sim
