// Prediction and rollback against a server-side Match stepped with hand-made frames:
// what the predictor computes must be what the server computed, bit for bit.
#include "test_util.h"
#include "../common/ball_rules.h"
#include "event_rules.h"

#include <keel/client/prediction.h>
#include <keel/replay/desync_dump.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

namespace keel::client {
namespace {

using testing::demo_scene;
using testing::walk;

constexpr uint32_t kLocal = 1;
constexpr uint32_t kRemote = 2;

// A server match with both players joined and stepped a little, and the frames it makes.
struct Server {
  game::Match match;
  std::map<uint64_t, protocol::InputFrameMessage> frames;
  std::map<uint64_t, uint64_t> hash_at;  // match tick -> hash
  std::map<uint64_t, std::vector<game::GameEvent>> events;  // match tick after the step -> its events

  explicit Server(const sim::SceneDef& scene, std::unique_ptr<game::Rules> rules = nullptr)
      : match(std::move(*game::Match::create(scene, rules ? std::move(rules) : std::make_unique<games::SandboxRules>()))) {
    game::TickInputs join;
    join.events = {{game::PlayerEvent::Kind::Join, kLocal}, {game::PlayerEvent::Kind::Join, kRemote}};
    match.step(join);
    for (int i = 0; i < 5; ++i) step(walk(kLocal, match.tick()), walk(kRemote, match.tick()));
  }
  void step(const game::InputFrame& local, const game::InputFrame& remote) {
    uint64_t t = match.tick();
    game::TickInputs in;
    in.inputs = {{kLocal, local}, {kRemote, remote}};
    match.step(in);
    frames[t] = {t, match.hash(), in};
    hash_at[match.tick()] = match.hash();
    if (!match.events().empty()) events[match.tick()] = match.events();
  }
};

std::unique_ptr<Predictor> predictor_for(const Server& s, const PredictionConfig& cfg = {}) {
  auto p = Predictor::create(s.match.scene(), s.match.save_state(), s.match.tick(), kLocal, cfg);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(*p);
}

// Runs `ticks` ticks: the client predicts tick t as the server steps it; frames reach the
// client `delay` ticks later. `remote_period` = 0 keeps the remote input constant.
void run(Server& s, Predictor& p, int ticks, int delay, uint64_t remote_period,
         std::vector<HashCheck>& checks, bool compare_predicted = false,
         std::vector<GameEventRecord>* events = nullptr) {
  game::InputFrame remote_const = walk(kRemote, 0);
  for (int i = 0; i < ticks; ++i) {
    uint64_t t = s.match.tick();
    game::InputFrame local = walk(kLocal, t);
    game::InputFrame remote = remote_period ? walk(kRemote, t, remote_period) : remote_const;
    p.set_local_input(t, local);
    s.step(local, remote);
    if (t >= static_cast<uint64_t>(delay)) {
      auto f = s.frames.find(t - delay);
      if (f != s.frames.end()) p.add_confirmed(f->second);
    }
    p.advance(t + 1, checks, events);
    if (compare_predicted) {
      ASSERT_EQ(p.predicted_tick(), t + 1);
      ASSERT_EQ(p.predicted().hash(), s.hash_at.at(t + 1)) << "tick " << t + 1;
    }
  }
}

TEST(Prediction, CorrectPredictionNeedsNoRollbackAndMatchesTheServerEveryTick) {
  Server s(demo_scene());
  // The remote player's input never changes after the checkpoint: every prediction right.
  game::InputFrame remote = walk(kRemote, 0);
  s.step(walk(kLocal, s.match.tick()), remote);
  auto p = predictor_for(s);
  std::vector<HashCheck> checks;
  run(s, *p, 240, 6, 0, checks, /*compare_predicted=*/true);
  EXPECT_EQ(p->stats().rollbacks, 0u);
  EXPECT_EQ(p->stats().hash_mismatches, 0u);
  EXPECT_EQ(p->stats().hash_checks, p->stats().confirmed_ticks);
  EXPECT_GE(p->stats().confirmed_ticks, 230u);
  for (const HashCheck& c : checks) {
    EXPECT_FALSE(c.mismatch);
    EXPECT_EQ(c.report, c.tick % 60 == 0);
    EXPECT_EQ(c.hash, s.hash_at.at(c.tick));
    EXPECT_EQ(c.hash, s.frames.at(c.tick - 1).state_hash);
  }
}

TEST(Prediction, MispredictionRollsBackAndResimulatesToTheServersState) {
  Server s(demo_scene());
  auto p = predictor_for(s);
  std::vector<HashCheck> checks;
  const int delay = 6;
  run(s, *p, 300, delay, 25, checks);
  const PredictionStats& st = p->stats();
  EXPECT_EQ(st.hash_mismatches, 0u);
  EXPECT_GT(st.rollbacks, 5u);  // the remote input changes every 25 ticks
  EXPECT_LE(st.max_rollback_ticks, static_cast<uint32_t>(delay + 1));
  EXPECT_GE(st.max_rollback_ticks, static_cast<uint32_t>(delay - 1));
  // Deliver the rest: once everything is confirmed, prediction and server agree.
  for (auto& [t, f] : s.frames) {
    if (t >= p->confirmed_tick()) p->add_confirmed(f);
  }
  p->advance(s.match.tick(), checks);
  EXPECT_EQ(p->confirmed_tick(), s.match.tick());
  EXPECT_EQ(p->predicted().hash(), s.match.hash());
  EXPECT_EQ(p->confirmed().save_state(), s.match.save_state());
}

TEST(Prediction, FramesInAnyOrderWithDuplicates) {
  Server s(demo_scene());
  auto p = predictor_for(s);
  uint64_t first = s.match.tick();
  for (int i = 0; i < 40; ++i) s.step(walk(kLocal, s.match.tick()), walk(kRemote, s.match.tick(), 7));
  std::vector<uint64_t> order;
  for (uint64_t t = first; t < s.match.tick(); ++t) order.push_back(t);
  std::reverse(order.begin(), order.end());
  std::vector<HashCheck> checks;
  for (uint64_t t : order) {
    EXPECT_TRUE(p->add_confirmed(s.frames.at(t)));
    p->add_confirmed(s.frames.at(t));  // duplicate: ignored
    p->advance(first, checks);
  }
  EXPECT_EQ(p->confirmed_tick(), s.match.tick());
  EXPECT_EQ(p->stats().hash_checks, 40u);
  EXPECT_EQ(p->stats().hash_mismatches, 0u);
  EXPECT_FALSE(p->add_confirmed(s.frames.at(first)));  // behind the confirmed tick
  protocol::InputFrameMessage far = s.frames.at(first);
  far.tick = p->confirmed_tick() + 100000;
  EXPECT_FALSE(p->add_confirmed(far));
}

TEST(Prediction, PerturbedStateIsDetectedAtTheNextConfirmedTickWithADump) {
  Server s(demo_scene());
  PredictionConfig cfg;
  cfg.dump_dir = ::testing::TempDir() + "/keel_client_perturb";
  std::filesystem::remove_all(cfg.dump_dir);
  auto p = predictor_for(s, cfg);
  std::vector<HashCheck> checks;
  run(s, *p, 60, 3, 0, checks);
  ASSERT_EQ(p->stats().hash_mismatches, 0u);
  uint64_t at = p->confirmed_tick();
  ASSERT_TRUE(p->perturb_for_test());
  checks.clear();
  run(s, *p, 10, 3, 0, checks);
  ASSERT_FALSE(checks.empty());
  // The state at `at` was perturbed; stepping it gives tick at + 1, the first checked.
  EXPECT_EQ(checks.front().tick, at + 1);
  EXPECT_TRUE(checks.front().mismatch);
  EXPECT_TRUE(checks.front().report);
  EXPECT_EQ(p->stats().first_mismatch_tick, at + 1);
  // The dump holds the client's state after tick `at` and the server's hash for it.
  ASSERT_FALSE(p->stats().last_dump_path.empty());
  auto dump = replay::read_desync_dump(p->stats().last_dump_path);
  ASSERT_TRUE(dump) << dump.error().message;
  EXPECT_EQ(dump->tick, at + 1);
  EXPECT_EQ(dump->expected_hash, s.hash_at.at(dump->tick));
  EXPECT_NE(dump->hash, dump->expected_hash);
}

TEST(Prediction, WindowBoundsHowFarItRunsAhead) {
  Server s(demo_scene());
  PredictionConfig cfg;
  cfg.max_rollback_ticks = 10;
  auto p = predictor_for(s, cfg);
  std::vector<HashCheck> checks;
  uint64_t c = p->confirmed_tick();
  p->advance(c + 50, checks);  // no frames arrive
  EXPECT_EQ(p->predicted_tick(), c + 10);
  EXPECT_EQ(p->stats().stalls, 1u);
  EXPECT_FALSE(p->needs_resync());
}

TEST(Prediction, AHoleOlderThanTheServersWindowAsksForResync) {
  Server s(demo_scene());
  auto p = predictor_for(s);
  uint64_t c = p->confirmed_tick();
  for (int i = 0; i < 80; ++i) s.step(walk(kLocal, s.match.tick()), walk(kRemote, s.match.tick()));
  for (uint64_t t = c + 1; t < c + 70; ++t) p->add_confirmed(s.frames.at(t));  // tick c lost
  std::vector<HashCheck> checks;
  p->advance(c + 5, checks);
  EXPECT_EQ(p->confirmed_tick(), c);
  EXPECT_TRUE(p->needs_resync());
}

TEST(Prediction, LocalInputTheServerDidNotApplyIsCountedLate) {
  Server s(demo_scene());
  auto p = predictor_for(s);
  uint64_t t = s.match.tick();
  game::InputFrame sent = testing::strafe_right();
  p->set_local_input(t, sent);
  s.step(game::InputFrame{}, walk(kRemote, 0));  // the server applied something else
  p->add_confirmed(s.frames.at(t));
  std::vector<HashCheck> checks;
  p->advance(t + 1, checks);
  EXPECT_EQ(p->stats().local_inputs_late, 1u);
  EXPECT_EQ(p->stats().local_inputs_applied, 0u);
  EXPECT_EQ(p->stats().hash_mismatches, 0u);
}

// A game's own rules: each player is a weightless ball pushed along its move vector (and
// lifted by its look yaw).
std::unique_ptr<game::Rules> float_rules() { return std::make_unique<test_support::BallRules>("float", 2.0f, 0.1f); }

TEST(Prediction, StepsTheServersOwnRulesWhenGivenThem) {
  PredictionConfig own;
  own.rules = [] { return float_rules(); };
  Server s(demo_scene(), float_rules());
  auto p = predictor_for(s, own);
  EXPECT_EQ(p->confirmed().spec().name, "float");
  EXPECT_EQ(p->predicted().spec().name, "float");
  std::vector<HashCheck> checks;
  run(s, *p, 180, 6, 30, checks);
  EXPECT_GT(p->stats().rollbacks, 0u);  // the remote input changes: rollbacks re-run the rules
  EXPECT_EQ(p->stats().hash_mismatches, 0u);
  EXPECT_GE(checks.size(), 170u);
  for (const HashCheck& c : checks) EXPECT_EQ(c.hash, s.hash_at.at(c.tick));

  // The default rules (the sandbox) are another game: the server's checkpoint names its
  // game's spec, so a predictor of other rules refuses it before stepping anything.
  Server other(demo_scene(), float_rules());
  auto sandbox = Predictor::create(other.match.scene(), other.match.save_state(), other.match.tick(), kLocal, {});
  ASSERT_FALSE(sandbox);
  EXPECT_NE(sandbox.error().message.find("another game"), std::string::npos) << sandbox.error().message;
}

// The records of one kind, flattened; and the server's events in (from, to].
std::vector<GameEventRecord> of_kind(const std::vector<GameEventRecord>& all, bool predicted) {
  std::vector<GameEventRecord> out;
  for (const GameEventRecord& r : all) {
    if (r.predicted == predicted) out.push_back(r);
  }
  return out;
}
std::vector<GameEventRecord> truth(const Server& s, uint64_t from, uint64_t to, bool predicted) {
  std::vector<GameEventRecord> out;
  for (const auto& [tick, list] : s.events) {
    if (tick <= from || tick > to) continue;
    for (const game::GameEvent& e : list) out.push_back({tick, e, predicted});
  }
  return out;
}

PredictionConfig strips_config() {
  PredictionConfig c;
  c.rules = [] { return std::make_unique<testing::StripRules>(); };
  return c;
}

// The predicted reports of each tick, in the order made: one list of events per report
// (a tick reported again after a rollback gets a second list).
std::map<uint64_t, std::vector<std::vector<game::GameEvent>>> predicted_reports(const std::vector<GameEventRecord>& events) {
  std::map<uint64_t, std::vector<std::vector<game::GameEvent>>> reports;
  uint64_t last = 0;
  for (const GameEventRecord& r : of_kind(events, true)) {
    auto& list = reports[r.tick];
    if (list.empty() || r.tick != last) list.emplace_back();
    list.back().push_back(r.event);
    last = r.tick;
  }
  return reports;
}

// Checks that no tick's reports repeat the one before them (a re-prediction reports only
// events that changed); returns how many ticks were reported more than once.
size_t reported_again(const std::map<uint64_t, std::vector<std::vector<game::GameEvent>>>& reports) {
  size_t again = 0;
  for (const auto& [tick, list] : reports) {
    for (size_t i = 1; i < list.size(); ++i) EXPECT_NE(list[i], list[i - 1]) << "tick " << tick;
    again += list.size() > 1;
  }
  return again;
}

TEST(Prediction, RightPredictionsReportEachTicksEventsOncePredictedAndOnceConfirmed) {
  Server s(demo_scene(), std::make_unique<testing::StripRules>());
  game::InputFrame remote = walk(kRemote, 0);
  s.step(walk(kLocal, s.match.tick()), remote);
  const uint64_t start = s.match.tick();
  auto p = predictor_for(s, strips_config());
  std::vector<HashCheck> checks;
  std::vector<GameEventRecord> events;
  run(s, *p, 300, 6, 0, checks, /*compare_predicted=*/true, &events);
  ASSERT_EQ(p->stats().rollbacks, 0u);
  EXPECT_EQ(p->stats().rollbacks_across_state_changes, 0u);
  const auto confirmed = of_kind(events, false);
  EXPECT_GT(confirmed.size(), 10u);
  EXPECT_EQ(confirmed, truth(s, start, p->confirmed_tick(), false));
  EXPECT_EQ(of_kind(events, true), truth(s, start, p->predicted_tick(), true));  // each once, ahead
  EXPECT_EQ(p->stats().confirmed_event_records, confirmed.size());
}

TEST(Prediction, AfterARollbackATickReportsAgainOnlyWithOtherEvents) {
  Server s(demo_scene(), std::make_unique<testing::StripRules>());
  const uint64_t start = s.match.tick();
  auto p = predictor_for(s, strips_config());
  std::vector<HashCheck> checks;
  std::vector<GameEventRecord> events;
  run(s, *p, 400, 8, 25, checks, false, &events);  // the remote input changes every 25 ticks
  const PredictionStats& st = p->stats();
  ASSERT_GT(st.rollbacks, 5u);
  EXPECT_EQ(st.hash_mismatches, 0u);
  EXPECT_EQ(of_kind(events, false), truth(s, start, p->confirmed_tick(), false));
  // Per tick, the predicted reports in order: never the same events twice in a row.
  const auto reports = predicted_reports(events);
  const size_t again = reported_again(reports);
  // The walkers cross a strip every half second or so, so some rollbacks span an event
  // and re-predict it; the run is deterministic, and in it no re-prediction changed a
  // tick's events (a changed remote input moves crossings the walker had not reached yet,
  // or removes them), so any second report of a tick would be a repeat.
  EXPECT_EQ(again, 0u);
  EXPECT_GT(st.rollbacks_across_state_changes, 0u);
  EXPECT_LT(st.rollbacks_across_state_changes, st.rollbacks);
  std::printf("rollbacks %llu, across state changes %llu; %zu ticks with predicted events, %zu reported again\n",
              (unsigned long long)st.rollbacks, (unsigned long long)st.rollbacks_across_state_changes, reports.size(),
              again);
}

// Rules whose every tick emits, per player, an event carrying the player's input (its
// move stick's forward code): a mispredicted remote input changes the events of every
// tick predicted with it.
class EchoRules final : public game::Rules {
 public:
  game::GameSpec spec() const override {
    game::GameSpec s = test_support::BallRules("echo", 2.0f, 0.0f).spec();
    game::EventType e;
    e.name = "input";
    e.payload.add_int("player", 0, 1000);
    e.payload.add_int("forward", 0, 1 << 20);
    s.events.push_back(e);
    return s;
  }
  void apply_input(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& in) override {
    const game::Layout& payload = match.spec().events[0].payload;
    game::Values v;
    payload.set_integer(v, 0, int32_t(slot.player));
    payload.set_integer(v, 1, int32_t(in.code[1]));
    match.emit(0, v);
  }
};

TEST(Prediction, AfterARollbackTicksWhoseEventsChangedReportAgain) {
  Server s(demo_scene(), std::make_unique<EchoRules>());
  const uint64_t start = s.match.tick();
  PredictionConfig cfg;
  cfg.rules = [] { return std::make_unique<EchoRules>(); };
  auto p = predictor_for(s, cfg);
  std::vector<HashCheck> checks;
  std::vector<GameEventRecord> events;
  run(s, *p, 200, 6, 25, checks, false, &events);
  ASSERT_GT(p->stats().rollbacks, 4u);
  EXPECT_EQ(of_kind(events, false), truth(s, start, p->confirmed_tick(), false));
  const auto reports = predicted_reports(events);
  const size_t again = reported_again(reports);
  // A tick is reported at most once more per rollback, and only while unconfirmed.
  for (const auto& [tick, list] : reports) EXPECT_LE(list.size(), 1 + p->stats().rollbacks) << "tick " << tick;
  // Each rollback re-predicts the ticks after the contradicted frame with the remote's new
  // input: every one of those (up to the prediction's head) reports again.
  EXPECT_GE(again, p->stats().rollbacks);
  // Every tick emitted events, so every rollback was across a (declared) change.
  EXPECT_EQ(p->stats().rollbacks_across_state_changes, p->stats().rollbacks);
}

TEST(Prediction, RefusesACheckpointThatDoesNotLoad) {
  Server s(demo_scene());
  auto state = s.match.save_state();
  EXPECT_FALSE(Predictor::create(s.match.scene(), state, s.match.tick() + 1, kLocal, {}));
  state.resize(state.size() / 2);
  EXPECT_FALSE(Predictor::create(s.match.scene(), state, s.match.tick(), kLocal, {}));
  EXPECT_FALSE(Predictor::create(s.match.scene(), {}, 0, kLocal, {}));
}

}  // namespace
}  // namespace keel::client
