// The world description a client draws from: every body's id, motion type, the game's
// kind label and its colliders (shape, dimensions, local pose, hull / mesh / heightfield
// data). A client builds it from the scene block (the scene's bodies, as the scene file
// describes them) and then from BodyAdded / BodyRemoved messages on the control channel
// (bodies the match created or removed later); the server keeps the same table for its
// match and sends the difference (docs/protocol.md, "World description").
#pragma once

#include <keel/game/match.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>
#include <keel/sim/defs.h>
#include <keel/sim/world.h>

#include <cstdint>
#include <span>
#include <vector>

namespace keel::protocol {

/// Bounds on the description messages (larger ones are refused as OutOfRange).
struct DescriptionLimits {
  static constexpr uint32_t kMaxBodiesPerMessage = 64;
  static constexpr uint32_t kMaxIdsPerMessage = 224;  ///< 4 bytes each: a message stays under 1 KiB
  static constexpr uint32_t kMaxColliders = 64;  ///< per body, as in a scene
  /// Bodies a client keeps beyond the scene's: a server announcing more is refused (the
  /// additions are dropped and counted).
  static constexpr uint32_t kMaxAddedBodies = 1u << 16;
  /// Bytes of one message; the connection's control messages are at most 1024.
  static constexpr size_t kMaxMessageBytes = 1024;
};

struct BodyDescription {
  uint32_t id = 0;
  sim::MotionType motion = sim::MotionType::Dynamic;
  uint32_t kind = 0;  ///< the game's label (BodyDef::kind), 0 = none
  /// In the body's frame. Only the fields that describe the shape are set (friction,
  /// density and the like are the server's business); hull points are the scene's point
  /// cloud for scene bodies and the hull's vertices for bodies added later.
  std::vector<sim::ColliderDef> colliders;
  /// False when the server cut the description to fit one control message: hull, mesh
  /// and heightfield data left out (and, past that, colliders beyond those listed).
  bool complete = true;
  /// The body's pose when it was described (the scene's, or the world's when the server
  /// found it): where a static body stays, as snapshots carry only bodies that move.
  sim::Vec3 position{0.0f};
  sim::Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
};

/// Two descriptions name the same body the same way: id, motion, kind, completeness and
/// every collider's shape fields (bit for bit: the wire carries floats unchanged). The
/// pose is not compared: it is where the body was when each was made.
bool same_description(const BodyDescription& a, const BodyDescription& b);

/// Bodies by id. Every change bumps version(), so a caller that polls can tell.
struct DescriptionChanges;

class WorldDescription {
 public:
  /// The scene's bodies, as the scene describes them.
  static WorldDescription from_scene(const sim::SceneDef& scene);
  /// Every body in the match's world, from the world's own colliders, with the match's
  /// kinds: what a client should hold once it has caught up with that tick.
  static WorldDescription from_match(const game::Match& match);

  const std::vector<BodyDescription>& bodies() const { return bodies_; }
  const BodyDescription* find(uint32_t id) const;
  /// Adds or replaces the body with this id.
  void put(BodyDescription body);
  /// False when there is no such body.
  bool remove(uint32_t id);
  void clear();
  uint64_t version() const { return version_; }

 private:
  friend DescriptionChanges update_description(WorldDescription&, const game::Match&);
  std::vector<BodyDescription> bodies_;  // sorted by id
  uint64_t version_ = 0;
  // The world membership stamp (sim::World::membership_stamp) these bodies were last
  // brought up to by update_description; 0 after any other change.
  uint64_t source_stamp_ = 0;
};

/// A body of the world, described from its colliders (ColliderDef's shape fields).
BodyDescription describe_body(const sim::World& world, sim::BodyId body, uint32_t kind);

/// The difference between what `known` holds and the match's world now: the ids it lost
/// and the bodies it gained (both ascending by id). `known` is updated to match.
struct DescriptionChanges {
  std::vector<uint32_t> removed;
  std::vector<BodyDescription> added;
  bool empty() const { return removed.empty() && added.empty(); }
};
DescriptionChanges update_description(WorldDescription& known, const game::Match& match);
/// What a client that holds `from` needs to hold `to`.
DescriptionChanges description_difference(const WorldDescription& from, const WorldDescription& to);

/// The messages for a set of changes: BodyRemoved first, then BodyAdded, each at most
/// `max_bytes`. A body whose description alone does not fit loses its geometry data and,
/// if that is not enough, its last colliders (BodyDescription::complete = false).
std::vector<std::vector<uint8_t>> encode_description_changes(uint64_t tick, const DescriptionChanges& changes,
                                                             size_t max_bytes = DescriptionLimits::kMaxMessageBytes);

/// Decode checked BodyAdded / BodyRemoved messages: OutOfRange for counts past the
/// limits, ids that are 0, reserved or not ascending, unknown shape or motion values,
/// non-finite or negative dimensions, a zero rotation, point data that is not triples,
/// mesh indices past their vertices, heightfield samples that are not rows x columns.
DropReason decode_body_added(const fb::BodyAdded& message, uint64_t& tick, std::vector<BodyDescription>& out);
DropReason decode_body_removed(const fb::BodyRemoved& message, uint64_t& tick, std::vector<uint32_t>& out);

}  // namespace keel::protocol
