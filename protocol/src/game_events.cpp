// GameEvents messages (keel/protocol/game_events.h).
#include <keel/protocol/game_events.h>

#include "input_bits.h"

namespace keel::protocol {

std::vector<uint8_t> encode_game_events(const game::GameSpec& spec, uint64_t tick,
                                        const std::vector<game::GameEvent>& events) {
  BitWriter w;
  const int64_t types = int64_t(spec.events.size());
  uint16_t count = 0;
  for (const game::GameEvent& e : events) {
    if (count == game::kMaxEventsPerTick || e.type >= spec.events.size()) break;  // a match emits neither
    w.write_int(e.type, 0, types - 1);
    detail::write_full(w, spec.events[e.type].payload, e.payload);
    ++count;
  }
  std::vector<uint8_t> payload = w.finish();
  flatbuffers::FlatBufferBuilder fbb(payload.size() + 64);
  auto body = fb::CreateGameEventsDirect(fbb, tick, count, &payload);
  return finish_message(fbb, fb::Body::GameEvents, body.Union());
}

DropReason decode_game_events(const game::GameSpec& spec, const fb::GameEvents& message, uint64_t& tick,
                              std::vector<game::GameEvent>& out) {
  out.clear();
  tick = message.tick();
  const uint32_t count = message.count();
  if (count == 0 || count > game::kMaxEventsPerTick || spec.events.empty() || message.payload() == nullptr) {
    return DropReason::OutOfRange;
  }
  BitReader r({message.payload()->data(), message.payload()->size()});
  const int64_t types = int64_t(spec.events.size());
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    game::GameEvent e;
    e.type = uint32_t(r.read_int(0, types - 1));
    if (!r.ok()) break;
    if (!detail::read_full(r, spec.events[e.type].payload, e.payload)) {
      return r.ok() ? DropReason::OutOfRange : DropReason::MalformedPayload;
    }
    out.push_back(e);
  }
  if (!r.ok()) return DropReason::MalformedPayload;
  return r.at_end() ? DropReason::None : DropReason::MalformedPayload;
}

}  // namespace keel::protocol
