// The scene's solver choice (docs/scene-format.md, "solver"): kind and contact
// compliance parsed, range-checked, refused when unknown, and carried by the binary form.
#include <keel/scene/scene.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <string>

namespace keel::scene {
namespace {

using sim::SceneDef;
using sim::SolverKind;

TEST(SceneSolver, DefaultsToTheSoftStep) {
  auto scene = parse_scene_json(R"({"solver": {"substeps": 4}})", "a.json");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->settings.solver_kind, SolverKind::SoftStep);
  EXPECT_EQ(scene->settings.contact_compliance, 0.0f);
}

TEST(SceneSolver, ReadsXpbdAndCompliance) {
  auto scene = parse_scene_json(R"({"solver": {"kind": "xpbd", "contact_compliance": 1e-6}})", "a.json");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->settings.solver_kind, SolverKind::Xpbd);
  EXPECT_EQ(scene->settings.contact_compliance, 1e-6f);
  // The binary form carries both, bit for bit.
  auto again = parse_scene_binary(scene_to_binary(*scene), "a.kscn");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->settings.solver_kind, SolverKind::Xpbd);
  EXPECT_EQ(again->settings.contact_compliance, 1e-6f);
}

TEST(SceneSolver, RefusesUnknownKindAndBadCompliance) {
  auto unknown = parse_scene_json(R"({"solver": {"kind": "pbd"}})", "bad.json");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("pbd"), std::string::npos) << unknown.error().message;
  auto negative = parse_scene_json(R"({"solver": {"kind": "xpbd", "contact_compliance": -1}})", "bad.json");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("contact_compliance"), std::string::npos) << negative.error().message;
  auto huge = parse_scene_json(R"({"solver": {"kind": "xpbd", "contact_compliance": 5}})", "bad.json");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("contact_compliance"), std::string::npos) << huge.error().message;
}

// Every joint kind loads under XPBD; a feature it cannot solve (holding torque) fails the
// scene's world, naming kind, feature and solver.
TEST(SceneSolver, XpbdSceneTakesASliderAndRefusesAHoldingTorque) {
  const std::string bodies = R"({"solver": {"kind": "xpbd"}, "bodies": [{"id": 1, "colliders": [{"shape": "Sphere", "radius": 0.5}]}],)";
  auto slider = parse_scene_json(bodies + R"( "joints": [{"kind": "Slider", "body_a": 1}]})", "a.json");
  ASSERT_TRUE(slider) << slider.error().message;
  EXPECT_TRUE(sim::World::from_scene(*slider));
  auto held = parse_scene_json(bodies + R"( "joints": [{"kind": "Hinge", "body_a": 1, "holding_torque": 5}]})", "a.json");
  ASSERT_TRUE(held) << held.error().message;
  auto world = sim::World::from_scene(*held);
  ASSERT_FALSE(world);
  EXPECT_NE(world.error().message.find("Hinge"), std::string::npos) << world.error().message;
  EXPECT_NE(world.error().message.find("holding_torque"), std::string::npos) << world.error().message;
  EXPECT_NE(world.error().message.find("xpbd"), std::string::npos) << world.error().message;
}

TEST(SceneSolver, TheXpbdPileLoadsAndSteps) {
  auto scene = load_scene_file(std::string(KEEL_SOURCE_DIR) + "/scenes/xpbd_pile.json");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->settings.solver_kind, SolverKind::Xpbd);
  auto world = sim::World::from_scene(*scene);
  ASSERT_TRUE(world) << world.error().message;
  for (int t = 0; t < 30; ++t) world->step();
}

}  // namespace
}  // namespace keel::scene
