// HoverRules: the example's own game rules. Each player drives a hovering ball (no
// gravity, damped) in its look direction; jump lifts it. The server, the replay tool and
// the bot of this example all build their matches with these rules, so a recording
// replays to the bit and predicting clients agree with the server.
//
// Rules must be deterministic (docs/determinism.md): no libm trigonometry, so the look
// direction comes from keel::sim::dmath.
#pragma once

#include <keel/sim/det_math.h>
#include <keel/game/match.h>
#include <keel/game/registry.h>

#include <memory>
#include <string>

namespace hover {

using namespace keel::sim;

class HoverRules final : public Rules {
 public:
  static constexpr float kSpeed = 6.0f;  // m/s
  static constexpr float kLift = 3.0f;   // m/s

  std::string name() const override { return "hover"; }

  void on_join(Match& match, PlayerSlot& slot) override {
    BodyDef def;
    def.id = match.next_body_id();
    def.motion = MotionType::Dynamic;
    def.gravity_scale = 0.0f;
    def.linear_damping = 2.0f;
    def.can_sleep = false;
    const auto& spawns = match.scene().spawn_points;
    def.position = spawns.empty() ? Vec3(0.0f, 2.0f, 0.0f) : spawns[slot.spawn_index % spawns.size()].position;
    ColliderDef ball;
    ball.shape = ShapeType::Sphere;
    ball.radius = 0.5f;
    def.colliders.push_back(ball);
    slot.character = match.world_for_rules().add_body(def) ? def.id : 0;
  }

  void on_leave(Match& match, PlayerSlot& slot) override {
    World& world = match.world_for_rules();
    if (slot.character != 0) world.remove_body(world.find_body(slot.character));
    slot.character = 0;
  }

  void apply_input(Match& match, PlayerSlot& slot, const InputFrame& in) override {
    World& world = match.world_for_rules();
    BodyId body = world.find_body(slot.character);
    if (!body.valid()) return;
    // Yaw 0 looks along -Z; +x is to the right of the look direction.
    auto sc = dmath::sincos(in.look_yaw);
    Vec3 forward(-sc.sin, 0.0f, -sc.cos);
    Vec3 right(sc.cos, 0.0f, -sc.sin);
    Vec3 v = (forward * in.move_z + right * in.move_x) * kSpeed;
    v.y = (in.buttons & kButtonJump) ? kLift : 0.0f;
    world.set_linear_velocity(body, v);
  }
};

/// Keel's built-in rules plus these: what the example's replay tool knows.
inline RulesRegistry rules_registry() {
  return RulesRegistry::builtin().add([] { return std::make_unique<HoverRules>(); });
}

}  // namespace hover
