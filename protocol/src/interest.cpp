#include <keel/protocol/interest.h>

#include "body_bits.h"
#include "interest_codec.h"

#include <keel/base/bit_copy.h>
#include <keel/protocol/packet.h>
#include <keel/protocol/snapshot_stream.h>

#include <algorithm>
#include <cmath>

namespace keel::protocol {
namespace {

// The Connection's framing of one unreliable message (protocol/src/connection/channels.cpp):
// one Unreliable chunk (4 bytes of header) when it fits one fragment's room, else
// Fragment chunks (8 bytes of header) of 1024 bytes each; every datagram a 13-byte
// header and a 16-byte tag, and 28 bytes of IPv4 and UDP header on the wire.
constexpr size_t kFragmentBytes = 1024;
constexpr size_t kUnreliableHeader = 4;
constexpr size_t kFragmentHeader = 8;
constexpr size_t kIpUdpHeader = 28;
constexpr size_t kDatagramOverhead = kPacketHeaderBytes + kAuthTagBytes + kIpUdpHeader;

// Bits a body costs at most beyond its id: the id itself is coded against the previous
// one in id order, which the priority order does not know; 11 bits covers gaps below 276.
constexpr size_t kIdBitsEstimate = 11;

}  // namespace

size_t snapshot_wire_bytes(size_t message_bytes) {
  if (message_bytes + kUnreliableHeader <= kFragmentBytes + kFragmentHeader) {
    return kDatagramOverhead + kUnreliableHeader + message_bytes;
  }
  size_t fragments = (message_bytes + kFragmentBytes - 1) / kFragmentBytes;
  return fragments * (kDatagramOverhead + kFragmentHeader) + message_bytes;
}

// --- sender ------------------------------------------------------------------------------

InterestSender::InterestSender(const SnapshotConfig& snapshot, const InterestConfig& config)
    : snapshot_(snapshot), config_(config) {}

size_t InterestSender::in_interest() const {
  return static_cast<size_t>(std::count_if(tracks_.begin(), tracks_.end(), [](const Track& t) { return t.in_interest; }));
}

void InterestSender::on_ack(uint64_t tick) {
  if (tick <= acked_) return;
  auto it = std::find_if(sent_.begin(), sent_.end(), [&](const Sent& s) { return s.tick == tick; });
  if (it == sent_.end()) return;  // unknown (forged, or older than the history)
  acked_ = tick;
  // The bodies of a record are in id order, as the tracks are: each search starts where
  // the one before ended.
  auto from = tracks_.begin();
  for (const SentBody& b : it->bodies) {
    from = std::lower_bound(from, tracks_.end(), b.id, [](const Track& x, uint32_t v) { return x.id < v; });
    if (from == tracks_.end() || from->id != b.id) continue;
    Track& t = *from;
    // A body that left since has a new epoch: what the client held of it before is gone.
    if (t.epoch != b.epoch || !t.in_interest) continue;
    if (t.has_baseline && t.baseline_tick >= tick) continue;
    t.has_baseline = true;
    t.baseline_tick = tick;
    t.baseline_send = b.send;
    const size_t i = static_cast<size_t>(from - tracks_.begin());
    values_[i].baseline = b.value;
    settle(i);
  }
  // Leaves the client has now seen; a body that re-entered is no longer pending anyway.
  std::vector<uint32_t> still;
  std::set_difference(pending_left_.begin(), pending_left_.end(), it->left.begin(), it->left.end(),
                      std::back_inserter(still));
  pending_left_.swap(still);
  sent_.erase(sent_.begin(), it + 1);
}

// Tracks follow the candidate bodies: a body gone from the world leaves interest (the
// client also hears of it as BodyRemoved), and its track goes once the client knows.
void InterestSender::sync_tracks(const QuantSnapshot& current, uint64_t body_set) {
  // Nearly every snapshot holds the bodies of the one before: nothing to merge then. The
  // stream's set number says so without reading every track (ids compared otherwise).
  if (body_set != 0 && body_set == synced_body_set_ && tracks_.size() == current.bodies.size()) return;
  synced_body_set_ = body_set;
  if (tracks_.size() == current.bodies.size() &&
      std::equal(tracks_.begin(), tracks_.end(), current.bodies.begin(),
                 [](const Track& t, const QuantBody& b) { return t.id == b.id; })) {
    return;
  }
  std::vector<Track> merged;
  std::vector<TrackValues> merged_values;
  merged.reserve(current.bodies.size());
  merged_values.reserve(current.bodies.size());
  size_t j = 0;
  for (const QuantBody& b : current.bodies) {
    while (j < tracks_.size() && tracks_[j].id < b.id) {
      if (tracks_[j].in_interest) leave(tracks_[j]);
      ++j;
    }
    if (j < tracks_.size() && tracks_[j].id == b.id) {
      merged.push_back(tracks_[j]);
      merged_values.push_back(values_[j++]);
    } else {
      Track t;
      t.id = b.id;
      merged.push_back(t);
      merged_values.emplace_back();
    }
  }
  for (; j < tracks_.size(); ++j) {
    if (tracks_[j].in_interest) leave(tracks_[j]);
  }
  tracks_.swap(merged);
  values_.swap(merged_values);
}

void InterestSender::leave(Track& t) {
  t.in_interest = false;
  t.has_baseline = false;
  t.settled = false;
  t.priority = 0.0f;
  ++t.epoch;
  auto it = std::lower_bound(pending_left_.begin(), pending_left_.end(), t.id);
  if (it == pending_left_.end() || *it != t.id) pending_left_.insert(it, t.id);
}

// What one client's pass asks of every body, decided once per snapshot: spans that do not
// match the bodies are ignored (the defaults: weight 1, no viewer, values compared).
struct InterestSender::PassTerms {
  bool weighed = false;   // the game's weights apply
  bool falloff = false;   // a viewer and positions: the distance falloff applies
  bool stamped = false;   // change stamps spare reading baselines
  sim::Vec3 viewer{0.0f};
  float radius2 = 0.0f;   // > 0: bodies beyond radius leave interest
  float near2 = 1.0f;
};

InterestSender::PassTerms InterestSender::pass_terms(const InterestFrame& frame) const {
  const size_t n = frame.current->bodies.size();
  PassTerms terms;
  terms.weighed = frame.relevance.size() == n;
  terms.falloff = frame.viewer.has_value() && frame.positions.size() == n;
  terms.stamped = frame.changed_at.size() == n;
  if (frame.viewer) terms.viewer = *frame.viewer;
  terms.radius2 = config_.radius > 0.0f ? config_.radius * config_.radius : 0.0f;
  const float near = std::max(config_.near_distance, 0.01f);
  terms.near2 = near * near;
  return terms;
}

// How much body `body` matters to this client now; < 0: out of its interest.
float InterestSender::relevance(const InterestFrame& frame, const PassTerms& terms, size_t body) const {
  const BodyRelevance rel = terms.weighed ? frame.relevance[body] : BodyRelevance{};
  if (!(rel.weight > 0.0f) || !std::isfinite(rel.weight)) return -1.0f;
  float falloff = 1.0f;
  if (terms.falloff && !rel.always) {
    const sim::Vec3 d = frame.positions[body] - terms.viewer;
    const float dist2 = glm::dot(d, d);
    if (terms.radius2 > 0.0f && dist2 > terms.radius2) return -1.0f;
    falloff = 1.0f / (1.0f + dist2 / terms.near2);
  }
  // The client may hold a newer value than the acknowledged one (sent, its ack still on
  // the way): the body is settled only when what was last sent is what it acknowledged.
  // A stamp no newer than the baseline's tick: the value has not changed since the client
  // acknowledged it, so the baseline (in the cold half of the track) need not be read.
  const Track& t = tracks_[body];
  bool changed = !t.settled;
  if (!changed && !(terms.stamped && frame.changed_at[body] <= t.baseline_tick)) {
    changed = !(values_[body].baseline == frame.current->bodies[body]);
  }
  return std::min(rel.weight, 1e6f) * falloff * (changed ? 1.0f : config_.still_factor);
}

uint64_t InterestSender::order_key(float priority, uint32_t id) {
  return uint64_t{keel::bit_copy<uint32_t>(priority)} << 32 | ~id;
}

void InterestSender::collect_candidates(const InterestFrame& frame, float elapsed, size_t& holding) {
  const size_t n = tracks_.size();
  // With a grid only the bodies near the viewer, those in the client's interest and those
  // the game marks always relevant can have a relevance >= 0: every other body is beyond
  // the radius, where relevance() returns < 0 and nothing changes for a body outside the
  // interest. Skipping those is what the grid saves; the result is the same.
  const bool sparse = frame.grid != nullptr && frame.viewer && config_.radius > 0.0f &&
                      frame.grid->size() == n && frame.positions.size() == n;
  if (sparse) {
    near_.assign(n, 0);
    frame.grid->mark_near(*frame.viewer, config_.radius, near_);
  }
  const PassTerms terms = pass_terms(frame);
  // Every body may be a candidate: room for all of them once, then plain writes.
  candidates_.resize(n);
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    Track& t = tracks_[i];
    if (sparse && !near_[i] && !t.in_interest && !(terms.weighed && frame.relevance[i].always)) continue;
    const float r = relevance(frame, terms, i);
    if (r < 0.0f) {
      if (t.in_interest) {
        leave(t);
        --holding;
      }
      continue;
    }
    t.priority += r * elapsed;
    if (t.priority > 0.0f) candidates_[count++] = {order_key(t.priority, t.id), t.id, static_cast<uint32_t>(i)};
  }
  candidates_.resize(count);
}

// Greedy fill in priority order by each body's size in bits (the real message is then
// measured and trimmed by the caller). A heap gives the candidates best first, so a
// snapshot that fills after a few dozen bodies does not sort thousands; the order is the
// total one of (priority, id), so the bodies chosen are those a full sort would give.
// (A partial sort of the best few hundred, measured instead, cost 1.5 times the heap's
// instructions: a budget's room allows many more small deltas than are ever taken.)
std::vector<InterestSender::Candidate> InterestSender::choose(const QuantSnapshot& current, double room_bits,
                                                             size_t holding) {
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.key < b.key;
  };
  constexpr double kFrameBits = kIdBitsEstimate + 1 + 11;
  const size_t full_bits = body_bits::full_bits(snapshot_);
  // No body costs less than this: below it nothing further down can fit either.
  const double least = static_cast<double>(std::min(full_bits, body_bits::min_delta_bits(snapshot_))) + kFrameBits;
  auto bits_of = [&](const Candidate& c) {
    const Track& t = tracks_[c.index];
    const QuantBody& now = current.bodies[c.index];
    const size_t body =
        usable_baseline(t, current.tick) ? body_bits::delta_bits(now, values_[c.index].baseline, snapshot_) : full_bits;
    return static_cast<double>(body) + kFrameBits;
  };
  std::vector<Candidate> chosen;
  std::make_heap(candidates_.begin(), candidates_.end(), worse);
  bool pruned = false;
  for (auto end = candidates_.end(); end != candidates_.begin();) {
    // No body costs less than about 24 bits (an id, a flag, three zero residuals...).
    if (chosen.size() >= InterestLimits::kMaxBodiesPerMessage || room_bits < 24.0 || room_bits < least) break;
    std::pop_heap(candidates_.begin(), end, worse);
    --end;
    const Candidate c = *end;
    Track& t = tracks_[c.index];
    if (!t.in_interest && holding >= InterestLimits::kMaxInterestBodies) continue;
    const double bits = bits_of(c);
    if (bits > room_bits) {
      // A smaller one further down may still fit. The first time one does not, the rest
      // are cut to those that fit the room left (it only shrinks, so the others never
      // will): the ones taken after are the same, without popping every body of the world.
      if (!pruned) {
        pruned = true;
        end = std::remove_if(candidates_.begin(), end, [&](const Candidate& x) { return bits_of(x) > room_bits; });
        std::make_heap(candidates_.begin(), end, worse);
      }
      continue;
    }
    room_bits -= bits;
    chosen.push_back(c);
    if (!t.in_interest) ++holding;
  }
  return chosen;
}

bool InterestSender::usable_baseline(const Track& t, uint64_t tick) const {
  // The receiver keeps a body's last kSamplesPerBody values, and receives a subset of
  // what was sent, in order: the baseline is still held while fewer than that many
  // sends followed it.
  return t.has_baseline && tick - t.baseline_tick <= InterestLimits::kMaxBaselineAge &&
         t.sends - t.baseline_send < InterestLimits::kSamplesPerBody;
}

std::vector<uint8_t> InterestSender::build(const InterestFrame& frame, const std::vector<Candidate>& chosen,
                                           std::vector<uint32_t>& left) {
  std::vector<Candidate> order = chosen;
  std::sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  const uint64_t tick = frame.current->tick;
  // Forms of another snapshot or configuration are not used: the sender writes its own.
  const FullForms* forms = frame.full != nullptr && frame.full->of(*frame.current, snapshot_) ? frame.full : nullptr;
  std::vector<PartialEntry> entries;
  entries.reserve(order.size());
  for (const Candidate& c : order) {
    const Track& t = tracks_[c.index];
    bool delta = usable_baseline(t, tick);
    const uint64_t* form = !delta && forms != nullptr ? forms->form(c.index) : nullptr;
    entries.push_back({&frame.current->bodies[c.index], delta ? &values_[c.index].baseline : nullptr,
                       delta ? t.baseline_tick : 0, form});
  }
  // The pending leaves, but not those of bodies this message sends again (`order` is in
  // id order: tracks follow the candidate bodies, which are sorted by id).
  left.clear();
  for (uint32_t id : pending_left_) {
    if (left.size() == InterestLimits::kMaxLeavesPerMessage) break;
    auto it = std::lower_bound(order.begin(), order.end(), id, [](const Candidate& c, uint32_t v) { return c.id < v; });
    if (it == order.end() || it->id != id) left.push_back(id);
  }
  std::vector<uint8_t> payload = encode_partial(tick, entries, left, snapshot_);
  flatbuffers::FlatBufferBuilder fbb(payload.size() + 64);
  auto body = fb::CreatePartialSnapshotDirect(fbb, static_cast<uint32_t>(tick), &payload);
  return finish_message(fbb, fb::Body::PartialSnapshot, body.Union());
}

std::vector<uint8_t> InterestSender::encode(const InterestFrame& frame, double allowance) {
  const QuantSnapshot& current = *frame.current;
  last_ = PartialUpdate{current.tick, {}, {}, {}};
  if (current.tick <= last_tick_) return {};
  const float elapsed = last_tick_ == 0 ? 1.0f : static_cast<float>(std::min<uint64_t>(current.tick - last_tick_, 60));
  last_tick_ = current.tick;
  sync_tracks(current, frame.body_set);
  size_t holding = in_interest();
  collect_candidates(frame, elapsed, holding);
  size_t leaves = std::min<size_t>(pending_left_.size(), InterestLimits::kMaxLeavesPerMessage);
  const size_t fixed_bytes = snapshot_wire_bytes(64) - 64 + 40 + leaves * 4;
  std::vector<Candidate> chosen = choose(current, (allowance - static_cast<double>(fixed_bytes)) * 8.0, holding);
  const bool idle_due = current.tick - last_sent_ >= config_.idle_interval;
  if (chosen.empty() && leaves == 0 && !idle_due) return {};
  std::vector<uint32_t> left;
  std::vector<uint8_t> message = build(frame, chosen, left);
  while (static_cast<double>(snapshot_wire_bytes(message.size())) > allowance && !chosen.empty()) {
    chosen.resize(chosen.size() - std::max<size_t>(1, chosen.size() / 16));
    message = build(frame, chosen, left);
  }
  if (static_cast<double>(snapshot_wire_bytes(message.size())) > allowance) return {};
  if (chosen.empty() && left.empty() && !idle_due) return {};
  last_sent_ = current.tick;
  // From here on in id order (tracks follow the bodies' id order): the records below come
  // out sorted without sorting the bodies' values.
  std::sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  // A body that comes back before its leave was acknowledged is simply sent again.
  if (!pending_left_.empty()) {
    std::erase_if(pending_left_, [&](uint32_t id) {
      auto it = std::lower_bound(chosen.begin(), chosen.end(), id, [](const Candidate& c, uint32_t v) { return c.id < v; });
      return it != chosen.end() && it->id == id;
    });
  }
  Sent record{current.tick, {}, left};
  record.bodies.reserve(chosen.size());
  last_.left = left;
  last_.bodies.reserve(chosen.size());
  for (const Candidate& c : chosen) {
    Track& t = tracks_[c.index];
    const QuantBody& now = current.bodies[c.index];
    t.in_interest = true;
    t.priority = 0.0f;
    if (!usable_baseline(t, current.tick)) last_.full.push_back(t.id);
    record.bodies.push_back({t.id, t.epoch, t.sends, now});
    values_[c.index].last_sent = now;
    settle(c.index);
    ++t.sends;
    last_.bodies.push_back(now);
  }
  sent_.push_back(std::move(record));
  while (sent_.size() > InterestLimits::kSentHistory) sent_.pop_front();
  return message;
}

// --- change stamps -----------------------------------------------------------------------

void ChangeStamps::update(const QuantSnapshot& current) {
  next_bodies_.assign(current.bodies.begin(), current.bodies.end());
  next_stamps_.resize(current.bodies.size());
  // Both lists are sorted by id: one merge pairs each body with its last value.
  size_t j = 0;
  bool same_ids = previous_.size() == current.bodies.size();
  for (size_t i = 0; i < current.bodies.size(); ++i) {
    const QuantBody& b = current.bodies[i];
    while (j < previous_.size() && previous_[j].id < b.id) ++j;
    const bool known = j < previous_.size() && previous_[j].id == b.id;
    same_ids = same_ids && known && j == i;
    next_stamps_[i] = known && previous_[j] == b ? stamps_[j] : current.tick;
  }
  if (!same_ids) ++body_set_;
  previous_.swap(next_bodies_);
  stamps_.swap(next_stamps_);
}

// --- receiver ----------------------------------------------------------------------------

QuantSnapshot InterestReceiver::held() const {
  QuantSnapshot s;
  s.tick = latest_tick_;
  s.bodies.reserve(tracks_.size());
  for (const Track& t : tracks_) {
    if (!t.samples.empty()) s.bodies.push_back(t.samples.back().value);
  }
  return s;
}

InterestReceiver::Track* InterestReceiver::track(uint32_t id) {
  auto it = std::lower_bound(tracks_.begin(), tracks_.end(), id,
                             [](const Track& t, uint32_t v) { return t.id < v; });
  return it != tracks_.end() && it->id == id ? &*it : nullptr;
}

const QuantBody* InterestReceiver::find(uint32_t id) const {
  auto it = std::lower_bound(tracks_.begin(), tracks_.end(), id,
                             [](const Track& t, uint32_t v) { return t.id < v; });
  return it != tracks_.end() && it->id == id && !it->samples.empty() ? &it->samples.back().value : nullptr;
}

DropReason InterestReceiver::receive(const fb::PartialSnapshot& m) {
  uint64_t tick = expand_tick(m.tick(), latest_tick_);
  if (tick == 0 || tick <= latest_tick_) return DropReason::Stale;  // reordered or duplicated
  std::span<const uint8_t> payload;
  if (m.payload() != nullptr) payload = {m.payload()->data(), m.payload()->size()};
  PartialUpdate update;
  BaselineLookup lookup = [this](uint32_t id, uint64_t at) -> const QuantBody* {
    Track* t = track(id);
    if (t == nullptr) return nullptr;
    for (const Sample& s : t->samples) {
      if (s.tick == at) return &s.value;
    }
    return nullptr;
  };
  DropReason r = decode_partial(payload, tick, config_, lookup, update);
  if (r != DropReason::None) return r;
  // Bounded memory: a message that would make the client hold too many bodies is refused.
  size_t fresh = 0;
  for (const QuantBody& b : update.bodies) fresh += track(b.id) == nullptr;
  if (tracks_.size() + fresh > InterestLimits::kMaxInterestBodies + update.left.size()) return DropReason::OutOfRange;
  std::erase_if(tracks_, [&](const Track& t) { return std::binary_search(update.left.begin(), update.left.end(), t.id); });
  for (const QuantBody& b : update.bodies) {
    Track* t = track(b.id);
    if (t == nullptr) {
      auto it = std::lower_bound(tracks_.begin(), tracks_.end(), b.id,
                                 [](const Track& x, uint32_t v) { return x.id < v; });
      t = &*tracks_.insert(it, Track{b.id, {}});
    }
    t->samples.push_back({tick, b});
    while (t->samples.size() > InterestLimits::kSamplesPerBody) t->samples.pop_front();
  }
  latest_tick_ = tick;
  last_ = std::move(update);
  return DropReason::None;
}

}  // namespace keel::protocol
