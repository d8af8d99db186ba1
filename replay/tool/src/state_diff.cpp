// Body-by-body comparison of two match states.
#include <keel/replay/state_diff.h>
#include <keel/sim/character.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace keel::replay {

namespace {

// Maps a float's bits onto a line where adjacent floats are adjacent integers and the
// order is the numeric order: negative floats mirrored below zero, -0 just below +0.
int64_t ordered_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  int64_t magnitude = int64_t(bits & 0x7fffffffu);
  return (bits & 0x80000000u) != 0 ? -magnitude - 1 : magnitude;
}

std::map<uint32_t, sim::BodyState> bodies_of(const game::Match& m) {
  std::map<uint32_t, sim::BodyState> out;
  for (sim::BodyId id : m.world().bodies()) {
    sim::BodyState s = m.world().body_state(id);
    out.emplace(s.id, s);
  }
  return out;
}

void add(StateDiff& d, uint32_t body, std::string field, float a, float b) {
  uint64_t ulps = ulp_distance(a, b);
  if (ulps != 0) d.fields.push_back(FieldDiff{body, std::move(field), a, b, ulps});
}

void add_vec(StateDiff& d, uint32_t body, const std::string& name, const sim::Vec3& a, const sim::Vec3& b) {
  add(d, body, name + ".x", a.x, b.x);
  add(d, body, name + ".y", a.y, b.y);
  add(d, body, name + ".z", a.z, b.z);
}

void diff_body(StateDiff& d, const sim::BodyState& a, const sim::BodyState& b) {
  add_vec(d, a.id, "position", a.position, b.position);
  add(d, a.id, "rotation.x", a.rotation.x, b.rotation.x);
  add(d, a.id, "rotation.y", a.rotation.y, b.rotation.y);
  add(d, a.id, "rotation.z", a.rotation.z, b.rotation.z);
  add(d, a.id, "rotation.w", a.rotation.w, b.rotation.w);
  add_vec(d, a.id, "linear_velocity", a.linear_velocity, b.linear_velocity);
  add_vec(d, a.id, "angular_velocity", a.angular_velocity, b.angular_velocity);
  std::string id = "body " + std::to_string(a.id);
  if (a.sleeping != b.sleeping) {
    d.other.push_back(id + ": sleeping " + (a.sleeping ? "true" : "false") + " vs " + (b.sleeping ? "true" : "false"));
  }
  if (a.motion != b.motion) d.other.push_back(id + ": motion " + to_string(a.motion) + " vs " + to_string(b.motion));
}

// The game's declared fields, by name: "match state score[1]: 2 vs 3".
void diff_scope(StateDiff& d, const std::string& prefix, const game::StateScope& scope, const game::StateValues& a,
                const game::StateValues& b) {
  for (uint32_t i = 0; i < scope.elements(); ++i) {
    if (i < a.raw().size() && i < b.raw().size() && a.raw()[i] == b.raw()[i]) continue;
    d.game_state.push_back(prefix + game::element_name(scope, i) + ": " + game::format_element(scope, a, i) + " vs " +
                           game::format_element(scope, b, i));
  }
}

void diff_game(StateDiff& d, const game::Match& a, const game::Match& b) {
  if (a.spec().name != b.spec().name) {
    d.game_state.push_back("game: " + a.spec().name + " vs " + b.spec().name);
    return;
  }
  diff_scope(d, "match state ", a.spec().state.global, a.state(), b.state());
  if (a.random_state() != b.random_state()) d.game_state.push_back("match random generator differs");
  if (a.timers() != b.timers()) d.game_state.push_back("match timers differ");
}

void diff_players(StateDiff& d, const game::Match& a, const game::Match& b) {
  for (const game::PlayerSlot& pa : a.players()) {
    const game::PlayerSlot* pb = b.find_player(pa.player);
    std::string id = "player " + std::to_string(pa.player);
    if (pb == nullptr) {
      d.other.push_back(id + ": only in A");
      continue;
    }
    if (pa.character != pb->character) d.other.push_back(id + ": character body " + std::to_string(pa.character) + " vs " + std::to_string(pb->character));
    const game::Layout& in = a.input_layout();
    for (uint32_t f = 0; f < in.size(); ++f) {
      const std::string va = in.format(pa.last_input, f), vb = in.format(pb->last_input, f);
      if (va != vb || !(pa.last_input == pb->last_input)) {
        if (va != vb) d.game_state.push_back(id + " last input " + in.field(f).name + ": " + va + " vs " + vb);
      }
    }
    diff_scope(d, id + " state ", a.spec().state.player, pa.state, pb->state);
  }
  for (const game::PlayerSlot& pb : b.players()) {
    if (a.find_player(pb.player) == nullptr) d.other.push_back("player " + std::to_string(pb.player) + ": only in B");
  }
}

// Character controller state that is not a body field: whether a body is a character, and
// whether it stands or climbs (a desync often starts with one peer grounding a character the
// other leaves in the air).
void diff_characters(StateDiff& d, const game::Match& a, const game::Match& b, uint32_t body) {
  const sim::BodyId ia = a.world().find_body(body), ib = b.world().find_body(body);
  const bool ca = sim::is_character(a.world(), ia), cb = sim::is_character(b.world(), ib);
  const std::string id = "body " + std::to_string(body);
  if (ca != cb) {
    d.other.push_back(id + ": a character only in " + (ca ? "A" : "B"));
    return;
  }
  if (!ca) return;
  const sim::CharacterStatus sa = sim::character_status(a.world(), ia), sb = sim::character_status(b.world(), ib);
  auto yes_no = [](bool v) { return v ? "true" : "false"; };
  if (sa.grounded != sb.grounded) d.other.push_back(id + ": grounded " + yes_no(sa.grounded) + " vs " + yes_no(sb.grounded));
  if (sa.climbing != sb.climbing) d.other.push_back(id + ": climbing " + yes_no(sa.climbing) + " vs " + yes_no(sb.climbing));
  if (sa.ground_body != sb.ground_body) {
    d.other.push_back(id + ": stands on body " + std::to_string(sa.ground_body) + " vs " + std::to_string(sb.ground_body));
  }
}

bool more_different(const FieldDiff& x, const FieldDiff& y) {
  double dx = std::abs(x.difference()), dy = std::abs(y.difference());
  if (std::isnan(dx) != std::isnan(dy)) return std::isnan(dx);
  if (dx != dy) return dx > dy;
  if (x.ulps != y.ulps) return x.ulps > y.ulps;
  if (x.body != y.body) return x.body < y.body;
  return x.field < y.field;
}

}  // namespace

uint64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    uint32_t ba, bb;
    std::memcpy(&ba, &a, 4);
    std::memcpy(&bb, &b, 4);
    return ba == bb ? 0 : std::numeric_limits<uint64_t>::max();
  }
  int64_t d = ordered_bits(a) - ordered_bits(b);
  return uint64_t(d < 0 ? -d : d);
}

std::vector<uint32_t> StateDiff::bodies() const {
  std::vector<uint32_t> out;
  auto add_once = [&](uint32_t id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const FieldDiff& f : fields) add_once(f.body);
  for (uint32_t id : only_in_a) add_once(id);
  for (uint32_t id : only_in_b) add_once(id);
  return out;
}

StateDiff diff_states(const game::Match& a, const game::Match& b) {
  StateDiff d;
  std::vector<uint8_t> sa = a.save_state(), sb = b.save_state();
  auto mismatch = std::mismatch(sa.begin(), sa.end(), sb.begin(), sb.end());
  if (mismatch.first != sa.end() || mismatch.second != sb.end()) d.first_byte = size_t(mismatch.first - sa.begin());

  std::map<uint32_t, sim::BodyState> ba = bodies_of(a), bb = bodies_of(b);
  for (const auto& [id, state] : ba) {
    auto it = bb.find(id);
    if (it == bb.end()) {
      d.only_in_a.push_back(id);
    } else {
      diff_body(d, state, it->second);
      diff_characters(d, a, b, id);
    }
  }
  for (const auto& [id, state] : bb) {
    if (!ba.count(id)) d.only_in_b.push_back(id);
  }
  diff_game(d, a, b);
  if (a.spec().name == b.spec().name) diff_players(d, a, b);
  std::sort(d.fields.begin(), d.fields.end(), more_different);
  return d;
}

}  // namespace keel::replay
