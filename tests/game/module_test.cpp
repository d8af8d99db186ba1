// Game modules loaded for real with dlopen: pushball, and the small modules of
// tests/game/modules/, each built to be refused for one reason.
#include <keel/game/module.h>
#include <keel/game/registry.h>

#include <gtest/gtest.h>

#include <string>

namespace keel::game {
namespace {

const std::string kPushball = std::string(KEEL_GAME_MODULE_DIR) + "/pushball.so";
std::string test_module(const char* name) { return std::string(KEEL_TEST_MODULE_DIR) + "/" + name + ".so"; }

// add_module's message for `path`, which must be refused; nothing is registered.
std::string refusal(const std::string& path) {
  RulesRegistry registry;
  Status st = registry.add_module(path);
  if (st) return "(loaded)";
  EXPECT_TRUE(registry.names().empty());
  EXPECT_EQ(registry.module_game(), "");
  return st.error().message;
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(Module, LoadsPushball) {
  RulesRegistry registry;
  Status st = registry.add_module(kPushball);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_TRUE(registry.knows("pushball"));
  EXPECT_EQ(registry.module_game(), "pushball");
  const GameOrigin origin = registry.origin("pushball");
  EXPECT_EQ(origin.module_path, kPushball);
  ASSERT_EQ(origin.build_id.size(), 16u);
  EXPECT_EQ(origin.build_id.find_first_not_of("0123456789abcdef"), std::string::npos);
  auto rules = registry.make("pushball");
  ASSERT_TRUE(rules) << rules.error().message;
  const GameSpec spec = (*rules)->spec();
  EXPECT_EQ(spec.name, "pushball");
  // drive (stick, 64 steps: 2 x 8 bits) + aim (12) + boost (1) + push {charge} (1)
  EXPECT_EQ(spec.input.full_bits(), 30u);
  EXPECT_EQ(spec.events.size(), 3u);
  // Loading the same file twice gives the same build id.
  RulesRegistry again;
  ASSERT_TRUE(again.add_module(kPushball));
  EXPECT_EQ(again.origin("pushball").build_id, origin.build_id);
}

TEST(Module, RefusesAMissingFile) {
  EXPECT_HAS(refusal(test_module("no_such_module")), "cannot be read");
}

TEST(Module, RefusesAFileThatIsNoLibrary) {
  EXPECT_HAS(refusal(std::string(KEEL_SOURCE_DIR) + "/games/pushball/pushball.json"), "cannot be loaded");
}

TEST(Module, RefusesALibraryWithoutTheEntryPoint) {
  EXPECT_HAS(refusal(test_module("no_entry")), "has no entry point keel_game_module");
}

TEST(Module, RefusesAnotherAbiVersion) {
  const std::string msg = refusal(test_module("bad_abi"));
  EXPECT_HAS(msg, "built for game ABI version 99");
  EXPECT_HAS(msg, "this program loads version " + std::to_string(KEEL_GAME_ABI_VERSION));
}

TEST(Module, RefusesAModuleOfAnotherKeelVersion) {
  const std::string msg = refusal(test_module("other_version"));
  EXPECT_HAS(msg, "was built from Keel 0.0.0-other; this program is Keel " KEEL_VERSION_STRING);
}

TEST(Module, RefusesAFailingSelfCheck) {
  EXPECT_HAS(refusal(test_module("failing_check")), "failed its own self-check: the tuning table is empty");
}

TEST(Module, RefusesAnInvalidSpec) {
  const std::string msg = refusal(test_module("invalid_spec"));
  EXPECT_HAS(msg, "declares an invalid game");
  EXPECT_HAS(msg, "\"Jump!\" must be 1 to 32 characters");
}

TEST(Module, RefusesANameMismatch) {
  EXPECT_HAS(refusal(test_module("name_mismatch")), "is named \"alpha\" but its rules call themselves \"beta\"");
}

TEST(Module, UnknownGameNamesTheKnownOnes) {
  RulesRegistry registry;
  ASSERT_TRUE(registry.add_module(kPushball));
  auto r = registry.make("football");
  ASSERT_FALSE(r);
  EXPECT_HAS(r.error().message, "it knows: pushball");
}

}  // namespace
}  // namespace keel::game
