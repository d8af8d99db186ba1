// The touching stage (see touching_stage.h).
#include "island/touching_stage.h"

#include "island/sleep.h"
#include "world_impl.h"

#include <algorithm>

namespace keel::sim {

namespace {

// Contacts that were held because both sides slept, where one side has just been woken,
// get their manifold now, before the solve (their poses have not changed while asleep,
// but the manifold must come from the poses alone so a restored world computes the same).
void refresh_woken_contacts(WorldImpl& w, std::vector<uint8_t>& flags) {
  auto& items = w.contacts.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (!(flags[i] & kContactHeld)) continue;
    Contact& c = items[i];
    if (!w.bodies[c.body_a].can_move() && !w.bodies[c.body_b].can_move()) continue;
    w.refresh_contact_from_poses(c);
    flags[i] = kContactHeld | (c.count != 0 ? kContactTouching : 0);
  }
}

// Fills w.touching_contacts, from the contact pass's flags when given (no contact is
// read; the dead ones are then removed and the list counts past them), else from the
// contacts; and records the contact set's generation the list belongs to. Fixed chunks,
// each found on any worker into its own list and joined in chunk order, so the list is
// the same whoever found what.
void collect_touching_contacts(WorldImpl& w, const std::vector<uint8_t>* flags) {
  constexpr size_t kChunk = 1024;
  const auto& items = w.contacts.items();
  const size_t count = flags ? flags->size() : items.size();
  const size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<std::vector<uint32_t>>& found = w.scratch.touching_found;
  std::vector<uint32_t>& dead = w.scratch.touching_dead;  // per chunk: dead contacts in it
  if (found.size() < chunks) found.resize(chunks);
  dead.assign(chunks, 0);
  w.executor.parallel_for(chunks, 1, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      std::vector<uint32_t>& out = found[k];
      out.clear();
      const size_t last = std::min(count, (k + 1) * kChunk);
      uint32_t gone = 0;  // dead contacts so far in this chunk
      for (size_t i = k * kChunk; i < last; ++i) {
        if (!flags) {
          if (items[i].count != 0) out.push_back(uint32_t(i));
        } else if ((*flags)[i] & kContactDead) {
          ++gone;
        } else if ((*flags)[i] & kContactTouching) {
          out.push_back(uint32_t(i) - gone);  // shifted by the chunk's dead; the earlier chunks' below
        }
      }
      dead[k] = gone;
    }
  });
  w.touching_contacts.clear();
  uint32_t dead_before = 0;
  for (size_t k = 0; k < chunks; ++k) {
    for (uint32_t i : found[k]) w.touching_contacts.push_back(i - dead_before);
    dead_before += dead[k];
  }
  if (flags) w.contacts.remove_flagged(*flags);
  w.touching_generation = w.contacts.generation();
}

}  // namespace

// Waking and the touching list. A character's tick stage may set a body moving after the
// pass; without characters, only the pass's unheld touching contacts can wake anything,
// and only a woken island has held contacts to refresh. A still step after a still step
// keeps the last touching list (its events are repeated).
void touching_stage(WorldImpl& w, bool still, bool repeat_events, std::vector<uint8_t>& dead) {
  if (still) {
    if (!repeat_events) collect_touching_contacts(w, nullptr);
    return;
  }
  const bool with_characters = !w.characters.items.empty();
  const bool woke = wake_touched_islands(w, with_characters ? nullptr : &dead);
  if (woke || with_characters) refresh_woken_contacts(w, dead);
  collect_touching_contacts(w, &dead);
}

}  // namespace keel::sim
