// Graph colouring and batch layout, one part of the solve at a time.
//
// Greedy colouring in pair-key order: each manifold takes the first colour in which
// neither of its dynamic bodies is used yet. Manifolds with a side the solve cannot move
// (the ground, a kinematic or sleeping body) are coloured after all the others, each in
// the first free colour above every colour its dynamic body already has: within a pass a
// body is pushed by what moves first and held by the ground last, so a box landing on
// another that rests on the floor cannot drive it into the floor for a substep (which the
// floor's spring would then return as a bounce).
//
// A manifold's colour depends only on the manifolds before it that share one of its
// dynamic bodies, and those are all in its part (no constraint crosses parts). So each
// part is coloured on its own, on any thread, and gets the colours one pass over the
// whole world would give.
//
// Layout: a part's manifolds colour by colour (overflow last), in pair-key order within
// a colour; eight to a batch, overflow manifolds one to a batch (they share bodies and
// run one after another). Every part works only inside its own region of each array: the
// region of its manifolds' places, which also bounds its batches (never more batches
// than manifolds).
#pragma once

#include "solver/contact_batches.h"
#include "solver/solve_parts.h"

#include <cstdint>
#include <vector>

namespace keel::sim {

struct BatchLayout {
  // Per manifold to solve, in pair-key order: its solver bodies and its contact index.
  std::vector<SolveLink> links;
  std::vector<uint32_t> link_contact;
  // Per solver body: whether contacts move it (a dynamic body with mass).
  std::vector<uint8_t> movable;
  // Per part (the team last) and one past: where its manifolds start in `part_links`,
  // which lists manifolds (indices into `links`) part by part, pair-key order within.
  std::vector<uint32_t> part_begin;
  std::vector<uint32_t> part_links;
  // Output in each part's region: contact indices colour by colour, and the batches.
  std::vector<uint32_t> order;
  std::vector<uint32_t> batch_first;  // per batch: its first manifold's place in `order`
  std::vector<uint8_t> batch_count;   // per batch: how many manifolds (1 to kLanes)
  std::vector<uint32_t> batch_end;    // per part: one past its last batch
  // Scratch: per solver body, its colours as bits and one past its highest colour; per
  // place, the manifold's colour and the places held back to be coloured second.
  std::vector<uint32_t> color_bits;
  std::vector<uint8_t> next_color;
  std::vector<uint8_t> color_of;
  std::vector<uint32_t> held;
};

static_assert(kColorCount <= 32, "a body's colours are the bits of one word");

/// Fills part_begin and part_links from the links (numbered as `parts` numbers bodies),
/// and sizes the per-place and per-part arrays.
void bucket_by_part(const SolveParts& parts, BatchLayout& layout);

/// Colours part `part`'s manifolds and lays out its batches (in its own region). Its
/// bodies are [body_begin, body_end) in the numbering the links use now. With `groups`,
/// appends one BatchGroup per colour that has batches (the team's stages).
void lay_out_part(BatchLayout& layout, uint32_t part, uint32_t body_begin, uint32_t body_end,
                  std::vector<BatchGroup>* groups);

}  // namespace keel::sim
