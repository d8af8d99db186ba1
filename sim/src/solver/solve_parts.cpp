#include "solver/solve_parts.h"

#include "island/union_find.h"

#include <algorithm>

namespace keel::sim {

namespace {

uint32_t first_side(const SolveLink& l) { return l.a != 0 ? l.a : l.b; }

}  // namespace

void split_solve(uint32_t body_count, std::span<const SolveLink> contacts, std::span<const SolveLink> joints,
                 SolveParts& out) {
  std::vector<uint32_t>& parent = out.parent;
  std::vector<uint32_t>& weight = out.weight;  // per island root
  parent.resize(body_count);
  for (uint32_t i = 0; i < body_count; ++i) parent[i] = i;
  auto join = [&](const SolveLink& l) {
    if (l.a != 0 && l.b != 0) join_sets(parent, l.a, l.b);
  };
  for (const SolveLink& l : contacts) join(l);
  for (const SolveLink& l : joints) join(l);

  weight.assign(body_count, 0);
  uint64_t total = 0;
  for (uint32_t i = 1; i < body_count; ++i) ++weight[find_root(parent, i)];
  for (std::span<const SolveLink> links : {contacts, joints}) {
    for (const SolveLink& l : links) {
      if (first_side(l) != 0) ++weight[find_root(parent, first_side(l))];
    }
  }
  for (uint32_t i = 1; i < body_count; ++i) total += weight[i];
  const uint64_t team_above = std::max<uint64_t>(kPartWeight, total / kTeamShare);

  // Islands in the order of their lowest body; a part closes once it is heavy enough.
  // (Roots keep their island's part in `weight`, which is no longer needed.)
  constexpr uint32_t kTeam = 0xffffffffu;
  std::vector<uint32_t>& root_part = weight;
  uint32_t parts = 0;
  uint64_t part_weight = 0;
  for (uint32_t i = 1; i < body_count; ++i) {
    if (parent[i] != i) continue;  // not the lowest body of its island
    if (weight[i] > team_above) {
      root_part[i] = kTeam;
      continue;
    }
    part_weight += weight[i];
    root_part[i] = parts;
    if (part_weight >= kPartWeight) {
      ++parts;
      part_weight = 0;
    }
  }
  if (part_weight > 0) ++parts;
  out.parts = parts;
  out.part_of.assign(body_count, 0);
  for (uint32_t i = 1; i < body_count; ++i) {
    const uint32_t p = root_part[find_root(parent, i)];
    out.part_of[i] = p == kTeam ? parts : p;
  }

  // Counting sort by part keeps the old order within each part.
  out.body_end.assign(parts + 1, 0);
  for (uint32_t i = 1; i < body_count; ++i) ++out.body_end[out.part_of[i]];
  std::vector<uint32_t>& cursor = out.cursor;  // per part: where its next body goes
  cursor.resize(parts + 1);
  uint32_t next = 1;
  for (uint32_t p = 0; p <= parts; ++p) {
    cursor[p] = next;
    next += out.body_end[p];
    out.body_end[p] = next;
  }
  out.new_index.assign(body_count, 0);
  for (uint32_t i = 1; i < body_count; ++i) out.new_index[i] = cursor[out.part_of[i]]++;
}

void solve_as_one_team(uint32_t body_count, SolveParts& out) {
  out.parts = 0;
  out.part_of.assign(body_count, 0);
  out.body_end.assign(1, body_count);
  out.new_index.resize(body_count);
  for (uint32_t i = 0; i < body_count; ++i) out.new_index[i] = i;
}

}  // namespace keel::sim
