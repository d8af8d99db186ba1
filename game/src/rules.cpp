// GameSpec checks and canonical bytes, and the Rules hooks' defaults (do nothing).
#include <keel/game/rules.h>

#include "names.h"

#include <keel/base/byte_io.h>

#include <xxhash.h>

#include <algorithm>

namespace keel::game {

namespace {
constexpr char kSpecMagic[4] = {'K', 'G', 'S', 'P'};
constexpr uint32_t kSpecVersion = 1;
// Version 2 adds the pose history after the event types. A spec that keeps none is written
// as version 1, byte for byte what it was before, so its hash (and every match state and
// golden chain that starts with it) is unchanged.
constexpr uint32_t kSpecVersionWithHistory = 2;
}  // namespace

Status GameSpec::validate() const {
  if (Status st = check_name(name, "game name"); !st) return st;
  if (Status st = input.validate(); !st) return Error{"game \"" + name + "\" input: " + st.error().message};
  if (Status st = state.validate(); !st) return Error{"game \"" + name + "\" " + st.error().message};
  if (events.size() > kMaxEventTypes) {
    return Error{"game \"" + name + "\" declares " + std::to_string(events.size()) + " event types; at most " +
                 std::to_string(kMaxEventTypes) + " are allowed"};
  }
  std::vector<std::string> seen;
  for (const EventType& e : events) {
    if (Status st = check_name(e.name, "event name"); !st) return st;
    if (std::find(seen.begin(), seen.end(), e.name) != seen.end()) return Error{"event \"" + e.name + "\" is declared twice"};
    seen.push_back(e.name);
    if (Status st = e.payload.validate(); !st) return Error{"event \"" + e.name + "\": " + st.error().message};
  }
  if (max_bodies_per_player > 4096 || max_extra_bodies > (1u << 20)) {
    return Error{"game \"" + name + "\" declares more bodies than a match can hold"};
  }
  if (pose_history_ticks > kMaxPoseHistoryTicks) {
    return Error{"game \"" + name + "\" keeps a pose history of " + std::to_string(pose_history_ticks) +
                 " ticks; at most " + std::to_string(kMaxPoseHistoryTicks) + " are allowed"};
  }
  return Status::ok();
}

uint32_t GameSpec::find_event(std::string_view event_name) const {
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events[i].name == event_name) return i;
  }
  return uint32_t(events.size());
}

namespace {

// The spec's own fields after its magic and version (its layouts follow, each its own
// field list): one list over the direction (keel/base/byte_io.h).
template <class IO, class S>
void visit_spec_head(IO& io, S& spec) {
  io.str(spec.name, kMaxNameBytes, "game name");
  io.u32(spec.version);
  io.u32(spec.max_bodies_per_player);
  io.u32(spec.max_extra_bodies);
}

}  // namespace

void write_spec(const GameSpec& spec, std::vector<uint8_t>& out) {
  keel::ByteWriter w(out);
  for (char c : kSpecMagic) w.u8(uint8_t(c));
  w.u32(spec.pose_history_ticks != 0 ? kSpecVersionWithHistory : kSpecVersion);
  visit_spec_head(w, spec);
  write_layout(spec.input, out);
  write_state_layout(spec.state, out);
  w.u32(uint32_t(spec.events.size()));
  for (const EventType& e : spec.events) {
    w.str(e.name);
    write_layout(e.payload, out);
  }
  if (spec.pose_history_ticks != 0) w.u32(spec.pose_history_ticks);
}

Expected<GameSpec> read_spec(std::span<const uint8_t> bytes) {
  keel::ByteReader r(bytes);
  for (char c : kSpecMagic) {
    if (r.u8() != uint8_t(c)) return Error{"not a Keel game spec"};
  }
  const uint32_t version = r.u32();
  if (version != kSpecVersion && version != kSpecVersionWithHistory) {
    return Error{"game spec version " + std::to_string(version) + " is not supported"};
  }
  GameSpec spec;
  keel::FieldReader io(r);
  visit_spec_head(io, spec);
  if (!r.ok()) return Error{"game spec is damaged: " + r.error()};
  size_t at = r.position();
  auto input = read_layout(bytes, at);
  if (!input) return Error{"game spec input " + input.error().message};
  spec.input = std::move(*input);
  auto state = read_state_layout(bytes, at);
  if (!state) return Error{"game spec " + state.error().message};
  spec.state = std::move(*state);
  // Each event is a name (read here) then a layout (read_layout), so the reader restarts
  // at the absolute position after each piece.
  auto reader_at = [&](size_t p) { return keel::ByteReader(bytes.subspan(std::min(p, bytes.size()))); };
  keel::ByteReader e = reader_at(at);
  uint32_t n = e.count(8, kMaxEventTypes, "event type");
  at += e.position();
  for (uint32_t i = 0; i < n && e.ok(); ++i) {
    e = reader_at(at);
    EventType type;
    type.name = e.str(kMaxNameBytes, "event name");
    if (!e.ok()) break;
    at += e.position();
    auto payload = read_layout(bytes, at);
    if (!payload) return Error{"event \"" + type.name + "\" payload " + payload.error().message};
    type.payload = std::move(*payload);
    spec.events.push_back(std::move(type));
  }
  if (!e.ok()) return Error{"game spec events are damaged: " + e.error()};
  if (version == kSpecVersionWithHistory) {
    keel::ByteReader h = reader_at(at);
    spec.pose_history_ticks = h.u32();
    if (!h.ok() || spec.pose_history_ticks == 0) return Error{"game spec's pose history is damaged"};
    at += h.position();
  }
  if (at != bytes.size()) return Error{"game spec has " + std::to_string(bytes.size() - at) + " bytes past its end"};
  if (Status st = spec.validate(); !st) return Error{"game spec is invalid: " + st.error().message};
  return spec;
}

uint64_t spec_hash(const GameSpec& spec) {
  std::vector<uint8_t> bytes;
  write_spec(spec, bytes);
  return XXH3_64bits(bytes.data(), bytes.size());
}

Rules::~Rules() = default;
void Rules::on_start(Match&) {}
void Rules::on_join(Match&, PlayerSlot&) {}
void Rules::on_leave(Match&, PlayerSlot&) {}
void Rules::on_timer(Match&, uint32_t) {}
void Rules::before_step(Match&) {}
void Rules::apply_input(Match&, PlayerSlot&, const InputFrame&) {}
void Rules::after_step(Match&) {}
std::optional<std::string> Rules::match_over(const Match&) const { return std::nullopt; }
void Rules::relevance(const Match&, uint32_t, std::span<const uint32_t>, std::span<BodyInterest>) const {}

}  // namespace keel::game
