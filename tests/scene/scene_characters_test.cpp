// Characters in scene files: defaults, scripts, the checks the loader makes, the binary
// round trip, and the committed characters.json.
#include <keel/scene/scene.h>
#include <keel/sim/character.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <string>

namespace keel::scene {
namespace {

// Body 1 static ground, body 2 a dynamic capsule; `characters` is spliced in.
std::string scene_with(const std::string& characters) {
  return R"({"name": "c", "bodies": [
    {"id": 1, "motion": "Static", "colliders": [{"shape": "Box", "half_extents": {"x": 5, "y": 0.5, "z": 5}}]},
    {"id": 2, "motion": "Dynamic", "mass": 80, "freeze_rotation": true, "position": {"x": 0, "y": 1.4, "z": 0},
     "colliders": [{"shape": "Capsule", "radius": 0.3, "half_height": 0.6}]}],
    "characters": )" +
         characters + "}";
}

std::string error_of(const std::string& json) {
  auto scene = parse_scene_json(json, "bad.json");
  EXPECT_FALSE(scene.has_value());
  return scene.has_value() ? std::string() : scene.error().message;
}

TEST(SceneCharacters, DefaultsAndScript) {
  auto scene = parse_scene_json(scene_with(R"([{"body": 2, "step_height": 0.3, "script": [
      {"ticks": 30, "move": {"x": 1, "y": 0, "z": 0}}, {"ticks": 5, "jump": true}]}])"),
                                "c.json");
  ASSERT_TRUE(scene.has_value()) << scene.error().message;
  ASSERT_EQ(scene->characters.size(), 1u);
  const sim::CharacterDef& c = scene->characters[0];
  EXPECT_EQ(c.body, 2u);
  EXPECT_FLOAT_EQ(c.settings.step_height, 0.3f);
  EXPECT_FLOAT_EQ(c.settings.slope_limit, 0.7853982f);
  EXPECT_FLOAT_EQ(c.settings.push_force, 400.0f);
  EXPECT_FLOAT_EQ(c.settings.jump_speed, 5.0f);
  ASSERT_EQ(c.settings.script.size(), 2u);
  EXPECT_EQ(c.settings.script[0].ticks, 30u);
  EXPECT_EQ(c.settings.script[0].move, sim::Vec3(1, 0, 0));
  EXPECT_EQ(c.settings.script[1].move, sim::Vec3(0.0f));
  EXPECT_TRUE(c.settings.script[1].jump);
  // The world built from it has the character.
  auto world = sim::World::from_scene(*scene);
  ASSERT_TRUE(world.has_value()) << world.error().message;
  EXPECT_TRUE(sim::is_character(*world, world->find_body(2)));
}

TEST(SceneCharacters, RejectsWhatTheWorldCannotDrive) {
  EXPECT_NE(error_of(scene_with(R"([{"step_height": 0.3}])")).find("bad.json: characters[0].body: is required"),
            std::string::npos);
  EXPECT_NE(error_of(scene_with(R"([{"body": 9}])")).find("characters[0].body: names no body of the scene (9)"),
            std::string::npos);
  EXPECT_NE(error_of(scene_with(R"([{"body": 1}])")).find("characters[0].body: body 1 is not dynamic"),
            std::string::npos);
  EXPECT_NE(error_of(scene_with(R"([{"body": 2}, {"body": 2}])")).find("characters[1].body: body 2 already is a character"),
            std::string::npos);
  EXPECT_NE(error_of(scene_with(R"([{"body": 2, "slope_limit": 2}])")).find("characters[0]: character slope_limit"),
            std::string::npos);
  EXPECT_NE(error_of(scene_with(R"([{"body": 2, "script": [{"ticks": 0}]}])")).find("script[0].ticks"),
            std::string::npos);
}

TEST(SceneCharacters, BinaryRoundTripIsExact) {
  auto scene = parse_scene_json(scene_with(R"([{"body": 2, "push_force": 250, "script": [
      {"ticks": 7, "move": {"x": -0.5, "y": 0, "z": 2}, "jump": true}]}])"),
                                "c.json");
  ASSERT_TRUE(scene.has_value());
  const std::vector<uint8_t> bytes = scene_to_binary(*scene);
  auto back = parse_scene_binary(bytes, "c.kscn");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->characters.size(), 1u);
  EXPECT_EQ(back->characters[0].body, 2u);
  EXPECT_EQ(back->characters[0].settings.push_force, 250.0f);
  ASSERT_EQ(back->characters[0].settings.script.size(), 1u);
  EXPECT_EQ(back->characters[0].settings.script[0].move, sim::Vec3(-0.5f, 0, 2));
  EXPECT_TRUE(back->characters[0].settings.script[0].jump);
  EXPECT_EQ(scene_to_binary(*back), bytes);
}

TEST(SceneCharacters, CommittedSceneHasSixteenScriptedWalkers) {
  auto scene = load_scene_file(std::string(KEEL_SOURCE_DIR) + "/scenes/characters.json");
  ASSERT_TRUE(scene.has_value()) << scene.error().message;
  ASSERT_EQ(scene->characters.size(), 16u);
  for (const sim::CharacterDef& c : scene->characters) EXPECT_FALSE(c.settings.script.empty());
  auto world = sim::World::from_scene(*scene);
  ASSERT_TRUE(world.has_value());
  world->step();
  EXPECT_TRUE(sim::character_warnings(*world).empty());
}

}  // namespace
}  // namespace keel::scene
