// Splits one tick's solve into parts that no constraint crosses, so that a part can be
// solved from start to finish by one thread, with no hand-off between its stages.
//
// Why: a world of many small islands (a hundred columns of boxes) solved colour by colour
// hands every colour of every pass of every substep from thread to thread: a few hundred
// hand-offs a tick, and each thread touches bodies the other one wrote a moment ago. Solved
// part by part, a thread keeps its bodies and constraints in its own cache for the whole
// tick and waits for no one. Only islands too big to be one thread's share (a pyramid, a
// long chain) are left to the team that solves colour by colour.
//
// Bits: a part's constraints are still solved colour by colour, in the colours the whole
// world was given, so every body meets the same constraints in the same order as in one
// solve of the whole world. The split decides which thread computes a body, never what it
// comes to; and it depends on the constraints alone, never on the thread count.
//
// What joins bodies: any constraint between two solver bodies, kinematic ones included (a
// kinematic body is integrated by the part it is in, and every constraint reading it must
// see that). The static stand-in (index 0) joins nothing: the solve never writes it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace keel::sim {

/// The two solver bodies of a constraint; 0 is the immovable stand-in.
struct SolveLink {
  uint32_t a = 0;
  uint32_t b = 0;
};

struct SolveParts {
  /// Parts solved alone; bodies and constraints of part `parts` belong to the team.
  uint32_t parts = 0;
  /// Per solver body (index 0 unused): its part, `parts` for the team.
  std::vector<uint32_t> part_of;
  /// Per solver body: its index once bodies are laid out part by part (team last), in
  /// their old order within a part; index 0 stays 0.
  std::vector<uint32_t> new_index;
  /// Per part, the team last: one past its last body in the new numbering.
  std::vector<uint32_t> body_end;
  /// The split's own working arrays, kept only to reuse their capacity from tick to tick
  /// (read after they are written, never part of the result).
  std::vector<uint32_t> parent, weight, cursor;
};

/// An island's weight is its bodies plus its constraints. Parts gather islands in the
/// order of their lowest body until they weigh at least this much.
inline constexpr uint32_t kPartWeight = 128;

/// Islands heavier than max(kPartWeight, total weight / kTeamShare) go to the team. (A
/// part solves its own joints, in joint-slot order, before its contacts in each pass, as
/// the team does with its own.)
inline constexpr uint32_t kTeamShare = 16;

/// `body_count` counts the stand-in. Contacts and joints are the constraints of the solve;
/// the part of a constraint is the part of its first non-zero side.
void split_solve(uint32_t body_count, std::span<const SolveLink> contacts, std::span<const SolveLink> joints,
                 SolveParts& out);

/// No parts: every body to the team, in its old order.
void solve_as_one_team(uint32_t body_count, SolveParts& out);

}  // namespace keel::sim
