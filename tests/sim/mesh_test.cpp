// Triangle meshes and heightfields: single-triangle manifolds by hand, one-sidedness,
// ghost collisions at internal edges, heightfield heights, ray hits, validation,
// save/restore and thread-count invariance.
#include <gtest/gtest.h>

#include <keel/sim/query.h>
#include <keel/sim/world.h>

#include "collision/mesh.h"
#include "collision/narrowphase.h"
#include "test_bodies.h"

#include <cmath>

namespace keel::sim {
namespace {

constexpr float kTol = 1.0e-4f;

// One large triangle in the y = 0 plane facing +y (counter-clockwise seen from above).
ColliderDef one_triangle() {
  ColliderDef c;
  c.shape = ShapeType::Mesh;
  c.points = {Vec3(-5, 0, -5), Vec3(-5, 0, 5), Vec3(5, 0, -5)};
  c.indices = {0, 1, 2};
  return c;
}

// An n x n grid of 1 m cells at y = 0 (two triangles each), from (-n/2, 0, -n/2).
ColliderDef floor_grid(int n) {
  ColliderDef c;
  c.shape = ShapeType::Mesh;
  for (int r = 0; r <= n; ++r) {
    for (int k = 0; k <= n; ++k) c.points.push_back(Vec3(float(k) - 0.5f * float(n), 0.0f, float(r) - 0.5f * float(n)));
  }
  auto at = [&](int r, int k) { return uint32_t(r * (n + 1) + k); };
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < n; ++k) {
      c.indices.insert(c.indices.end(), {at(r, k), at(r + 1, k + 1), at(r, k + 1)});
      c.indices.insert(c.indices.end(), {at(r, k), at(r + 1, k), at(r + 1, k + 1)});
    }
  }
  return c;
}

ShapeGeom placed(const ColliderDef& c, std::shared_ptr<const TriangleMesh>& keep) {
  keep = build_mesh(c.points, c.indices);
  ShapeGeom g;
  g.type = ShapeType::Mesh;
  g.mesh = keep.get();
  return g;
}

ShapeGeom sphere_at(Vec3 p, float r) {
  ShapeGeom g;
  g.type = ShapeType::Sphere;
  g.position = p;
  g.radius = r;
  return g;
}

TEST(MeshContact, SphereOnTriangleByHand) {
  std::shared_ptr<const TriangleMesh> mesh;
  const ShapeGeom tri = placed(one_triangle(), mesh);
  Manifold m;
  // Centre 0.4 above the face, radius 0.5: 0.1 deep; the point halfway between the
  // sphere's bottom (y = -0.1) and the face (y = 0).
  collide(tri, sphere_at(Vec3(-1, 0.4f, -1), 0.5f), 0.02f, m);
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.normal.y, 1.0f, kTol);
  EXPECT_NEAR(m.points[0].depth, 0.1f, kTol);
  EXPECT_NEAR(m.points[0].point.y, -0.05f, kTol);
  EXPECT_NEAR(m.points[0].point.x, -1.0f, kTol);
  // Same pair, sphere as A: the normal flips, nothing else.
  Manifold f;
  collide(sphere_at(Vec3(-1, 0.4f, -1), 0.5f), tri, 0.02f, f);
  ASSERT_EQ(f.count, 1);
  EXPECT_NEAR(f.normal.y, -1.0f, kTol);
  EXPECT_EQ(f.points[0].id, m.points[0].id);
}

TEST(MeshContact, OneSidedByWinding) {
  std::shared_ptr<const TriangleMesh> mesh;
  const ShapeGeom tri = placed(one_triangle(), mesh);
  Manifold m;
  collide(tri, sphere_at(Vec3(-1, -0.2f, -1), 0.5f), 0.02f, m);  // centre behind the face
  EXPECT_EQ(m.count, 0);
  ShapeGeom box;
  box.type = ShapeType::Box;
  box.position = Vec3(-1, -0.45f, -1);
  box.half_extents = Vec3(0.5f);
  collide(tri, box, 0.02f, m);
  EXPECT_EQ(m.count, 0);
}

TEST(MeshContact, CapsuleLyingFlatGivesTwoPoints) {
  std::shared_ptr<const TriangleMesh> mesh;
  const ShapeGeom tri = placed(one_triangle(), mesh);
  ShapeGeom cap;
  cap.type = ShapeType::Capsule;
  cap.position = Vec3(-1, 0.2f, -1);
  cap.rotation = Mat3(Vec3(0, -1, 0), Vec3(1, 0, 0), Vec3(0, 0, 1));  // local +Y -> world +X
  cap.radius = 0.25f;
  cap.half_height = 0.5f;
  Manifold m;
  collide(tri, cap, 0.02f, m);
  ASSERT_EQ(m.count, 2);
  EXPECT_NEAR(m.normal.y, 1.0f, kTol);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(m.points[i].depth, 0.05f, kTol);
    EXPECT_NEAR(m.points[i].point.y, -0.025f, kTol);
  }
  EXPECT_NEAR(std::fabs(m.points[0].point.x - m.points[1].point.x), 1.0f, kTol);
}

TEST(MeshContact, BoxOnTriangleGivesItsFourCorners) {
  std::shared_ptr<const TriangleMesh> mesh;
  const ShapeGeom tri = placed(one_triangle(), mesh);
  ShapeGeom box;
  box.type = ShapeType::Box;
  box.position = Vec3(-1, 0.45f, -1);
  box.half_extents = Vec3(0.5f);
  Manifold m;
  collide(tri, box, 0.02f, m);
  ASSERT_EQ(m.count, 4);
  EXPECT_NEAR(m.normal.y, 1.0f, kTol);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.points[i].depth, 0.05f, kTol);
    EXPECT_NEAR(m.points[i].point.y, -0.025f, kTol);
    EXPECT_NEAR(std::fabs(m.points[i].point.x + 1.0f), 0.5f, kTol);
    EXPECT_NEAR(std::fabs(m.points[i].point.z + 1.0f), 0.5f, kTol);
  }
}

TEST(MeshContact, FeatureIdsStayWhileSliding) {
  std::shared_ptr<const TriangleMesh> mesh;
  const ShapeGeom tri = placed(one_triangle(), mesh);
  ShapeGeom box;
  box.type = ShapeType::Box;
  box.position = Vec3(-1, 0.45f, -1);
  box.half_extents = Vec3(0.5f);
  Manifold a, b;
  collide(tri, box, 0.02f, a);
  box.position.x += 0.01f;
  collide(tri, box, 0.02f, b);
  ASSERT_EQ(a.count, b.count);
  for (int i = 0; i < a.count; ++i) EXPECT_EQ(a.points[i].id, b.points[i].id);
}

// What a body sliding without friction over an 800-triangle floor did: the largest
// vertical speed and the largest change of its 5 m/s horizontal speed over 150 ticks.
struct SlideResult {
  float worst_vy = 0.0f;
  float worst_speed_change = 0.0f;
};

// Adds a frictionless 20 x 20-cell floor and `body` (its colliders made frictionless,
// started at (-7.3, 0.25, -6.1) moving at (4, 0, 3) m/s, kept awake), steps 150 ticks
// and measures the slide. The body's id is returned through `id`.
SlideResult slide_over_tiled_floor(World& w, BodyDef body, BodyId& id) {
  BodyDef floor;
  floor.id = 1;
  floor.motion = MotionType::Static;
  floor.colliders.push_back(floor_grid(20));
  floor.colliders[0].friction = 0.0f;
  EXPECT_TRUE(w.add_body(floor));
  body.position = Vec3(-7.3f, 0.25f, -6.1f);
  body.linear_velocity = Vec3(4.0f, 0.0f, 3.0f);
  body.can_sleep = false;
  for (ColliderDef& c : body.colliders) c.friction = 0.0f;
  id = *w.add_body(body);
  SlideResult r;
  for (int t = 0; t < 150; ++t) {
    w.step();
    const BodyState s = w.body_state(id);
    r.worst_vy = std::max(r.worst_vy, std::fabs(s.linear_velocity.y));
    const float speed = std::sqrt(s.linear_velocity.x * s.linear_velocity.x + s.linear_velocity.z * s.linear_velocity.z);
    r.worst_speed_change = std::max(r.worst_speed_change, std::fabs(speed - 5.0f));
  }
  return r;
}

// A box sliding (no friction) over a floor of 800 triangles keeps its speed: every seam
// it crosses is internal and must not catch its edges.
TEST(MeshGhost, BoxSlidesOverTiledFloorAtConstantSpeed) {
  World w;
  BodyId id;
  const SlideResult r =
      slide_over_tiled_floor(w, test::box_body(2, MotionType::Dynamic, Vec3(0.0f), Vec3(0.25f)), id);
  std::printf("box on tiled floor: max |vy| %.5f m/s, max speed change %.5f m/s, final x %.3f\n", r.worst_vy,
              r.worst_speed_change, w.body_state(id).position.x);
  EXPECT_LT(r.worst_vy, 0.01f);
  EXPECT_LT(r.worst_speed_change, 0.05f);
  EXPECT_GT(w.body_state(id).position.x, -7.3f + 4.0f * 2.4f);  // 150 ticks = 2.5 s at 4 m/s
}

// A hull (a half-metre cube given as a point cloud) meets mesh triangles through the hull
// routine with each triangle as a flat polygon: sliding across the seams of a tiled floor
// it does not slow down, and at rest it sits at its half height.
TEST(MeshGhost, HullSlidesOverTiledFloorAtConstantSpeedAndRests) {
  World w;
  BodyDef hull;
  hull.id = 2;
  ColliderDef c;
  c.shape = ShapeType::Hull;
  for (float x : {-0.25f, 0.25f}) {
    for (float y : {-0.25f, 0.25f}) {
      for (float z : {-0.25f, 0.25f}) c.points.push_back(Vec3(x, y, z));
    }
  }
  hull.colliders.push_back(c);
  BodyId id;
  const SlideResult r = slide_over_tiled_floor(w, hull, id);
  std::printf("hull on tiled floor: max |vy| %.5f m/s, max speed change %.5f m/s\n", r.worst_vy, r.worst_speed_change);
  // Known limit (docs/sim.md, "Not yet built"): crossing a diagonal seam the hull dips by
  // under a millimetre (|vy| measured 0.055 m/s at the worst seam; the box routine's own
  // triangle path keeps under 1e-4). The bound holds it to that while the speed stays exact.
  EXPECT_LT(r.worst_vy, 0.1f);
  EXPECT_LT(r.worst_speed_change, 0.05f);
  EXPECT_GT(w.body_state(id).position.x, -7.3f + 4.0f * 2.4f);
  // Stopped, it rests on the tiles at its half height (within the solver's 5 mm slop of
  // soft contact) and stays level.
  w.set_linear_velocity(id, Vec3(0.0f));
  for (int t = 0; t < 120; ++t) w.step();
  const BodyState s = w.body_state(id);
  EXPECT_NEAR(s.position.y, 0.25f, 0.005f);
  EXPECT_GT(std::fabs(s.rotation.w), 0.99999f);
}

// A capsule rolling across the diagonal seam between two triangles moves exactly as it
// does on one flat box: the seam adds nothing. (A rolling body's reported vertical speed
// is not zero on any floor: its contact anchors turn with it during the tick, so the
// solver sees each point lift by r (1 - cos w dt) and lets the body settle that much.)
World rolling_capsule_world(bool mesh_floor) {
  World w;
  BodyDef floor;
  floor.id = 1;
  floor.motion = MotionType::Static;
  floor.colliders.push_back(floor_grid(2));
  floor.colliders[0].points = {Vec3(-10, 0, -10), Vec3(10, 0, -10), Vec3(-10, 0, 10), Vec3(10, 0, 10)};
  floor.colliders[0].indices = {0, 3, 1, 0, 2, 3};  // seam along the (-10,-10)-(10,10) diagonal
  if (!mesh_floor) floor = test::box_body(1, MotionType::Static, Vec3(0, -1, 0), Vec3(10, 1, 10));
  w.add_body(floor);
  // Axis along z; rolling along +x at 2 m/s (angular velocity -v/r about z).
  BodyDef cap = test::capsule_body(2, MotionType::Dynamic, Vec3(-4.0f, 0.3f, 0.0f), 0.3f, 0.6f);
  cap.rotation = Quat(0.70710678f, 0.70710678f, 0.0f, 0.0f);  // local +Y -> world +Z
  cap.linear_velocity = Vec3(2.0f, 0.0f, 0.0f);
  cap.angular_velocity = Vec3(0.0f, 0.0f, -2.0f / 0.3f);
  cap.can_sleep = false;
  w.add_body(cap);
  return w;
}

TEST(MeshGhost, CapsuleRollsSmoothlyOverSeam) {
  World mesh = rolling_capsule_world(true);
  World flat = rolling_capsule_world(false);
  const BodyId a = mesh.find_body(2), b = flat.find_body(2);
  float worst_dvy = 0.0f, worst_dy = 0.0f;
  for (int t = 0; t < 240; ++t) {
    mesh.step();
    flat.step();
    const BodyState sa = mesh.body_state(a), sb = flat.body_state(b);
    worst_dvy = std::max(worst_dvy, std::fabs(sa.linear_velocity.y - sb.linear_velocity.y));
    worst_dy = std::max(worst_dy, std::fabs(sa.position.y - sb.position.y));
  }
  const BodyState s = mesh.body_state(a);
  std::printf("capsule over seam: max |vy - vy on a box floor| %.5f m/s, max height difference %.6f m, final x %.3f\n",
              worst_dvy, worst_dy, s.position.x);
  EXPECT_LT(worst_dvy, 0.01f);
  EXPECT_LT(worst_dy, 1.0e-3f);
  EXPECT_GT(s.position.x, 3.0f);  // crossed the seam (x = z = 0)
  EXPECT_NEAR(s.linear_velocity.x, 2.0f, 0.1f);
}

// Heightfield cell (0,0) with corner heights h(0,0) = 0, h(0,1) = 1 (x = 1), h(1,0) = 2
// (z = 1), h(1,1) = 4. The cell is split along (0,0)-(1,1); above x = 0.3, z = 0.7 (z > x)
// the triangle (0,0,0), (0,2,1), (1,4,1) is the plane y = 2x + 2z: height 2.0 there
// (bilinear interpolation would say 1.91: the surface is the triangles, not the patch).
ColliderDef test_field() {
  ColliderDef c;
  c.shape = ShapeType::Heightfield;
  c.rows = 3;
  c.columns = 3;
  c.cell_size = 1.0f;
  c.heights = {0, 1, 1, 2, 4, 4, 2, 4, 4};
  return c;
}

TEST(Heightfield, ContactHeightFollowsTheTriangle) {
  const ColliderDef c = test_field();
  auto field = build_heightfield(c.rows, c.columns, c.cell_size, c.heights);
  ShapeGeom g;
  g.type = ShapeType::Heightfield;
  g.heightfield = field.get();
  // Plane y - 2x - 2z = 0, normal (-2, 1, -2) / 3. A sphere of radius 0.1 whose centre is
  // 0.08 from the plane, above (0.3, 0.7): centre y = 2 + 3 * 0.08 = 2.24; depth 0.02.
  Manifold m;
  collide(g, sphere_at(Vec3(0.3f, 2.24f, 0.7f), 0.1f), 0.02f, m);
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].depth, 0.02f, kTol);
  EXPECT_NEAR(m.normal.x, -2.0f / 3.0f, kTol);
  EXPECT_NEAR(m.normal.y, 1.0f / 3.0f, kTol);
  EXPECT_NEAR(m.normal.z, -2.0f / 3.0f, kTol);
}

TEST(Heightfield, RaycastHitsTheTrianglePlane) {
  World w;
  BodyDef b;
  b.id = 7;
  b.motion = MotionType::Static;
  b.position = Vec3(10.0f, 0.0f, 0.0f);
  b.colliders.push_back(test_field());
  ASSERT_TRUE(w.add_body(b));
  auto hit = raycast(w, Vec3(10.3f, 10.0f, 0.7f), Vec3(0, -1, 0), 20.0f);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->body_id, 7u);
  EXPECT_NEAR(hit->point.y, 2.0f, kTol);
  EXPECT_NEAR(hit->distance, 8.0f, kTol);
  EXPECT_NEAR(hit->normal.y, 1.0f / 3.0f, kTol);
  // From below, the one-sided surface lets the ray through.
  EXPECT_FALSE(raycast(w, Vec3(10.3f, -5.0f, 0.7f), Vec3(0, 1, 0), 20.0f).has_value());
}

TEST(MeshQuery, RaycastHitsTiltedTriangle) {
  // Triangle in the plane x + y = 1 (normal (1, 1, 0) / sqrt 2), rotated body at origin.
  World w;
  BodyDef b;
  b.id = 3;
  b.motion = MotionType::Static;
  ColliderDef c;
  c.shape = ShapeType::Mesh;
  c.points = {Vec3(1, 0, -3), Vec3(-2, 3, 0), Vec3(1, 0, 3)};
  c.indices = {0, 1, 2};
  b.colliders.push_back(c);
  ASSERT_TRUE(w.add_body(b));
  // Ray from (0, 5, 0) straight down: meets x + y = 1 at y = 1.
  auto hit = raycast(w, Vec3(0, 5, 0), Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(hit.has_value());
  EXPECT_NEAR(hit->point.y, 1.0f, kTol);
  EXPECT_NEAR(hit->normal.x, 0.70710678f, kTol);
  EXPECT_NEAR(hit->normal.y, 0.70710678f, kTol);
  // A sphere cast down touches where its centre is r * sqrt 2 above the plane along y.
  auto sc = shape_cast(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 5, 0), identity_quat()}, Vec3(0, -1, 0), 10.0f);
  ASSERT_TRUE(sc.has_value());
  EXPECT_NEAR(sc->distance, 4.0f - 0.5f * std::sqrt(2.0f), 2.0e-3f);
  EXPECT_EQ(overlap(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 1.2f, 0), identity_quat()}).size(), 1u);
  EXPECT_TRUE(overlap(w, QueryShape::sphere(0.5f), Transform{Vec3(0, 2.0f, 0), identity_quat()}).empty());
}

TEST(MeshValidation, RejectsMovingBodiesAndBadGeometry) {
  World w;
  BodyDef b;
  b.id = 9;
  b.motion = MotionType::Dynamic;
  b.mass = 1.0f;
  b.colliders.push_back(one_triangle());
  auto r = w.add_body(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("body 9: colliders[0].shape Mesh is only allowed on a Static body"),
            std::string::npos)
      << r.error().message;
  b.motion = MotionType::Static;
  b.colliders[0].indices = {0, 1, 5};
  r = w.add_body(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("colliders[0].indices[2] = 5 is out of range"), std::string::npos)
      << r.error().message;
  b.colliders[0].indices = {0, 1, 1};
  r = w.add_body(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("degenerate"), std::string::npos) << r.error().message;
  b.colliders[0] = test_field();
  b.colliders[0].heights.pop_back();
  r = w.add_body(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("heights has 8 values, rows x columns needs 9"), std::string::npos)
      << r.error().message;
}

// Tilted boxes dropped on a smooth slope (every edge internal, 1 m cells smaller than
// the boxes' reach) land and slide on it: a box touching a triangle with an edge or a
// corner while its SAT axis is one of its own faces must still be held by that triangle.
TEST(Heightfield, TiltedBoxesNeverFallThroughASmoothSlope) {
  World w;
  BodyDef ground;
  ground.id = 1;
  ground.motion = MotionType::Static;
  ColliderDef f;
  f.shape = ShapeType::Heightfield;
  f.rows = f.columns = 33;
  for (uint32_t r = 0; r < 33; ++r) {
    for (uint32_t c = 0; c < 33; ++c) {
      // A gentle valley across z plus a 0.4 slope along -x: every crease is under 2.5 deg.
      f.heights.push_back(0.4f * float(32 - c) + 0.01f * (float(r) - 16.0f) * (float(r) - 16.0f));
    }
  }
  ground.colliders.push_back(f);
  ASSERT_TRUE(w.add_body(ground));
  for (uint32_t i = 0; i < 16; ++i) {
    BodyDef b = test::box_body(10 + i, MotionType::Dynamic, Vec3(4.0f + float(i % 4) * 2.0f, 0.0f, 6.0f + float(i / 4) * 5.0f),
                               Vec3(0.35f));
    const float a = 0.4f * float(i + 1);
    b.rotation = glm::normalize(Quat(1.0f, 0.3f * a, 0.7f * a - 1.0f, 0.2f * a));
    b.position.y = 0.4f * (32.0f - b.position.x) + 0.01f * (b.position.z - 16.0f) * (b.position.z - 16.0f) + 1.5f;
    ASSERT_TRUE(w.add_body(b));
  }
  for (int t = 0; t < 240; ++t) w.step();
  for (uint32_t i = 0; i < 16; ++i) {
    const Vec3 p = w.body_state(w.find_body(10 + i)).position;
    if (p.x < 0.5f || p.x > 31.5f) continue;  // slid off the end of the field (allowed)
    const float surface = 0.4f * (32.0f - p.x) + 0.01f * (p.z - 16.0f) * (p.z - 16.0f);
    EXPECT_GT(p.y, surface) << "box " << i << " at " << p.x << ", " << p.z;
  }
}

// A heightfield with a few bodies rolling on it.
World terrain_world(uint32_t threads) {
  WorldSettings s;
  s.threads = threads;
  World w(s);
  BodyDef ground;
  ground.id = 1;
  ground.motion = MotionType::Static;
  ground.position = Vec3(-8.0f, 0.0f, -8.0f);
  ColliderDef f;
  f.shape = ShapeType::Heightfield;
  f.rows = f.columns = 17;
  for (uint32_t r = 0; r < 17; ++r) {
    for (uint32_t c = 0; c < 17; ++c) f.heights.push_back(0.25f * float(16 - c) + 0.1f * float((r * 7 + c * 3) % 5));
  }
  ground.colliders.push_back(f);
  w.add_body(ground);
  BodyDef mesh;
  mesh.id = 2;
  mesh.motion = MotionType::Static;
  mesh.position = Vec3(0.0f, -1.0f, 0.0f);
  mesh.colliders.push_back(floor_grid(30));
  w.add_body(mesh);
  for (uint32_t i = 0; i < 12; ++i) {
    const Vec3 p(-5.0f + float(i % 4) * 2.5f, 6.0f + float(i / 4), -4.0f + float(i % 3) * 3.0f);
    BodyDef b = i % 3 == 0   ? test::sphere_body(10 + i, MotionType::Dynamic, p, 0.4f)
                : i % 3 == 1 ? test::capsule_body(10 + i, MotionType::Dynamic, p, 0.3f, 0.4f)
                             : test::box_body(10 + i, MotionType::Dynamic, p, Vec3(0.4f, 0.3f, 0.5f));
    w.add_body(b);
  }
  return w;
}

TEST(MeshDeterminism, SaveRestoreMidRunIsBitExact) {
  World w = terrain_world(1);
  for (int t = 0; t < 90; ++t) w.step();
  const std::vector<uint8_t> saved = w.save_state();
  World copy;
  ASSERT_TRUE(copy.restore_state(saved));
  EXPECT_EQ(copy.save_state(), saved);
  for (int t = 0; t < 90; ++t) {
    w.step();
    copy.step();
  }
  EXPECT_EQ(w.hash(), copy.hash());
  // Restoring a world over itself shares the mesh data instead of rebuilding it.
  ASSERT_TRUE(w.restore_state(saved));
  EXPECT_EQ(w.save_state(), saved);
}

TEST(MeshDeterminism, OneAndTwoThreadsAgree) {
  World a = terrain_world(1);
  World b = terrain_world(2);
  for (int t = 0; t < 180; ++t) {
    a.step();
    b.step();
  }
  EXPECT_EQ(a.hash(), b.hash());
  // Something actually moved and came to rest on the ground (not through it).
  for (uint32_t i = 0; i < 12; ++i) {
    const BodyState s = a.body_state(a.find_body(10 + i));
    EXPECT_GT(s.position.y, -1.0f) << i;
  }
}

// ---------------------------------------------------------------------------------------
// Continuous collision

TEST(Ccd, FastSphereStopsAtThinWall) {
  World w;
  BodyDef wall = test::box_body(1, MotionType::Static, Vec3(10.0f, 0.0f, 0.0f), Vec3(0.025f, 3.0f, 3.0f));
  ASSERT_TRUE(w.add_body(wall));
  for (int start = 0; start < 3; ++start) {
    // Different start offsets put the wall at every phase of the 3.33 m step.
    BodyDef ball = test::sphere_body(2 + start, MotionType::Dynamic, Vec3(-1.1f * float(start), 0.0f, 0.0f), 0.1f);
    ball.linear_velocity = Vec3(200.0f, 0.0f, 0.0f);
    ball.gravity_scale = 0.0f;
    ball.layer = 2;
    ball.collides_with = 1;
    ASSERT_TRUE(w.add_body(ball));
  }
  float max_x = -1.0e9f;
  for (int t = 0; t < 30; ++t) {
    w.step();
    for (int start = 0; start < 3; ++start) max_x = std::max(max_x, w.body_state(w.find_body(2 + start)).position.x);
  }
  std::printf("200 m/s sphere: farthest centre x %.4f (wall face at 9.975, centre stops at 9.875)\n", max_x);
  EXPECT_LT(max_x, 9.975f - 0.1f + 0.01f);
}

TEST(Ccd, FastBoxStopsAtWallOfBoxes) {
  World w;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(w.add_body(test::box_body(1 + i, MotionType::Static, Vec3(8.0f, 0.5f + float(i), 0.0f),
                                          Vec3(0.025f, 0.5f, 0.5f))));
  }
  BodyDef box = test::box_body(10, MotionType::Dynamic, Vec3(0.0f, 1.5f, 0.0f), Vec3(0.2f));
  box.linear_velocity = Vec3(50.0f, 0.0f, 0.0f);
  box.gravity_scale = 0.0f;
  const BodyId id = *w.add_body(box);
  float max_x = -1.0e9f;
  for (int t = 0; t < 30; ++t) {
    w.step();
    max_x = std::max(max_x, w.body_state(id).position.x);
  }
  std::printf("50 m/s box: farthest centre x %.4f (wall face at 7.975, centre stops at 7.775)\n", max_x);
  EXPECT_LT(max_x, 7.975f - 0.2f + 0.01f);
  EXPECT_GT(max_x, 7.975f - 0.2f - 0.05f);  // it did reach the wall
}

// The same throw at a wall of dynamic boxes (10 cm thick, standing on the ground): the
// projectile shoves the wall but never passes through the box it hits.
TEST(Ccd, FastBoxNeverPassesThroughDynamicWallBoxes) {
  World w;
  ASSERT_TRUE(w.add_body(test::box_body(1, MotionType::Static, Vec3(0.0f, -0.5f, 0.0f), Vec3(50.0f, 0.5f, 50.0f))));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(w.add_body(test::box_body(2 + i, MotionType::Dynamic, Vec3(8.0f, 0.25f + 0.5f * float(i), 0.0f),
                                          Vec3(0.05f, 0.25f, 0.5f))));
  }
  BodyDef box = test::box_body(10, MotionType::Dynamic, Vec3(0.0f, 0.75f, 0.0f), Vec3(0.2f));
  box.linear_velocity = Vec3(50.0f, 0.0f, 0.0f);
  box.gravity_scale = 0.0f;
  const BodyId id = *w.add_body(box);
  const BodyId hit = w.find_body(3);  // the wall box at the projectile's height
  float worst = -1.0e9f;
  for (int t = 0; t < 20; ++t) {
    w.step();
    worst = std::max(worst, w.body_state(id).position.x - w.body_state(hit).position.x);
  }
  std::printf("50 m/s box vs dynamic wall: largest (projectile x - wall box x) %.4f (touching: -0.25)\n", worst);
  EXPECT_LT(worst, -0.25f + 0.02f);
}

TEST(Ccd, BulletFlagRoundTripsThroughState) {
  World w;
  BodyDef b = test::sphere_body(1, MotionType::Dynamic, Vec3(0.0f), 0.5f);
  b.bullet = true;
  ASSERT_TRUE(w.add_body(b));
  World copy;
  ASSERT_TRUE(copy.restore_state(w.save_state()));
  EXPECT_EQ(copy.save_state(), w.save_state());
}

}  // namespace
}  // namespace keel::sim
