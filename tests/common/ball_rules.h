// A game's own rules, as a test writes them: each player is a weightless ball pushed
// along its move vector. Tests register it under their own name (so a recording or a
// predicting client must be given these rules, not the built-in ones, to reproduce the
// server) and vary where the balls start and whether the look yaw lifts them.
#pragma once

#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <string>

namespace keel::test_support {

class BallRules final : public game::Rules {
 public:
  /// `spacing`: metres between players' starting x; `yaw_lift`: vertical push per unit of
  /// look yaw (0: the balls stay in their plane).
  BallRules(std::string name, float spacing, float yaw_lift)
      : name_(std::move(name)), spacing_(spacing), yaw_lift_(yaw_lift) {}

  /// The sandbox's input layout, all of it (so tests drive it with games::sandbox_input
  /// frames, and a sandbox client's encoded inputs decode on a server of these rules).
  game::GameSpec spec() const override {
    game::GameSpec spec;
    spec.name = name_;
    spec.input = games::SandboxRules::make_spec().input;
    spec.max_bodies_per_player = 1;
    return spec;
  }
  void on_join(game::Match& match, game::PlayerSlot& slot) override {
    sim::BodyDef def;
    def.id = match.next_body_id();
    def.motion = sim::MotionType::Dynamic;
    def.gravity_scale = 0.0f;
    def.position = sim::Vec3(float(slot.player) * spacing_, 3.0f, 0.0f);
    sim::ColliderDef ball;
    ball.shape = sim::ShapeType::Sphere;
    ball.radius = 0.3f;
    def.colliders.push_back(ball);
    slot.character = match.world_for_rules().add_body(def) ? def.id : 0;
  }
  void on_leave(game::Match& match, game::PlayerSlot& slot) override {
    sim::World& world = match.world_for_rules();
    if (slot.character != 0) world.remove_body(world.find_body(slot.character));
    slot.character = 0;
  }
  void apply_input(game::Match& match, game::PlayerSlot& slot, const game::InputFrame& in) override {
    sim::World& world = match.world_for_rules();
    sim::BodyId body = world.find_body(slot.character);
    const game::Layout& layout = match.input_layout();
    const sim::Vec3 move = layout.stick(in, 0);
    const float yaw = layout.angle(in, 1);
    if (body.valid()) world.set_linear_velocity(body, sim::Vec3(move.x, yaw * yaw_lift_, move.y) * 3.0f);
  }

 private:
  std::string name_;
  float spacing_;
  float yaw_lift_;
};

}  // namespace keel::test_support
