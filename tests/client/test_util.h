// Helpers shared by the client tests.
#pragma once

#include <keel/protocol/input_codec.h>
#include <keel/protocol/scene.h>
#include <keel/game/match.h>

#include <gtest/gtest.h>

#include <string>

namespace keel::client::testing {

inline sim::SceneDef demo_scene() {
  auto s = protocol::load_scene_file(std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json");
  if (!s) throw std::runtime_error(s.error().message);
  return *s;
}

/// A quantised input that walks in a direction that changes every `period` ticks.
inline protocol::QuantInput walk(uint32_t player, uint64_t tick, uint64_t period = 20) {
  protocol::QuantInput q;
  uint64_t leg = tick / period + player * 7;
  q.move_z = static_cast<int8_t>(leg % 3 == 0 ? 0 : 127);
  q.yaw = static_cast<uint16_t>(leg * 9973u);
  q.buttons = static_cast<uint8_t>(leg % 5 == 0 && tick % period == 0 ? uint32_t{sim::kButtonJump} : 0u);
  return q;
}

}  // namespace keel::client::testing
