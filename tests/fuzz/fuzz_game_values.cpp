// libFuzzer: a game's declarations and values from untrusted bytes.
//
//   [0 mod 2] [spec bytes]: game::read_spec (name, input layout, state layout, event
//     types). An accepted spec must write back to the same bytes and read back equal
//     in hash.
//   [1 mod 2] [layout: a byte, and a chunk when it asks for one (fuzz_layouts.h)] [bits]:
//     read_values, then read_values_change until the bits run out (at most 64 records),
//     the way input frames and event payloads are read. Every value decoded must be valid
//     for the layout, and writing them again must read back the same values.
//   [3 mod 4] [len:u16 spec bytes] [pick:1] [bits]: as above against the layout of a
//     spec read from the input — its input layout or one of its event payloads.
//   [mode & 4, 1 mod 2] [len:u16 spec bytes] [count:u16] [payload]: a GameEvents message
//     (tick 1, that count, that payload) decoded with decode_game_events against the spec
//     read from the input; every event decoded must be of a declared type, its payload
//     valid, and encoding them again must decode to the same events.
#include "fuzz_input.h"
#include "fuzz_layouts.h"

#include <keel/game/rules.h>
#include <keel/protocol/game_events.h>
#include <keel/protocol/input_codec.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace kg = keel::game;
namespace kp = keel::protocol;

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "game values: %s\n", what);
    std::abort();
  }
}

void check_spec(std::span<const uint8_t> bytes) {
  auto spec = kg::read_spec(bytes);
  if (!spec) return;
  require(spec->validate().has_value(), "read_spec accepted a spec validate() refuses");
  std::vector<uint8_t> again;
  kg::write_spec(*spec, again);
  require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()),
          "an accepted spec writes back to other bytes");
  auto reread = kg::read_spec(again);
  require(reread.has_value(), "a written spec is refused");
  require(kg::spec_hash(*reread) == kg::spec_hash(*spec), "a spec reads back with another hash");
}

void check_values(const kg::Layout& layout, std::span<const uint8_t> bits) {
  kp::BitReader r(bits);
  std::vector<kg::Values> got;
  kg::Values v;
  if (!kp::read_values(r, layout, v)) return;
  got.push_back(v);
  while (got.size() < 64 && r.bits_left() > 0) {
    if (!kp::read_values_change(r, layout, got.back(), v)) break;
    got.push_back(v);
  }
  for (const kg::Values& x : got) require(layout.valid(x), "a decoded value out of its layout's range");
  kp::BitWriter w;
  kp::write_values(w, layout, got[0]);
  for (size_t i = 1; i < got.size(); ++i) kp::write_values_change(w, layout, got[i - 1], got[i]);
  const std::vector<uint8_t> again = w.finish();
  kp::BitReader back(again);
  kg::Values x;
  require(kp::read_values(back, layout, x) && x == got[0], "a value reads back differently");
  for (size_t i = 1; i < got.size(); ++i) {
    require(kp::read_values_change(back, layout, got[i - 1], x) && x == got[i], "a change reads back differently");
  }
  require(back.at_end(), "re-encoded values leave bits over");
}

// The layout of a spec read from the input: its input's, or an event's payload.
bool spec_layout(keel::fuzz::InputReader& in, kg::Layout& out) {
  const std::vector<uint8_t> bytes = in.chunk();
  auto spec = kg::read_spec(bytes);
  const uint8_t pick = in.u8();
  if (!spec) return false;
  if (pick == 0 || spec->events.empty()) {
    out = spec->input;
  } else {
    out = spec->events[(pick - 1u) % spec->events.size()].payload;
  }
  return true;
}

void check_events(keel::fuzz::InputReader& in, const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes = in.chunk();
  auto spec = kg::read_spec(bytes);
  const uint16_t count = uint16_t(in.u8() | (in.u8() << 8));
  if (!spec) return;
  std::vector<uint8_t> payload(data + in.pos, data + size);
  flatbuffers::FlatBufferBuilder fbb;
  auto body = keel::protocol::fb::CreateGameEventsDirect(fbb, 1, count, &payload);
  const std::vector<uint8_t> message = kp::finish_message(fbb, keel::protocol::fb::Body::GameEvents, body.Union());
  const keel::protocol::fb::Message* m = nullptr;
  if (kp::check_message(message, m) != kp::DropReason::None) return;
  uint64_t tick = 0;
  std::vector<kg::GameEvent> events;
  if (kp::decode_game_events(*spec, *m->body_as_GameEvents(), tick, events) != kp::DropReason::None) return;
  require(!events.empty() && events.size() <= kg::kMaxEventsPerTick, "an event count out of its bounds");
  for (const kg::GameEvent& e : events) {
    require(e.type < spec->events.size(), "an event of a type the spec does not declare");
    require(spec->events[e.type].payload.valid(e.payload), "an event payload out of its layout's range");
  }
  const std::vector<uint8_t> again = kp::encode_game_events(*spec, tick, events);
  const keel::protocol::fb::Message* m2 = nullptr;
  require(kp::check_message(again, m2) == kp::DropReason::None, "re-encoded events fail the message check");
  std::vector<kg::GameEvent> back;
  require(kp::decode_game_events(*spec, *m2->body_as_GameEvents(), tick, back) == kp::DropReason::None && back == events,
          "events read back differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  keel::fuzz::InputReader in{data, size};
  const uint8_t mode = in.u8();
  if (mode % 2 == 0) {
    check_spec({data + 1, size - 1});
    return 0;
  }
  if ((mode & 4) != 0) {
    check_events(in, data, size);
    return 0;
  }
  kg::Layout layout;
  if (mode % 4 == 3) {
    if (!spec_layout(in, layout)) return 0;
  } else {
    layout = keel::fuzz::choose_layout(in);
  }
  check_values(layout, {data + in.pos, size - in.pos});
  return 0;
}
