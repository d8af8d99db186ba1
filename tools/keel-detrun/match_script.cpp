#include "match_script.h"

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

// Move codes of the sandbox's stick (127 steps per unit; code 2k is +k steps, 2k-1 is -k):
// -1, -0.5, 0, 0.5 and 1 (rounded) on each axis; diagonals get shortened by sanitize.
constexpr uint32_t kMoves[5] = {253, 127, 0, 128, 254};

constexpr uint64_t kForgedTick = 333;
constexpr uint64_t kAbsentPlayerTick = 150;
constexpr uint32_t kAbsentPlayer = 9;

/// A well-mixed 32-bit value from (player, n): integer operations only.
uint32_t mix(uint32_t player, uint32_t n) {
  uint32_t h = player * 0x9e3779b9u ^ (n + 1u) * 0x85ebca6bu;
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

/// The n-th frame a player picks, as the sandbox's codes (move x, move forward, yaw in
/// 2^16 steps of a turn from 0 rad, buttons jump = 1 and fire = 2).
game::InputFrame scripted_frame(uint32_t player, uint32_t n) {
  const uint32_t h = mix(player, n);
  game::InputFrame f;
  f.code[0] = kMoves[h % 5];
  f.code[1] = kMoves[(h / 5) % 5];
  f.code[2] = ((h / 25) % 48) * 1365u;
  if ((h / 1200) % 4 == 0) f.code[3] |= 1u;
  if ((h / 4800) % 3 == 0) f.code[3] |= 2u;
  return f;
}

/// Whether `player` changes its input at `tick`: each on its own period, so frames from
/// several players land on the same tick only sometimes.
game::InputFrame forged_frame() {
  game::InputFrame f;
  f.code[0] = 300;
  f.code[1] = 0;
  f.code[2] = 70000;
  f.code[3] = 0xffu;
  f.code[4] = 9;  // past the layout's components
  return f;
}

bool changes_at(uint32_t player, uint64_t tick) { return (tick + 7u * player) % (12u + 3u * player) == 0; }

}  // namespace

std::map<uint64_t, game::TickInputs> scripted_match_inputs(uint64_t ticks) {
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
      in.inputs.push_back({p, scripted_frame(p, changes++)});
    }
    if (t == kAbsentPlayerTick && !std::binary_search(present.begin(), present.end(), kAbsentPlayer)) {
      // A frame for a player who is not in the match: Match::step must ignore it.
      auto at = std::find_if(in.inputs.begin(), in.inputs.end(),
                             [](const game::PlayerInput& pi) { return pi.player > kAbsentPlayer; });
      in.inputs.insert(at, {kAbsentPlayer, scripted_frame(kAbsentPlayer, 0)});
    }
    if (t == kForgedTick && !present.empty()) {
      // Forged: codes past the stick's range, past the angle's 16 bits and unknown button
      // bits. Match::step sanitises it.
      game::TickInputs forged = in;
      forged.inputs.erase(std::remove_if(forged.inputs.begin(), forged.inputs.end(),
                                         [&](const game::PlayerInput& pi) { return pi.player == present[0]; }),
                          forged.inputs.end());
      forged.inputs.insert(forged.inputs.begin(), {present[0], forged_frame()});
      in = std::move(forged);
    }
    if (!in.events.empty() || !in.inputs.empty()) out.emplace(t, std::move(in));
  }
  return out;
}

}  // namespace keel::det
