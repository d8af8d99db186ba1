// Character controller API (keel/sim/character.h) and the component's saved state.
#include <keel/sim/character.h>
#include <keel/sim/det_math.h>

#include "character/character.h"
#include "state/state_io.h"
#include "world_access.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>

namespace keel::sim {

namespace {

constexpr uint32_t kMaxScriptSteps = 4096;
constexpr uint32_t kMaxCharacters = 1u << 16;

Character* find(WorldImpl& w, BodyId id) {
  if (!w.get(id)) return nullptr;
  for (Character& c : w.characters.items) {
    if (c.body_slot == id.index && c.generation == id.generation) return &c;
  }
  return nullptr;
}

const Character* find(const WorldImpl& w, BodyId id) { return find(const_cast<WorldImpl&>(w), id); }

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

Status bad(const std::string& field, float value, const char* rule) {
  return Error{"character " + field + " must be " + rule + " (got " + std::to_string(value) + ")"};
}

}  // namespace

Status validate_character_settings(const CharacterSettings& s) {
  if (!(s.slope_limit > 0.0f && s.slope_limit <= 1.5707964f)) return bad("slope_limit", s.slope_limit, "in (0, pi/2]");
  if (!(s.step_height >= 0.0f && s.step_height <= 10.0f)) return bad("step_height", s.step_height, "in [0, 10]");
  if (!(s.push_force >= 0.0f && s.push_force <= 1.0e7f)) return bad("push_force", s.push_force, "in [0, 1e7]");
  if (!(s.jump_speed >= 0.0f && s.jump_speed <= 100.0f)) return bad("jump_speed", s.jump_speed, "in [0, 100]");
  if (!(s.air_acceleration >= 0.0f && s.air_acceleration <= 1000.0f)) {
    return bad("air_acceleration", s.air_acceleration, "in [0, 1000]");
  }
  if (s.script.size() > kMaxScriptSteps) return Error{"character script has more than 4096 steps"};
  for (size_t i = 0; i < s.script.size(); ++i) {
    const CharacterScriptStep& st = s.script[i];
    const std::string at = "script[" + std::to_string(i) + "]";
    if (st.ticks == 0 || st.ticks > 1'000'000) return Error{"character " + at + ".ticks must be in [1, 1000000]"};
    if (!finite(st.move) || std::abs(st.move.x) > 100.0f || std::abs(st.move.z) > 100.0f) {
      return Error{"character " + at + ".move must be finite and at most 100 m/s"};
    }
  }
  return Status::ok();
}

Status add_character(World& world, BodyId id, const CharacterSettings& settings) {
  WorldImpl& w = WorldAccess::impl(world);
  Body* b = w.get(id);
  if (!b) return Error{"character: no such body"};
  const std::string who = "body " + std::to_string(b->id) + ": ";
  if (b->motion != MotionType::Dynamic) return Error{who + "a character must be a dynamic body"};
  if (find(w, id)) return Error{who + "is already a character"};
  if (w.characters.items.size() >= kMaxCharacters) return Error{who + "too many characters"};
  if (Status st = validate_character_settings(settings); !st) return Error{who + st.error().message};
  Character c;
  c.body_slot = id.index;
  c.generation = id.generation;
  c.body_id = b->id;
  c.settings = settings;
  c.cos_slope = dmath::cos(settings.slope_limit);
  c.gravity_scale = b->gravity_scale;
  auto& items = w.characters.items;
  auto at = std::lower_bound(items.begin(), items.end(), c.body_id,
                             [](const Character& x, uint32_t v) { return x.body_id < v; });
  check_character_config(w, *items.insert(at, c));
  return Status::ok();
}

void forget_character(WorldImpl& w, uint32_t body_slot) {
  auto& items = w.characters.items;
  items.erase(std::remove_if(items.begin(), items.end(), [&](const Character& c) { return c.body_slot == body_slot; }),
              items.end());
}

bool remove_character(World& world, BodyId id) {
  WorldImpl& w = WorldAccess::impl(world);
  Character* c = find(w, id);
  if (!c) return false;
  w.bodies[id.index].gravity_scale = c->gravity_scale;
  forget_character(w, id.index);
  return true;
}

bool is_character(const World& world, BodyId id) { return find(WorldAccess::impl(world), id) != nullptr; }

void set_character_input(World& world, BodyId id, const CharacterInput& input) {
  // The input is character state, after the contacts: no body or collider slot changes.
  Character* c = find(WorldAccess::impl_keeping_slot_digests(world), id);
  if (!c) return;
  c->input.move = finite(input.move) ? Vec3(input.move.x, 0.0f, input.move.z) : Vec3(0.0f);
  c->input.jump = input.jump;
}

CharacterStatus character_status(const World& world, BodyId id) {
  const Character* c = find(WorldAccess::impl(world), id);
  if (!c) return CharacterStatus{};
  return CharacterStatus{c->grounded, c->climbing, c->ground_normal, c->ground_body};
}

std::span<const std::string> character_warnings(const World& world) {
  return WorldAccess::impl(world).characters.warnings;
}

// ---------------------------------------------------------------------------------------
// Saved state

namespace {

// A character's fields, written once over the direction (state/state_io.h: a FieldWriter
// with a const character, or a FieldReader); the reader's checks follow in
// read_characters.
template <class IO, class C>
void visit_character(IO& io, C& c) {
  io.u32(c.body_slot);
  io.u32(c.generation);
  io.u32(c.body_id);
  auto& s = c.settings;
  io.f32(s.slope_limit);
  io.f32(s.step_height);
  io.f32(s.push_force);
  io.f32(s.jump_speed);
  io.f32(s.air_acceleration);
  if constexpr (IO::kReading) {
    s.script.resize(io.reader().count(17, kMaxScriptSteps));
  } else {
    io.u32(uint32_t(s.script.size()));
  }
  for (auto& st : s.script) {
    io.u32(st.ticks);
    io.vec3(st.move);
    io.flag(st.jump);
  }
  io.f32(c.cos_slope);
  io.f32(c.gravity_scale);
  io.vec3(c.input.move);
  io.flag(c.input.jump);
  io.flag(c.grounded);
  io.flag(c.climbing);
  io.f32(c.climb_target_y);
  io.u32(c.climb_ticks);
  io.vec3(c.climb_dir);
  io.vec3(c.ground_normal);
  io.u32(c.ground_body);
  io.u8(c.warned);
}

}  // namespace

void write_characters(const WorldImpl& w, StateWriter& out) {
  const auto& items = w.characters.items;
  if (items.empty()) return;
  out.u32(uint32_t(items.size()));
  for (const Character& c : items) visit_character(out, c);
}

void read_characters(StateReader& in, WorldImpl& w) {
  auto& items = w.characters.items;
  items.clear();
  if (in.at_end()) return;
  // The solver section follows the characters and may come without them.
  if (uint32_t tag = 0; in.peek_u32(tag) && tag == kSolverStateTag) return;
  const uint32_t n = in.count(60, kMaxCharacters);
  if (in.ok() && n == 0) in.fail("an empty character section");
  for (uint32_t i = 0; i < n && in.ok(); ++i) {
    Character c;
    FieldReader io(in);
    visit_character(io, c);
    const CharacterSettings& s = c.settings;
    if (!in.ok()) break;
    if (!validate_character_settings(s)) in.fail("character settings out of range");
    // The controller's own state feeds the next step's velocities: finite, or the
    // character would carry a NaN into the world on its first tick.
    const bool finite_state = std::isfinite(c.cos_slope) && std::isfinite(c.gravity_scale) && finite(c.input.move) &&
                              std::isfinite(c.climb_target_y) && finite(c.climb_dir) && finite(c.ground_normal);
    if (!finite_state) in.fail("character " + std::to_string(c.body_id) + ": controller state is not finite");
    const bool body_ok = c.body_slot < w.bodies.size() && w.bodies[c.body_slot].alive &&
                         w.bodies[c.body_slot].generation == c.generation && w.bodies[c.body_slot].id == c.body_id &&
                         w.bodies[c.body_slot].motion == MotionType::Dynamic;
    if (!body_ok) in.fail("a character names a body that is not a live dynamic body");
    if (!items.empty() && items.back().body_id >= c.body_id) in.fail("characters are not sorted by body id");
    items.push_back(c);
  }
}

}  // namespace keel::sim
