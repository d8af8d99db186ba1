// How the free functions of the public API (queries, characters) reach a World's data.
#pragma once

#include <keel/sim/world.h>

#include "world_impl.h"

namespace keel::sim {

struct WorldAccess {
  static WorldImpl& impl(World& w) { return *w.impl_; }
  static const WorldImpl& impl(const World& w) { return *w.impl_; }
  /// For a change that keeps the slots' state digests (World::ImplPtr::keeping_slot_digests).
  static WorldImpl& impl_keeping_slot_digests(World& w) { return w.impl_.keeping_slot_digests(); }
};

}  // namespace keel::sim
