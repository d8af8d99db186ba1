// A small lag-compensated game for tests: one target crossing at 10 m/s, and players who
// fire a ray straight down +z from an aim point they choose. Each shot's verdict (hit or
// miss, judged "as the shooter saw the world") is counted in the match state and emitted
// as an event, so hashes, recordings and replays all carry it.
#pragma once

#include <keel/game/match.h>

namespace keel::game::lagtest {

inline constexpr uint32_t kAimX = 0, kFire = 1;          // input fields
inline constexpr StateRef kHits{0, 1, StateType::U32};   // match state
inline constexpr StateRef kMisses{1, 1, StateType::U32};
inline constexpr StateRef kTarget{2, 1, StateType::U32};
inline constexpr uint32_t kShotEvent = 0, kShotHit = 0;  // event type, payload field
inline constexpr float kTargetStartX = -2.0f;            // at tick 0
inline constexpr float kTargetSpeed = 10.0f;             // m/s along +x
inline constexpr float kTargetRadius = 0.25f;
inline constexpr float kTargetZ = 10.0f;

inline sim::SceneDef crossing_scene() {
  sim::SceneDef scene;
  scene.name = "crossing";
  scene.settings.gravity = sim::Vec3(0.0f);
  sim::BodyDef wall;  // a static backstop behind the target's path: misses hit it
  wall.id = 1;
  wall.motion = sim::MotionType::Static;
  wall.position = sim::Vec3(0.0f, 0.0f, 20.0f);
  sim::ColliderDef slab;
  slab.shape = sim::ShapeType::Box;
  slab.half_extents = sim::Vec3(50.0f, 5.0f, 0.5f);
  wall.colliders.push_back(slab);
  scene.bodies.push_back(wall);
  sim::BodyDef target;
  target.id = 2;
  target.motion = sim::MotionType::Kinematic;
  target.position = sim::Vec3(kTargetStartX, 0.0f, kTargetZ);
  target.linear_velocity = sim::Vec3(kTargetSpeed, 0.0f, 0.0f);
  target.can_sleep = false;
  sim::ColliderDef ball;
  ball.shape = sim::ShapeType::Sphere;
  ball.radius = kTargetRadius;
  target.colliders.push_back(ball);
  scene.bodies.push_back(target);
  return scene;
}

class LagRules final : public Rules {
 public:
  explicit LagRules(uint32_t history_ticks = 60) : history_ticks_(history_ticks) {}
  GameSpec spec() const override {
    GameSpec s;
    s.name = "lagshot";
    s.pose_history_ticks = history_ticks_;
    s.input.add_fixed("aim_x", -50.0f, 50.0f, 0.01f);
    s.input.add_bool("fire");
    s.state.global.add("hits", StateType::U32);
    s.state.global.add("misses", StateType::U32);
    s.state.global.add("target", StateType::U32);
    EventType shot{"shot", {}};
    shot.payload.add_bool("hit");
    s.events.push_back(shot);
    return s;
  }
  void on_start(Match& m) override { m.state().set_u32(kTarget, 2); }
  void apply_input(Match& m, PlayerSlot& slot, const InputFrame& frame) override {
    const Layout& in = m.input_layout();
    if (!in.boolean(frame, kFire)) return;
    const sim::Vec3 origin(in.number(frame, kAimX), 0.0f, 0.0f);
    auto hit = m.raycast_as_seen(slot.player, origin, sim::Vec3(0.0f, 0.0f, 1.0f), 100.0f);
    const bool on_target = hit && hit->body_id == m.state().get_u32(kTarget);
    m.state().set_u32(on_target ? kHits : kMisses, m.state().get_u32(on_target ? kHits : kMisses) + 1);
    Values v;
    m.spec().events[kShotEvent].payload.set_bool(v, kShotHit, on_target);
    m.emit(kShotEvent, v);
  }

 private:
  uint32_t history_ticks_;
};

/// A frame that fires at `aim_x` (or only aims, fire = false).
inline InputFrame shot(const Layout& layout, float aim_x, bool fire = true) {
  InputFrame f;
  layout.set_number(f, kAimX, aim_x);
  layout.set_bool(f, kFire, fire);
  return f;
}

}  // namespace keel::game::lagtest
