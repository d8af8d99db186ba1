// The client and the game: the game check at ConnectionAccept, and game events reported
// as the server emitted them (interpolating) or as predicted and confirmed (predicting),
// against an in-process server of a game with events (event_rules.h) on simulated time.
#include "event_rules.h"
#include "session_harness.h"

#include <keel/protocol/game_events.h>

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace keel::client {
namespace {

using testing::Harness;
using testing::interpolate;
using testing::predict;
using testing::StripRules;

std::unique_ptr<game::Rules> strips() { return std::make_unique<StripRules>(); }

ClientConfig of_strips(ClientConfig c) {
  c.prediction.rules = [] { return strips(); };
  return c;
}

// The server's events from tick `from` (exclusive) to `to` (inclusive), flattened.
std::vector<GameEventRecord> server_events(const Harness& h, uint64_t from, uint64_t to) {
  std::vector<GameEventRecord> out;
  for (const auto& [tick, events] : h.server.events_sent()) {
    if (tick <= from || tick > to) continue;
    for (const game::GameEvent& e : events) out.push_back({tick, e, false});
  }
  return out;
}

void send_control(Harness& h, size_t client, const std::vector<uint8_t>& message) {
  h.server.peer(h.wires[client].get())->conn->send(protocol::Channel::Control, message);
}

TEST(GameCheck, APredictingClientOfAnotherGameClosesNamingTheServersGame) {
  Harness h;
  h.server.advertise("pushball", 0x1234);
  Client& c = h.add(predict(), 81);
  h.run(0.5);
  EXPECT_EQ(c.state(), State::Disconnected);
  EXPECT_EQ(c.close_reason(), CloseReason::GameMismatch);
  EXPECT_EQ(c.server_game(), "pushball");
  EXPECT_EQ(c.server_game_spec_hash(), 0x1234u);
  bool mismatch = false, closed = false;
  for (const ClientEvent& e : c.take_events()) {
    if (e.kind == ClientEvent::Kind::GameMismatch) {
      mismatch = true;
      EXPECT_EQ(e.a, 0x1234u);
      EXPECT_EQ(e.b, game::spec_hash(games::SandboxRules::make_spec()));
      EXPECT_NE(e.text.find("server runs pushball (spec 0000000000001234)"), std::string::npos) << e.text;
      EXPECT_NE(e.text.find("this client sandbox"), std::string::npos) << e.text;
    }
    closed |= e.kind == ClientEvent::Kind::Closed && e.a == static_cast<uint64_t>(CloseReason::GameMismatch);
  }
  EXPECT_TRUE(mismatch);
  EXPECT_TRUE(closed);
  // It told the server so, instead of leaving its new session to time out; and sent no hello.
  const auto* peer = h.server.peer(h.wires[0].get());
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(peer->said_goodbye);
  EXPECT_EQ(peer->hellos, 0u);
  EXPECT_STREQ(to_string(CloseReason::GameMismatch), "game_mismatch");
}

TEST(GameCheck, ClientsCheckTheGameInEveryMode) {
  Harness h;  // a sandbox server
  Client& strips_interp = h.add(of_strips(interpolate()), 82);
  Client& plain_interp = h.add(interpolate(), 83);
  Client& plain_predict = h.add(predict(), 84);
  h.run(1.0);
  EXPECT_EQ(strips_interp.close_reason(), CloseReason::GameMismatch);
  EXPECT_EQ(plain_interp.state(), State::Playing);
  EXPECT_EQ(plain_predict.state(), State::Playing);
  EXPECT_EQ(plain_predict.server_game(), "sandbox");

  Harness quiet;  // a server that names no game cannot be checked: the client plays
  quiet.server.advertise("", 0);
  Client& c = quiet.add(predict(), 85);
  quiet.run(1.0);
  EXPECT_EQ(c.state(), State::Playing);

  // Another game's server that names none: the sandbox's client plays on, and drops the
  // events it cannot read (the sandbox declares no event types), never reporting them.
  Harness unnamed(strips());
  unnamed.server.advertise("", 0);
  Client& foreign = unnamed.add(interpolate(), 86);
  unnamed.run(2.0);
  EXPECT_EQ(foreign.state(), State::Playing);
  EXPECT_TRUE(foreign.take_game_events().empty());
  EXPECT_GT(foreign.stats().game_events_dropped, 0u);
  EXPECT_EQ(foreign.stats().game_events_received, 0u);
}

TEST(GameEvents, AnInterpolatingClientReportsTheServersEventsOnceInTickOrder) {
  Harness h(strips());
  Client& c = h.add(of_strips(interpolate()), 91, LinkImpairment{60, 20, 0.15, 0.05, 0.1});
  std::vector<GameEventRecord> got;
  h.run(12.0, [&] {
    for (auto& r : c.take_game_events()) got.push_back(r);
  });
  ASSERT_EQ(c.state(), State::Playing);
  ASSERT_GT(got.size(), 10u);
  for (const GameEventRecord& r : got) EXPECT_FALSE(r.predicted);
  // Exactly the server's events from the first reported tick to the last, in order: the
  // reliable channel lost, duplicated and reordered nothing the client reported.
  std::vector<GameEventRecord> want = server_events(h, got.front().tick - 1, got.back().tick);
  EXPECT_EQ(got, want);
  EXPECT_EQ(c.stats().game_events_dropped, 0u);
  EXPECT_GT(c.stats().game_events_received, 5u);
  std::printf("interpolating: %zu events from tick %llu to %llu\n", got.size(),
              (unsigned long long)got.front().tick, (unsigned long long)got.back().tick);
}

TEST(GameEvents, APredictingClientReportsPredictedThenConfirmedEventsAndRollbacksAcrossThem) {
  Harness h(strips());
  Client& c = h.add(of_strips(predict()), 92, LinkImpairment{60, 20, 0.15, 0.05, 0.1});
  h.add(of_strips(predict()), 93, LinkImpairment{60, 20, 0.15, 0.05, 0.1});
  std::vector<GameEventRecord> got;
  h.run(20.0, [&] {
    for (auto& r : c.take_game_events()) got.push_back(r);
  });
  ASSERT_EQ(c.state(), State::Playing);
  const PredictionStats& p = c.stats().prediction;
  EXPECT_EQ(p.hash_mismatches, 0u);
  std::vector<GameEventRecord> confirmed, predicted;
  for (const GameEventRecord& r : got) (r.predicted ? predicted : confirmed).push_back(r);
  // Confirmed: the server's events from the checkpoint to the confirmed tick, each once.
  ASSERT_GT(confirmed.size(), 10u);
  EXPECT_EQ(confirmed, server_events(h, c.stats().checkpoint_tick, c.predictor()->confirmed_tick()));
  // Predicted: reported ahead, and a tick reported again only with other events.
  ASSERT_GT(predicted.size(), 10u);
  std::map<uint64_t, std::vector<std::vector<game::GameEvent>>> reports;  // per tick, each report
  uint64_t previous_tick = 0;
  for (const GameEventRecord& r : predicted) {
    auto& list = reports[r.tick];
    if (list.empty() || r.tick != previous_tick) list.emplace_back();
    list.back().push_back(r.event);
    previous_tick = r.tick;
  }
  size_t right = 0;
  for (const auto& [tick, list] : reports) {
    for (size_t i = 1; i < list.size(); ++i) EXPECT_NE(list[i], list[i - 1]) << "tick " << tick;
    auto truth = h.server.events_sent().find(tick);
    right += truth != h.server.events_sent().end() && list.back() == truth->second;
  }
  EXPECT_GT(right, reports.size() / 2);  // most predictions were right in the end
  EXPECT_EQ(p.predicted_event_records, predicted.size());
  EXPECT_EQ(p.confirmed_event_records, confirmed.size());
  EXPECT_GT(p.rollbacks, 20u);
  EXPECT_GT(p.rollbacks_across_state_changes, 0u);
  EXPECT_LT(p.rollbacks_across_state_changes, p.rollbacks);
  // By type: each counted rollback once per type its range held, so every type's count
  // is at most the total, and together they are at least it.
  uint64_t by_type = 0;
  for (uint64_t n : p.rollbacks_across_event) {
    EXPECT_LE(n, p.rollbacks_across_state_changes);
    by_type += n;
  }
  EXPECT_GE(by_type, p.rollbacks_across_state_changes);
  std::printf("predicting: %zu confirmed, %zu predicted events; %llu rollbacks, %llu across state changes\n",
              confirmed.size(), predicted.size(), (unsigned long long)p.rollbacks,
              (unsigned long long)p.rollbacks_across_state_changes);
}

TEST(GameEvents, ForgedStaleAndForeignGameEventsAreDroppedAndCounted) {
  Harness h(strips());
  Client& c = h.add(of_strips(interpolate()), 94);
  h.run(2.0);
  ASSERT_EQ(c.state(), State::Playing);
  const uint64_t dropped = c.stats().game_events_dropped;
  const uint64_t out_of_range = c.drops()[protocol::DropReason::OutOfRange];
  const game::GameSpec spec = StripRules().spec();
  game::GameEvent ok;
  auto message = [](uint64_t tick, uint16_t count, std::vector<uint8_t> payload) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto m = protocol::fb::CreateGameEventsDirect(fbb, tick, count, &payload);
    return protocol::finish_message(fbb, protocol::fb::Body::GameEvents, m.Union());
  };
  // Refused by check_message before any decode (OutOfRange):
  send_control(h, 0, message(h.server.match().tick(), 0, {}));       // no events
  send_control(h, 0, message(h.server.match().tick(), 65, {0x00}));  // past kMaxEventsPerTick
  // Refused by decode_game_events: 8 bits where one event's payload takes 21 (bits that
  // ran out), and a real event with two bytes left over: both MalformedPayload.
  send_control(h, 0, message(h.server.match().tick() + 1000, 1, {0x01}));
  std::vector<uint8_t> real = protocol::encode_game_events(spec, h.server.match().tick() + 1000, {ok});
  const protocol::fb::Message* parsed = nullptr;
  ASSERT_EQ(protocol::check_message(real, parsed), protocol::DropReason::None);
  std::vector<uint8_t> longer(parsed->body_as_GameEvents()->payload()->begin(), parsed->body_as_GameEvents()->payload()->end());
  longer.insert(longer.end(), {0, 0});
  send_control(h, 0, message(h.server.match().tick() + 1000, 1, longer));
  send_control(h, 0, protocol::encode_game_events(spec, 1, {ok}));  // stale: long reported
  h.run(2.0);
  EXPECT_EQ(c.state(), State::Playing);
  EXPECT_EQ(c.stats().game_events_dropped, dropped + 3);
  EXPECT_EQ(c.drops()[protocol::DropReason::OutOfRange], out_of_range + 2);
  EXPECT_EQ(c.drops()[protocol::DropReason::MalformedPayload], 2u);
  EXPECT_EQ(c.drops()[protocol::DropReason::Stale], 1u);
  const uint64_t received = c.stats().game_events_received;
  h.run(2.0);
  EXPECT_GT(c.stats().game_events_received, received);  // the real stream goes on
}

TEST(GameEvents, EventsGoOnAfterAReconnect) {
  Harness h(strips());
  Client& c = h.add(of_strips(predict()), 97, LinkImpairment{}, /*timeout=*/1);
  std::vector<GameEventRecord> got;
  auto take = [&] {
    for (auto& r : c.take_game_events()) got.push_back(r);
  };
  h.run(3.0, take);
  ASSERT_EQ(c.state(), State::Playing);
  h.links[0]->set_outage(h.now, h.now + 3.0);
  h.run(6.0, take);
  ASSERT_EQ(c.state(), State::Playing);
  ASSERT_EQ(c.stats().reconnects, 1u);
  // Confirmed: the server's events of each session's stretch, in tick order, none twice.
  std::vector<GameEventRecord> confirmed;
  for (const GameEventRecord& r : got) {
    if (!r.predicted) confirmed.push_back(r);
  }
  ASSERT_GT(confirmed.size(), 4u);
  for (size_t i = 1; i < confirmed.size(); ++i) EXPECT_LE(confirmed[i - 1].tick, confirmed[i].tick);
  const uint64_t resumed = c.stats().checkpoint_tick;
  size_t after = 0;
  for (const GameEventRecord& r : confirmed) after += r.tick > resumed;
  EXPECT_EQ(after, server_events(h, resumed, c.predictor()->confirmed_tick()).size());
  EXPECT_GT(after, 0u);
}

TEST(GameEvents, TheQueueIsBoundedAndCountsWhatItDrops) {
  Harness h(strips());
  Client& c = h.add(of_strips(interpolate()), 96);
  h.run(1.0);
  ASSERT_EQ(c.state(), State::Playing);
  const game::GameSpec spec = StripRules().spec();
  std::vector<game::GameEvent> full(game::kMaxEventsPerTick);
  // 80 ticks of 64 events, far ahead of the match (so no real tick is older): 5120.
  for (uint64_t i = 0; i < 80; ++i) {
    send_control(h, 0, protocol::encode_game_events(spec, 1'000'000 + i, full));
    h.run(0.02);
  }
  h.run(2.0);
  std::vector<GameEventRecord> got = c.take_game_events();
  EXPECT_EQ(got.size(), kMaxQueuedGameEvents);
  EXPECT_EQ(c.stats().game_event_queue_drops + got.size() >= 80 * game::kMaxEventsPerTick, true);
  EXPECT_GT(c.stats().game_event_queue_drops, 0u);
}

}  // namespace
}  // namespace keel::client
