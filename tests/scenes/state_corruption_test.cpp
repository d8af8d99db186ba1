// Saved states of real scenes, corrupted (truncated, bit-flipped, words overwritten with
// hostile values) and restored: every corruption is either refused or restores to a
// world that saves back to exactly the bytes it was read from. Nothing is taken that
// would step as a different world than its bytes say (and so hash differently on a peer
// that restored the same bytes), and nothing crashes; a world that took a corrupted
// state still steps.
#include "../common/splitmix.h"

#include <keel/scene/scene.h>
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace keel {
namespace {

// splitmix64: a fixed sequence, so a failure names a corruption that repeats.
using Rng = test_support::SplitMix64;

struct Corruption {
  std::string what;
  std::vector<uint8_t> bytes;
};

std::vector<Corruption> corruptions(const std::vector<uint8_t>& good, uint64_t seed) {
  std::vector<Corruption> out;
  Rng rng{seed};
  // Truncations: every short prefix, then prefixes spread over the whole state.
  for (size_t n = 0; n < 80 && n < good.size(); ++n) {
    out.push_back({"truncated to " + std::to_string(n), {good.begin(), good.begin() + long(n)}});
  }
  for (int i = 0; i < 40; ++i) {
    const size_t n = rng.below(good.size());
    out.push_back({"truncated to " + std::to_string(n), {good.begin(), good.begin() + long(n)}});
  }
  // Single bit flips anywhere.
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> b = good;
    const size_t bit = rng.below(b.size() * 8);
    b[bit / 8] ^= uint8_t(1u << (bit % 8));
    out.push_back({"bit " + std::to_string(bit) + " flipped", std::move(b)});
  }
  // A 4-byte word overwritten with a value a forger would try: NaN, infinities, huge
  // floats, counts and indices at their extremes, flag bytes that are not 0 or 1.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float floats[] = {nan, inf, -inf, 1e30f, -1e30f, 1e13f, 3.0f};
  const uint32_t words[] = {0u, 1u, 2u, 0xffffffffu, 0x7fffffffu, 0x80000000u, 0x01010101u};
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> b = good;
    const size_t at = rng.below(b.size() - 3);
    uint32_t v = 0;
    if (i % 2 == 0) std::memcpy(&v, &floats[rng.below(std::size(floats))], 4);
    else v = words[rng.below(std::size(words))];
    for (int k = 0; k < 4; ++k) b[at + k] = uint8_t(v >> (8 * k));
    if (b == good) continue;
    char what[64];
    std::snprintf(what, sizeof what, "word at %zu set to 0x%08x", at, v);
    out.push_back({what, std::move(b)});
  }
  return out;
}

// FNV-1a of the scene's name: each scene gets its own corruptions, the same every run.
uint64_t seed_of(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

class SceneState : public ::testing::TestWithParam<std::string> {};

TEST_P(SceneState, EveryCorruptionIsRefusedOrSavesBackToTheSameBytes) {
  auto scene = scene::load_scene_file(std::string(KEEL_SOURCE_DIR) + "/scenes/" + GetParam());
  ASSERT_TRUE(scene) << scene.error().message;
  auto world = sim::World::from_scene(*scene);
  ASSERT_TRUE(world) << world.error().message;
  // Far enough for contacts, touching pairs, sleeping bodies and joint impulses.
  for (int t = 0; t < 150; ++t) world->step();
  const std::vector<uint8_t> good = world->save_state();

  // One target world throughout: a restore that fails leaves it as it was, and one that
  // succeeds is undone by restoring the good state (which shares the hulls and meshes
  // it already built, so a corrupted convex pile does not rebuild a thousand hulls).
  sim::World target;
  ASSERT_TRUE(target.restore_state(good));
  const uint64_t good_hash = target.hash();
  int refused = 0, accepted = 0;
  for (const Corruption& c : corruptions(good, seed_of(GetParam()))) {
    keel::Status st = target.restore_state(c.bytes);
    if (!st) {
      ++refused;
      ASSERT_FALSE(st.error().message.empty()) << c.what;
      ASSERT_EQ(target.hash(), good_hash) << c.what << ": a refused state changed the world";
      continue;
    }
    ++accepted;
    const std::vector<uint8_t> again = target.save_state();
    size_t differ = 0;
    while (differ < again.size() && differ < c.bytes.size() && again[differ] == c.bytes[differ]) ++differ;
    ASSERT_TRUE(again == c.bytes) << c.what << ": accepted, but it saves back differently from byte " << differ
                                  << " (" << again.size() << " bytes against " << c.bytes.size() << ")";
    target.step();  // a state that was taken steps (under the sanitizers: without a report)
    ASSERT_TRUE(target.restore_state(good)) << c.what;
  }
  std::printf("%s: %zu-byte state, %d corruptions refused, %d accepted (each saves back byte for byte)\n",
              GetParam().c_str(), good.size(), refused, accepted);
  EXPECT_GT(refused, 0);
}

INSTANTIATE_TEST_SUITE_P(Scenes, SceneState,
                         ::testing::Values("demo.json", "chain.json", "characters.json", "ragdolls.json",
                                           "vehicle.json", "terrain.json", "convex_pile.json"),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           return n;
                         });

}  // namespace
}  // namespace keel
