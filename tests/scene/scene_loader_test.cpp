// Scene loading (keel::scene, docs/scene-format.md): the committed scenes load with the
// layouts scenes/generate_scenes.py describes, absent fields take their documented
// defaults, every kind of bad input is rejected with a message naming the source, the body
// and the field, binary round trips are exact, and hostile bytes never crash the loader.
#include <gtest/gtest.h>

#include <array>
#include <keel/scene/scene.h>
#include <keel/scene/scene_generated.h>
#include <keel/sim/limits.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keel::scene {
namespace {

using sim::BodyDef;
using sim::ColliderDef;
using sim::MotionType;
using sim::SceneDef;
using sim::ShapeType;

const std::string kScenes = std::string(KEEL_SOURCE_DIR) + "/scenes/";

SceneDef load_ok(const std::string& name) {
  auto scene = load_scene_file(kScenes + name);
  EXPECT_TRUE(scene.has_value()) << scene.error().message;
  return scene.has_value() ? std::move(scene.value()) : SceneDef{};
}

SceneDef parse_ok(const std::string& json) {
  auto scene = parse_scene_json(json, "test.json");
  EXPECT_TRUE(scene.has_value()) << scene.error().message;
  return scene.has_value() ? std::move(scene.value()) : SceneDef{};
}

/// The error message for a JSON scene that must be rejected ("" if it was accepted).
std::string parse_error(const std::string& json, const std::string& source = "bad.json") {
  auto scene = parse_scene_json(json, source);
  EXPECT_FALSE(scene.has_value()) << "accepted: " << json;
  return scene.has_value() ? std::string() : scene.error().message;
}

const BodyDef* find_body(const SceneDef& scene, uint32_t id) {
  for (const BodyDef& body : scene.bodies) {
    if (body.id == id) return &body;
  }
  return nullptr;
}

uint32_t bits(float value) { return std::bit_cast<uint32_t>(value); }

// ---------------------------------------------------------------------------------------
// The committed scenes

TEST(SceneFiles, EveryCommittedSceneLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kScenes)) {
    if (entry.path().extension() != ".json") continue;
    auto scene = load_scene_file(entry.path().string());
    EXPECT_TRUE(scene.has_value()) << scene.error().message;
    ++count;
  }
  EXPECT_GE(count, 4);
}

void expect_ground(const SceneDef& scene) {
  const BodyDef* ground = find_body(scene, 1);
  ASSERT_NE(ground, nullptr);
  EXPECT_EQ(ground->motion, MotionType::Static);
  EXPECT_EQ(ground->position, sim::Vec3(0.0f, -0.5f, 0.0f));
  ASSERT_EQ(ground->colliders.size(), 1u);
  EXPECT_EQ(ground->colliders[0].shape, ShapeType::Box);
  EXPECT_EQ(ground->colliders[0].half_extents, sim::Vec3(100.0f, 0.5f, 100.0f));
}

/// The settings and materials every committed scene shares.
void expect_common(const SceneDef& scene) {
  EXPECT_EQ(scene.settings.tick_rate, 60u);
  EXPECT_EQ(scene.settings.gravity, sim::Vec3(0.0f, -9.81f, 0.0f));
  std::set<uint32_t> ids;
  for (const BodyDef& body : scene.bodies) {
    ids.insert(body.id);
    for (const ColliderDef& collider : body.colliders) {
      EXPECT_EQ(collider.density, 1000.0f);
      EXPECT_EQ(collider.friction, 0.6f);
      EXPECT_EQ(collider.restitution, 0.0f);
    }
  }
  // Unique and consecutive from 1.
  EXPECT_EQ(ids.size(), scene.bodies.size());
  EXPECT_EQ(*ids.begin(), 1u);
  EXPECT_EQ(*ids.rbegin(), scene.bodies.size());
}

TEST(SceneFiles, Pile) {
  const SceneDef scene = load_ok("pile.json");
  ASSERT_EQ(scene.bodies.size(), 1001u);
  expect_common(scene);
  expect_ground(scene);
  sim::Vec3 lower(1e9f), upper(-1e9f);
  int rotated = 0;
  for (const BodyDef& body : scene.bodies) {
    if (body.id == 1) continue;
    EXPECT_EQ(body.motion, MotionType::Dynamic);
    ASSERT_EQ(body.colliders.size(), 1u);
    EXPECT_EQ(body.colliders[0].shape, ShapeType::Box);
    EXPECT_EQ(body.colliders[0].half_extents, sim::Vec3(0.5f));
    lower = glm::min(lower, body.position);
    upper = glm::max(upper, body.position);
    if (body.rotation != sim::identity_quat()) ++rotated;
  }
  EXPECT_EQ(lower, sim::Vec3(-5.4f, 2.0f, -5.4f));
  EXPECT_EQ(upper, sim::Vec3(5.4f, 12.8f, 5.4f));
  EXPECT_EQ(rotated, 500);
  // Grid box (i, j, k) = (0, 0, 1) has id 2 + 100j + 10k + i = 12; i+j+k is odd, so it
  // is turned 15 degrees about Y. (0, 0, 0) is not turned.
  const BodyDef* turned = find_body(scene, 12);
  ASSERT_NE(turned, nullptr);
  EXPECT_EQ(turned->position, sim::Vec3(-5.4f, 2.0f, -4.2f));
  const double half = 7.5 * 3.14159265358979323846 / 180.0;
  EXPECT_EQ(turned->rotation.x, 0.0f);
  EXPECT_EQ(turned->rotation.y, static_cast<float>(std::sin(half)));
  EXPECT_EQ(turned->rotation.z, 0.0f);
  EXPECT_EQ(turned->rotation.w, static_cast<float>(std::cos(half)));
  const BodyDef* straight = find_body(scene, 2);
  ASSERT_NE(straight, nullptr);
  EXPECT_EQ(straight->position, sim::Vec3(-5.4f, 2.0f, -5.4f));
  EXPECT_EQ(straight->rotation, sim::identity_quat());
}

TEST(SceneFiles, Pyramid) {
  const SceneDef scene = load_ok("pyramid.json");
  ASSERT_EQ(scene.bodies.size(), 211u);
  expect_common(scene);
  expect_ground(scene);
  std::map<float, std::vector<float>> rows;  // y -> x of the boxes in that row
  for (const BodyDef& body : scene.bodies) {
    if (body.id == 1) continue;
    EXPECT_EQ(body.position.z, 0.0f);
    EXPECT_EQ(body.colliders.at(0).half_extents, sim::Vec3(0.5f));
    rows[body.position.y].push_back(body.position.x);
  }
  ASSERT_EQ(rows.size(), 20u);
  int r = 0;
  for (auto& [y, xs] : rows) {
    EXPECT_EQ(y, 0.5f + static_cast<float>(r));
    ASSERT_EQ(xs.size(), static_cast<size_t>(20 - r));
    std::sort(xs.begin(), xs.end());
    EXPECT_EQ(xs.front(), -xs.back());                                          // centred on x = 0
    for (size_t i = 1; i < xs.size(); ++i) EXPECT_EQ(xs[i] - xs[i - 1], 1.0f);  // touching
    ++r;
  }
  const BodyDef& top = scene.bodies.back();
  EXPECT_EQ(top.position, sim::Vec3(0.0f, 19.5f, 0.0f));
}

TEST(SceneFiles, SpheresAndCapsules) {
  const SceneDef scene = load_ok("spheres_capsules.json");
  ASSERT_EQ(scene.bodies.size(), 1005u);
  expect_common(scene);
  expect_ground(scene);
  int spheres = 0, capsules = 0, walls = 0;
  for (const BodyDef& body : scene.bodies) {
    if (body.id == 1) continue;
    const ColliderDef& c = body.colliders.at(0);
    if (body.motion == MotionType::Static) {
      ++walls;
      // Inner faces at x = +-5 or z = +-5; 0.5 m thick, 25 m tall from the ground.
      const float inner_x = std::fabs(body.position.x) - c.half_extents.x;
      const float inner_z = std::fabs(body.position.z) - c.half_extents.z;
      EXPECT_TRUE(inner_x == 5.0f || inner_z == 5.0f) << "wall " << body.id;
      EXPECT_EQ(std::min(c.half_extents.x, c.half_extents.z), 0.25f);
      EXPECT_EQ(body.position.y - c.half_extents.y, 0.0f);
      EXPECT_EQ(body.position.y + c.half_extents.y, 25.0f);
      continue;
    }
    EXPECT_GE(body.position.x, -4.5f);
    EXPECT_LE(body.position.x, 4.5f);
    EXPECT_EQ(body.rotation, sim::identity_quat());  // capsules upright
    if (c.shape == ShapeType::Sphere) {
      ++spheres;
      EXPECT_EQ(c.radius, 0.5f);
    } else {
      ++capsules;
      EXPECT_EQ(c.shape, ShapeType::Capsule);
      EXPECT_EQ(c.radius, 0.3f);
      EXPECT_EQ(c.half_height, 0.5f);
    }
  }
  EXPECT_EQ(walls, 4);
  EXPECT_EQ(spheres, 500);
  EXPECT_EQ(capsules, 500);
  // Grid (0, 0, 0) is a sphere at (-4.5, 2, -4.5); its neighbour along x a capsule.
  EXPECT_EQ(find_body(scene, 6)->colliders[0].shape, ShapeType::Sphere);
  EXPECT_EQ(find_body(scene, 6)->position, sim::Vec3(-4.5f, 2.0f, -4.5f));
  EXPECT_EQ(find_body(scene, 7)->colliders[0].shape, ShapeType::Capsule);
}

TEST(SceneFiles, Demo) {
  const SceneDef scene = load_ok("demo.json");
  expect_common(scene);
  expect_ground(scene);
  EXPECT_EQ(scene.name, "demo");
  EXPECT_EQ(scene.spawn_points.size(), 8u);
  std::set<ShapeType> shapes;
  std::set<MotionType> motions;
  for (const BodyDef& body : scene.bodies) {
    motions.insert(body.motion);
    for (const ColliderDef& c : body.colliders) shapes.insert(c.shape);
  }
  EXPECT_EQ(shapes.size(), 3u);
  EXPECT_EQ(motions.size(), 3u);
}

// ---------------------------------------------------------------------------------------
// Defaults

TEST(SceneDefaults, EmptyObjectIsAnEmptySceneWithTheSimsSettings) {
  const SceneDef scene = parse_ok("{}");
  const sim::WorldSettings defaults;
  EXPECT_EQ(scene.name, "");
  EXPECT_TRUE(scene.bodies.empty());
  EXPECT_TRUE(scene.spawn_points.empty());
  EXPECT_EQ(scene.settings.tick_rate, 60u);
  EXPECT_EQ(scene.settings.gravity, sim::Vec3(0.0f, -9.81f, 0.0f));
  EXPECT_EQ(scene.settings.substeps, defaults.substeps);
  EXPECT_EQ(scene.settings.contact_hertz, defaults.contact_hertz);
  EXPECT_EQ(scene.settings.contact_damping_ratio, defaults.contact_damping_ratio);
  EXPECT_EQ(scene.settings.contact_push_max_speed, defaults.contact_push_max_speed);
  EXPECT_EQ(scene.settings.restitution_threshold, defaults.restitution_threshold);
}

TEST(SceneDefaults, EmptySolverTableKeepsTheSimsDefaults) {
  // The schema gives solver fields no default of its own: absent means the sim's.
  const SceneDef scene = parse_ok(R"({"solver": {}})");
  const sim::WorldSettings defaults;
  EXPECT_EQ(scene.settings.substeps, defaults.substeps);
  EXPECT_EQ(scene.settings.contact_hertz, defaults.contact_hertz);
  EXPECT_EQ(scene.settings.contact_damping_ratio, defaults.contact_damping_ratio);
  EXPECT_EQ(scene.settings.contact_push_max_speed, defaults.contact_push_max_speed);
  EXPECT_EQ(scene.settings.restitution_threshold, defaults.restitution_threshold);
}

TEST(SceneDefaults, SolverFieldsAreReadWhenGiven) {
  const SceneDef scene =
      parse_ok(R"({"solver": {"substeps": 8, "contact_hertz": 20, "contact_damping_ratio": 0.5,)"
               R"( "contact_push_max_speed": 0, "restitution_threshold": 2}})");
  EXPECT_EQ(scene.settings.substeps, 8u);
  EXPECT_EQ(scene.settings.contact_hertz, 20.0f);
  EXPECT_EQ(scene.settings.contact_damping_ratio, 0.5f);
  EXPECT_EQ(scene.settings.contact_push_max_speed, 0.0f);
  EXPECT_EQ(scene.settings.restitution_threshold, 2.0f);
  // One field given, the others the sim's.
  const SceneDef partial = parse_ok(R"({"solver": {"substeps": 2}})");
  EXPECT_EQ(partial.settings.substeps, 2u);
  EXPECT_EQ(partial.settings.contact_hertz, sim::WorldSettings{}.contact_hertz);
}

TEST(SceneDefaults, AbsentBodyAndColliderFields) {
  const SceneDef scene =
      parse_ok(R"({"bodies": [{"id": 1, "colliders": [{"shape": "Sphere", "radius": 1}]}]})");
  ASSERT_EQ(scene.bodies.size(), 1u);
  const BodyDef& b = scene.bodies[0];
  EXPECT_EQ(b.id, 1u);
  EXPECT_EQ(b.motion, MotionType::Dynamic);
  EXPECT_EQ(b.mass, 0.0f);
  EXPECT_EQ(b.position, sim::Vec3(0.0f));
  EXPECT_EQ(b.rotation, sim::identity_quat());
  EXPECT_EQ(b.linear_velocity, sim::Vec3(0.0f));
  EXPECT_EQ(b.angular_velocity, sim::Vec3(0.0f));
  EXPECT_EQ(b.linear_damping, 0.0f);
  EXPECT_EQ(b.angular_damping, 0.0f);
  EXPECT_EQ(b.gravity_scale, 1.0f);
  EXPECT_FALSE(b.freeze_rotation);
  EXPECT_TRUE(b.can_sleep);
  EXPECT_EQ(b.layer, 1u);
  EXPECT_EQ(b.collides_with, 0xffffffffu);
  ASSERT_EQ(b.colliders.size(), 1u);
  const ColliderDef& c = b.colliders[0];
  EXPECT_EQ(c.shape, ShapeType::Sphere);
  EXPECT_EQ(c.center, sim::Vec3(0.0f));
  EXPECT_EQ(c.rotation, sim::identity_quat());
  EXPECT_EQ(c.radius, 1.0f);
  EXPECT_EQ(c.half_height, 0.0f);
  EXPECT_EQ(c.half_extents, sim::Vec3(0.0f));  // absent vectors are zero
  EXPECT_EQ(c.friction, 0.6f);
  EXPECT_EQ(c.restitution, 0.0f);
  EXPECT_EQ(c.density, 1000.0f);
  EXPECT_FALSE(c.is_trigger);
  EXPECT_TRUE(c.enabled);
}

TEST(SceneDefaults, SpawnPointWithoutRotationIsIdentity) {
  const SceneDef scene =
      parse_ok(R"({"spawn_points": [{"position": {"x": 1, "y": 2, "z": 3}}, {}]})");
  ASSERT_EQ(scene.spawn_points.size(), 2u);
  EXPECT_EQ(scene.spawn_points[0].position, sim::Vec3(1, 2, 3));
  EXPECT_EQ(scene.spawn_points[0].rotation, sim::identity_quat());
  EXPECT_EQ(scene.spawn_points[1].position, sim::Vec3(0.0f));
}

TEST(SceneDefaults, SupportedTickRates) {
  for (uint32_t rate : {30u, 60u, 120u}) {
    EXPECT_EQ(parse_ok(R"({"tick_rate": )" + std::to_string(rate) + "}").settings.tick_rate, rate);
  }
}

TEST(SceneDefaults, StaticBodyNeedsNoMassOrColliders) {
  const SceneDef scene = parse_ok(R"({"bodies": [{"id": 3, "motion": "Static"}]})");
  ASSERT_EQ(scene.bodies.size(), 1u);
  EXPECT_TRUE(scene.bodies[0].colliders.empty());
}

TEST(SceneDefaults, Utf8ByteOrderMarkIsIgnored) {
  EXPECT_EQ(parse_ok("\xEF\xBB\xBF{\"name\": \"bom\"}").name, "bom");
}

// ---------------------------------------------------------------------------------------
// Quaternions

sim::Quat body_rotation(const std::string& rotation_json) {
  const SceneDef scene =
      parse_ok(R"({"bodies": [{"id": 1, "motion": "Static", "rotation": )" + rotation_json + "}]}");
  return scene.bodies.empty() ? sim::Quat() : scene.bodies[0].rotation;
}

TEST(SceneQuaternions, NonUnitIsNormalised) {
  EXPECT_EQ(body_rotation(R"({"x": 0, "y": 0, "z": 0, "w": 2})"), sim::identity_quat());
  const sim::Quat q = body_rotation(R"({"x": 0, "y": 3, "z": 0, "w": 4})");
  EXPECT_FLOAT_EQ(q.y, 0.6f);
  EXPECT_FLOAT_EQ(q.w, 0.8f);
  EXPECT_EQ(q.x, 0.0f);
}

TEST(SceneQuaternions, UnitIsKeptBitForBit) {
  // Written with six decimals: |q|^2 = 1 - 3.6e-7, within the 1e-6 tolerance.
  const sim::Quat q = body_rotation(R"({"x": 0, "y": 0.130526, "z": 0, "w": 0.991445})");
  EXPECT_EQ(bits(q.y), bits(0.130526f));
  EXPECT_EQ(bits(q.w), bits(0.991445f));
}

TEST(SceneQuaternions, NormalisingTwiceChangesNothing) {
  const sim::Quat once = body_rotation(R"({"x": 0.1, "y": 0.2, "z": 0.3, "w": 0.4})");
  SceneDef scene;
  BodyDef body;
  body.id = 1;
  body.motion = MotionType::Static;
  body.rotation = once;
  scene.bodies.push_back(body);
  auto again = parse_scene_binary(scene_to_binary(scene), "again");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  const sim::Quat twice = again->bodies[0].rotation;
  EXPECT_EQ(bits(once.x), bits(twice.x));
  EXPECT_EQ(bits(once.y), bits(twice.y));
  EXPECT_EQ(bits(once.z), bits(twice.z));
  EXPECT_EQ(bits(once.w), bits(twice.w));
}

// ---------------------------------------------------------------------------------------
// Bad input: each message names the source, the body and the field

/// Expects every piece in the message, and prints the message on failure.
void expect_mentions(const std::string& message, const std::vector<std::string>& pieces) {
  for (const std::string& piece : pieces) {
    EXPECT_NE(message.find(piece), std::string::npos)
        << "message lacks \"" << piece << "\": " << message;
  }
}

/// A one-body scene (body 12, dynamic) with the given body fields and collider fields.
std::string one_body(const std::string& body_fields, const std::string& collider_fields) {
  return R"({"bodies": [{"id": 12, )" + body_fields + (body_fields.empty() ? "" : ", ") +
         R"("colliders": [{)" + collider_fields + "}]}]}";
}

TEST(SceneErrors, ExampleFromTheDesign) {
  EXPECT_EQ(parse_error(one_body("", R"("shape": "Sphere", "radius": -1)"), "scenes/bad.json"),
            "scenes/bad.json: body 12: colliders[0].radius: must be > 0 (got -1)");
}

TEST(SceneErrors, MalformedJsonGivesLineAndColumn) {
  const std::string message =
      parse_error("{\n  \"name\": \"x\",\n  \"bodies\": [\n    {\"id\": 1,}\n  ]\n}");
  expect_mentions(message, {"bad.json:4:"});
}

TEST(SceneErrors, TruncatedJson) {
  expect_mentions(parse_error(R"({"bodies": [{"id": 1)"), {"bad.json:1:"});
  expect_mentions(parse_error(""), {"bad.json"});
}

TEST(SceneErrors, NotStrictJson) {
  expect_mentions(parse_error(R"({name: "x"})"), {"bad.json:1:"});
  expect_mentions(parse_error(R"({"tick_rate": 60,})"), {"bad.json:1:"});
}

TEST(SceneErrors, TrailingGarbage) { expect_mentions(parse_error(R"({} {})"), {"bad.json:1:"}); }

TEST(SceneErrors, NulByte) {
  expect_mentions(parse_error(std::string("{}\0{\"x\":1}", 11)),
                  {"bad.json", "NUL byte at offset 2"});
}

TEST(SceneErrors, UnknownFieldNamesBodyAndField) {
  const std::string message = parse_error(
      "{\"bodies\": [\n{\"id\": 5, \"motion\": \"Static\"},\n"
      "{\"id\": 12, \"colliders\": [{\"shape\": \"Sphere\", \"radius\": 1, \"resitution\": "
      "0.5}]}]}");
  expect_mentions(message, {"bad.json:3:", "body 12", "colliders[0].resitution", "unknown field"});
}

TEST(SceneErrors, UnknownFieldBeforeTheIdStillNamesTheBody) {
  const std::string message =
      parse_error(R"({"bodies": [{"colliders": [{"sahpe": "Box"}], "id": 44}]})");
  expect_mentions(message, {"bad.json:1:", "body 44", "colliders[0].sahpe", "unknown field"});
}

TEST(SceneErrors, UnknownSceneField) {
  expect_mentions(parse_error(R"({"gravty": {"x": 0, "y": -1, "z": 0}})"),
                  {"bad.json:1:", "gravty", "unknown field"});
}

TEST(SceneErrors, UnknownEnumNames) {
  expect_mentions(parse_error(one_body(R"("motion": "Dinamic")", R"("shape": "Box")")),
                  {"bad.json:1:", "body 12", "motion", "Dinamic"});
  expect_mentions(parse_error(one_body("", R"("shape": "Sphear", "radius": 1)")),
                  {"bad.json:1:", "body 12", "colliders[0].shape", "Sphear"});
}

TEST(SceneErrors, EnumNumbersOutOfRange) {
  expect_mentions(parse_error(one_body(R"("motion": 7)", R"("shape": "Sphere", "radius": 1)")),
                  {"bad.json: body 12: motion: unknown motion type 7"});
  expect_mentions(parse_error(one_body("", R"("shape": 9, "radius": 1)")),
                  {"bad.json: body 12: colliders[0].shape: unknown shape 9"});
}

TEST(SceneErrors, IncompleteVector) {
  expect_mentions(
      parse_error(one_body(R"("position": {"x": 1, "y": 2})", R"("shape": "Sphere", "radius": 1)")),
      {"bad.json:1:", "body 12", "position", "wrong number"});
}

TEST(SceneErrors, DuplicateIds) {
  const std::string message =
      parse_error(R"({"bodies": [{"id": 3, "motion": "Static"}, {"id": 4, "motion": "Static"},)"
                  R"( {"id": 3, "motion": "Static"}]})");
  expect_mentions(message, {"bad.json: body 3: id: duplicate", "bodies[0]", "bodies[2]"});
}

TEST(SceneErrors, MissingOrReservedId) {
  expect_mentions(parse_error(R"({"bodies": [{"motion": "Static"}]})"),
                  {"bad.json: bodies[0]: id: missing"});
  expect_mentions(parse_error(R"({"bodies": [{"id": 0, "motion": "Static"}]})"),
                  {"bad.json: bodies[0]: id: must be 1 to 4294967294 (got 0)"});
  expect_mentions(parse_error(R"({"bodies": [{"id": 4294967295, "motion": "Static"}]})"),
                  {"bad.json: bodies[0]: id:", "(got 4294967295)"});
  // The parser range-checks integers only when it builds the array, so this message can
  // name the array and the bad literal but not the body.
  expect_mentions(parse_error(R"({"bodies": [{"id": -1}]})"),
                  {"bad.json:1:", "bodies", "\"-1\"", "does not fit"});
}

TEST(SceneErrors, NonPositiveSizes) {
  expect_mentions(parse_error(one_body("", R"("shape": "Sphere", "radius": 0)")),
                  {"bad.json: body 12: colliders[0].radius: must be > 0 (got 0)"});
  expect_mentions(parse_error(one_body("", R"("shape": "Capsule", "half_height": 1)")),
                  {"bad.json: body 12: colliders[0].radius: must be > 0 (got 0)"});
  expect_mentions(
      parse_error(one_body("", R"("shape": "Box", "half_extents": {"x": 1, "y": 0, "z": 1})")),
      {"bad.json: body 12: colliders[0].half_extents.y: must be > 0 (got 0)"});
  expect_mentions(parse_error(one_body("", R"("shape": "Box")")),
                  {"bad.json: body 12: colliders[0].half_extents.x: must be > 0 (got 0)"});
}

TEST(SceneErrors, NegativeValues) {
  const std::string sphere = R"("shape": "Sphere", "radius": 1)";
  expect_mentions(
      parse_error(one_body("", R"("shape": "Capsule", "radius": 1, "half_height": -0.5)")),
      {"bad.json: body 12: colliders[0].half_height: must be >= 0 (got -0.5)"});
  expect_mentions(parse_error(one_body("", sphere + R"(, "friction": -0.1)")),
                  {"bad.json: body 12: colliders[0].friction: must be >= 0 (got -0.1)"});
  expect_mentions(parse_error(one_body("", sphere + R"(, "restitution": -1)")),
                  {"bad.json: body 12: colliders[0].restitution: must be >= 0 (got -1)"});
  expect_mentions(parse_error(one_body("", sphere + R"(, "density": -1000)")),
                  {"bad.json: body 12: colliders[0].density: must be >= 0 (got -1000)"});
  expect_mentions(parse_error(one_body(R"("linear_damping": -1)", sphere)),
                  {"bad.json: body 12: linear_damping: must be >= 0 (got -1)"});
  expect_mentions(parse_error(one_body(R"("angular_damping": -2)", sphere)),
                  {"bad.json: body 12: angular_damping: must be >= 0 (got -2)"});
  expect_mentions(parse_error(one_body(R"("mass": -3)", sphere)),
                  {"bad.json: body 12: mass: must be >= 0 (got -3"});
}

TEST(SceneErrors, DynamicBodyWithoutMass) {
  const std::string no_density = R"("shape": "Sphere", "radius": 1, "density": 0)";
  expect_mentions(parse_error(one_body("", no_density)), {"bad.json: body 12: mass:"});
  expect_mentions(parse_error(one_body("", no_density + R"(, "is_trigger": true)")),
                  {"bad.json: body 12: mass:"});
  expect_mentions(parse_error(R"({"bodies": [{"id": 12}]})"), {"bad.json: body 12: mass:"});
  // A given mass, or a kinematic body, needs no density.
  parse_ok(one_body(R"("mass": 5)", no_density));
  parse_ok(one_body(R"("motion": "Kinematic")", no_density));
}

TEST(SceneErrors, TickRate) {
  expect_mentions(parse_error(R"({"tick_rate": 50})"),
                  {"bad.json: tick_rate: must be 30, 60 or 120 (got 50)"});
  expect_mentions(parse_error(R"({"tick_rate": 0})"), {"bad.json: tick_rate:"});
}

TEST(SceneErrors, GeometryShapesWithoutTheirDataNameTheMissingField) {
  const std::pair<const char*, const char*> cases[] = {
      {"Hull", "colliders[1].points: a Hull needs 4 to 4096 points (got 0)"},
      {"Mesh", "colliders[1].points: a Mesh needs points and indices (or mesh_file)"},
      {"Heightfield", "colliders[1].heights: a Heightfield needs heights"},
  };
  for (const auto& [shape, message] : cases) {
    const std::string json = R"({"bodies": [{"id": 5, "motion": "Static", "colliders": [{"shape": "Box", )"
                             R"("half_extents": {"x": 1, "y": 1, "z": 1}}, {"shape": ")" +
                             std::string(shape) + R"("}]}]})";
    expect_mentions(parse_error(json), {"bad.json: body 5: " + std::string(message)});
  }
}

std::string hull_points(const std::vector<std::array<float, 3>>& pts) {
  std::string s = R"("shape": "Hull", "points": [)";
  for (size_t i = 0; i < pts.size(); ++i) {
    s += (i ? ", " : "") + std::string(R"({"x": )") + std::to_string(pts[i][0]) + R"(, "y": )" +
         std::to_string(pts[i][1]) + R"(, "z": )" + std::to_string(pts[i][2]) + "}";
  }
  return s + "]";
}

TEST(SceneHulls, LoadsAndRoundTripsPointsExactly) {
  const SceneDef scene = parse_ok(one_body(
      "", hull_points({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.25f, 0.25f, 0.25f}, {0.1f, 0.2f, 0.3f}})));
  ASSERT_EQ(scene.bodies.size(), 1u);
  const sim::ColliderDef& c = scene.bodies[0].colliders[0];
  EXPECT_EQ(c.shape, sim::ShapeType::Hull);
  ASSERT_EQ(c.points.size(), 6u);
  EXPECT_EQ(c.points[5], sim::Vec3(0.1f, 0.2f, 0.3f));
  const std::vector<uint8_t> bytes = scene_to_binary(scene);
  auto back = parse_scene_binary(bytes, "again");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->bodies[0].colliders[0].points, c.points);
  EXPECT_EQ(scene_to_binary(*back), bytes);
}

TEST(SceneHulls, BadGeometryNamesBodyColliderAndField) {
  expect_mentions(parse_error(one_body("", hull_points({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}))),
                  {"bad.json: body 12: colliders[0].points: a Hull needs 4 to 4096 points (got 3)"});
  expect_mentions(parse_error(one_body("", R"("shape": "Hull")")),
                  {"bad.json: body 12: colliders[0].points: a Hull needs 4 to 4096 points (got 0)"});
  expect_mentions(parse_error(one_body("", hull_points({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}}))),
                  {"bad.json: body 12: colliders[0].points: hull: points are coplanar (no volume)"});
  expect_mentions(parse_error(one_body("", R"("shape": "Hull", "points": [{"x": 0, "y": 0, "z": 0}, )"
                                           R"({"x": 1, "y": 0, "z": 0}, {"x": 0, "y": 1, "z": 0}, )"
                                           R"({"x": 0, "y": 0, "z": inf}])")),
                  {"bad.json: body 12: colliders[0].points[3]: must be finite"});
}

TEST(SceneErrors, PointsOnAShapeThatHasNone) {
  expect_mentions(
      parse_error(
          one_body("", R"("shape": "Sphere", "radius": 1, "points": [{"x": 0, "y": 0, "z": 0}])")),
      {"bad.json: body 12: colliders[0].points:"});
  expect_mentions(
      parse_error(one_body("", R"("shape": "Sphere", "radius": 1, "indices": [0, 1, 2])")),
      {"bad.json: body 12: colliders[0].indices:"});
}

TEST(SceneErrors, ZeroQuaternions) {
  const std::string zero = R"({"x": 0, "y": 0, "z": 0, "w": 0})";
  expect_mentions(
      parse_error(one_body(R"("rotation": )" + zero, R"("shape": "Sphere", "radius": 1)")),
      {"bad.json: body 12: rotation: quaternion has length ~0"});
  expect_mentions(
      parse_error(one_body("", R"("shape": "Sphere", "radius": 1, "rotation": )" + zero)),
      {"bad.json: body 12: colliders[0].rotation: quaternion has length ~0"});
  expect_mentions(parse_error(R"({"spawn_points": [{}, {"rotation": )" + zero + "}]}"),
                  {"bad.json: spawn_points[1].rotation: quaternion has length ~0"});
  const std::string tiny = R"({"x": 1e-7, "y": 0, "z": 0, "w": 0})";
  expect_mentions(parse_error(R"({"spawn_points": [{"rotation": )" + tiny + "}]}"),
                  {"bad.json: spawn_points[0].rotation:"});
}

TEST(SceneErrors, Limits) {
  std::string many = R"({"bodies": [{"id": 1, "colliders": [)";
  for (size_t i = 0; i <= SceneLimits::kMaxCollidersPerBody; ++i) {
    many += std::string(i ? ", " : "") + R"({"shape": "Sphere", "radius": 1})";
  }
  many += "]}]}";
  expect_mentions(parse_error(many), {"bad.json: body 1: colliders: the body has 65 colliders"});
  expect_mentions(parse_error(R"({"name": ")" + std::string(300, 'n') + R"("})"),
                  {"bad.json: name: is 300 bytes long"});
  expect_mentions(parse_error(R"({"solver": {"substeps": 0}})"), {"bad.json: solver.substeps:"});
  expect_mentions(parse_error(R"({"solver": {"substeps": 65}})"), {"bad.json: solver.substeps:"});
}

TEST(SceneErrors, HugeArrayIsRejectedBeforeParsing) {
  std::string json =
      R"({"bodies": [{"id": 1, "colliders": [{"shape": "Sphere", "radius": 1, "indices": [)";
  json.reserve(json.size() + 2 * (SceneLimits::kMaxArrayElements + 2) + 8);
  for (size_t i = 0; i <= SceneLimits::kMaxArrayElements; ++i) json += i ? ",0" : "0";
  json += "]}]}]}";
  expect_mentions(parse_error(json), {"bad.json:1: an array here has more than 4194304 elements"});
}

/// Placeholders in kEveryFloat, each with a valid value and the field the error names.
struct FloatField {
  std::string placeholder;
  std::string valid;
  std::string expected;  // what the message must contain besides the value
};

// A scene that sets every float field the format has; @name@ marks each one.
const char* const kEveryFloat = R"({
  "gravity": {"x": @gx@, "y": @gy@, "z": @gz@},
  "solver": {"contact_hertz": @hz@, "contact_damping_ratio": @dr@, "contact_push_max_speed": @ps@,
             "restitution_threshold": @rt@},
  "bodies": [{"id": 9, "mass": @mass@,
    "position": {"x": @px@, "y": @py@, "z": @pz@},
    "rotation": {"x": @qx@, "y": @qy@, "z": @qz@, "w": @qw@},
    "linear_velocity": {"x": @vx@, "y": @vy@, "z": @vz@},
    "angular_velocity": {"x": @wx@, "y": @wy@, "z": @wz@},
    "linear_damping": @ld@, "angular_damping": @ad@, "gravity_scale": @gs@,
    "colliders": [{"shape": "Capsule",
      "center": {"x": @cx@, "y": @cy@, "z": @cz@},
      "rotation": {"x": @rx@, "y": @ry@, "z": @rz@, "w": @rw@},
      "radius": @r@, "half_height": @hh@, "half_extents": {"x": @ex@, "y": @ey@, "z": @ez@},
      "friction": @f@, "restitution": @e@, "density": @d@}]}],
  "spawn_points": [{"position": {"x": @sx@, "y": @sy@, "z": @sz@},
                    "rotation": {"x": @tx@, "y": @ty@, "z": @tz@, "w": @tw@}}]
})";

std::vector<FloatField> every_float() {
  return {
      {"gx", "0", "bad.json: gravity.x"},
      {"gy", "-9.81", "bad.json: gravity.y"},
      {"gz", "0", "bad.json: gravity.z"},
      {"hz", "30", "bad.json: solver.contact_hertz"},
      {"dr", "10", "bad.json: solver.contact_damping_ratio"},
      {"ps", "3", "bad.json: solver.contact_push_max_speed"},
      {"rt", "1", "bad.json: solver.restitution_threshold"},
      {"mass", "2", "bad.json: body 9: mass"},
      {"px", "0", "bad.json: body 9: position.x"},
      {"py", "1", "bad.json: body 9: position.y"},
      {"pz", "0", "bad.json: body 9: position.z"},
      {"qx", "0", "bad.json: body 9: rotation.x"},
      {"qy", "0", "bad.json: body 9: rotation.y"},
      {"qz", "0", "bad.json: body 9: rotation.z"},
      {"qw", "1", "bad.json: body 9: rotation.w"},
      {"vx", "0", "bad.json: body 9: linear_velocity.x"},
      {"vy", "0", "bad.json: body 9: linear_velocity.y"},
      {"vz", "0", "bad.json: body 9: linear_velocity.z"},
      {"wx", "0", "bad.json: body 9: angular_velocity.x"},
      {"wy", "0", "bad.json: body 9: angular_velocity.y"},
      {"wz", "0", "bad.json: body 9: angular_velocity.z"},
      {"ld", "0", "bad.json: body 9: linear_damping"},
      {"ad", "0", "bad.json: body 9: angular_damping"},
      {"gs", "1", "bad.json: body 9: gravity_scale"},
      {"cx", "0", "bad.json: body 9: colliders[0].center.x"},
      {"cy", "0", "bad.json: body 9: colliders[0].center.y"},
      {"cz", "0", "bad.json: body 9: colliders[0].center.z"},
      {"rx", "0", "bad.json: body 9: colliders[0].rotation.x"},
      {"ry", "0", "bad.json: body 9: colliders[0].rotation.y"},
      {"rz", "0", "bad.json: body 9: colliders[0].rotation.z"},
      {"rw", "1", "bad.json: body 9: colliders[0].rotation.w"},
      {"r", "0.5", "bad.json: body 9: colliders[0].radius"},
      {"hh", "0.5", "bad.json: body 9: colliders[0].half_height"},
      {"ex", "0", "bad.json: body 9: colliders[0].half_extents.x"},
      {"ey", "0", "bad.json: body 9: colliders[0].half_extents.y"},
      {"ez", "0", "bad.json: body 9: colliders[0].half_extents.z"},
      {"f", "0.6", "bad.json: body 9: colliders[0].friction"},
      {"e", "0", "bad.json: body 9: colliders[0].restitution"},
      {"d", "1000", "bad.json: body 9: colliders[0].density"},
      {"sx", "0", "bad.json: spawn_points[0].position.x"},
      {"sy", "0", "bad.json: spawn_points[0].position.y"},
      {"sz", "0", "bad.json: spawn_points[0].position.z"},
      {"tx", "0", "bad.json: spawn_points[0].rotation.x"},
      {"ty", "0", "bad.json: spawn_points[0].rotation.y"},
      {"tz", "0", "bad.json: spawn_points[0].rotation.z"},
      {"tw", "1", "bad.json: spawn_points[0].rotation.w"},
  };
}

/// kEveryFloat with each placeholder set to its valid value, except `field` set to `value`.
std::string every_float_with(const std::string& field, const std::string& value) {
  std::string json = kEveryFloat;
  for (const FloatField& f : every_float()) {
    const std::string marker = "@" + f.placeholder + "@";
    const size_t at = json.find(marker);
    EXPECT_NE(at, std::string::npos) << marker;
    if (at != std::string::npos)
      json.replace(at, marker.size(), f.placeholder == field ? value : f.valid);
  }
  EXPECT_EQ(json.find('@'), std::string::npos) << "placeholder without a FloatField";
  return json;
}

TEST(SceneErrors, EveryFloatIsCheckedForNanAndInfinity) {
  parse_ok(every_float_with("", ""));  // the template itself is valid
  for (const FloatField& f : every_float()) {
    for (const char* bad : {"nan", "inf", "-inf", "1e39"}) {
      SCOPED_TRACE(f.placeholder + " = " + bad);
      expect_mentions(parse_error(every_float_with(f.placeholder, bad)),
                      {f.expected + ": must be a finite number (got "});
    }
  }
}

// ---------------------------------------------------------------------------------------
// Binary: round trips, verification, hostile bytes

void expect_same_bits(const sim::Vec3& a, const sim::Vec3& b, const std::string& what) {
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << what << "[" << i << "]";
}
void expect_same_bits(const sim::Quat& a, const sim::Quat& b, const std::string& what) {
  EXPECT_EQ(bits(a.x), bits(b.x)) << what << ".x";
  EXPECT_EQ(bits(a.y), bits(b.y)) << what << ".y";
  EXPECT_EQ(bits(a.z), bits(b.z)) << what << ".z";
  EXPECT_EQ(bits(a.w), bits(b.w)) << what << ".w";
}

void expect_same_collider(const ColliderDef& a, const ColliderDef& b, const std::string& what) {
  EXPECT_EQ(a.shape, b.shape) << what;
  expect_same_bits(a.center, b.center, what + ".center");
  expect_same_bits(a.rotation, b.rotation, what + ".rotation");
  EXPECT_EQ(bits(a.radius), bits(b.radius)) << what;
  EXPECT_EQ(bits(a.half_height), bits(b.half_height)) << what;
  expect_same_bits(a.half_extents, b.half_extents, what + ".half_extents");
  EXPECT_EQ(bits(a.friction), bits(b.friction)) << what;
  EXPECT_EQ(bits(a.restitution), bits(b.restitution)) << what;
  EXPECT_EQ(bits(a.density), bits(b.density)) << what;
  EXPECT_EQ(a.is_trigger, b.is_trigger) << what;
  EXPECT_EQ(a.enabled, b.enabled) << what;
}

void expect_same_body(const BodyDef& a, const BodyDef& b) {
  const std::string what = "body " + std::to_string(a.id);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.motion, b.motion) << what;
  EXPECT_EQ(bits(a.mass), bits(b.mass)) << what;
  expect_same_bits(a.position, b.position, what + " position");
  expect_same_bits(a.rotation, b.rotation, what + " rotation");
  expect_same_bits(a.linear_velocity, b.linear_velocity, what + " linear_velocity");
  expect_same_bits(a.angular_velocity, b.angular_velocity, what + " angular_velocity");
  EXPECT_EQ(bits(a.linear_damping), bits(b.linear_damping)) << what;
  EXPECT_EQ(bits(a.angular_damping), bits(b.angular_damping)) << what;
  EXPECT_EQ(bits(a.gravity_scale), bits(b.gravity_scale)) << what;
  EXPECT_EQ(a.freeze_rotation, b.freeze_rotation) << what;
  EXPECT_EQ(a.can_sleep, b.can_sleep) << what;
  EXPECT_EQ(a.layer, b.layer) << what;
  EXPECT_EQ(a.collides_with, b.collides_with) << what;
  ASSERT_EQ(a.colliders.size(), b.colliders.size()) << what;
  for (size_t i = 0; i < a.colliders.size(); ++i) {
    expect_same_collider(a.colliders[i], b.colliders[i],
                         what + " colliders[" + std::to_string(i) + "]");
  }
}

void expect_same_scene(const SceneDef& a, const SceneDef& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.settings.tick_rate, b.settings.tick_rate);
  expect_same_bits(a.settings.gravity, b.settings.gravity, "gravity");
  EXPECT_EQ(a.settings.substeps, b.settings.substeps);
  EXPECT_EQ(bits(a.settings.contact_hertz), bits(b.settings.contact_hertz));
  EXPECT_EQ(bits(a.settings.contact_damping_ratio), bits(b.settings.contact_damping_ratio));
  EXPECT_EQ(bits(a.settings.contact_push_max_speed), bits(b.settings.contact_push_max_speed));
  EXPECT_EQ(bits(a.settings.restitution_threshold), bits(b.settings.restitution_threshold));
  ASSERT_EQ(a.bodies.size(), b.bodies.size());
  for (size_t i = 0; i < a.bodies.size(); ++i) expect_same_body(a.bodies[i], b.bodies[i]);
  ASSERT_EQ(a.spawn_points.size(), b.spawn_points.size());
  for (size_t i = 0; i < a.spawn_points.size(); ++i) {
    expect_same_bits(a.spawn_points[i].position, b.spawn_points[i].position, "spawn position");
    expect_same_bits(a.spawn_points[i].rotation, b.spawn_points[i].rotation, "spawn rotation");
  }
}

TEST(SceneBinary, CommittedScenesRoundTripExactly) {
  for (const char* name : {"pile.json", "pyramid.json", "spheres_capsules.json", "demo.json"}) {
    SCOPED_TRACE(name);
    const SceneDef from_json = load_ok(name);
    const std::vector<uint8_t> binary = scene_to_binary(from_json);
    auto from_binary = parse_scene_binary(binary, name);
    ASSERT_TRUE(from_binary.has_value()) << from_binary.error().message;
    expect_same_scene(from_json, *from_binary);
    EXPECT_EQ(scene_to_binary(*from_binary), binary);  // the writer is deterministic
  }
}

/// A scene that uses every field with values off their defaults, including -0.0,
/// a subnormal and the largest float, which the binary must carry bit for bit.
SceneDef unusual_scene() {
  SceneDef scene;
  scene.name = "unusual \xC3\xA9";  // UTF-8
  scene.settings.tick_rate = 120;
  scene.settings.gravity = sim::Vec3(-0.0f, -1.625f, std::numeric_limits<float>::denorm_min());
  scene.settings.substeps = 8;
  scene.settings.contact_hertz = 45.5f;
  scene.settings.contact_damping_ratio = 0.0f;
  scene.settings.contact_push_max_speed = 7.25f;
  scene.settings.restitution_threshold = 0.125f;
  BodyDef body;
  body.id = 4294967294u;
  body.motion = MotionType::Kinematic;
  body.mass = -0.0f;
  // The edge of the world (the largest accepted coordinate; keel/sim/limits.h), a
  // negative zero and a tiny value: each must come back bit for bit.
  body.position = sim::Vec3(-sim::kMaxWorldExtent, -0.0f, 1e-30f);
  body.rotation = sim::make_quat(0.0f, 0.0f, -0.70710677f, 0.70710677f);
  body.linear_velocity = sim::Vec3(1, 2, 3);
  body.angular_velocity = sim::Vec3(-4, 5, -6);
  body.linear_damping = 0.5f;
  body.angular_damping = 0.25f;
  body.gravity_scale = -2.0f;
  body.freeze_rotation = true;
  body.can_sleep = false;
  body.layer = 0;
  body.collides_with = 0x80000001u;
  ColliderDef capsule;
  capsule.shape = ShapeType::Capsule;
  capsule.center = sim::Vec3(0.1f, 0.2f, 0.3f);
  capsule.rotation = sim::make_quat(0.5f, 0.5f, 0.5f, 0.5f);
  capsule.radius = 0.3f;
  capsule.half_height = -0.0f;
  capsule.half_extents = sim::Vec3(-7.0f, 0.0f, 1.0f);  // unused by a capsule, kept anyway
  capsule.friction = 0.0f;
  capsule.restitution = 1.5f;
  capsule.density = 0.0f;
  capsule.is_trigger = true;
  capsule.enabled = false;
  body.colliders = {capsule, ColliderDef{}};
  scene.bodies.push_back(body);
  BodyDef first;
  first.id = 1;
  first.colliders.push_back(ColliderDef{});  // the sim's defaults: a 0.5 m sphere
  scene.bodies.push_back(first);
  scene.spawn_points.push_back(sim::Transform{sim::Vec3(-0.0f, 1, 2), sim::identity_quat()});
  return scene;
}

TEST(SceneBinary, EveryFieldRoundTripsBitForBit) {
  const SceneDef scene = unusual_scene();
  auto back = parse_scene_binary(scene_to_binary(scene), "unusual");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  expect_same_scene(scene, *back);
}

TEST(SceneBinary, LoadFileDetectsBinaryByIdentifier) {
  const auto dir = std::filesystem::temp_directory_path() / "keel_scene_loader_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "demo.kscn").string();
  const SceneDef demo = load_ok("demo.json");
  const std::vector<uint8_t> binary = scene_to_binary(demo);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(binary.data()),
              static_cast<std::streamsize>(binary.size()));
  }
  auto loaded = load_scene_file(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  expect_same_scene(demo, *loaded);
  std::filesystem::remove_all(dir);
}

TEST(SceneBinary, MisalignedBytesAreHandled) {
  const std::vector<uint8_t> binary = scene_to_binary(load_ok("demo.json"));
  std::vector<uint8_t> shifted(binary.size() + 1);
  std::copy(binary.begin(), binary.end(), shifted.begin() + 1);
  auto scene = parse_scene_binary(std::span<const uint8_t>(shifted).subspan(1), "shifted");
  ASSERT_TRUE(scene.has_value()) << scene.error().message;
  EXPECT_EQ(scene->bodies.size(), 16u);
}

TEST(SceneBinary, BadBinaryIsValidatedLikeJson) {
  SceneDef scene = unusual_scene();
  scene.bodies[0].colliders[0].radius = -1.0f;
  auto back = parse_scene_binary(scene_to_binary(scene), "net");
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error().message,
            "net: body 4294967294: colliders[0].radius: must be > 0 (got -1)");
}

TEST(SceneBinary, WrongIdentifierIsRejected) {
  std::vector<uint8_t> binary = scene_to_binary(load_ok("demo.json"));
  binary[4] = 'X';
  auto scene = parse_scene_binary(binary, "net");
  ASSERT_FALSE(scene.has_value());
  expect_mentions(scene.error().message, {"net: not a binary scene", "KSCN"});
}

TEST(SceneBinary, EveryTruncationIsRejected) {
  const std::vector<uint8_t> binary = scene_to_binary(load_ok("demo.json"));
  for (size_t size = 0; size < binary.size(); ++size) {
    auto scene = parse_scene_binary(std::span<const uint8_t>(binary.data(), size), "cut");
    EXPECT_FALSE(scene.has_value()) << "accepted the first " << size << " bytes";
    if (!scene.has_value()) {
      EXPECT_EQ(scene.error().message.rfind("cut: ", 0), 0u);
    }
  }
}

TEST(SceneBinary, VerifierRejectsOffsetsPointingOutside) {
  std::vector<uint8_t> binary = scene_to_binary(load_ok("demo.json"));
  // The root offset (first four bytes) pointing past the end.
  const uint32_t huge = 0x7ffffff0u;
  std::memcpy(binary.data(), &huge, sizeof(huge));
  auto scene = parse_scene_binary(binary, "net");
  ASSERT_FALSE(scene.has_value());
  expect_mentions(scene.error().message, {"net: not a valid binary scene", "verification failed"});
}

TEST(SceneBinary, TooManyBodiesIsRejected) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Body>> bodies(SceneLimits::kMaxBodies + 1);
  for (auto& body : bodies) body = fb::CreateBody(fbb, 1u, fb::Motion::Static);
  const auto vector = fbb.CreateVector(bodies);
  fb::FinishSceneBuffer(fbb, fb::CreateScene(fbb, 0, 60, nullptr, vector));
  auto scene =
      parse_scene_binary(std::span<const uint8_t>(fbb.GetBufferPointer(), fbb.GetSize()), "big");
  ASSERT_FALSE(scene.has_value());
  expect_mentions(scene.error().message,
                  {"big: bodies: the scene has 1000001 bodies, at most 1000000"});
}

// Random and mutated inputs must give a value or an error, never a crash or a hang.
// Bounded and seeded, so the test is fast and the same on every run.
TEST(SceneFuzz, RandomBytesNeverCrash) {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<size_t> length(0, 600);
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes(length(rng));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(byte(rng));
    if (round % 2 == 0 && bytes.size() >= 8) std::memcpy(bytes.data() + 4, "KSCN", 4);
    (void)parse_scene_binary(bytes, "fuzz");
    (void)parse_scene_json(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "fuzz");
  }
}

TEST(SceneFuzz, MutatedBinaryNeverCrashes) {
  const std::vector<uint8_t> original = scene_to_binary(load_ok("demo.json"));
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes = original;
    for (int flips = 1 + round % 4; flips > 0; --flips) {
      bytes[position(rng)] = static_cast<uint8_t>(byte(rng));
    }
    auto scene = parse_scene_binary(bytes, "fuzz");
    if (scene.has_value()) {
      ++accepted;
      // Whatever got through passed every rule: it must survive another round trip.
      EXPECT_TRUE(parse_scene_binary(scene_to_binary(*scene), "again").has_value());
    }
  }
  EXPECT_LT(accepted, 3000);
}

TEST(SceneFuzz, MutatedJsonNeverCrashes) {
  std::ifstream file(kScenes + "demo.json");
  const std::string original((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  ASSERT_FALSE(original.empty());
  const std::string alphabet = "{}[]\":,-.0123456789eE naxyzwidtrue\\/\n";
  std::mt19937 rng(11);
  std::uniform_int_distribution<size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  for (int round = 0; round < 300; ++round) {
    std::string text = original;
    for (int edits = 1 + round % 3; edits > 0; --edits) {
      const size_t at = position(rng) % text.size();
      switch (round % 3) {
        case 0:
          text[at] = alphabet[pick(rng)];
          break;
        case 1:
          text.erase(at, 1);
          break;
        default:
          text.insert(at, 1, alphabet[pick(rng)]);
          break;
      }
    }
    auto scene = parse_scene_json(text, "fuzz.json");
    if (!scene.has_value()) {
      EXPECT_EQ(scene.error().message.rfind("fuzz.json", 0), 0u);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Files

TEST(SceneFileErrors, MissingFileAndDirectory) {
  auto missing = load_scene_file(kScenes + "no_such_scene.json");
  ASSERT_FALSE(missing.has_value());
  expect_mentions(missing.error().message, {"no_such_scene.json: cannot read"});
  auto directory = load_scene_file(kScenes);
  ASSERT_FALSE(directory.has_value());
  expect_mentions(directory.error().message, {"cannot read"});
}

TEST(SceneSchema, TextIsCompiledIn) {
  const std::string_view text = scene_schema_text();
  EXPECT_NE(text.find("root_type Scene;"), std::string_view::npos);
  EXPECT_NE(text.find("file_identifier \"KSCN\";"), std::string_view::npos);
}

}  // namespace
}  // namespace keel::scene
