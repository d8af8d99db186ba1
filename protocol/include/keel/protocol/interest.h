// Interest management for snapshot clients: which bodies a client is sent, in what order,
// within its bandwidth budget, and the partial snapshot that carries them.
//
// Per client, every body has a priority that grows each snapshot it is not sent, by its
// relevance to that client: the game's weight, times a falloff with the distance to the
// client's own body (none for spectators), times whether the body changed since the
// value the client acknowledged. Each PartialSnapshot is filled in priority order up to
// the bytes the budget allows (packet-layer overhead counted); the bodies sent start
// again from zero. A body the game weighs 0, or beyond the interest radius, leaves the
// client's interest: the client is told (until it acknowledges a snapshot saying so) and
// drops it; when it returns it is sent in full.
//
// Every body is delta-encoded against its own baseline: the newest value of that body
// the client acknowledged (InputBatch.ack_snapshot_tick names a PartialSnapshot; every
// body in it is then acknowledged). The receiver keeps each body's last
// kSamplesPerBody decoded values and the sender uses a baseline only while the client
// must still hold it, so a lost packet never leaves the client unable to decode.
// docs/protocol.md ("Partial snapshots") has the bit layout.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/snapshot_codec.h>
#include <keel/game/rules.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace keel::protocol {

struct InterestLimits {
  /// Bodies in one PartialSnapshot (updates), and leave ids in one.
  static constexpr uint32_t kMaxBodiesPerMessage = 1024;
  static constexpr uint32_t kMaxLeavesPerMessage = 1024;
  /// Decoded values the receiver keeps per body: the window a baseline must lie in.
  static constexpr uint32_t kSamplesPerBody = 16;
  /// Bodies one client may hold at once (receiver memory: this x kSamplesPerBody values).
  static constexpr uint32_t kMaxInterestBodies = 8192;
  /// Sent snapshots the sender remembers until acknowledged.
  static constexpr uint32_t kSentHistory = 64;
  /// A baseline further back than this is not used (the age is coded in the payload).
  static constexpr uint64_t kMaxBaselineAge = 65535;
};

struct InterestConfig {
  /// The client's downstream budget for snapshots, in wire bytes (datagrams with the
  /// packet header, tag, chunk headers and 28 bytes of IPv4/UDP header each).
  double budget_bytes_per_second = 256 * 125.0;  ///< 256 kbit/s
  /// Metres from the viewer beyond which a body leaves interest; 0 = no radius.
  float radius = 0.0f;
  /// Metres at which the distance falloff halves a body's relevance (1 / (1 + (d/near)^2)).
  float near_distance = 16.0f;
  /// Relevance factor of a body whose value equals the one the client acknowledged
  /// (it already shows it): 0 sends it no more until it changes.
  float still_factor = 0.0f;
  /// With nothing to send, an empty snapshot still goes out at most every this many
  /// ticks: the client's clock and render time follow the snapshots' ticks.
  uint32_t idle_interval = 12;
};

/// What the game says about one body for one viewer (game::Rules::relevance).
using BodyRelevance = game::BodyInterest;

/// The bodies of one snapshot bucketed by position on the ground plane (x, z) in square
/// cells: built once a snapshot and shared by every client, so that a client with an
/// interest radius visits the bodies in the cells its radius reaches instead of every
/// body of the world. Only an index: which bodies a client is sent is decided exactly as
/// without it.
class InterestGrid {
 public:
  /// Buckets `positions` in cells of about `cell` metres (larger when the bodies spread
  /// over more cells than a few per body). Non-finite positions are kept apart and
  /// reported by every query.
  void build(std::span<const sim::Vec3> positions, float cell);
  /// Bodies bucketed (the positions' count).
  size_t size() const { return size_; }
  /// Sets near[i] = 1 for every body i that may lie within `radius` of `centre`: every
  /// one that does, and others of the cells around (near has size() entries).
  void mark_near(const sim::Vec3& centre, float radius, std::span<uint8_t> near) const;

 private:
  size_t size_ = 0;
  float cell_ = 1.0f;
  int64_t min_x_ = 0, min_z_ = 0, nx_ = 0, nz_ = 0;
  std::vector<uint32_t> start_;  // per cell (x-major), the first of its bodies in items_; + 1 end
  std::vector<uint32_t> items_;  // body indices, cell by cell
  std::vector<uint32_t> loose_;  // bodies whose position is not finite
};

/// Per body of one stream of snapshots, the snapshot tick at which its quantised value
/// last changed: kept once per stream and shared by every client's sender, so that a
/// sender tells a body unchanged since the baseline its client holds from two ticks,
/// without loading that baseline. Only a shortcut: which bodies are chosen and how they
/// are written is exactly as without it.
class ChangeStamps {
 public:
  /// Follows the stream to `current` (ticks increasing; bodies sorted by id, as
  /// QuantSnapshot keeps them). A body first seen now is stamped with this tick.
  void update(const QuantSnapshot& current);
  /// Parallel to the last snapshot's bodies.
  std::span<const uint64_t> stamps() const { return stamps_; }
  /// Which set of body ids the last snapshot held: a number that changes whenever the ids
  /// do (a body added or gone) and never comes back, so two snapshots with the same
  /// number hold the same ids in the same order. Never 0.
  uint64_t body_set() const { return body_set_; }

 private:
  uint64_t body_set_ = 1;
  std::vector<QuantBody> previous_;  // the last snapshot's bodies
  std::vector<uint64_t> stamps_;
  std::vector<QuantBody> next_bodies_;  // kept: their memory is reused
  std::vector<uint64_t> next_stamps_;
};

/// Every body's full form (the bits a PartialSnapshot sends a body without a baseline
/// in) for one stream of snapshots, written once a snapshot for every client: a body sent
/// in full is the same bits for every client, so each sender copies them. Kept from
/// snapshot to snapshot: only the bodies whose quantised value changed are written again.
/// Only a shortcut: the messages are exactly those written without it.
class FullForms {
 public:
  /// Follows the stream to `current` (bodies sorted by id, as QuantSnapshot keeps them).
  void update(const QuantSnapshot& current, const SnapshotConfig& config);
  /// The snapshot tick the forms are of (0: none yet).
  uint64_t tick() const { return tick_; }
  size_t size() const { return previous_.size(); }
  /// Bits of each form (body_bits::full_bits of the config).
  size_t bits() const { return bits_; }
  /// Body `i`'s form, bits() bits least-significant first (BitWriter::write_words).
  const uint64_t* form(size_t i) const { return words_.data() + i * stride_; }
  /// Whether these forms are of `current` written with `config`: the sender checks this
  /// before it copies one.
  bool of(const QuantSnapshot& current, const SnapshotConfig& config) const {
    return tick_ == current.tick && previous_.size() == current.bodies.size() && config == config_;
  }

 private:
  void write_form(size_t i, const QuantBody& b);

  uint64_t tick_ = 0;
  SnapshotConfig config_;
  size_t bits_ = 0;
  size_t stride_ = 0;                // words per body
  std::vector<QuantBody> previous_;  // the bodies the forms are of
  std::vector<uint64_t> words_;      // stride_ per body, parallel to previous_
};

/// One snapshot's worth of what the sender chooses from, for one client.
struct InterestFrame {
  const QuantSnapshot* current = nullptr;  ///< every candidate body, sorted by id
  std::span<const sim::Vec3> positions;    ///< world positions, parallel to current->bodies
  std::span<const BodyRelevance> relevance;  ///< parallel; empty (or another size) = weight 1 each
  std::optional<sim::Vec3> viewer;         ///< the client's body; none = uniform (spectator)
  /// The positions bucketed (InterestGrid::build), or null: with a radius and a viewer the
  /// sender then looks only at the bodies near the viewer and those in its interest.
  const InterestGrid* grid = nullptr;
  /// ChangeStamps::stamps() of this snapshot, or empty (the sender then compares values).
  std::span<const uint64_t> changed_at = {};
  /// The bodies' full forms of this snapshot (FullForms::update), or null: the sender
  /// then writes each body it sends in full itself.
  const FullForms* full = nullptr;
  /// ChangeStamps::body_set() of this snapshot, or 0 (the sender then compares the ids):
  /// a sender that last followed the same set skips the comparison of every body's id.
  uint64_t body_set = 0;
};

/// Wire bytes (packet header, tag, chunk headers, IPv4/UDP header) of one snapshot
/// message of `message_bytes`, as the Connection sends it alone: one datagram, or
/// fragments of 1024 bytes.
size_t snapshot_wire_bytes(size_t message_bytes);

/// The body changes of one PartialSnapshot, decoded.
struct PartialUpdate {
  uint64_t tick = 0;
  std::vector<QuantBody> bodies;  ///< updated bodies, sorted by id
  std::vector<uint32_t> left;     ///< bodies that left the client's interest, ascending
  std::vector<uint32_t> full;     ///< ids of the updated bodies sent in full, ascending
};

class InterestSender {
 public:
  explicit InterestSender(const SnapshotConfig& snapshot, const InterestConfig& config = {});

  /// The client decoded the PartialSnapshot of `tick` (unknown or stale ticks ignored).
  void on_ack(uint64_t tick);
  /// A PartialSnapshot message for `frame` no larger on the wire than `allowance` bytes
  /// (snapshot_wire_bytes), or empty when nothing fits or nothing is due. Ticks must
  /// increase from call to call.
  std::vector<uint8_t> encode(const InterestFrame& frame, double allowance);

  /// Bodies in the client's interest now (sent since they last entered).
  size_t in_interest() const;
  /// What the last encode put in its message (tests, benchmarks).
  const PartialUpdate& last_sent() const { return last_; }
  uint64_t acked_tick() const { return acked_; }
  const InterestConfig& config() const { return config_; }
  void set_budget(double bytes_per_second) { config_.budget_bytes_per_second = bytes_per_second; }

 private:
  // What the per-body pass of every snapshot reads (32 bytes), apart from the values
  // (TrackValues, 128 bytes), which it reads only for a body that may have changed: a
  // client's pass over thousands of bodies then walks a fifth of the memory.
  struct Track {
    uint32_t id = 0;
    float priority = 0.0f;
    bool in_interest = false;
    bool has_baseline = false;
    /// has_baseline and last_sent == baseline, kept up to date where either changes: the
    /// per-body pass of every snapshot reads this instead of comparing two values.
    bool settled = false;
    uint32_t epoch = 0;  ///< bumped when the body leaves: older acks no longer count
    uint32_t sends = 0;  ///< times sent
    uint32_t baseline_send = 0;
    uint64_t baseline_tick = 0;
  };
  struct TrackValues {
    QuantBody baseline;
    QuantBody last_sent;  ///< the newest value sent (valid once sends > 0)
  };
  struct SentBody {
    uint32_t id;
    uint32_t epoch;
    uint32_t send;
    QuantBody value;
  };
  struct Sent {
    uint64_t tick = 0;
    std::vector<SentBody> bodies;
    std::vector<uint32_t> left;
  };
  // The priority and id are copied in so that ordering the candidates (a heap of
  // thousands, every client, every snapshot) never loads the track they stand for; both
  // in one key, so that the order (priority, then the lower id first) is one comparison.
  struct Candidate {
    uint64_t key;  // order_key(priority, id)
    uint32_t id;
    uint32_t index;  // into tracks_ and frame.current->bodies (parallel after sync_tracks)
  };
  /// A candidate's priority is finite and > 0, and a positive float's bits order as its
  /// value does: its bits above the id's complement order as (priority, lower id first).
  static uint64_t order_key(float priority, uint32_t id);

  void sync_tracks(const QuantSnapshot& current, uint64_t body_set);
  /// Adds every body's relevance to its priority; candidates_ = those with priority > 0.
  void collect_candidates(const InterestFrame& frame, float elapsed, size_t& holding);
  /// The bodies of candidates_ that fit `room_bits`, most relevant first.
  std::vector<Candidate> choose(const QuantSnapshot& current, double room_bits, size_t holding);
  struct PassTerms;
  PassTerms pass_terms(const InterestFrame& frame) const;
  float relevance(const InterestFrame& frame, const PassTerms& terms, size_t body) const;
  void leave(Track& t);
  void settle(size_t i) {
    tracks_[i].settled = tracks_[i].has_baseline && values_[i].last_sent == values_[i].baseline;
  }
  bool usable_baseline(const Track& t, uint64_t tick) const;
  /// The message of `chosen`; `left` is set to the leaves it carries.
  std::vector<uint8_t> build(const InterestFrame& frame, const std::vector<Candidate>& chosen,
                             std::vector<uint32_t>& left);

  SnapshotConfig snapshot_;
  InterestConfig config_;
  std::vector<Track> tracks_;  // sorted by id
  std::vector<TrackValues> values_;  // parallel to tracks_
  std::vector<uint32_t> pending_left_;  // left, not yet in an acknowledged snapshot; ascending
  std::deque<Sent> sent_;
  std::vector<Candidate> candidates_;  // kept: its memory is reused from snapshot to snapshot
  std::vector<uint8_t> near_;          // per body: near the viewer (with a grid)
  uint64_t acked_ = 0;
  uint64_t last_tick_ = 0;
  uint64_t synced_body_set_ = 0;  // InterestFrame::body_set the tracks last followed
  uint64_t last_sent_ = 0;
  PartialUpdate last_;
};

class InterestReceiver {
 public:
  explicit InterestReceiver(const SnapshotConfig& config) : config_(config) {}

  /// Decodes a checked PartialSnapshot. On None, last() holds its changes and every
  /// updated body's value is kept as a possible baseline. Stale: not newer than the
  /// newest decoded one, or a baseline it names is not held.
  DropReason receive(const fb::PartialSnapshot& message);
  const PartialUpdate& last() const { return last_; }
  /// What to acknowledge: the newest decoded tick (0 = none yet).
  uint64_t ack_tick() const { return latest_tick_; }
  /// The newest value held of `id`, or nullptr.
  const QuantBody* find(uint32_t id) const;
  /// The newest value of every body held, sorted by id, at the newest decoded tick.
  QuantSnapshot held() const;
  size_t bodies() const { return tracks_.size(); }

 private:
  struct Sample {
    uint64_t tick;
    QuantBody value;
  };
  struct Track {
    uint32_t id = 0;
    std::deque<Sample> samples;  // oldest first, at most kSamplesPerBody
  };
  Track* track(uint32_t id);

  SnapshotConfig config_;
  std::vector<Track> tracks_;  // sorted by id
  uint64_t latest_tick_ = 0;
  PartialUpdate last_;
};

/// The payload codec (exposed for the fuzz target and tests). `baseline(id, tick)` gives
/// the receiver's value of body `id` at `tick`, or nullptr.
struct PartialEntry {
  const QuantBody* value;
  const QuantBody* baseline;  ///< nullptr: in full
  uint64_t baseline_tick;
  /// In full: the value's form already written (FullForms::form), or nullptr.
  const uint64_t* form = nullptr;
};
std::vector<uint8_t> encode_partial(uint64_t tick, std::span<const PartialEntry> bodies,
                                    std::span<const uint32_t> left, const SnapshotConfig& config);

}  // namespace keel::protocol
