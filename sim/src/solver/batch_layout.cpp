#include "solver/batch_layout.h"

#include <algorithm>

namespace keel::sim {

void bucket_by_part(const SolveParts& parts, BatchLayout& l) {
  const uint32_t slots = parts.parts + 1;
  const uint32_t count = uint32_t(l.links.size());
  l.part_begin.assign(slots + 1, 0);
  auto part_of = [&](const SolveLink& k) { return parts.part_of[k.a != 0 ? k.a : k.b]; };
  for (const SolveLink& k : l.links) ++l.part_begin[part_of(k) + 1];
  for (uint32_t p = 1; p <= slots; ++p) l.part_begin[p] += l.part_begin[p - 1];
  // Stable: pair-key order within a part. batch_end serves as the cursor meanwhile.
  l.batch_end.assign(l.part_begin.begin(), l.part_begin.end() - 1);
  l.part_links.resize(count);
  for (uint32_t i = 0; i < count; ++i) l.part_links[l.batch_end[part_of(l.links[i])]++] = i;
  l.order.resize(count);
  l.batch_first.resize(count);
  l.batch_count.resize(count);
  l.color_of.resize(count);
  l.held.resize(count);
}

void lay_out_part(BatchLayout& l, uint32_t part, uint32_t body_begin, uint32_t body_end,
                  std::vector<BatchGroup>* groups) {
  const uint32_t begin = l.part_begin[part], end = l.part_begin[part + 1];
  std::fill(l.color_bits.begin() + body_begin, l.color_bits.begin() + body_end, 0u);
  std::fill(l.next_color.begin() + body_begin, l.next_color.begin() + body_end, uint8_t(0));
  uint32_t per_color[kColorCount + 1] = {};
  auto assign = [&](uint32_t place, uint32_t a, uint32_t b, bool da, bool db, int from) {
    int color = kColorCount;  // overflow
    for (int c = from; c < kColorCount; ++c) {
      const uint32_t bit = 1u << c;
      if ((da && (l.color_bits[a] & bit)) || (db && (l.color_bits[b] & bit))) continue;
      color = c;
      break;
    }
    if (color < kColorCount) {
      const uint8_t next = uint8_t(color + 1);
      if (da) {
        l.color_bits[a] |= 1u << color;
        l.next_color[a] = std::max(l.next_color[a], next);
      }
      if (db) {
        l.color_bits[b] |= 1u << color;
        l.next_color[b] = std::max(l.next_color[b], next);
      }
    }
    l.color_of[place] = uint8_t(color);
    ++per_color[color];
  };
  uint32_t held_end = begin;
  for (uint32_t place = begin; place < end; ++place) {
    const SolveLink& k = l.links[l.part_links[place]];
    const bool da = l.movable[k.a] != 0, db = l.movable[k.b] != 0;
    if (da && db) {
      assign(place, k.a, k.b, true, true, 0);
    } else {
      l.held[held_end++] = place;
    }
  }
  for (uint32_t h = begin; h < held_end; ++h) {
    const uint32_t place = l.held[h];
    const SolveLink& k = l.links[l.part_links[place]];
    const bool da = l.movable[k.a] != 0, db = l.movable[k.b] != 0;
    // (Neither dynamic: a kinematic body against the ground; it takes no colour slot.)
    assign(place, k.a, k.b, da, db, da ? l.next_color[k.a] : db ? l.next_color[k.b] : 0);
  }

  // Counting sort by colour keeps pair-key order within each colour.
  uint32_t color_begin[kColorCount + 2];
  color_begin[0] = begin;
  for (int c = 0; c <= kColorCount; ++c) color_begin[c + 1] = color_begin[c] + per_color[c];
  uint32_t cursor[kColorCount + 1];
  std::copy(color_begin, color_begin + kColorCount + 1, cursor);
  for (uint32_t place = begin; place < end; ++place) {
    l.order[cursor[l.color_of[place]]++] = l.link_contact[l.part_links[place]];
  }

  uint32_t batch = begin;  // this part's batches start where its places do
  for (int c = 0; c <= kColorCount; ++c) {
    const bool overflow = c == kColorCount;
    const uint32_t per_batch = overflow ? 1 : kLanes;
    const uint32_t first = batch;
    for (uint32_t i = color_begin[c]; i < color_begin[c + 1]; i += per_batch) {
      l.batch_first[batch] = i;
      l.batch_count[batch] = uint8_t(std::min<uint32_t>(per_batch, color_begin[c + 1] - i));
      ++batch;
    }
    if (groups && batch > first) groups->push_back(BatchGroup{first, batch, overflow});
  }
  l.batch_end[part] = batch;
}

}  // namespace keel::sim
