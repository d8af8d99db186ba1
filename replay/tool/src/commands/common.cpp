#include "common.h"

#include <keel/replay/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace keel::replay::cli::detail {

void Progress::update(uint64_t done, uint64_t total) {
  if (!io_.progress || total == 0) return;
  int permille = int(std::min<uint64_t>(1000, done * 1000 / total));
  if (permille == last_permille_) return;
  last_permille_ = permille;
  constexpr int kWidth = 30;
  int filled = permille * kWidth / 1000;
  io_.err << "\r" << label_ << " [" << std::string(size_t(filled), '#') << std::string(size_t(kWidth - filled), ' ')
          << "] " << permille / 10 << "% " << done << "/" << total << " ticks" << std::flush;
  drawn_ = true;
}

void Progress::done() {
  if (drawn_) io_.err << "\n" << std::flush;
  drawn_ = false;
}

FirstDifference first_difference(const Recording& a, const Recording& b) {
  FirstDifference d;
  TickCursor ca = a.ticks_from_start(), cb = b.ticks_from_start();
  std::optional<TickRecord> ta = ca.next(), tb = cb.next();
  while (ta && tb) {
    if (ta->tick < tb->tick) { ta = ca.next(); continue; }
    if (tb->tick < ta->tick) { tb = cb.next(); continue; }
    d.common_last = ta->tick;
    if (!d.inputs_at && !(ta->inputs == tb->inputs)) d.inputs_at = ta->tick;
    if (ta->hash != tb->hash) {
      d.tick = ta->tick;
      d.hash_a = ta->hash;
      d.hash_b = tb->hash;
      return d;
    }
    ta = ca.next();
    tb = cb.next();
  }
  return d;
}

std::optional<uint64_t> recorded_hash_at(const Recording& rec, uint64_t tick) {
  TickCursor c = rec.ticks_from_start();
  while (auto t = c.next()) {
    if (t->tick == tick) return t->hash;
  }
  return std::nullopt;
}

std::string exact(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
}

namespace {

nlohmann::ordered_json vec(const sim::Vec3& v) { return nlohmann::ordered_json::array({v.x, v.y, v.z}); }

nlohmann::ordered_json values_json(const game::Layout& layout, const game::Values& v) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (uint32_t i = 0; i < layout.size(); ++i) out[layout.field(i).name] = layout.format(v, i);
  return out;
}

nlohmann::ordered_json state_json(const game::StateScope& scope, const game::StateValues& values) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (uint32_t i = 0; i < scope.elements(); ++i) out[game::element_name(scope, i)] = game::format_element(scope, values, i);
  return out;
}

nlohmann::ordered_json player_json(const game::Match& match, const game::PlayerSlot& p) {
  return {{"player", p.player},
          {"character", p.character},
          {"spawn_index", p.spawn_index},
          {"last_input", values_json(match.input_layout(), p.last_input)},
          {"state", state_json(match.spec().state.player, p.state)}};
}

}  // namespace

nlohmann::ordered_json inputs_json(const game::GameSpec& spec, const game::TickInputs& inputs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const game::PlayerInput& in : inputs.inputs) {
    out.push_back({{"player", in.player}, {"input", values_json(spec.input, in.frame)}});
    // Only a view that is not the present is shown: lag compensation's (game-rules.md 11).
    if (in.view != game::ViewStamp{}) out.back()["view"] = {{"lag", in.view.lag}, {"fraction", in.view.fraction}};
  }
  return out;
}

nlohmann::ordered_json events_json(const game::GameSpec& spec, const std::vector<game::GameEvent>& events) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const game::GameEvent& e : events) {
    if (e.type >= spec.events.size()) continue;  // the reader checked the recording's events
    const game::EventType& type = spec.events[e.type];
    out.push_back({{"event", type.name}, {"payload", values_json(type.payload, e.payload)}});
  }
  return out;
}

nlohmann::ordered_json match_json(const game::Match& match) {
  std::vector<sim::BodyState> states;
  for (sim::BodyId id : match.world().bodies()) states.push_back(match.world().body_state(id));
  std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  nlohmann::ordered_json bodies = nlohmann::ordered_json::array();
  for (const sim::BodyState& s : states) {
    bodies.push_back({{"id", s.id},
                      {"motion", sim::to_string(s.motion)},
                      {"position", vec(s.position)},
                      {"rotation", {s.rotation.x, s.rotation.y, s.rotation.z, s.rotation.w}},
                      {"linear_velocity", vec(s.linear_velocity)},
                      {"angular_velocity", vec(s.angular_velocity)},
                      {"sleeping", s.sleeping}});
  }
  nlohmann::ordered_json players = nlohmann::ordered_json::array();
  for (const game::PlayerSlot& p : match.players()) players.push_back(player_json(match, p));
  nlohmann::ordered_json contacts = nlohmann::ordered_json::array();
  for (const sim::ContactView& c : match.world().contacts()) {
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (int i = 0; i < c.count; ++i) {
      const auto& p = c.points[i];
      points.push_back({{"point", vec(p.point)},
                        {"depth", p.depth},
                        {"feature", p.feature},
                        {"normal_impulse", p.normal_impulse},
                        {"friction_impulse", vec(p.friction_impulse)}});
    }
    contacts.push_back({{"body_a", c.body_a},
                        {"body_b", c.body_b},
                        {"normal", vec(c.normal)},
                        {"sensor", c.sensor},
                        {"points", std::move(points)}});
  }
  return {{"tick", match.tick()},
          {"hash", hex_hash(match.hash())},
          {"game", match.spec().name},
          {"game_state", state_json(match.spec().state.global, match.state())},
          {"players", std::move(players)},
          {"bodies", std::move(bodies)},
          {"contacts", std::move(contacts)}};
}

}  // namespace keel::replay::cli::detail
