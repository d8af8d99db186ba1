// Semantic checks on a decoded world state (state_check.cpp), run by World::restore_state
// before the state replaces a live world.
#pragma once

#include <keel/base/expected.h>

namespace keel::sim {

struct WorldImpl;

/// Fails, naming the section, the body or slot and the field, when the state holds a
/// value outside the world's limits or slot lists, ids and joints that disagree.
Status check_state(const WorldImpl& w);

}  // namespace keel::sim
