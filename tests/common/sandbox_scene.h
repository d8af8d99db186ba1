// The scene most game-layer tests play on: a 100 x 100 m static ground slab, its top face at
// y = 0, and the spawn points a test asks for; and the built-in sandbox match on a scene.
#pragma once

#include <keel/game/match.h>
#include <keel/games/sandbox.h>

#include <initializer_list>
#include <memory>
#include <utility>

namespace keel::test_support {

inline sim::SceneDef flat_ground_scene(std::initializer_list<sim::Vec3> spawn_points) {
  sim::SceneDef s;
  s.name = "flat";
  sim::BodyDef ground;
  ground.id = 1;
  ground.motion = sim::MotionType::Static;
  ground.position = sim::Vec3(0, -0.5f, 0);
  sim::ColliderDef box;
  box.shape = sim::ShapeType::Box;
  box.half_extents = sim::Vec3(50, 0.5f, 50);
  ground.colliders.push_back(box);
  s.bodies.push_back(ground);
  for (const sim::Vec3& p : spawn_points) s.spawn_points.push_back(sim::Transform{p, sim::identity_quat()});
  return s;
}

inline game::Match sandbox_match(const sim::SceneDef& scene) {
  return std::move(*game::Match::create(scene, std::make_unique<games::SandboxRules>()));
}

}  // namespace keel::test_support
