// How the free functions of the public API (queries, characters) reach a World's data.
#pragma once

#include <keel/sim/world.h>

#include "world_impl.h"

namespace keel::sim {

struct WorldAccess {
  static WorldImpl& impl(World& w) { return *w.impl_; }
  static const WorldImpl& impl(const World& w) { return *w.impl_; }
};

}  // namespace keel::sim
