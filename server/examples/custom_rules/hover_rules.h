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
#include <keel/games/sandbox.h>

#include <memory>
#include <string>

namespace hover {

using namespace keel::sim;
using keel::game::InputFrame;
using keel::game::Match;
using keel::game::PlayerSlot;

class HoverRules final : public keel::game::Rules {
 public:
  static constexpr float kSpeed = 6.0f;  // m/s
  static constexpr float kLift = 3.0f;   // m/s
  // The input fields, in declaration order.
  static constexpr uint32_t kMove = 0;     // stick: x right, y forward
  static constexpr uint32_t kLookYaw = 1;  // angle: 0 looks along -Z
  static constexpr uint32_t kLiftOn = 2;   // bool

  static keel::game::GameSpec make_spec() {
    keel::game::GameSpec spec;
    spec.name = "hover";
    spec.input.add_stick("move", 127);
    spec.input.add_angle("look_yaw", 16);
    spec.input.add_bool("lift");
    spec.max_bodies_per_player = 1;
    return spec;
  }
  keel::game::GameSpec spec() const override { return make_spec(); }

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
    const keel::game::Layout& layout = match.input_layout();
    // Yaw 0 looks along -Z; +x is to the right of the look direction.
    auto sc = dmath::sincos(layout.angle(in, kLookYaw));
    Vec3 forward(-sc.sin, 0.0f, -sc.cos);
    Vec3 right(sc.cos, 0.0f, -sc.sin);
    const Vec3 move = layout.stick(in, kMove);
    Vec3 v = (forward * move.y + right * move.x) * kSpeed;
    v.y = layout.boolean(in, kLiftOn) ? kLift : 0.0f;
    world.set_linear_velocity(body, v);
  }
};

/// Keel's built-in games plus this one: what the example's replay tool knows.
inline keel::game::RulesRegistry rules_registry() {
  return keel::games::builtin_games().add([] { return std::make_unique<HoverRules>(); });
}

}  // namespace hover
