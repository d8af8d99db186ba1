// The character controller against numbers worked out by hand: walking distance, steps,
// slopes, jump height, wall slides, pushing, platforms; plus its warnings, determinism
// across threads and save/restore.
#include <keel/sim/character.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include "collision/mesh.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collision/narrowphase.h"
#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;

constexpr float kRadius = 0.4f;
constexpr float kHalfHeight = 0.5f;
constexpr float kFeetToOrigin = kRadius + kHalfHeight;  // 0.9 m: origin above the feet
constexpr uint32_t kChar = 100;
constexpr float kPi = 3.14159265f;

BodyDef character_body(Vec3 feet, float friction = 0.2f) {
  BodyDef b;
  b.id = kChar;
  b.motion = MotionType::Dynamic;
  b.mass = 80.0f;
  b.position = feet + Vec3(0, kFeetToOrigin + 0.001f, 0);
  b.freeze_rotation = true;
  b.can_sleep = false;
  ColliderDef c;
  c.shape = ShapeType::Capsule;
  c.radius = kRadius;
  c.half_height = kHalfHeight;
  c.friction = friction;
  b.colliders.push_back(c);
  return b;
}

// A 100 m square floor whose top is y = 0.
void add_floor(World& w, float friction = 0.6f) {
  BodyDef floor = box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(50, 0.5f, 50));
  floor.colliders[0].friction = friction;
  ASSERT_TRUE(w.add_body(floor));
}

BodyId add_character_at(World& w, Vec3 feet, const CharacterSettings& s = {}) {
  auto id = w.add_body(character_body(feet));
  EXPECT_TRUE(id);
  EXPECT_TRUE(add_character(w, *id, s));
  return *id;
}

Vec3 feet_of(const World& w, BodyId id) { return w.body_state(id).position - Vec3(0, kFeetToOrigin, 0); }

void walk(World& w, BodyId id, Vec3 velocity, int ticks, bool jump = false) {
  set_character_input(w, id, CharacterInput{velocity, jump});
  for (int i = 0; i < ticks; ++i) w.step();
}

void settle(World& w, BodyId id) { walk(w, id, Vec3(0.0f), 10); }

TEST(Character, WalksThreeMetresInOneSecond) {
  World w;
  add_floor(w);
  BodyId c = add_character_at(w, Vec3(0, 0, 0));
  settle(w, c);
  const Vec3 start = feet_of(w, c);
  EXPECT_TRUE(character_status(w, c).grounded);
  // 3 m/s for 60 ticks of 1/60 s: 3.00 m.
  walk(w, c, Vec3(3, 0, 0), 60);
  const Vec3 end = feet_of(w, c);
  std::printf("walked %.4f m in 1 s at 3 m/s\n", end.x - start.x);
  EXPECT_NEAR(end.x - start.x, 3.0f, 0.01f);
  EXPECT_NEAR(end.z - start.z, 0.0f, 0.001f);
  EXPECT_NEAR(end.y, 0.0f, 0.006f);
}

// The same walk on level geometry: a floor of 800 triangles (1 m cells, seams every
// metre) and a flat heightfield. Seams must neither trip the ground probe nor lift the feet.
TEST(Character, WalksOnAMeshFloorAndAHeightfield) {
  for (int kind = 0; kind < 2; ++kind) {
    World w;
    BodyDef floor;
    floor.id = 1;
    floor.motion = MotionType::Static;
    ColliderDef c;
    if (kind == 0) {
      c.shape = ShapeType::Mesh;
      for (int r = 0; r <= 20; ++r) {
        for (int k = 0; k <= 20; ++k) c.points.push_back(Vec3(float(k) - 10.0f, 0.0f, float(r) - 10.0f));
      }
      auto at = [](int r, int k) { return uint32_t(r * 21 + k); };
      for (int r = 0; r < 20; ++r) {
        for (int k = 0; k < 20; ++k) {
          c.indices.insert(c.indices.end(), {at(r, k), at(r + 1, k + 1), at(r, k + 1), at(r, k), at(r + 1, k), at(r + 1, k + 1)});
        }
      }
    } else {
      c.shape = ShapeType::Heightfield;
      c.rows = c.columns = 21;
      c.heights.assign(21 * 21, 0.0f);
      floor.position = Vec3(-10.0f, 0.0f, -10.0f);
    }
    floor.colliders.push_back(c);
    ASSERT_TRUE(w.add_body(floor));
    BodyId ch = add_character_at(w, Vec3(0.3f, 0, 0.2f));
    settle(w, ch);
    const Vec3 start = feet_of(w, ch);
    EXPECT_TRUE(character_status(w, ch).grounded) << kind;
    walk(w, ch, Vec3(3, 0, 0), 60);
    const Vec3 end = feet_of(w, ch);
    std::printf("%s: walked %.4f m in 1 s at 3 m/s, feet y %.4f\n", kind == 0 ? "mesh floor" : "heightfield",
                end.x - start.x, end.y);
    EXPECT_NEAR(end.x - start.x, 3.0f, 0.01f) << kind;
    EXPECT_NEAR(end.y, 0.0f, 0.006f) << kind;
    EXPECT_TRUE(character_status(w, ch).grounded) << kind;
  }
}

// A static step whose face is at x = face, top at y = height.
void add_step(World& w, uint32_t id, float face, float height) {
  ASSERT_TRUE(w.add_body(box_body(id, MotionType::Static, Vec3(face + 5, height * 0.5f, 0), Vec3(5, height * 0.5f, 5))));
}

TEST(Character, ClimbsAStepLowerThanStepHeight) {
  World w;
  add_floor(w);
  add_step(w, 2, 2.0f, 0.3f);
  BodyId c = add_character_at(w, Vec3(0, 0, 0));
  settle(w, c);
  walk(w, c, Vec3(1.5f, 0, 0), 180);
  const Vec3 feet = feet_of(w, c);
  std::printf("0.3 m step: feet at x %.4f, y %.4f\n", feet.x, feet.y);
  EXPECT_GT(feet.x, 2.0f + kRadius);  // across the edge
  EXPECT_NEAR(feet.y, 0.30f, 0.01f);
  EXPECT_TRUE(character_status(w, c).grounded);
}

TEST(Character, StoppedByAStepTallerThanStepHeight) {
  World w;
  add_floor(w);
  add_step(w, 2, 3.0f, 0.5f);
  BodyId c = add_character_at(w, Vec3(0, 0, 0));
  settle(w, c);
  walk(w, c, Vec3(1.5f, 0, 0), 180);
  // Stopped with the capsule's side at the face: x = 3 - 0.4, feet still on the floor.
  const Vec3 feet = feet_of(w, c);
  std::printf("0.5 m step: stopped at x %.4f (face - radius = 2.6), feet y %.4f\n", feet.x, feet.y);
  EXPECT_NEAR(feet.x, 3.0f - kRadius, 0.01f);
  EXPECT_NEAR(feet.y, 0.0f, 0.006f);
  EXPECT_TRUE(character_status(w, c).grounded);
}

// A ramp: a box half (30, 0.5, 5) turned about Z by `angle`, its centre at the origin. The
// character stands on its top face at distance `along` from the middle (up the slope).
BodyId ramp_scene(World& w, float angle, float along) {
  const Quat rot = make_quat(0, 0, std::sin(angle / 2), std::cos(angle / 2));
  EXPECT_TRUE(w.add_body(box_body(2, MotionType::Static, Vec3(0), Vec3(30, 0.5f, 5), rot)));
  const Vec3 n(-std::sin(angle), std::cos(angle), 0);
  const Vec3 t(std::cos(angle), std::sin(angle), 0);
  // The bottom sphere's centre sits the radius off the face; the origin a half height above.
  const Vec3 bottom = n * (0.5f + kRadius + 0.001f) + t * along;
  BodyDef b = character_body(Vec3(0));
  b.position = bottom + Vec3(0, kHalfHeight, 0);
  auto id = w.add_body(b);
  EXPECT_TRUE(id);
  EXPECT_TRUE(add_character(w, *id));
  return *id;
}

TEST(Character, StandsStillOnA40DegreeRamp) {
  World w;
  BodyId c = ramp_scene(w, 40.0f * kPi / 180.0f, 0.0f);
  const Vec3 start = w.body_state(c).position;
  walk(w, c, Vec3(0.0f), 165);  // 2.75 s
  const Vec3 d = w.body_state(c).position - start;
  std::printf("40 deg ramp: drift %.6f m in 2.75 s\n", std::sqrt(glm::dot(d, d)));
  EXPECT_LT(std::sqrt(glm::dot(d, d)), 0.01f);
  EXPECT_TRUE(character_status(w, c).grounded);
}

TEST(Character, SlidesDownA50DegreeRamp) {
  World w;
  BodyId c = ramp_scene(w, 50.0f * kPi / 180.0f, 10.0f);
  const Vec3 start = w.body_state(c).position;
  walk(w, c, Vec3(0.0f), 165);
  const Vec3 d = w.body_state(c).position - start;
  // At least 4 m (friction-free it would be g sin 50 t^2 / 2 = 28 m; the capsule's and
  // the ramp's friction take their share).
  std::printf("50 deg ramp: slid %.3f m in 2.75 s\n", std::sqrt(glm::dot(d, d)));
  EXPECT_GE(std::sqrt(glm::dot(d, d)), 4.0f);
  EXPECT_LT(d.y, 0.0f);
  EXPECT_FALSE(character_status(w, c).grounded);
}

TEST(Character, JumpRisesVSquaredOverTwoG) {
  World w;
  add_floor(w);
  BodyId c = add_character_at(w, Vec3(0, 0, 0));
  settle(w, c);
  const float y0 = feet_of(w, c).y;
  walk(w, c, Vec3(0.0f), 1, true);
  set_character_input(w, c, CharacterInput{});
  float top = y0;
  for (int i = 0; i < 90; ++i) {
    w.step();
    top = std::max(top, feet_of(w, c).y);
  }
  // 5^2 / (2 9.81) = 1.274 m, within 2%.
  std::printf("jump at 5 m/s rose %.4f m\n", top - y0);
  EXPECT_NEAR(top - y0, 25.0f / (2.0f * 9.81f), 0.02f * 1.274f);
  EXPECT_TRUE(character_status(w, c).grounded);  // landed again
}

TEST(Character, JumpsOnlyFromTheGround) {
  World w;
  add_floor(w);
  BodyId c = add_character_at(w, Vec3(0, 0, 0));
  settle(w, c);
  walk(w, c, Vec3(0.0f), 1, true);
  walk(w, c, Vec3(0.0f), 10, false);
  const float vy = w.body_state(c).linear_velocity.y;
  walk(w, c, Vec3(0.0f), 1, true);  // mid-air: no second jump
  EXPECT_LT(w.body_state(c).linear_velocity.y, vy);
}

// Walking down four 0.2 m stairs (0.5 m treads) at 2 m/s, the character rolls over each
// edge and snaps to the next tread instead of flying off: its feet never rise above the
// highest tread under its footprint (x +- radius) and it is airborne at most 3 ticks per
// step (the roll past 45 degrees over the edge, before the next tread is in snap reach).
TEST(Character, SnapsDownStairs) {
  World w;
  add_floor(w);
  auto tread_end = [](int k) { return 0.5f * float(k + 1); };
  auto tread_top = [](int k) { return 0.8f - 0.2f * float(k); };
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(w.add_body(box_body(10 + k, MotionType::Static, Vec3((tread_end(k) - 5.0f) / 2, tread_top(k) / 2, 0),
                                    Vec3((tread_end(k) + 5.0f) / 2, tread_top(k) / 2, 3))));
  }
  BodyId c = add_character_at(w, Vec3(-0.5f, 0.8f, 0));
  settle(w, c);
  set_character_input(w, c, CharacterInput{Vec3(2, 0, 0), false});
  int airborne = 0;
  float hover = 0.0f;
  for (int i = 0; i < 150; ++i) {
    w.step();
    const Vec3 feet = feet_of(w, c);
    float highest = 0.0f;  // the highest tread reaching under the footprint
    for (int k = 0; k < 4; ++k) {
      if (feet.x - kRadius < tread_end(k)) highest = std::max(highest, tread_top(k));
    }
    hover = std::max(hover, feet.y - highest);
    airborne += character_status(w, c).grounded ? 0 : 1;
  }
  std::printf("down stairs: %d of 150 ticks airborne, feet at most %.4f m above the footprint\n", airborne, hover);
  EXPECT_GT(feet_of(w, c).x, 4.0f);
  EXPECT_NEAR(feet_of(w, c).y, 0.0f, 0.006f);
  EXPECT_LE(airborne, 12);
  EXPECT_LT(hover, 0.005f);
}

// Walks at 1.9 m/s, `incidence` off the normal of a wall along x (face z = 0, normal +z),
// and returns the speed along the wall over the last second.
float wall_slide_speed(float incidence_deg, float wall_friction) {
  World w;
  add_floor(w);
  BodyDef wall = box_body(2, MotionType::Static, Vec3(0, 1, -1), Vec3(50, 2, 1));
  wall.colliders[0].friction = wall_friction;
  EXPECT_TRUE(w.add_body(wall));
  BodyId c = add_character_at(w, Vec3(0, 0, kRadius + 0.05f));
  settle(w, c);
  const float a = incidence_deg * kPi / 180.0f;
  walk(w, c, Vec3(1.9f * std::sin(a), 0, -1.9f * std::cos(a)), 60);
  const float x0 = w.body_state(c).position.x;
  walk(w, c, Vec3(1.9f * std::sin(a), 0, -1.9f * std::cos(a)), 60);
  EXPECT_NEAR(feet_of(w, c).z, kRadius, 0.01f);  // against the wall, not in it
  return w.body_state(c).position.x - x0;
}

TEST(Character, SlidesAlongWallsWhateverTheirFriction) {
  const float incidence[] = {10, 25, 45, 60, 80};
  const float commanded[] = {0.330f, 0.803f, 1.344f, 1.645f, 1.871f};
  for (int i = 0; i < 5; ++i) {
    const float slippery = wall_slide_speed(incidence[i], 0.0f);
    const float rough = wall_slide_speed(incidence[i], 1.0f);
    EXPECT_GE(slippery, 0.85f * commanded[i]) << incidence[i] << " deg";
    EXPECT_NEAR(rough, slippery, 0.01f * slippery) << incidence[i] << " deg";
    std::printf("wall slide %2.0f deg: commanded %.3f m/s, friction 0: %.3f, friction 1: %.3f\n", incidence[i],
                commanded[i], slippery, rough);
  }
}

TEST(Character, PushesALightCrateAndIsStoppedByAHeavyOne) {
  for (float mass : {20.0f, 800.0f}) {
    World w;
    add_floor(w);
    BodyDef crate = box_body(3, MotionType::Dynamic, Vec3(2.0f, 0.4f, 0), Vec3(0.4f));
    crate.mass = mass;
    ASSERT_TRUE(w.add_body(crate));
    BodyId c = add_character_at(w, Vec3(0, 0, 0));
    settle(w, c);
    const BodyId crate_id = w.find_body(3);
    walk(w, c, Vec3(1.5f, 0, 0), 180);
    const Vec3 crate_pos = w.body_state(crate_id).position;
    const float feet_x = feet_of(w, c).x;
    std::printf("%.0f kg crate: crate x %.3f v %.3f, character feet x %.3f\n", mass, crate_pos.x,
                w.body_state(crate_id).linear_velocity.x, feet_x);
    if (mass < 100.0f) {
      // 400 N against 0.6 (20 kg) 9.81 = 118 N of friction: it keeps walking pace, the
      // character's front at its near face.
      EXPECT_NEAR(w.body_state(crate_id).linear_velocity.x, 1.5f, 0.15f);
      EXPECT_GT(crate_pos.x, 2.0f + 3.0f);
      EXPECT_NEAR(crate_pos.x - 0.4f, feet_x + kRadius, 0.05f);
    } else {
      // 400 N cannot beat 0.6 (800 kg) 9.81 = 4.7 kN: it stops the character at its face.
      EXPECT_NEAR(crate_pos.x, 2.0f, 0.01f);
      EXPECT_NEAR(feet_x, 2.0f - 0.4f - kRadius, 0.01f);
    }
  }
}

TEST(Character, RidesAMovingKinematicPlatform) {
  World w;
  add_floor(w);
  BodyDef platform = box_body(4, MotionType::Kinematic, Vec3(0, 0.6f, 0), Vec3(3, 0.1f, 3));
  platform.linear_velocity = Vec3(1, 0, 0);
  ASSERT_TRUE(w.add_body(platform));
  BodyId c = add_character_at(w, Vec3(0, 0.7f, 0));
  walk(w, c, Vec3(0.0f), 1);
  const float start = feet_of(w, c).x;
  walk(w, c, Vec3(0.0f), 120);  // 2 s at 1 m/s
  std::printf("platform: carried %.4f m in 2 s\n", feet_of(w, c).x - start);
  EXPECT_NEAR(feet_of(w, c).x - start, 2.0f, 0.02f);
  EXPECT_NEAR(feet_of(w, c).y, 0.7f, 0.01f);
  EXPECT_EQ(character_status(w, c).ground_body, 4u);
}

TEST(Character, WarnsOnceAboutABoxOrAFreeRotation) {
  World w;
  add_floor(w);
  BodyDef b = box_body(7, MotionType::Dynamic, Vec3(0, 1, 0), Vec3(0.3f, 0.9f, 0.3f));
  auto id = w.add_body(b);
  ASSERT_TRUE(id);
  ASSERT_TRUE(add_character(w, *id));
  walk(w, *id, Vec3(1, 0, 0), 5);
  auto warnings = character_warnings(w);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("character 7: no enabled capsule collider"), std::string::npos);
  EXPECT_NE(warnings[1].find("character 7: rotation is not frozen"), std::string::npos);
  // A well-made character raises nothing.
  World ok;
  add_floor(ok);
  add_character_at(ok, Vec3(0, 0, 0));
  ok.step();
  EXPECT_TRUE(character_warnings(ok).empty());
}

TEST(Character, RefusesBadBodiesAndSettings) {
  World w;
  add_floor(w);
  EXPECT_FALSE(add_character(w, w.find_body(1)));  // static
  auto id = w.add_body(character_body(Vec3(0)));
  ASSERT_TRUE(id);
  CharacterSettings bad;
  bad.slope_limit = 2.0f;
  EXPECT_FALSE(add_character(w, *id, bad));
  EXPECT_TRUE(add_character(w, *id));
  EXPECT_FALSE(add_character(w, *id));  // twice
  EXPECT_TRUE(w.remove_body(*id));
  EXPECT_FALSE(is_character(w, *id));
}

// A course of steps, a ramp and crates with two characters walking a script.
World course() {
  World w;
  add_floor(w);
  add_step(w, 2, 3.0f, 0.3f);
  EXPECT_TRUE(w.add_body(box_body(3, MotionType::Dynamic, Vec3(-2, 0.4f, 0), Vec3(0.4f))));
  CharacterSettings s;
  s.script = {{60, Vec3(2, 0, 0), false}, {30, Vec3(0, 0, 0), true}, {60, Vec3(-2, 0, 0.5f), false}};
  EXPECT_TRUE(add_character(w, *w.add_body(character_body(Vec3(0, 0, 0))), s));
  BodyDef second = character_body(Vec3(0, 0, 2));
  second.id = 101;
  auto id = w.add_body(second);
  EXPECT_TRUE(add_character(w, *id));
  set_character_input(w, *id, CharacterInput{Vec3(-1.5f, 0, 0), false});
  return w;
}

TEST(Character, SameBitsOnOneAndTwoThreads) {
  World a = course();
  World b = course();
  b.set_threads(2);
  for (int i = 0; i < 300; ++i) {
    a.step();
    b.step();
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << i;
  }
}

TEST(Character, SaveRestoreStepsTheSame) {
  World a = course();
  for (int i = 0; i < 137; ++i) a.step();
  const std::vector<uint8_t> saved = a.save_state();
  World b;
  ASSERT_TRUE(b.restore_state(saved));
  EXPECT_EQ(b.save_state(), saved);
  for (int i = 0; i < 200; ++i) {
    a.step();
    b.step();
    ASSERT_EQ(a.hash(), b.hash()) << "tick " << i;
  }
  EXPECT_TRUE(is_character(b, b.find_body(kChar)));
}

}  // namespace
}  // namespace keel::sim

namespace keel::sim {
namespace {

// The soak: 10,000 random moves (a new walk, run or turn every half second, jumps now and
// then) through a walled yard of stairs, steps, ramps, boxes and crates on a triangle-mesh
// floor (1 m cells, so the character crosses thousands of seams). After every tick the
// capsule may be no more than 6 mm into any static collider, and never below the floor.
struct Yard {
  World world;
  std::vector<BodyDef> statics;
  std::shared_ptr<const TriangleMesh> floor;  // the floor's mesh, for the depth check
  BodyId character;
};

// A 24 x 24 m floor at y = 0 of 1 m cells, two triangles each, counter-clockwise from above.
BodyDef mesh_floor(uint32_t id) {
  BodyDef def;
  def.id = id;
  def.motion = MotionType::Static;
  ColliderDef c;
  c.shape = ShapeType::Mesh;
  const int n = 24;
  for (int r = 0; r <= n; ++r) {
    for (int k = 0; k <= n; ++k) c.points.push_back(Vec3(-12.0f + float(k), 0.0f, -12.0f + float(r)));
  }
  for (uint32_t r = 0; r < uint32_t(n); ++r) {
    for (uint32_t k = 0; k < uint32_t(n); ++k) {
      const uint32_t i = r * (n + 1) + k;
      c.indices.insert(c.indices.end(), {i, i + n + 1, i + 1, i + 1, i + n + 1, i + n + 2});
    }
  }
  def.colliders.push_back(c);
  return def;
}

void add_static(Yard& y, BodyDef def) {
  y.statics.push_back(def);
  ASSERT_TRUE(y.world.add_body(def));
}

Yard make_yard() {
  Yard y;
  uint32_t id = 1;
  add_static(y, mesh_floor(id++));
  y.floor = build_mesh(y.statics[0].colliders[0].points, y.statics[0].colliders[0].indices);
  for (int side = 0; side < 4; ++side) {  // walls around a 20 m square
    const bool along_x = side < 2;
    const float at = side % 2 == 0 ? 10.5f : -10.5f;
    const Vec3 pos = along_x ? Vec3(0, 1, at) : Vec3(at, 1, 0);
    add_static(y, box_body(id++, MotionType::Static, pos, along_x ? Vec3(11, 1, 0.5f) : Vec3(0.5f, 1, 11)));
  }
  for (int s = 0; s < 4; ++s) {  // stairs of 0.2 m risers, 0.5 m treads
    add_static(y, box_body(id++, MotionType::Static, Vec3(2.5f + 0.5f * s + 2, 0.1f + 0.1f * s, -6),
                           Vec3(2 - 0.25f * s + 0.5f, 0.1f + 0.1f * s, 2)));
  }
  add_static(y, box_body(id++, MotionType::Static, Vec3(-6, 0.15f, -6), Vec3(2, 0.15f, 2)));  // 0.3 m step
  add_static(y, box_body(id++, MotionType::Static, Vec3(-6, 0.25f, 6), Vec3(1, 0.25f, 1)));   // 0.5 m block
  for (float deg : {20.0f, 35.0f, 55.0f}) {  // ramps
    const float a = deg * kPi / 180.0f;
    const Quat rot = make_quat(std::sin(a / 2), 0, 0, std::cos(a / 2));
    add_static(y, box_body(id++, MotionType::Static, Vec3(-2 + deg / 10, 0, 5), Vec3(0.8f, 0.5f, 3), rot));
  }
  add_static(y, box_body(id++, MotionType::Static, Vec3(3, 0.6f, 3), Vec3(0.6f, 0.6f, 0.6f)));
  add_static(y, box_body(id++, MotionType::Static, Vec3(6, 1.0f, 6), Vec3(0.5f, 1.0f, 1.5f)));
  for (int k = 0; k < 3; ++k) {  // crates to push
    BodyDef crate = box_body(50 + k, MotionType::Dynamic, Vec3(-1 + 1.5f * k, 0.3f, -2), Vec3(0.3f));
    crate.mass = 20.0f + 30.0f * k;
    EXPECT_TRUE(y.world.add_body(crate));
  }
  auto c = y.world.add_body(character_body(Vec3(0, 0, 0)));
  EXPECT_TRUE(c);
  y.character = *c;
  EXPECT_TRUE(add_character(y.world, y.character));
  return y;
}

ShapeGeom geom_of(const BodyDef& def) {
  const ColliderDef& c = def.colliders[0];
  ShapeGeom g;
  g.type = c.shape;
  g.position = def.position;
  g.rotation = glm::mat3_cast(def.rotation);
  g.half_extents = c.half_extents;
  g.radius = c.radius;
  g.half_height = c.half_height;
  return g;
}

float deepest_into_statics(const Yard& y) {
  ShapeGeom cap;
  cap.type = ShapeType::Capsule;
  cap.position = y.world.body_state(y.character).position;
  cap.radius = kRadius;
  cap.half_height = kHalfHeight;
  float deepest = 0.0f;
  for (const BodyDef& def : y.statics) {
    Manifold m;
    ShapeGeom g = geom_of(def);
    if (g.type == ShapeType::Mesh) g.mesh = y.floor.get();
    collide(cap, g, 0.0f, m);
    for (int i = 0; i < m.count; ++i) deepest = std::max(deepest, m.points[i].depth);
  }
  return deepest;
}

TEST(CharacterSoak, TenThousandRandomMovesStayOutOfTheWorld) {
  Yard y = make_yard();
  uint32_t seed = 12345;
  auto rnd = [&seed] {  // a fixed LCG: the same moves on every run
    seed = seed * 1664525u + 1013904223u;
    return float(seed >> 8) / float(1u << 24);
  };
  float deepest = 0.0f, lowest = 1.0f, highest = 0.0f, path = 0.0f;
  int past_1mm = 0;
  Vec3 last = y.world.body_state(y.character).position;
  CharacterInput in;
  for (int move = 0; move < 10000; ++move) {
    if (move % 30 == 0) {
      const float speed = rnd() < 0.3f ? 6.0f : 1.0f + 2.0f * rnd();  // run or stroll
      const float heading = 2.0f * kPi * rnd();
      in.move = Vec3(speed * std::cos(heading), 0, speed * std::sin(heading));
    }
    in.jump = rnd() < 0.02f;
    set_character_input(y.world, y.character, in);
    y.world.step();
    const float depth = deepest_into_statics(y);
    // KEEL_SOAK_DEBUG=1 prints every move that ends more than 3 mm into the world.
    if (depth > 0.003f && std::getenv("KEEL_SOAK_DEBUG")) {
      const BodyState st = y.world.body_state(y.character);
      const CharacterStatus cs = character_status(y.world, y.character);
      std::printf("move %d depth %.4f pos %.3f %.3f %.3f vel %.3f %.3f %.3f grounded %d climbing %d in %.2f %.2f j%d\n",
                  move, depth, st.position.x, st.position.y, st.position.z, st.linear_velocity.x,
                  st.linear_velocity.y, st.linear_velocity.z, cs.grounded, cs.climbing, in.move.x, in.move.z, in.jump);
    }
    deepest = std::max(deepest, depth);
    past_1mm += depth > 0.001f ? 1 : 0;
    lowest = std::min(lowest, feet_of(y.world, y.character).y);
    highest = std::max(highest, feet_of(y.world, y.character).y);
    const Vec3 now = y.world.body_state(y.character).position;
    path += std::sqrt(glm::dot(now - last, now - last));
    last = now;
  }
  std::printf("soak: %.0f m walked, feet between %.4f and %.3f m; deepest %.4f m into static geometry, %d moves "
              "past 1 mm\n", path, lowest, highest, deepest, past_1mm);
  // It went places rather than sticking in a corner: the moves average 0.3 x 6 + 0.7 x 2
  // = 3.2 m/s over 166.7 s, 533 m, less the time spent pressing into walls.
  EXPECT_GT(path, 400.0f);
  EXPECT_LE(deepest, 0.006f);
  EXPECT_GT(lowest, -0.006f);
}

}  // namespace
}  // namespace keel::sim
