// keel::game::Match: the order of one tick, timers, the generator, events, and saving and
// restoring a match with its game's state.
#include <keel/game/match.h>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace keel::game {
namespace {

sim::SceneDef empty_scene() {
  sim::SceneDef scene;
  scene.name = "empty";
  scene.settings.gravity = sim::Vec3(0.0f);
  return scene;
}

sim::BodyDef floating_ball(sim::Vec3 at, sim::Vec3 velocity = sim::Vec3(0.0f)) {
  sim::BodyDef def;
  def.motion = sim::MotionType::Dynamic;
  def.position = at;
  def.linear_velocity = velocity;
  def.can_sleep = false;
  sim::ColliderDef sphere;
  sphere.shape = sim::ShapeType::Sphere;
  sphere.radius = 0.25f;
  def.colliders.push_back(sphere);
  return def;
}

// Writes down every hook call, with what the world holds at that moment, into a log the
// test owns. (The log is the test's instrument, outside the match; the rules' own state
// is in the match, as the game layer asks.)
class LogRules final : public Rules {
 public:
  explicit LogRules(std::vector<std::string>* log) : log_(log) {}

  static constexpr StateRef kEarly{0, 1, StateType::U32};  // body spawned in before_step
  static constexpr StateRef kMid{1, 1, StateType::U32};    // spawned in apply_input
  static constexpr StateRef kLate{2, 1, StateType::U32};   // spawned in after_step

  GameSpec spec() const override {
    GameSpec s;
    s.name = "log";
    s.input.add_int("n", 0, 100);
    s.state.global.add("early", StateType::U32);
    s.state.global.add("mid", StateType::U32);
    s.state.global.add("late", StateType::U32);
    return s;
  }
  void on_start(Match& m) override {
    add("start tick " + std::to_string(m.tick()));
    m.set_timer(4, 1);
  }
  void on_join(Match&, PlayerSlot& slot) override { add("join " + std::to_string(slot.player)); }
  void on_leave(Match&, PlayerSlot& slot) override { add("leave " + std::to_string(slot.player)); }
  void on_timer(Match&, uint32_t timer) override { add("timer " + std::to_string(timer)); }
  void before_step(Match& m) override {
    add("before");
    if (m.tick() == 0) m.state().set_u32(kEarly, m.spawn(floating_ball(sim::Vec3(0, 0, 0))));
  }
  void apply_input(Match& m, PlayerSlot& slot, const InputFrame& frame) override {
    const bool early = m.world().find_body(m.state().get_u32(kEarly)).valid();
    const bool mid = m.world().find_body(m.state().get_u32(kMid)).valid();
    add("input " + std::to_string(slot.player) + " n=" + std::to_string(m.input_layout().integer(frame, 0)) +
        (early ? " early" : "") + (mid ? " mid" : ""));
    if (m.tick() == 0 && m.state().get_u32(kMid) == 0) {
      m.state().set_u32(kMid, m.spawn(floating_ball(sim::Vec3(2, 0, 0), sim::Vec3(6, 0, 0))));
    }
  }
  void after_step(Match& m) override {
    const bool late = m.world().find_body(m.state().get_u32(kLate)).valid();
    sim::BodyId mid = m.world().find_body(m.state().get_u32(kMid));
    // The body spawned during the inputs was in the world when it stepped: it moved.
    const bool mid_moved = mid.valid() && m.world().body_state(mid).position.x > 2.0f;
    add(std::string("after") + (mid_moved ? " mid-moved" : "") + (late ? " late" : ""));
    // After the world stepped, tick() counts this step: 2 is the end of the second step.
    if (m.tick() == 2) m.state().set_u32(kLate, m.spawn(floating_ball(sim::Vec3(4, 0, 0))));
  }

 private:
  void add(std::string line) const { log_->push_back(std::move(line)); }
  std::vector<std::string>* log_;
};

InputFrame frame_n(int32_t n) {
  InputFrame f;
  f.code[0] = uint32_t(n);
  return f;
}

TEST(Match, OrderOfOneTick) {
  std::vector<std::string> log;
  auto m = Match::create(empty_scene(), std::make_unique<LogRules>(&log));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(log, std::vector<std::string>{"start tick 0"});
  log.clear();

  // Joins and leaves in the order listed; inputs by player id whatever their order here.
  TickInputs t;
  t.events = {{PlayerEvent::Kind::Join, 7}, {PlayerEvent::Kind::Join, 3}};
  t.inputs = {{7, frame_n(70)}, {3, frame_n(30)}};
  m->step(t);
  const std::vector<std::string> first = {
      "join 7", "join 3",
      "timer 4",  // set in on_start for 1 tick: due during the first step
      "before",
      "input 3 n=30 early",  // spawned in before_step: there for the inputs
      "input 7 n=70 early",  // spawned during player 3's input: not there yet
      "after mid-moved",     // ... but there (and moved) when the world stepped
  };
  EXPECT_EQ(log, first);
  EXPECT_EQ(m->tick(), 1u);
  const uint32_t late = m->state().get_u32(LogRules::kLate);
  EXPECT_EQ(late, 0u);
  log.clear();

  // No frame from 3 this tick: it repeats its last. 7 leaves before any input.
  TickInputs u;
  u.events = {{PlayerEvent::Kind::Leave, 7}};
  u.inputs = {{3, frame_n(200)}};  // out of range: sanitised to 100
  m->step(u);
  EXPECT_EQ(log, (std::vector<std::string>{"leave 7", "before", "input 3 n=100 early mid", "after mid-moved"}));
  // The body after_step spawned exists once step returns.
  const uint32_t spawned_late = m->state().get_u32(LogRules::kLate);
  ASSERT_NE(spawned_late, 0u);
  EXPECT_TRUE(m->world().find_body(spawned_late).valid());
  log.clear();
  m->step({});
  EXPECT_EQ(log, (std::vector<std::string>{"before", "input 3 n=100 early mid", "after mid-moved late"}));
  EXPECT_EQ(m->players().size(), 1u);
  EXPECT_EQ(m->players()[0].last_input.code[0], 100u);
}

TEST(Match, DestroyAndSpawnApplyInOrder) {
  // A spawn and a destroy of the same id at one apply point leave nothing; a destroy of
  // an unknown id is ignored.
  class SpawnDestroy final : public Rules {
   public:
    GameSpec spec() const override {
      GameSpec s;
      s.name = "spawn_destroy";
      s.state.global.add("id", StateType::U32);
      return s;
    }
    void before_step(Match& m) override {
      if (m.tick() != 0) return;
      uint32_t id = m.spawn(floating_ball(sim::Vec3(0)));
      m.state().set_u32(StateRef{0, 1, StateType::U32}, id);
      m.destroy(id);
      m.destroy(987654);
      m.spawn(floating_ball(sim::Vec3(1, 0, 0)));
    }
  };
  auto m = Match::create(empty_scene(), std::make_unique<SpawnDestroy>());
  ASSERT_TRUE(m);
  m->step({});
  EXPECT_EQ(m->world().body_count(), 1u);
  EXPECT_FALSE(m->world().find_body(m->state().get_u32(StateRef{0, 1, StateType::U32})).valid());
}

// Sets timers from every phase and logs (step number, timer) when one fires.
class TimerRules final : public Rules {
 public:
  explicit TimerRules(std::vector<std::pair<uint64_t, uint32_t>>* fired) : fired_(fired) {}
  GameSpec spec() const override {
    GameSpec s;
    s.name = "timers";
    return s;
  }
  void on_start(Match& m) override {
    m.set_timer(1, 1);  // during step 1
    m.set_timer(2, 5);  // during step 5
  }
  void on_timer(Match& m, uint32_t timer) override {
    // The step being run is tick() + 1 until the world has stepped.
    fired_->push_back({m.tick() + 1, timer});
    if (timer == 1 && m.tick() + 1 < 7) m.set_timer(1, 2);  // again two steps later
  }
  void before_step(Match& m) override {
    if (m.tick() + 1 == 2) m.set_timer(3, 3);  // set during step 2: fires in step 5
  }
  void after_step(Match& m) override {
    if (m.tick() == 6) {
      m.set_timer(4, 1);  // set at the end of step 6: fires in step 7
      EXPECT_EQ(m.timer_remaining(4), 1u);
      EXPECT_EQ(m.timer_remaining(99), 0u);
    }
  }

 private:
  std::vector<std::pair<uint64_t, uint32_t>>* fired_;
};

TEST(Match, TimersFireOnTheStepTheyAreDue) {
  std::vector<std::pair<uint64_t, uint32_t>> fired;
  auto m = Match::create(empty_scene(), std::make_unique<TimerRules>(&fired));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->timer_remaining(1), 1u);  // before any step: during the next one
  EXPECT_EQ(m->timer_remaining(2), 5u);
  for (int i = 0; i < 10; ++i) m->step({});
  // Due timers of one step fire in (due, id) order: at step 5 timers 1, 2 and 3.
  const std::vector<std::pair<uint64_t, uint32_t>> expected = {
      {1, 1}, {3, 1}, {5, 1}, {5, 2}, {5, 3}, {7, 1}, {7, 4},
  };
  EXPECT_EQ(fired, expected);
}

TEST(Match, CancelledTimerNeverFires) {
  std::vector<std::pair<uint64_t, uint32_t>> fired;
  auto m = Match::create(empty_scene(), std::make_unique<TimerRules>(&fired));
  ASSERT_TRUE(m);
  m->cancel_timer(2);
  for (int i = 0; i < 6; ++i) m->step({});
  for (const auto& f : fired) EXPECT_NE(f.second, 2u);
}

TEST(Match, RandomBelowIsUniformAndBounded) {
  auto m = Match::create(empty_scene(), std::make_unique<TimerRules>(nullptr));
  ASSERT_TRUE(m);
  // 60000 draws over 6 values: each count is binomial(60000, 1/6), mean 10000 and
  // standard deviation sqrt(60000 * 1/6 * 5/6) = 91.3; 5 deviations is 456.
  std::map<uint32_t, int> counts;
  for (int i = 0; i < 60000; ++i) ++counts[m->random_below(6)];
  ASSERT_EQ(counts.size(), 6u);
  for (const auto& [value, n] : counts) {
    EXPECT_LT(value, 6u);
    EXPECT_NEAR(n, 10000, 456) << value;
  }
  EXPECT_EQ(m->random_below(1), 0u);
  EXPECT_EQ(m->random_below(0), 0u);
  // A bound just above 2^31 rejects almost half the draws: still below the bound.
  for (int i = 0; i < 100; ++i) EXPECT_LT(m->random_below(0x80000001u), 0x80000001u);
}

// A game that uses everything a save must carry: the generator, timers, its own state, a
// per-player counter and bodies it spawns.
class BusyRules final : public Rules {
 public:
  static constexpr StateRef kSum{0, 1, StateType::U64};
  static constexpr StateRef kFired{1, 1, StateType::U32};
  static constexpr StateRef kTaps{0, 1, StateType::U32};
  explicit BusyRules(std::string name = "busy") : name_(std::move(name)) {}
  GameSpec spec() const override {
    GameSpec s;
    s.name = name_;
    s.input.add_int("push", -3, 3);
    s.state.global.add("sum", StateType::U64);
    s.state.global.add("fired", StateType::U32);
    s.state.player.add("taps", StateType::U32);
    s.events.push_back(EventType{"draw", {}});
    s.events[0].payload.add_int("value", 0, 9);
    s.max_extra_bodies = 64;
    return s;
  }
  void on_start(Match& m) override { m.set_timer(1, 7); }
  void on_timer(Match& m, uint32_t) override {
    m.state().set_u32(kFired, m.state().get_u32(kFired) + 1);
    m.set_timer(1, 3 + m.random_below(5));
    if (m.world().body_count() < 20) {
      m.spawn(floating_ball(sim::Vec3(float(m.random_below(10)), 0, 0), sim::Vec3(0, 0.5f, 0)));
    }
  }
  void before_step(Match& m) override {
    const uint32_t r = m.random_below(10);
    m.state().set_u64(kSum, m.state().get_u64(kSum) * 31 + r);
    Values v;
    v.code[0] = r;
    m.emit(0, v);
  }
  void apply_input(Match& m, PlayerSlot& slot, const InputFrame& frame) override {
    const int32_t push = m.input_layout().integer(frame, 0);
    slot.state.set_u32(kTaps, slot.state.get_u32(kTaps) + uint32_t(push + 3));
    for (sim::BodyId b : m.world().bodies()) {
      sim::BodyState s = m.world().body_state(b);
      m.world_for_rules().set_linear_velocity(b, s.linear_velocity + sim::Vec3(0.01f * float(push), 0, 0));
    }
  }

 private:
  std::string name_;
};

TickInputs busy_inputs(uint64_t tick) {
  TickInputs t;
  if (tick == 0) t.events = {{PlayerEvent::Kind::Join, 1}, {PlayerEvent::Kind::Join, 2}};
  if (tick == 40) t.events = {{PlayerEvent::Kind::Leave, 1}};
  if (tick % 3 == 0) t.inputs.push_back({1, frame_n(int32_t(tick % 7))});
  if (tick % 5 == 0) t.inputs.push_back({2, frame_n(int32_t((tick / 5) % 7))});
  return t;
}

TEST(Match, SaveRestoreThenStepsEqualsTheUninterruptedRun) {
  auto a = Match::create(empty_scene(), std::make_unique<BusyRules>());
  ASSERT_TRUE(a);
  std::vector<uint8_t> saved;
  for (uint64_t t = 0; t < 30; ++t) a->step(busy_inputs(t));
  saved = a->save_state();
  std::vector<uint64_t> hashes;
  std::vector<std::vector<GameEvent>> events;
  for (uint64_t t = 30; t < 80; ++t) {
    a->step(busy_inputs(t));
    hashes.push_back(a->hash());
    events.push_back(a->events());
  }
  EXPECT_GT(a->state().get_u32(BusyRules::kFired), 5u);  // the timers did run

  auto b = Match::create(empty_scene(), std::make_unique<BusyRules>());
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->restore_state(saved));
  EXPECT_EQ(b->tick(), 30u);
  EXPECT_EQ(b->save_state(), saved);
  for (uint64_t t = 30; t < 80; ++t) {
    b->step(busy_inputs(t));
    ASSERT_EQ(b->hash(), hashes[t - 30]) << "tick " << t;
    ASSERT_EQ(b->events(), events[t - 30]) << "tick " << t;
  }
  EXPECT_EQ(b->state(), a->state());
  ASSERT_EQ(b->players().size(), 1u);
  EXPECT_EQ(b->players()[0].state, a->players()[0].state);
  EXPECT_EQ(b->random_u32(), a->random_u32());  // the generator's state was carried too
}

TEST(Match, TheGeneratorIsPartOfTheState) {
  auto m = Match::create(empty_scene(), std::make_unique<BusyRules>());
  ASSERT_TRUE(m);
  const std::vector<uint8_t> before = m->save_state();
  const uint64_t h = m->hash();
  std::vector<uint32_t> draws;
  for (int i = 0; i < 8; ++i) draws.push_back(m->random_below(1000));
  EXPECT_NE(m->hash(), h);  // drawing changed the state
  ASSERT_TRUE(m->restore_state(before));
  EXPECT_EQ(m->hash(), h);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m->random_below(1000), draws[i]);
}

TEST(Match, EmitBounds) {
  class Loud final : public Rules {
   public:
    GameSpec spec() const override {
      GameSpec s;
      s.name = "loud";
      s.events.push_back(EventType{"ping", {}});
      s.events[0].payload.add_int("n", 0, 10);
      return s;
    }
    void after_step(Match& m) override {
      Values v;
      v.code[0] = 500;  // sanitised to 10
      for (uint32_t i = 0; i < kMaxEventsPerTick; ++i) EXPECT_TRUE(m.emit(0, v));
      EXPECT_FALSE(m.emit(0, v));  // one past the limit
      EXPECT_FALSE(m.emit(1, v));  // no such type
    }
  };
  auto m = Match::create(empty_scene(), std::make_unique<Loud>());
  ASSERT_TRUE(m);
  m->step({});
  ASSERT_EQ(m->events().size(), kMaxEventsPerTick);
  EXPECT_EQ(m->events()[0].type, 0u);
  EXPECT_EQ(m->events()[0].payload.code[0], 10u);
  m->step({});  // each step starts with no events
  EXPECT_EQ(m->events().size(), kMaxEventsPerTick);
}

TEST(Match, RestoreRefusesAnotherGameAndDamagedBytes) {
  auto a = Match::create(empty_scene(), std::make_unique<BusyRules>("alpha"));
  auto b = Match::create(empty_scene(), std::make_unique<BusyRules>("beta"));
  ASSERT_TRUE(a && b);
  for (uint64_t t = 0; t < 10; ++t) a->step(busy_inputs(t));
  const std::vector<uint8_t> saved = a->save_state();
  const uint64_t b_hash = b->hash();
  Status st = b->restore_state(saved);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("saved by another game"), std::string::npos) << st.error().message;
  EXPECT_EQ(b->hash(), b_hash);  // a refused restore changes nothing

  // Every truncation of a real state is refused and leaves the match as it was.
  auto c = Match::create(empty_scene(), std::make_unique<BusyRules>("alpha"));
  ASSERT_TRUE(c);
  const uint64_t c_hash = c->hash();
  for (size_t n = 0; n < saved.size(); ++n) {
    EXPECT_FALSE(c->restore_state(std::span(saved.data(), n))) << n;
  }
  EXPECT_EQ(c->hash(), c_hash);
  ASSERT_TRUE(c->restore_state(saved));
  EXPECT_EQ(c->hash(), a->hash());
}

TEST(Match, RefusesAnInvalidSpec) {
  class Bad final : public Rules {
   public:
    GameSpec spec() const override {
      GameSpec s;
      s.name = "Bad Name";
      return s;
    }
  };
  auto m = Match::create(empty_scene(), std::make_unique<Bad>());
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("game name"), std::string::npos) << m.error().message;
  EXPECT_FALSE(Match::create(empty_scene(), nullptr));
}

}  // namespace
}  // namespace keel::game
