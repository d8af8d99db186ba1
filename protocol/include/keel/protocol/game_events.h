// Game events on the wire: the events a step emitted (keel/game/rules.h), from the server
// to its clients on the reliable control channel, so every client — interpolating or
// predicting — gets each tick's events once and in order.
//
// Payload (BitWriter order), per event: type:int[0, event types) then the event's payload
// in full (the values' bit form of input_bits.h, against the type's layout).
#pragma once

#include <keel/game/rules.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>

#include <cstdint>
#include <vector>

namespace keel::protocol {

/// One tick's events as a GameEvents message (1 .. kMaxEventsPerTick events).
std::vector<uint8_t> encode_game_events(const game::GameSpec& spec, uint64_t tick,
                                        const std::vector<game::GameEvent>& events);
/// Decodes a checked GameEvents message against the game's spec: OutOfRange for a count
/// outside 1 .. kMaxEventsPerTick, an unknown type or a payload value out of range;
/// MalformedPayload for bits missing or left over.
DropReason decode_game_events(const game::GameSpec& spec, const fb::GameEvents& message, uint64_t& tick,
                              std::vector<game::GameEvent>& out);

}  // namespace keel::protocol
