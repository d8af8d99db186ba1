// Contact events: Began once, Stayed every later touching tick, Ended once, in id
// order, with normals from the lower id to the higher; support and block normals.
#include <keel/sim/world.h>

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_bodies.h"

namespace keel::sim {
namespace {

using test::box_body;

std::vector<ContactEvent> events_of(const World& w) {
  return std::vector<ContactEvent>(w.contact_events().begin(), w.contact_events().end());
}

// Whether two lists of events agree field for field (the approach speeds too when
// `with_speed`); else the first difference.
::testing::AssertionResult same_events(const std::vector<ContactEvent>& a, const std::vector<ContactEvent>& b,
                                       bool with_speed) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " events against " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i].kind == b[i].kind && a[i].body_a == b[i].body_a && a[i].body_b == b[i].body_b &&
                      a[i].point == b[i].point && a[i].normal == b[i].normal &&
                      (!with_speed || a[i].approach_speed == b[i].approach_speed);
    if (!same) {
      return ::testing::AssertionFailure() << "event " << i << " (pair " << a[i].body_a << "-" << a[i].body_b
                                           << " against " << b[i].body_a << "-" << b[i].body_b << ") differs";
    }
  }
  return ::testing::AssertionSuccess();
}

// A box (id 5) dropped on a floor (id 9): the pair is reported as (5, 9) with the normal
// from 5 to 9, i.e. pointing down, however the contact is stored internally.
TEST(ContactEvents, BeganOnceThenStayedThenEndedOnce) {
  World w;
  w.add_body(box_body(9, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  BodyId box = *w.add_body(box_body(5, MotionType::Dynamic, Vec3(0, 1.0f, 0), Vec3(0.5f)));
  int began = 0, stayed = 0, ended = 0, first_began = -1;
  for (int t = 1; t <= 90; ++t) {
    w.step();
    for (const ContactEvent& e : events_of(w)) {
      EXPECT_EQ(e.body_a, 5u);
      EXPECT_EQ(e.body_b, 9u);
      if (e.kind == ContactEvent::Kind::Began) {
        ++began;
        first_began = t;
        EXPECT_GT(e.approach_speed, 0.5f);  // it was falling onto the floor
      }
      if (e.kind == ContactEvent::Kind::Stayed) ++stayed;
      if (e.kind == ContactEvent::Kind::Ended) {
        ++ended;
      } else {
        EXPECT_NEAR(e.normal.y, -1.0f, 1e-4f);
      }
    }
  }
  EXPECT_EQ(began, 1);
  EXPECT_EQ(stayed, 90 - first_began);  // every later tick, asleep or not
  EXPECT_EQ(ended, 0);
  EXPECT_TRUE(w.body_state(box).supported);
  EXPECT_NEAR(w.body_state(box).support_normal.y, 1.0f, 1e-4f);  // the floor pushes up on it

  w.set_linear_velocity(box, Vec3(0, 10, 0));  // launch it away
  bool saw_end = false;
  for (int t = 0; t < 10; ++t) {
    w.step();
    for (const ContactEvent& e : events_of(w)) {
      if (e.kind == ContactEvent::Kind::Ended) {
        EXPECT_FALSE(saw_end);
        saw_end = true;
      }
    }
  }
  EXPECT_TRUE(saw_end);
  EXPECT_FALSE(w.body_state(box).supported);
  EXPECT_EQ(w.body_state(box).support_normal, Vec3(0, 1, 0));
}

TEST(ContactEvents, RemovedBodyEndsItsPairsByName) {
  World w;
  w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  BodyId box = *w.add_body(box_body(7, MotionType::Dynamic, Vec3(0, 0.5f, 0), Vec3(0.5f)));
  for (int t = 0; t < 5; ++t) w.step();
  w.remove_body(box);
  w.step();
  auto ev = events_of(w);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, ContactEvent::Kind::Ended);
  EXPECT_EQ(ev[0].body_a, 1u);
  EXPECT_EQ(ev[0].body_b, 7u);
}

// A pair at rest keeps reporting Stayed while both sides are asleep or static (a world
// at rest repeats its last events rather than rebuilding them), and removing the sleeper,
// which wakes nothing, still ends the pair by name on the next tick.
TEST(ContactEvents, SleepingPairStaysThenEndsWhenRemoved) {
  World w;
  w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  BodyId box = *w.add_body(box_body(7, MotionType::Dynamic, Vec3(0, 0.5f, 0), Vec3(0.5f)));
  for (int t = 0; t < 90; ++t) w.step();
  ASSERT_TRUE(w.body_state(box).sleeping);
  for (int t = 0; t < 3; ++t) {
    w.step();
    auto ev = events_of(w);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].kind, ContactEvent::Kind::Stayed);
    EXPECT_EQ(ev[0].body_a, 1u);
    EXPECT_NEAR(ev[0].normal.y, 1.0f, 1e-4f);  // from the floor (id 1) up to the box
    EXPECT_EQ(ev[0].approach_speed, 0.0f);
    EXPECT_TRUE(w.body_state(box).supported);
  }
  w.remove_body(box);
  w.step();
  auto ev = events_of(w);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, ContactEvent::Kind::Ended);
  EXPECT_EQ(ev[0].body_b, 7u);
  w.step();
  EXPECT_TRUE(events_of(w).empty());
}

// Three boxes side by side on a floor, pressed together: events are sorted by (a, b),
// and a box touching a wall reports that wall as its most horizontal normal.
TEST(ContactEvents, OrderedByIdsAndBlockNormal) {
  World w;
  w.add_body(box_body(50, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  w.add_body(box_body(40, MotionType::Static, Vec3(2.0f, 1.0f, 0), Vec3(0.5f, 1.0f, 1.0f)));  // wall at x = 1.5
  BodyDef pusher = box_body(3, MotionType::Dynamic, Vec3(1.0f, 0.5f, 0), Vec3(0.5f));
  pusher.linear_velocity = Vec3(1, 0, 0);
  BodyId id = *w.add_body(pusher);
  w.add_body(box_body(20, MotionType::Dynamic, Vec3(-1.0f, 0.5f, 0), Vec3(0.5f)));
  for (int t = 0; t < 5; ++t) w.step();
  auto ev = events_of(w);
  ASSERT_GE(ev.size(), 3u);
  for (size_t i = 1; i < ev.size(); ++i) {
    EXPECT_LT((uint64_t(ev[i - 1].body_a) << 32 | ev[i - 1].body_b), (uint64_t(ev[i].body_a) << 32 | ev[i].body_b));
  }
  for (const ContactEvent& e : ev) EXPECT_LT(e.body_a, e.body_b);
  BodyState s = w.body_state(id);
  EXPECT_NEAR(s.block_normal.x, -1.0f, 1e-3f);  // the wall pushes it back along -x
  EXPECT_NEAR(s.support_normal.y, 1.0f, 1e-3f);
}

// A restored world reports the same events as the uninterrupted one (the touching set
// is part of the state), across a sleep.
TEST(ContactEvents, RestoredWorldReportsTheSameEvents) {
  World a;
  a.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  for (uint32_t i = 0; i < 3; ++i) a.add_body(box_body(10 + i, MotionType::Dynamic, Vec3(0, 0.6f + 1.1f * i, 0), Vec3(0.5f)));
  for (int t = 0; t < 70; ++t) a.step();
  World b;
  ASSERT_TRUE(b.restore_state(a.save_state()));
  for (int t = 0; t < 30; ++t) {
    a.step();
    b.step();
    EXPECT_TRUE(same_events(events_of(a), events_of(b), false)) << "tick " << t;
  }
}

// A stack falling asleep beside a ball that keeps sliding: the world is never still, so
// every tick builds events, and once the stack sleeps its pairs (held: neither side can
// move) carry over what they carried last tick. A world restored from the same state has
// no last tick to copy from and builds every event afresh. On every tick from before the
// stack sleeps to well after, the next tick's events of the running world and of one
// restored from it must agree field for field.
TEST(ContactEvents, HeldPairsInAPartlyAwakeWorldReportWhatAFreshBuildDoes) {
  World a;
  a.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(50, 0.5f, 50)));
  for (uint32_t i = 0; i < 3; ++i) a.add_body(box_body(10 + i, MotionType::Dynamic, Vec3(0, 0.6f + 1.1f * i, 0), Vec3(0.5f)));
  BodyDef ball = test::sphere_body(30, MotionType::Dynamic, Vec3(-20.0f, 0.5f, 10.0f), 0.5f);
  ball.can_sleep = false;
  ball.colliders[0].friction = 0.0f;  // slides on at 2 m/s for the whole test
  ball.linear_velocity = Vec3(2.0f, 0, 0);
  a.add_body(ball);
  int asleep_at = -1;
  for (int t = 1; t <= 120; ++t) {
    World b;
    ASSERT_TRUE(b.restore_state(a.save_state()));
    a.step();
    b.step();
    if (asleep_at < 0 && a.body_state(a.find_body(10)).sleeping) asleep_at = t;
    EXPECT_TRUE(same_events(events_of(a), events_of(b), true)) << "tick " << t;
  }
  // The window covered the stack falling asleep and many held ticks after it.
  ASSERT_GT(asleep_at, 0);
  EXPECT_LT(asleep_at, 100);
  EXPECT_EQ(events_of(a).size(), 4u);  // three stacked pairs and the ball on the floor
}

// Hundreds of touching pairs (the events are planned in pieces on the workers), with ids
// running against slot order (so the touches need sorting), columns landing on
// different ticks and bodies removed: on every tick the events must be exactly the merge
// of last tick's touching pairs with this tick's, each Began or Stayed pair carrying the
// first point and the normal (lower id to higher) of its first contact in slot order, and
// two threads must report every field the same as one.
TEST(ContactEvents, HundredsOfPairsMergeInIdOrderAtAnyThreadCount) {
  auto build = [](uint32_t threads) {
    WorldSettings settings;
    settings.threads = threads;
    World w(settings);
    w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(30, 0.5f, 30)));
    uint32_t id = 5000;
    for (int layer = 0; layer < 4; ++layer) {
      for (int x = 0; x < 12; ++x) {
        for (int z = 0; z < 12; ++z) {
          // Columns start a little apart in height, so they land over several ticks.
          const float y = 0.5f + 1.02f * float(layer) + 0.02f * float((x * 5 + z * 3) % 7);
          BodyDef b = box_body(id--, MotionType::Dynamic, Vec3(1.5f * float(x), y, 1.5f * float(z)), Vec3(0.5f));
          b.can_sleep = false;  // (a column falling asleep refreshes its contacts after the events)
          w.add_body(b);
        }
      }
    }
    return w;
  };
  World one = build(1);
  World two = build(2);
  std::map<uint64_t, std::pair<Vec3, Vec3>> before;  // touching last tick
  size_t most = 0;
  for (int t = 1; t <= 50; ++t) {
    if (t == 30) {
      for (uint32_t gone : {4990u, 4900u, 4700u}) {
        ASSERT_TRUE(one.remove_body(one.find_body(gone)));
        ASSERT_TRUE(two.remove_body(two.find_body(gone)));
      }
    }
    one.step();
    two.step();
    // Expected: this tick's pairs from the contacts, first contact per pair.
    std::map<uint64_t, std::pair<Vec3, Vec3>> now;
    for (const ContactView& c : one.contacts()) {
      if (c.sensor) continue;
      const uint32_t lo = std::min(c.body_a, c.body_b), hi = std::max(c.body_a, c.body_b);
      const Vec3 normal = c.body_a == lo ? c.normal : -c.normal;
      now.emplace(uint64_t(lo) << 32 | hi, std::make_pair(c.points[0].point, normal));  // keeps the first
    }
    std::vector<ContactEvent> expected;
    std::set<uint64_t> keys;
    for (const auto& [k, v] : before) keys.insert(k);
    for (const auto& [k, v] : now) keys.insert(k);
    for (uint64_t k : keys) {
      ContactEvent e;
      e.body_a = uint32_t(k >> 32);
      e.body_b = uint32_t(k);
      const auto it = now.find(k);
      if (it == now.end()) {
        e.kind = ContactEvent::Kind::Ended;
      } else {
        e.kind = before.count(k) ? ContactEvent::Kind::Stayed : ContactEvent::Kind::Began;
        e.point = it->second.first;
        e.normal = it->second.second;
      }
      expected.push_back(e);
    }
    const auto got = events_of(one);
    ASSERT_TRUE(same_events(got, expected, false)) << "tick " << t;
    ASSERT_TRUE(same_events(events_of(two), got, true)) << "tick " << t << ", two threads against one";
    most = std::max(most, now.size());
    before = now;
  }
  EXPECT_GT(most, 560u) << "the world should hold hundreds of touching pairs";
}

}  // namespace
}  // namespace keel::sim

namespace keel::sim {
namespace {

using test::box_body;

// A static trigger volume (id 2) over a floor: a falling ball (id 8) enters, stays and
// exits once, passes through untouched by any impulse, and the floor (static) is never
// sensed.
TEST(TriggerEvents, SenseDynamicIgnoreStaticNoImpulse) {
  WorldSettings settings;
  World w(settings);
  w.add_body(box_body(1, MotionType::Static, Vec3(0, -0.5f, 0), Vec3(10, 0.5f, 10)));
  BodyDef zone = box_body(2, MotionType::Static, Vec3(0, 5.0f, 0), Vec3(2.0f, 1.0f, 2.0f));
  zone.colliders[0].is_trigger = true;
  w.add_body(zone);
  BodyDef touching_floor = box_body(3, MotionType::Static, Vec3(0, 0.5f, 5), Vec3(1.0f));
  touching_floor.colliders[0].is_trigger = true;  // a trigger resting on the floor: never reports it
  w.add_body(touching_floor);
  BodyDef ball;
  ball.id = 8;
  ball.position = Vec3(0, 8.0f, 0);
  ColliderDef s;
  s.shape = ShapeType::Sphere;
  s.radius = 0.25f;
  ball.colliders.push_back(s);
  BodyId id = *w.add_body(ball);
  int enter = 0, stay = 0, exit = 0;
  for (int t = 0; t < 90; ++t) {
    w.step();
    for (const TriggerEvent& e : w.trigger_events()) {
      EXPECT_EQ(e.trigger, 2u);
      EXPECT_EQ(e.other, 8u);
      enter += e.kind == TriggerEvent::Kind::Enter;
      stay += e.kind == TriggerEvent::Kind::Stay;
      exit += e.kind == TriggerEvent::Kind::Exit;
    }
    for (const ContactEvent& e : w.contact_events()) EXPECT_FALSE(e.body_a == 2 || e.body_b == 2);
    if (w.body_state(id).position.y < 2.0f) break;
  }
  EXPECT_EQ(enter, 1);
  EXPECT_EQ(exit, 1);
  EXPECT_GT(stay, 3);
  // Free fall through the zone: v = g t exactly as if it were not there.
  BodyState b = w.body_state(id);
  float fallen = 8.0f - b.position.y;
  EXPECT_NEAR(b.linear_velocity.y * b.linear_velocity.y, 2.0f * 9.81f * fallen, 0.05f * 2.0f * 9.81f * fallen);
}

}  // namespace
}  // namespace keel::sim
