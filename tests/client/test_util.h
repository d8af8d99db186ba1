// Helpers shared by the client tests.
#pragma once

#include <keel/protocol/input_codec.h>
#include <keel/scene/scene.h>
#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <gtest/gtest.h>

#include <string>

namespace keel::client::testing {

inline sim::SceneDef demo_scene() {
  auto s = scene::load_scene_file(std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json");
  if (!s) throw std::runtime_error(s.error().message);
  return *s;
}

/// A sandbox input (codes, so already quantised) that walks in a direction that changes
/// every `period` ticks: forward or standing, a yaw that jumps around the circle, a jump
/// now and then.
inline game::InputFrame walk(uint32_t player, uint64_t tick, uint64_t period = 20) {
  static const game::Layout layout = games::SandboxRules::make_spec().input;
  game::InputFrame f;
  uint64_t leg = tick / period + player * 7;
  layout.set_stick(f, games::SandboxRules::kMove, 0.0f, leg % 3 == 0 ? 0.0f : 1.0f);
  layout.set_code(f, layout.first_component(games::SandboxRules::kLookYaw), static_cast<uint32_t>((leg * 9973u) & 0xffffu));
  layout.set_button(f, games::SandboxRules::kButtons, games::SandboxRules::kJump, leg % 5 == 0 && tick % period == 0);
  return f;
}

/// A sandbox input moving full right (move x = 1), the rest zero.
inline game::InputFrame strafe_right() {
  static const game::Layout layout = games::SandboxRules::make_spec().input;
  game::InputFrame f;
  layout.set_stick(f, games::SandboxRules::kMove, 1.0f, 0.0f);
  return f;
}

}  // namespace keel::client::testing
