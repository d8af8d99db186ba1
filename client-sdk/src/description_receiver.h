// The client's half of the world description (keel/protocol/world_description.h): the
// scene's bodies once the scene block has loaded, then every BodyAdded / BodyRemoved the
// server sends. Those may arrive before the scene block is complete (the control channel
// and the block channel are separate): they wait, bounded, and are applied in order once
// the scene is in.
#pragma once

#include <keel/client/client.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/world_description.h>

#include <cstdint>
#include <deque>
#include <vector>

namespace keel::client {


class DescriptionReceiver {
 public:
  /// Messages held until the scene is in; past it the newest are dropped and counted.
  static constexpr size_t kMaxHeldMessages = 1024;

  /// A new session: nothing described, nothing held.
  void reset();
  /// The scene block loaded: its bodies, then what was held.
  void on_scene(const sim::SceneDef& scene);
  /// A checked message of type BodyAdded / BodyRemoved; a failed decode is returned
  /// (and counted) for the caller's drop counters.
  protocol::DropReason on_added(const protocol::fb::BodyAdded& message);
  protocol::DropReason on_removed(const protocol::fb::BodyRemoved& message);

  const protocol::WorldDescription& world() const { return world_; }
  /// Grows with every change, across sessions too (never goes back).
  uint64_t version() const { return base_version_ + world_.version(); }
  const DescriptionStats& stats() const { return stats_; }

 private:
  struct Change {
    std::vector<protocol::BodyDescription> added;
    std::vector<uint32_t> removed;
  };
  protocol::DropReason take(protocol::DropReason decoded, Change change);
  void apply(Change change);

  bool have_scene_ = false;
  size_t scene_bodies_ = 0;
  uint64_t base_version_ = 0;  // versions of the tables this one replaced
  protocol::WorldDescription world_;
  std::deque<Change> held_;
  DescriptionStats stats_;
};

}  // namespace keel::client
