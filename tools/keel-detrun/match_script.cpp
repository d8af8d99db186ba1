#include "match_script.h"

#include <keel/game/scripted_input.h>

#include <algorithm>
#include <vector>

namespace keel::det {

namespace {

struct ScriptEvent {
  uint64_t tick;
  game::PlayerEvent::Kind kind;
  uint32_t player;
};

constexpr auto kJoin = game::PlayerEvent::Kind::Join;
constexpr auto kLeave = game::PlayerEvent::Kind::Leave;

// Joins, leaves and a rejoin (player 2 comes back with a new character and spawn point);
// a repeated join and the leave of an absent player check that both are ignored.
constexpr ScriptEvent kEvents[] = {
    {0, kJoin, 1},    {0, kJoin, 2},    {30, kJoin, 3},   {60, kJoin, 4},  {100, kJoin, 1},
    {200, kLeave, 7}, {240, kJoin, 5},  {300, kLeave, 2}, {420, kJoin, 2}, {540, kLeave, 3},
};

constexpr uint64_t kForgedTick = 333;
constexpr uint64_t kAbsentPlayerTick = 150;
constexpr uint32_t kAbsentPlayer = 9;

/// The n-th frame a player picks: the game's scripted values (keel/game/scripted_input.h).
game::InputFrame scripted_frame(const game::Layout& layout, uint32_t player, uint32_t n) {
  return game::scripted_values(layout, player, n);
}

/// Whether `player` changes its input at `tick`: each on its own period, so frames from
/// several players land on the same tick only sometimes.
bool changes_at(uint32_t player, uint64_t tick) { return (tick + 7u * player) % (12u + 3u * player) == 0; }

}  // namespace

std::map<uint64_t, game::TickInputs> scripted_match_inputs(uint64_t ticks, const game::Layout& layout) {
  std::map<uint64_t, game::TickInputs> out;
  std::vector<uint32_t> present;  // sorted
  uint32_t changes = 0;
  for (uint64_t t = 0; t < ticks; ++t) {
    game::TickInputs in;
    std::vector<uint32_t> joined_now;
    for (const ScriptEvent& e : kEvents) {
      if (e.tick != t) continue;
      in.events.push_back({e.kind, e.player});
      auto it = std::lower_bound(present.begin(), present.end(), e.player);
      const bool here = it != present.end() && *it == e.player;
      if (e.kind == kJoin && !here) {
        present.insert(it, e.player);
        joined_now.push_back(e.player);
      } else if (e.kind == kLeave && here) {
        present.erase(it);
      }
    }
    for (uint32_t p : present) {
      const bool just_joined = std::find(joined_now.begin(), joined_now.end(), p) != joined_now.end();
      if (!just_joined && !changes_at(p, t)) continue;
      in.inputs.push_back({p, scripted_frame(layout, p, changes++)});
    }
    if (t == kAbsentPlayerTick && !std::binary_search(present.begin(), present.end(), kAbsentPlayer)) {
      // A frame for a player who is not in the match: Match::step must ignore it.
      auto at = std::find_if(in.inputs.begin(), in.inputs.end(),
                             [](const game::PlayerInput& pi) { return pi.player > kAbsentPlayer; });
      in.inputs.insert(at, {kAbsentPlayer, scripted_frame(layout, kAbsentPlayer, 0)});
    }
    if (t == kForgedTick && !present.empty()) {
      // Forged: every code past its field's range. Match::step sanitises it.
      game::TickInputs forged = in;
      forged.inputs.erase(std::remove_if(forged.inputs.begin(), forged.inputs.end(),
                                         [&](const game::PlayerInput& pi) { return pi.player == present[0]; }),
                          forged.inputs.end());
      forged.inputs.insert(forged.inputs.begin(), {present[0], game::forged_values()});
      in = std::move(forged);
    }
    if (!in.events.empty() || !in.inputs.empty()) out.emplace(t, std::move(in));
  }
  return out;
}

}  // namespace keel::det
