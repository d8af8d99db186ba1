// Input layouts the codec tests share: the sandbox's, and one field of every kind with
// ranges chosen to reach each kind's corner cases; and a generator of valid frames.
#pragma once

#include "../common/splitmix.h"

#include <keel/game/layout.h>

#include <cstdint>

namespace keel::protocol::test {

/// The sandbox's input as games/sandbox/src/sandbox_rules.cpp declares it (the protocol
/// tests do not link the games): 8 + 8 + 16 + 2 = 34 bits in full.
inline game::Layout sandbox_layout() {
  game::Layout l;
  l.add_stick("move", 127);
  l.add_angle("look_yaw", 16);
  l.add_buttons("buttons", {"jump", "fire"});
  return l;
}
inline constexpr uint32_t kMove = 0, kYaw = 1, kButtons = 2;  // sandbox fields

/// One field of every kind. Int's range has a negative min and is longer above 0 than
/// below; Fixed does not contain 0 (its origin is its lowest step); Point3's axes have an
/// origin inside, at the bottom, and at the bottom again with a range not reaching 0.
/// Full bits: 1 + 3 + 4 + 2 + 3 + 2*5 + 8 + 2*6 + (3 + 4 + 2) = 52.
inline game::Layout all_kinds_layout() {
  game::Layout l;
  l.add_bool("flag");
  l.add_buttons("keys", {"a", "b", "c"});
  l.add_int("count", -5, 10);
  l.add_enum("colour", {"red", "green", "blue"});
  l.add_fixed("throttle", 1.0f, 2.0f, 0.25f);
  l.add_stick("stick", 10);
  l.add_angle("heading", 8);
  l.add_direction3("aim", 6);
  l.add_point3("target", sim::Vec3(-1.0f, 0.0f, 2.0f), sim::Vec3(1.0f, 4.0f, 3.0f), 0.5f);
  return l;
}
enum AllKinds : uint32_t { kFlag, kKeys, kCount, kColour, kThrottle, kStick, kHeading, kAim, kTarget };

using Rng = test_support::SplitMix64;

/// A valid frame with every component drawn at random (then sanitised: a stick drawn
/// outside its disc is pulled onto it).
inline game::Values random_values(const game::Layout& layout, Rng& rng) {
  game::Values v;
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const game::Field& f = layout.field(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      v.code[layout.first_component(i) + c] = rng.below(f.max_code(c) + 1);
    }
  }
  layout.sanitize(v);
  return v;
}

}  // namespace keel::protocol::test
