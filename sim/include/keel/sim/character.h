// The capsule character controller: a component on a dynamic body that turns a desired
// walking velocity and a jump button into the body's velocity, once per tick, inside the
// step (after the narrowphase, before the solve). It writes velocity, never position, so
// the solver still owns the pose. docs/sim.md, "Character controller", has the design.
//
// The component lives in the World: its settings, input and climb state are part of the
// world's saved state and hash, so save/restore, prediction and replay step it exactly.
#pragma once

#include <keel/base/expected.h>
#include <keel/sim/math.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace keel::sim {

/// What a character asks for this tick (kept until changed).
struct CharacterInput {
  Vec3 move{0.0f};    ///< desired horizontal velocity, world frame, m/s (y is ignored)
  bool jump = false;  ///< jump if on the ground
};

/// A character's state after the last step.
struct CharacterStatus {
  bool grounded = false;       ///< on walkable ground (or snapped to it) this tick
  bool climbing = false;       ///< mounting a step
  Vec3 ground_normal{0, 1, 0};  ///< of the ground under it (world up when airborne)
  uint32_t ground_body = 0;    ///< user id of the body it stands on (0 = none)
};

/// Checks settings for values the controller cannot use; the message names the field,
/// e.g. "character step_height must be in [0, 10] (got -1)".
Status validate_character_settings(const CharacterSettings& settings);

/// Makes a dynamic body a character. Fails for an invalid or non-dynamic body, one that
/// already is a character, or settings out of range. A body without an enabled capsule
/// collider, or whose rotation is not frozen, is accepted with a warning (once each; see
/// character_warnings).
Status add_character(World& world, BodyId body, const CharacterSettings& settings = {});
/// Removes the component (the body stays). Removing the body removes it too.
bool remove_character(World& world, BodyId body);
bool is_character(const World& world, BodyId body);
/// Sets what the character asks for from the next step on.
void set_character_input(World& world, BodyId body, const CharacterInput& input);
CharacterStatus character_status(const World& world, BodyId body);
/// Warnings about misconfigured characters, in the order they were raised. Each kind is
/// raised once per character, e.g. "character 7: no enabled capsule collider ...".
std::span<const std::string> character_warnings(const World& world);

}  // namespace keel::sim
