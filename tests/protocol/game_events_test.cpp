// GameEvents messages: a tick's game events round-trip against the game's spec, bit for
// bit as counted by hand, and everything out of range or cut short is refused.
#include <keel/protocol/bitstream.h>
#include <keel/protocol/game_events.h>

#include <gtest/gtest.h>

namespace keel::protocol {
namespace {

// Two event types: goal {team: int 0..1, scorer: int -1..63} and whistle (no payload).
game::GameSpec spec() {
  game::GameSpec s;
  s.name = "pitch";
  game::EventType goal{"goal", {}};
  goal.payload.add_int("team", 0, 1);
  goal.payload.add_int("scorer", -1, 63);
  s.events.push_back(goal);
  s.events.push_back(game::EventType{"whistle", {}});
  return s;
}

game::GameEvent goal(int32_t team, int32_t scorer) {
  const game::GameSpec s = spec();
  game::GameEvent e;
  e.type = 0;
  s.events[0].payload.set_integer(e.payload, 0, team);
  s.events[0].payload.set_integer(e.payload, 1, scorer);
  return e;
}

const fb::GameEvents* checked(const std::vector<uint8_t>& bytes) {
  const fb::Message* m = nullptr;
  if (check_message(bytes, m) != DropReason::None || m->body_type() != fb::Body::GameEvents) return nullptr;
  return m->body_as_GameEvents();
}

TEST(GameEvents, RoundTripAndBitCount) {
  const game::GameSpec s = spec();
  const std::vector<game::GameEvent> events = {goal(1, 7), game::GameEvent{1, {}}, goal(0, -1)};
  const std::vector<uint8_t> bytes = encode_game_events(s, 1234, events);
  const fb::GameEvents* m = checked(bytes);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->count(), 3u);
  // Per event its type, int[0, 1] (1 bit), then its payload in full: a goal's team takes
  // 1 bit and its scorer (65 values) 7, a whistle nothing. Goal 9 + whistle 1 + goal 9 =
  // 19 bits: 3 bytes.
  EXPECT_EQ(m->payload()->size(), 3u);
  uint64_t tick = 0;
  std::vector<game::GameEvent> back;
  ASSERT_EQ(decode_game_events(s, *m, tick, back), DropReason::None);
  EXPECT_EQ(tick, 1234u);
  EXPECT_EQ(back, events);
  EXPECT_EQ(s.events[0].payload.integer(back[2].payload, 1), -1);
}

TEST(GameEvents, RefusesWhatTheSpecDoesNotDeclare) {
  const game::GameSpec s = spec();
  uint64_t tick = 0;
  std::vector<game::GameEvent> out;
  // A payload cut short: MalformedPayload.
  {
    std::vector<uint8_t> payload = {0x00};
    flatbuffers::FlatBufferBuilder fbb;
    auto body = fb::CreateGameEventsDirect(fbb, 5, 3, &payload);
    auto bytes = finish_message(fbb, fb::Body::GameEvents, body.Union());
    ASSERT_NE(checked(bytes), nullptr);
    EXPECT_EQ(decode_game_events(s, *checked(bytes), tick, out), DropReason::MalformedPayload);
  }
  // A scorer code past the 65 values (code 127 of 7 bits): OutOfRange.
  {
    BitWriter w;
    w.write_int(0, 0, 1);
    w.write_bits(0, 1);
    w.write_bits(127, 7);
    std::vector<uint8_t> payload = w.finish();
    flatbuffers::FlatBufferBuilder fbb;
    auto body = fb::CreateGameEventsDirect(fbb, 5, 1, &payload);
    auto bytes = finish_message(fbb, fb::Body::GameEvents, body.Union());
    EXPECT_EQ(decode_game_events(s, *checked(bytes), tick, out), DropReason::OutOfRange);
  }
  // No events, or more than a tick may hold: refused by the message check itself.
  for (uint16_t count : {uint16_t(0), uint16_t(game::kMaxEventsPerTick + 1)}) {
    std::vector<uint8_t> payload(64, 0);
    flatbuffers::FlatBufferBuilder fbb;
    auto body = fb::CreateGameEventsDirect(fbb, 5, count, &payload);
    auto bytes = finish_message(fbb, fb::Body::GameEvents, body.Union());
    const fb::Message* m = nullptr;
    EXPECT_EQ(check_message(bytes, m), DropReason::OutOfRange) << count;
  }
  // A game with no event types decodes nothing.
  game::GameSpec none;
  none.name = "quiet";
  const std::vector<uint8_t> bytes = encode_game_events(s, 9, {goal(0, 3)});
  EXPECT_EQ(decode_game_events(none, *checked(bytes), tick, out), DropReason::OutOfRange);
}

}  // namespace
}  // namespace keel::protocol
