// Character controller internals: the per-body component and the tick stage that drives it
// (internal to sim/src; the API is keel/sim/character.h).
#pragma once

#include <keel/sim/character.h>
#include <keel/sim/defs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace keel::sim {

struct WorldImpl;
class StateWriter;
class StateReader;

/// One character: its body, settings, input and what the controller remembers between
/// ticks. Everything here is saved state (see write_characters).
struct Character {
  uint32_t body_slot = 0;
  uint32_t generation = 0;
  uint32_t body_id = 0;
  CharacterSettings settings;
  float cos_slope = 0.70710677f;  // cos(settings.slope_limit), computed once with dmath
  float gravity_scale = 1.0f;     // the body's own, put back whenever it is airborne
  CharacterInput input;
  bool grounded = false;
  bool climbing = false;
  float climb_target_y = 0.0f;  // body origin height the climb rises to
  uint32_t climb_ticks = 0;     // ticks left before the climb gives up
  Vec3 climb_dir{0.0f};         // horizontal unit direction the climb was asked for
  Vec3 ground_normal{0.0f, 1.0f, 0.0f};
  uint32_t ground_body = 0;
  uint8_t warned = 0;  // kWarn* bits already raised
};

inline constexpr uint8_t kWarnNoCapsule = 1;
inline constexpr uint8_t kWarnRotation = 2;

/// The world's characters, sorted by body user id (the order they are stepped in).
struct CharacterSet {
  std::vector<Character> items;
  std::vector<std::string> warnings;  // diagnostics only, not state
};

/// A dynamic body a character walks into this tick.
struct CharacterPush {
  uint32_t body = 0;  // slot of the dynamic body walked into
  Vec3 into{0.0f};    // unit, from the character into it
  Vec3 point{0.0f};
};

/// What touches one character this tick, sorted out of the contacts.
struct CharacterTouches {
  std::vector<Vec3> blocks;  // acting normals of steep surfaces it cannot push
  std::vector<CharacterPush> pushes;
};

/// The tick stage's working lists, kept by the world between steps (memory/step_scratch.h).
struct CharacterScratch {
  std::vector<int32_t> char_of_slot;         // per body slot: its character, or -1
  std::vector<CharacterTouches> touches;     // per character
};

/// The tick stage: runs after the narrowphase (fresh contacts, fresh broadphase bounds)
/// and before the islands are woken and the solve, so a character it wakes is solved
/// this tick.
void update_characters(WorldImpl& w, float dt, CharacterScratch& scratch);

/// Drops the component of a body being removed.
void forget_character(WorldImpl& w, uint32_t body_slot);

/// Raises the configuration warnings a character deserves (once each).
void check_character_config(WorldImpl& w, Character& c);

/// Saved state: nothing at all for a world without characters (so such a world's bytes
/// are what they were before characters existed), else a count and each character.
void write_characters(const WorldImpl& w, StateWriter& out);
void read_characters(StateReader& in, WorldImpl& w);

}  // namespace keel::sim
