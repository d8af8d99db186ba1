// The touching stage: sleeping islands that an awake body touches are woken (and their
// held contacts refreshed), and the list of contacts with points that the events, the
// solver and the islands walk this tick is made (WorldImpl::touching_contacts).
#pragma once

#include <cstdint>
#include <vector>

namespace keel::sim {

struct WorldImpl;

/// `flags`: the contacts stage's kContact* flags (ignored on a still step). On a still
/// step after a still step (`repeat_events`) the last touching list is kept.
void touching_stage(WorldImpl& world, bool still, bool repeat_events, std::vector<uint8_t>& flags);

}  // namespace keel::sim
