#include "description_receiver.h"

namespace keel::client {

using protocol::DropReason;

void DescriptionReceiver::reset() {
  have_scene_ = false;
  scene_bodies_ = 0;
  held_.clear();
  world_.clear();
}

void DescriptionReceiver::on_scene(const sim::SceneDef& scene) {
  base_version_ = version();
  world_ = protocol::WorldDescription::from_scene(scene);
  scene_bodies_ = world_.bodies().size();
  have_scene_ = true;
  while (!held_.empty()) {
    apply(std::move(held_.front()));
    held_.pop_front();
  }
}

DropReason DescriptionReceiver::on_added(const protocol::fb::BodyAdded& message) {
  Change change;
  uint64_t tick = 0;
  const DropReason decoded = protocol::decode_body_added(message, tick, change.added);
  return take(decoded, std::move(change));
}

DropReason DescriptionReceiver::on_removed(const protocol::fb::BodyRemoved& message) {
  Change change;
  uint64_t tick = 0;
  const DropReason decoded = protocol::decode_body_removed(message, tick, change.removed);
  return take(decoded, std::move(change));
}

// A decoded change: applied, or held (bounded) until the scene it changes has loaded.
DropReason DescriptionReceiver::take(DropReason decoded, Change change) {
  if (decoded != DropReason::None) {
    ++stats_.dropped;
    return decoded;
  }
  if (!have_scene_) {
    if (held_.size() >= kMaxHeldMessages) {
      ++stats_.dropped;
      return DropReason::OutOfRange;
    }
    held_.push_back(std::move(change));
    return DropReason::None;
  }
  apply(std::move(change));
  return DropReason::None;
}

void DescriptionReceiver::apply(Change change) {
  ++stats_.messages;
  for (uint32_t id : change.removed) {
    if (world_.remove(id)) ++stats_.bodies_removed;
  }
  for (protocol::BodyDescription& b : change.added) {
    // A server announcing more bodies than any match holds is not believed further:
    // the table stays bounded (the scene's own bodies were bounded by the scene reader).
    if (world_.find(b.id) == nullptr &&
        world_.bodies().size() >= scene_bodies_ + protocol::DescriptionLimits::kMaxAddedBodies) {
      ++stats_.dropped;
      continue;
    }
    if (!b.complete) ++stats_.incomplete;
    ++stats_.bodies_added;
    world_.put(std::move(b));
  }
}

}  // namespace keel::client
