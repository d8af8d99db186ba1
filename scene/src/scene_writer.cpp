// SceneDef -> FlatBuffers binary, the inverse of read_scene for every field in the format.
#include <keel/scene/scene.h>
#include <keel/scene/scene_generated.h>

#include <vector>

namespace keel::scene {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

fb::Vec3 to_fb(const sim::Vec3& v) { return fb::Vec3(v.x, v.y, v.z); }
fb::Quat to_fb(const sim::Quat& q) { return fb::Quat(q.x, q.y, q.z, q.w); }

Offset<fb::Collider> write_collider(FlatBufferBuilder& fbb, const sim::ColliderDef& c) {
  const fb::Vec3 center = to_fb(c.center);
  const fb::Quat rotation = to_fb(c.rotation);
  const fb::Vec3 half_extents = to_fb(c.half_extents);
  // Geometry is always written inline (a mesh read from an OBJ file included): a scene
  // sent to a client must carry everything it needs. Empty vectors are left out, so
  // spheres, boxes and capsules encode as they did before hulls and meshes.
  Offset<flatbuffers::Vector<const fb::Vec3*>> points = 0;
  if (!c.points.empty()) {
    std::vector<fb::Vec3> v;
    v.reserve(c.points.size());
    for (const sim::Vec3& p : c.points) v.push_back(to_fb(p));
    points = fbb.CreateVectorOfStructs(v);
  }
  const auto indices = c.indices.empty() ? 0 : fbb.CreateVector(c.indices);
  const auto heights = c.heights.empty() ? 0 : fbb.CreateVector(c.heights);
  return fb::CreateCollider(fbb, static_cast<fb::Shape>(c.shape), &center, &rotation, c.radius,
                            c.half_height, &half_extents, points, indices, c.friction,
                            c.restitution, c.density, c.is_trigger, c.enabled, /*mesh_file=*/0, c.rows,
                            c.columns, c.cell_size, heights, c.static_friction < 0.0f ? -1.0f : c.static_friction);
}

Offset<fb::Body> write_body(FlatBufferBuilder& fbb, const sim::BodyDef& b) {
  std::vector<Offset<fb::Collider>> colliders;
  colliders.reserve(b.colliders.size());
  for (const sim::ColliderDef& c : b.colliders) colliders.push_back(write_collider(fbb, c));
  const auto collider_vector = fbb.CreateVector(colliders);
  const fb::Vec3 position = to_fb(b.position);
  const fb::Quat rotation = to_fb(b.rotation);
  const fb::Vec3 linear_velocity = to_fb(b.linear_velocity);
  const fb::Vec3 angular_velocity = to_fb(b.angular_velocity);
  return fb::CreateBody(fbb, b.id, static_cast<fb::Motion>(b.motion), b.mass, &position, &rotation,
                        &linear_velocity, &angular_velocity, b.linear_damping, b.angular_damping,
                        b.gravity_scale, b.freeze_rotation, b.can_sleep, b.layer, b.collides_with,
                        collider_vector, b.bullet, b.kind);
}

Offset<fb::Solver> write_solver(FlatBufferBuilder& fbb, const sim::WorldSettings& s) {
  // The solver kind and compliance only when set: a soft-step scene keeps its bytes.
  const bool xpbd_fields = s.solver_kind != sim::SolverKind::SoftStep || s.contact_compliance != 0.0f;
  return fb::CreateSolver(fbb, s.substeps, s.contact_hertz, s.contact_damping_ratio,
                          s.contact_push_max_speed, s.restitution_threshold,
                          static_cast<fb::SolverKind>(s.solver_kind),
                          xpbd_fields ? flatbuffers::Optional<float>(s.contact_compliance) : flatbuffers::nullopt);
}

Offset<fb::Character> write_character(FlatBufferBuilder& fbb, const sim::CharacterDef& c) {
  std::vector<Offset<fb::CharacterStep>> steps;
  steps.reserve(c.settings.script.size());
  for (const sim::CharacterScriptStep& st : c.settings.script) {
    const fb::Vec3 move = to_fb(st.move);
    steps.push_back(fb::CreateCharacterStep(fbb, st.ticks, &move, st.jump));
  }
  const auto script = fbb.CreateVector(steps);
  const sim::CharacterSettings& s = c.settings;
  return fb::CreateCharacter(fbb, c.body, s.slope_limit, s.step_height, s.push_force, s.jump_speed,
                             s.air_acceleration, script);
}

Offset<fb::Transform> write_transform(FlatBufferBuilder& fbb, const sim::Transform& t) {
  const fb::Vec3 position = to_fb(t.position);
  const fb::Quat rotation = to_fb(t.rotation);
  return fb::CreateTransform(fbb, &position, &rotation);
}

// Limits, motors and springs are present exactly when enabled.
Offset<fb::JointLimit> write_limit(FlatBufferBuilder& fbb, const sim::JointLimit& l) {
  return l.enabled ? fb::CreateJointLimit(fbb, l.lower, l.upper) : 0;
}

Offset<fb::JointSpring> write_spring(FlatBufferBuilder& fbb, const sim::JointSpring& s) {
  return s.enabled ? fb::CreateJointSpring(fbb, s.hertz, s.damping_ratio, s.target) : 0;
}

Offset<fb::Joint> write_joint(FlatBufferBuilder& fbb, const sim::JointDef& j) {
  const auto frame_a = write_transform(fbb, j.frame_a);
  const auto frame_b = write_transform(fbb, j.frame_b);
  const auto limit = write_limit(fbb, j.limit);
  const auto motor = j.motor.enabled ? fb::CreateJointMotor(fbb, j.motor.speed, j.motor.max_force) : 0;
  const auto spring = write_spring(fbb, j.spring);
  const auto steer_limit = write_limit(fbb, j.steer_limit);
  const auto steer_spring = write_spring(fbb, j.steer_spring);
  return fb::CreateJoint(fbb, static_cast<fb::JointKind>(j.kind), j.body_a, j.body_b, frame_a, frame_b, limit,
                         motor, spring, j.length, j.cone_angle, steer_limit, steer_spring, j.holding_torque,
                         j.break_force, j.collide_connected);
}

}  // namespace

std::vector<uint8_t> scene_to_binary(const sim::SceneDef& scene) {
  FlatBufferBuilder fbb(1024 + scene.bodies.size() * 256);
  // Write every scalar even when it equals the schema default: the builder compares with
  // ==, so -0.0f would otherwise be dropped and read back as +0.0f, and the round trip
  // must be exact to the bit.
  fbb.ForceDefaults(true);

  std::vector<Offset<fb::Body>> bodies;
  bodies.reserve(scene.bodies.size());
  for (const sim::BodyDef& b : scene.bodies) bodies.push_back(write_body(fbb, b));
  const auto body_vector = fbb.CreateVector(bodies);

  std::vector<Offset<fb::Transform>> spawn_points;
  spawn_points.reserve(scene.spawn_points.size());
  for (const sim::Transform& t : scene.spawn_points) {
    const fb::Vec3 position = to_fb(t.position);
    const fb::Quat rotation = to_fb(t.rotation);
    spawn_points.push_back(fb::CreateTransform(fbb, &position, &rotation));
  }
  const auto spawn_vector = fbb.CreateVector(spawn_points);

  std::vector<Offset<fb::Character>> characters;
  characters.reserve(scene.characters.size());
  for (const sim::CharacterDef& c : scene.characters) characters.push_back(write_character(fbb, c));
  // An empty list is left out, so a scene without characters encodes as it did before.
  const auto character_vector = characters.empty() ? 0 : fbb.CreateVector(characters);

  // Ragdolls and vehicles were expanded by the loader: their bodies and joints are here.
  std::vector<Offset<fb::Joint>> joints;
  joints.reserve(scene.joints.size());
  for (const sim::JointDef& j : scene.joints) joints.push_back(write_joint(fbb, j));
  const auto joint_vector = joints.empty() ? 0 : fbb.CreateVector(joints);

  const auto name = fbb.CreateString(scene.name);
  const auto solver = write_solver(fbb, scene.settings);
  const fb::Vec3 gravity = to_fb(scene.settings.gravity);
  const auto root = fb::CreateScene(fbb, name, scene.settings.tick_rate, &gravity, body_vector,
                                    joint_vector, spawn_vector, solver, character_vector);
  fb::FinishSceneBuffer(fbb, root);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace keel::scene
