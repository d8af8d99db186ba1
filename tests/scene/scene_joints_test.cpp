// Joints, ragdolls and vehicles in scene files: what loads, what the loader refuses (with
// the file, the joint index and the field), and exact binary round trips.
#include <keel/scene/scene.h>
#include <keel/sim/builders.h>
#include <keel/sim/joint.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <string>

namespace keel::scene {
namespace {

using sim::JointKind;

const std::string kTwoBodies =
    R"("bodies": [{"id": 1, "colliders": [{"shape": "Sphere", "radius": 0.5}]},
                  {"id": 2, "position": {"x": 2, "y": 0, "z": 0}, "colliders": [{"shape": "Sphere", "radius": 0.5}]}])";

std::string with_joint(const std::string& joint) { return "{" + kTwoBodies + R"(, "joints": [)" + joint + "]}"; }

std::string error_of(const std::string& json) {
  auto scene = parse_scene_json(json, "bad.json");
  EXPECT_FALSE(scene.has_value()) << "accepted: " << json;
  return scene.has_value() ? std::string() : scene.error().message;
}

TEST(SceneJoints, EveryFieldLoads) {
  auto scene = parse_scene_json(with_joint(R"({"kind": "Hinge", "body_a": 2, "body_b": 1,
      "frame_a": {"position": {"x": -1, "y": 0, "z": 0}},
      "frame_b": {"position": {"x": 1, "y": 0, "z": 0}, "rotation": {"x": 0, "y": 0, "z": 0.7071068, "w": 0.7071068}},
      "limit": {"lower": -0.5, "upper": 1}, "motor": {"speed": 2, "max_force": 30},
      "spring": {"hertz": 3, "damping_ratio": 0.5, "target": 0.25}, "holding_torque": 12,
      "break_force": 1000, "collide_connected": true})"),
                                "ok.json");
  ASSERT_TRUE(scene.has_value()) << scene.error().message;
  ASSERT_EQ(scene->joints.size(), 1u);
  const sim::JointDef& j = scene->joints[0];
  EXPECT_EQ(j.kind, JointKind::Hinge);
  EXPECT_EQ(j.body_a, 2u);
  EXPECT_EQ(j.body_b, 1u);
  EXPECT_EQ(j.frame_a.position.x, -1.0f);
  EXPECT_TRUE(j.limit.enabled);
  EXPECT_EQ(j.limit.upper, 1.0f);
  EXPECT_TRUE(j.motor.enabled);
  EXPECT_EQ(j.motor.max_force, 30.0f);
  EXPECT_EQ(j.spring.target, 0.25f);
  EXPECT_EQ(j.holding_torque, 12.0f);
  EXPECT_EQ(j.break_force, 1000.0f);
  EXPECT_TRUE(j.collide_connected);
  EXPECT_FALSE(j.steer_limit.enabled);
  // A world is built from it, and the binary form round-trips exactly.
  EXPECT_TRUE(sim::World::from_scene(*scene));
  auto back = parse_scene_binary(scene_to_binary(*scene), "ok.kscn");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(scene_to_binary(*back), scene_to_binary(*scene));
}

TEST(SceneJoints, BodyBAbsentOrZeroIsTheWorld) {
  auto scene = parse_scene_json(with_joint(R"({"kind": "Ball", "body_a": 1}, {"kind": "Wheel", "body_a": 2, "body_b": 0})"),
                                "ok.json");
  ASSERT_TRUE(scene.has_value()) << scene.error().message;
  EXPECT_EQ(scene->joints[0].body_b, sim::kWorldBodyId);
  EXPECT_EQ(scene->joints[1].kind, JointKind::Wheel);
  EXPECT_TRUE(sim::World::from_scene(*scene));
}

TEST(SceneJoints, BadJointsAreRefusedNamingFileIndexAndField) {
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Ball", "body_a": 1}, {"kind": "Ball", "body_a": 7})")),
            "bad.json: joints[1].body_a: names no body of the scene (7)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Ball", "body_a": 1, "body_b": 9})")),
            "bad.json: joints[0].body_b: names no body of the scene (9)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Ball", "body_b": 1})")),
            "bad.json: joints[0].body_a: is required (the id of a body of the scene)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Fixed", "body_a": 2, "body_b": 2})")),
            "bad.json: joints[0].body_b: joins body 2 to itself");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Hinge", "body_a": 1, "limit": {"lower": 1, "upper": -1}})")),
            "bad.json: joints[0].limit: lower must be <= upper (got 1 > -1)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Hinge", "body_a": 1, "frame_a": {"position": {"x": nan, "y": 0, "z": 0}}})")),
            "bad.json: joints[0].frame_a.position.x: must be a finite number (got nan)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Slider", "body_a": 1, "motor": {"speed": 1, "max_force": -2}})")),
            "bad.json: joints[0].motor.max_force: must be >= 0 (got -2)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Ball", "body_a": 1, "cone_angle": 4})")),
            "bad.json: joints[0].cone_angle must be in [0, pi] (got 4)");
  EXPECT_EQ(error_of(with_joint(R"({"kind": "Distance", "body_a": 1, "spring": {"hertz": -1}})")),
            "bad.json: joints[0].spring.hertz: must be >= 0 (got -1)");
}

TEST(SceneJoints, RagdollsAndVehiclesExpandToBodiesAndJoints) {
  auto scene = parse_scene_json(
      R"({"bodies": [{"id": 1, "motion": "Static", "colliders": [{"shape": "Box", "half_extents": {"x": 50, "y": 1, "z": 50}}]}],
          "ragdolls": [{"first_id": 100, "position": {"x": 0, "y": 2, "z": 0}, "height": 1.7, "mass": 70}],
          "vehicles": [{"first_id": 200, "position": {"x": 5, "y": 2, "z": 0}}],
          "joints": [{"kind": "Distance", "body_a": 100, "body_b": 200}]})",
      "ok.json");
  ASSERT_TRUE(scene.has_value()) << scene.error().message;
  EXPECT_EQ(scene->bodies.size(), 1u + 12u + 5u);
  ASSERT_EQ(scene->joints.size(), 1u + 11u + 4u);
  EXPECT_EQ(scene->joints[0].kind, JointKind::Distance);  // the scene's own joints first
  auto world = sim::World::from_scene(*scene);
  ASSERT_TRUE(world);
  sim::VehicleDef car;
  car.first_id = 200;
  EXPECT_TRUE(sim::find_vehicle(*world, car));
  auto back = parse_scene_binary(scene_to_binary(*scene), "ok.kscn");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->joints.size(), scene->joints.size());
  EXPECT_EQ(scene_to_binary(*back), scene_to_binary(*scene));
}

TEST(SceneJoints, BadRagdollsAndVehiclesAreRefused) {
  EXPECT_EQ(error_of(R"({"ragdolls": [{"first_id": 1}, {"first_id": 5}]})"),
            "bad.json: ragdolls[1].first_id: its body id 5 is already used");
  EXPECT_EQ(error_of(R"({"ragdolls": [{"first_id": 1, "height": -2}]})"),
            "bad.json: ragdolls[0].height: must be > 0 (got -2)");
  EXPECT_EQ(error_of(R"({"vehicles": [{"position": {"x": 0, "y": 1, "z": 0}}]})"),
            "bad.json: vehicles[0].first_id: is required (>= 1)");
  EXPECT_EQ(error_of(R"({"vehicles": [{"first_id": 3, "wheel_radius": 0}]})"),
            "bad.json: vehicles[0].wheel_radius must be > 0");
}

}  // namespace
}  // namespace keel::scene
