// The world description: BodyAdded / BodyRemoved round-trip every shape bit for bit
// within the control channel's message size, a body too large for one message is cut and
// says so, every out-of-range field is refused, and a match's table follows its spawns,
// destroys and kinds.
#include <keel/scene/scene.h>
#include <keel/protocol/world_description.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

namespace keel::protocol {
namespace {

using sim::ColliderDef;
using sim::ShapeType;
using keel::scene::parse_scene_binary;
using keel::scene::parse_scene_json;
using keel::scene::scene_to_binary;

BodyDescription body(uint32_t id, uint32_t kind, std::vector<ColliderDef> colliders,
                     sim::MotionType motion = sim::MotionType::Dynamic) {
  BodyDescription b;
  b.id = id;
  b.kind = kind;
  b.position = {float(id), -2.5f, 0.125f * float(id)};
  b.rotation = glm::normalize(sim::Quat(1.0f, 0.0f, 0.01f * float(id), 0.0f));
  b.motion = motion;
  b.colliders = std::move(colliders);
  return b;
}

ColliderDef sphere(float r) {
  ColliderDef c;
  c.shape = ShapeType::Sphere;
  c.radius = r;
  return c;
}

ColliderDef box(sim::Vec3 half, sim::Vec3 at) {
  ColliderDef c;
  c.shape = ShapeType::Box;
  c.half_extents = half;
  c.center = at;
  c.rotation = glm::normalize(sim::Quat(0.9f, 0.1f, 0.3f, -0.2f));
  return c;
}

ColliderDef capsule(float r, float h) {
  ColliderDef c;
  c.shape = ShapeType::Capsule;
  c.radius = r;
  c.half_height = h;
  c.is_trigger = true;
  return c;
}

ColliderDef hull(int n) {
  ColliderDef c;
  c.shape = ShapeType::Hull;
  for (int i = 0; i < n; ++i) {
    float a = 0.37f * float(i);
    c.points.push_back({std::cos(a), float(i % 3) - 1.0f, std::sin(a)});
  }
  return c;
}

ColliderDef mesh(int vertices) {
  ColliderDef c;
  c.shape = ShapeType::Mesh;
  for (int i = 0; i < vertices; ++i) c.points.push_back({float(i), 0.0f, float(i % 2)});
  for (int i = 0; i + 2 < vertices; ++i) c.indices.insert(c.indices.end(), {uint32_t(i), uint32_t(i + 1), uint32_t(i + 2)});
  return c;
}

ColliderDef heightfield(uint32_t rows, uint32_t columns) {
  ColliderDef c;
  c.shape = ShapeType::Heightfield;
  c.rows = rows;
  c.columns = columns;
  c.cell_size = 0.5f;
  for (uint32_t i = 0; i < rows * columns; ++i) c.heights.push_back(0.25f * float(i % 5));
  return c;
}

// Applies messages the way a client does (check_message, then decode).
struct Applied {
  std::vector<BodyDescription> added;
  std::vector<uint32_t> removed;
  DropReason last = DropReason::None;
};

Applied apply(const std::vector<std::vector<uint8_t>>& messages) {
  Applied out;
  for (const auto& bytes : messages) {
    const fb::Message* m = nullptr;
    out.last = check_message(bytes, m);
    if (out.last != DropReason::None) return out;
    uint64_t tick = 0;
    if (m->body_type() == fb::Body::BodyAdded) {
      std::vector<BodyDescription> bodies;
      out.last = decode_body_added(*m->body_as_BodyAdded(), tick, bodies);
      out.added.insert(out.added.end(), bodies.begin(), bodies.end());
    } else if (m->body_type() == fb::Body::BodyRemoved) {
      std::vector<uint32_t> ids;
      out.last = decode_body_removed(*m->body_as_BodyRemoved(), tick, ids);
      out.removed.insert(out.removed.end(), ids.begin(), ids.end());
    } else {
      out.last = DropReason::TypeNotAllowed;
    }
    if (out.last != DropReason::None) return out;
    EXPECT_EQ(tick, 77u);
  }
  return out;
}

TEST(WorldDescription, EveryShapeRoundTripsBitForBitWithinAControlMessage) {
  DescriptionChanges changes;
  changes.removed = {3, 9, 4000000000u};
  changes.added = {body(10, 2, {sphere(0.15f)}), body(11, 7, {box({0.5f, 0.25f, 2.0f}, {0.0f, 1.0f, -0.5f}), capsule(0.4f, 0.5f)}),
                   body(12, 0, {hull(40)}, sim::MotionType::Kinematic), body(13, 1, {mesh(12)}, sim::MotionType::Static),
                   body(14, 3, {heightfield(5, 6)}, sim::MotionType::Static)};
  const auto messages = encode_description_changes(77, changes);
  ASSERT_GE(messages.size(), 2u);
  for (const auto& m : messages) EXPECT_LE(m.size(), DescriptionLimits::kMaxMessageBytes);
  Applied got = apply(messages);
  ASSERT_EQ(got.last, DropReason::None);
  EXPECT_EQ(got.removed, changes.removed);
  ASSERT_EQ(got.added.size(), changes.added.size());
  for (size_t i = 0; i < got.added.size(); ++i) {
    EXPECT_TRUE(same_description(got.added[i], changes.added[i])) << "body " << changes.added[i].id;
    EXPECT_TRUE(got.added[i].complete);
    EXPECT_EQ(got.added[i].position, changes.added[i].position);
    EXPECT_EQ(got.added[i].rotation, changes.added[i].rotation);
  }
  // A changed dimension is a different description (the comparison is not vacuous).
  BodyDescription other = changes.added[1];
  other.colliders[0].half_extents.y = 0.2500001f;
  EXPECT_FALSE(same_description(other, changes.added[1]));
}

TEST(WorldDescription, ManyBodiesSpreadOverMessagesThatEachFit) {
  DescriptionChanges changes;
  for (uint32_t i = 1; i <= 500; ++i) changes.added.push_back(body(i, i % 4, {sphere(0.1f * float(i % 9 + 1))}));
  for (uint32_t i = 1000; i < 1600; ++i) changes.removed.push_back(i);
  const auto messages = encode_description_changes(77, changes);
  size_t added_messages = 0;
  for (const auto& m : messages) {
    EXPECT_LE(m.size(), DescriptionLimits::kMaxMessageBytes);
    added_messages += flatbuffers::GetRoot<fb::Message>(m.data())->body_type() == fb::Body::BodyAdded;
  }
  // About 30 bytes a sphere body: far fewer messages than bodies, more than one.
  EXPECT_GT(added_messages, 5u);
  EXPECT_LT(added_messages, 100u);
  Applied got = apply(messages);
  ASSERT_EQ(got.last, DropReason::None);
  EXPECT_EQ(got.removed, changes.removed);
  ASSERT_EQ(got.added.size(), 500u);
  for (size_t i = 0; i < 500; ++i) EXPECT_TRUE(same_description(got.added[i], changes.added[i]));
}

TEST(WorldDescription, ABodyTooLargeForOneMessageIsCutAndSaysSo) {
  DescriptionChanges changes;
  changes.added = {body(5, 1, {mesh(400), sphere(1.0f)}, sim::MotionType::Static), body(6, 2, {sphere(0.5f)})};
  std::vector<ColliderDef> many;
  for (int i = 0; i < 64; ++i) many.push_back(box({0.1f, 0.1f, 0.1f}, {float(i), 0.0f, 0.0f}));
  changes.added.push_back(body(7, 0, many));
  const auto messages = encode_description_changes(77, changes);
  for (const auto& m : messages) EXPECT_LE(m.size(), DescriptionLimits::kMaxMessageBytes);
  Applied got = apply(messages);
  ASSERT_EQ(got.last, DropReason::None);
  ASSERT_EQ(got.added.size(), 3u);
  // The mesh keeps its shape type and no data; the sphere beside it is whole.
  EXPECT_FALSE(got.added[0].complete);
  ASSERT_EQ(got.added[0].colliders.size(), 2u);
  EXPECT_EQ(got.added[0].colliders[0].shape, ShapeType::Mesh);
  EXPECT_TRUE(got.added[0].colliders[0].points.empty());
  EXPECT_EQ(got.added[0].colliders[1].radius, 1.0f);
  EXPECT_TRUE(got.added[1].complete);
  EXPECT_TRUE(same_description(got.added[1], changes.added[1]));
  // 64 boxes do not fit in 1024 bytes: the first ones do, and the body says it is cut.
  EXPECT_FALSE(got.added[2].complete);
  EXPECT_GT(got.added[2].colliders.size(), 5u);
  EXPECT_LT(got.added[2].colliders.size(), 64u);
  EXPECT_EQ(got.added[2].colliders[3].center.x, 3.0f);
}

// A BodyAdded of one body whose collider `edit` spoils, built by hand.
std::vector<uint8_t> added_with(const std::function<void(fb::ColliderDescriptionBuilder&)>& edit,
                                uint32_t id = 5, uint8_t motion = 2) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::ColliderDescription>> cs;
  fb::ColliderDescriptionBuilder c(fbb);
  edit(c);
  cs.push_back(c.Finish());
  auto b = fb::CreateBodyDescription(fbb, id, motion, 0, fbb.CreateVector(cs));
  std::vector<flatbuffers::Offset<fb::BodyDescription>> bs = {b};
  auto m = fb::CreateBodyAdded(fbb, 77, fbb.CreateVector(bs));
  return finish_message(fbb, fb::Body::BodyAdded, m.Union());
}

TEST(WorldDescription, OutOfRangeFieldsAreRefused) {
  EXPECT_EQ(apply({added_with([](auto&) {})}).last, DropReason::None);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(apply({added_with([](auto&) {}, 0)}).last, DropReason::OutOfRange);           // id 0
  EXPECT_EQ(apply({added_with([](auto&) {}, sim::kAutoBodyId)}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({added_with([](auto&) {}, 5, 3)}).last, DropReason::OutOfRange);        // motion
  EXPECT_EQ(apply({added_with([](auto& c) { c.add_shape(6); })}).last, DropReason::OutOfRange);
  {
    // The body's own pose: finite, and a rotation that normalises.
    auto posed = [](const fb::WireVec3* p, const fb::WireQuat* q) {
      flatbuffers::FlatBufferBuilder fbb;
      std::vector<flatbuffers::Offset<fb::BodyDescription>> bs = {
          fb::CreateBodyDescription(fbb, 3, 2, 0, 0, false, p, q)};
      return finish_message(fbb, fb::Body::BodyAdded, fb::CreateBodyAdded(fbb, 77, fbb.CreateVector(bs)).Union());
    };
    const fb::WireVec3 fine(1, 2, 3), nan_pos(0, std::numeric_limits<float>::quiet_NaN(), 0);
    const fb::WireQuat turned(0, 0.7071f, 0, 0.7071f), none(0, 0, 0, 0);
    EXPECT_EQ(apply({posed(&fine, &turned)}).last, DropReason::None);
    EXPECT_EQ(apply({posed(&nan_pos, &turned)}).last, DropReason::OutOfRange);
    EXPECT_EQ(apply({posed(&fine, &none)}).last, DropReason::OutOfRange);
  }
  EXPECT_EQ(apply({added_with([&](auto& c) { c.add_radius(nan); })}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({added_with([](auto& c) { c.add_radius(-1.0f); })}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({added_with([](auto& c) { c.add_half_height(-0.1f); })}).last, DropReason::OutOfRange);
  const fb::WireVec3 bad_half(1.0f, -1.0f, 1.0f), inf_center(0.0f, std::numeric_limits<float>::infinity(), 0.0f);
  EXPECT_EQ(apply({added_with([&](auto& c) { c.add_half_extents(&bad_half); })}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({added_with([&](auto& c) { c.add_center(&inf_center); })}).last, DropReason::OutOfRange);
  const fb::WireQuat zero(0.0f, 0.0f, 0.0f, 0.0f);
  EXPECT_EQ(apply({added_with([&](auto& c) { c.add_rotation(&zero); })}).last, DropReason::OutOfRange);

  // Geometry: points in triples, indices inside the vertices, heights rows x columns.
  auto with_data = [](std::vector<float> points, std::vector<uint32_t> indices, std::vector<float> heights,
                      uint32_t rows, uint32_t columns) {
    flatbuffers::FlatBufferBuilder fbb;
    auto p = fbb.CreateVector(points);
    auto i = fbb.CreateVector(indices);
    auto h = fbb.CreateVector(heights);
    std::vector<flatbuffers::Offset<fb::ColliderDescription>> cs = {fb::CreateColliderDescription(
        fbb, 4, nullptr, nullptr, 0.0f, 0.0f, nullptr, p, i, rows, columns, 1.0f, h)};
    std::vector<flatbuffers::Offset<fb::BodyDescription>> bs = {fb::CreateBodyDescription(fbb, 8, 0, 0, fbb.CreateVector(cs))};
    return finish_message(fbb, fb::Body::BodyAdded, fb::CreateBodyAdded(fbb, 77, fbb.CreateVector(bs)).Union());
  };
  const std::vector<float> tri = {0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_EQ(apply({with_data(tri, {0, 1, 2}, {}, 0, 0)}).last, DropReason::None);
  EXPECT_EQ(apply({with_data({0, 0, 0, 1}, {}, {}, 0, 0)}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({with_data(tri, {0, 1, 3}, {}, 0, 0)}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({with_data(tri, {0, 1}, {}, 0, 0)}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({with_data({0, nan, 0}, {}, {}, 0, 0)}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({with_data({}, {}, {1, 2, 3, 4}, 2, 2)}).last, DropReason::None);
  EXPECT_EQ(apply({with_data({}, {}, {1, 2, 3}, 2, 2)}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({with_data({}, {}, {1, 2, 3, 4}, 65536, 65536)}).last, DropReason::OutOfRange);

  // Counts and order: 1 .. 64 bodies ascending, 1 .. 224 removed ids ascending, no id 0.
  DescriptionChanges twice;
  twice.added = {body(9, 0, {sphere(1.0f)}), body(9, 0, {sphere(1.0f)})};
  EXPECT_EQ(apply(encode_description_changes(77, twice)).last, DropReason::OutOfRange);
  auto removed = [](std::vector<uint32_t> ids) {
    flatbuffers::FlatBufferBuilder fbb;
    auto v = fbb.CreateVector(ids);
    return finish_message(fbb, fb::Body::BodyRemoved, fb::CreateBodyRemoved(fbb, 77, v).Union());
  };
  EXPECT_EQ(apply({removed({1, 2, 3})}).last, DropReason::None);
  EXPECT_EQ(apply({removed({})}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({removed({2, 1})}).last, DropReason::OutOfRange);
  EXPECT_EQ(apply({removed({0})}).last, DropReason::OutOfRange);
  std::vector<uint32_t> ids(DescriptionLimits::kMaxIdsPerMessage + 1);
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i + 1;
  EXPECT_EQ(apply({removed(ids)}).last, DropReason::OutOfRange);
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::BodyDescription>> bs;
  for (uint32_t i = 1; i <= 65; ++i) bs.push_back(fb::CreateBodyDescription(fbb, i, 2, 0));
  auto too_many = finish_message(fbb, fb::Body::BodyAdded, fb::CreateBodyAdded(fbb, 77, fbb.CreateVector(bs)).Union());
  EXPECT_EQ(apply({too_many}).last, DropReason::OutOfRange);
  flatbuffers::FlatBufferBuilder empty;
  EXPECT_EQ(apply({finish_message(empty, fb::Body::BodyAdded, 0)}).last, DropReason::OutOfRange);
}

TEST(WorldDescription, ASceneBodysKindGoesFromJsonThroughTheSceneBlock) {
  const char* json = R"({"bodies": [
    {"id": 1, "motion": "Static", "kind": 7, "colliders": [{"shape": "Box", "half_extents": {"x": 1, "y": 1, "z": 1}}]},
    {"id": 2, "colliders": [{"shape": "Sphere", "radius": 0.25}]}]})";
  auto scene = parse_scene_json(json, "kinds");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->bodies[0].kind, 7u);
  EXPECT_EQ(scene->bodies[1].kind, 0u);
  auto block = parse_scene_binary(scene_to_binary(*scene), "block");
  ASSERT_TRUE(block) << block.error().message;
  const WorldDescription d = WorldDescription::from_scene(*block);
  ASSERT_EQ(d.bodies().size(), 2u);
  EXPECT_EQ(d.bodies()[0].kind, 7u);
  EXPECT_EQ(d.bodies()[0].motion, sim::MotionType::Static);
  EXPECT_EQ(d.bodies()[1].colliders[0].radius, 0.25f);
  // The kind is in the block's bytes (a label of 0 is the schema's default, left out).
  sim::SceneDef unlabelled = *scene;
  unlabelled.bodies[0].kind = 0;
  EXPECT_NE(scene_to_binary(unlabelled), scene_to_binary(*scene));
}

// Each step spawns a labelled crate; from the third step on it also destroys the oldest.
class CrateRules final : public game::Rules {
 public:
  game::GameSpec spec() const override {
    game::GameSpec s;
    s.name = "crates";
    s.max_extra_bodies = 8;
    return s;
  }
  void after_step(game::Match& match) override {
    sim::BodyDef crate;
    crate.kind = 42;
    crate.position = {0.0f, 5.0f + float(match.tick()), 0.0f};
    crate.colliders.push_back(box({0.3f, 0.3f, 0.3f}, {0.0f, 0.0f, 0.0f}));
    uint32_t id = match.spawn(crate);
    if (match.tick() >= 3) match.destroy(id - 2);
  }
};

TEST(WorldDescription, AMatchsTableFollowsItsSpawnsDestroysAndKinds) {
  sim::SceneDef scene;
  sim::BodyDef ground;
  ground.id = 1;
  ground.kind = 9;
  ground.motion = sim::MotionType::Static;
  ground.colliders.push_back(box({20.0f, 0.5f, 20.0f}, {0.0f, -0.5f, 0.0f}));
  scene.bodies.push_back(ground);
  auto match = game::Match::create(scene, std::make_unique<CrateRules>());
  ASSERT_TRUE(match) << match.error().message;
  const WorldDescription from_scene = WorldDescription::from_scene(scene);
  ASSERT_EQ(from_scene.bodies().size(), 1u);
  EXPECT_EQ(from_scene.bodies()[0].kind, 9u);
  EXPECT_EQ(match->body_kind(1), 9u);

  WorldDescription known = from_scene;
  std::vector<uint32_t> added, removed;
  for (int t = 0; t < 6; ++t) {
    match->step({});
    DescriptionChanges c = update_description(known, *match);
    for (const auto& b : c.added) {
      added.push_back(b.id);
      EXPECT_EQ(b.kind, 42u);
      ASSERT_EQ(b.colliders.size(), 1u);
      EXPECT_EQ(b.colliders[0].shape, ShapeType::Box);
      EXPECT_EQ(b.colliders[0].half_extents, sim::Vec3(0.3f));
    }
    removed.insert(removed.end(), c.removed.begin(), c.removed.end());
  }
  EXPECT_EQ(added, (std::vector<uint32_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(removed, (std::vector<uint32_t>{2, 3, 4, 5}));
  // What a client holds after the scene and the catch-up is the match's world.
  const WorldDescription now = WorldDescription::from_match(*match);
  ASSERT_EQ(now.bodies().size(), 3u);  // the ground and the two newest crates
  EXPECT_EQ(now.bodies()[2].id, 7u);
  DescriptionChanges catch_up = description_difference(from_scene, known);
  WorldDescription client = from_scene;
  Applied got = apply(encode_description_changes(77, catch_up));
  ASSERT_EQ(got.last, DropReason::None);
  for (uint32_t id : got.removed) client.remove(id);
  for (auto& b : got.added) client.put(b);
  ASSERT_EQ(client.bodies().size(), now.bodies().size());
  for (size_t i = 0; i < now.bodies().size(); ++i) {
    if (now.bodies()[i].id == 1) continue;  // the scene body: described by the scene
    EXPECT_TRUE(same_description(client.bodies()[i], now.bodies()[i])) << now.bodies()[i].id;
  }
  // Kinds are state: a match restored from saved bytes knows the kinds of the bodies
  // spawned before them, and a kind is part of the hash.
  auto restored = game::Match::create(scene, std::make_unique<CrateRules>());
  ASSERT_TRUE(restored);
  ASSERT_TRUE(restored->restore_state(match->save_state()));
  EXPECT_EQ(restored->body_kind(7), 42u);
  EXPECT_EQ(restored->body_kind(1), 9u);
  EXPECT_EQ(restored->hash(), match->hash());
  const WorldDescription restored_table = WorldDescription::from_match(*restored);
  EXPECT_EQ(restored_table.bodies().size(), 3u);
  for (const BodyDescription& b : restored_table.bodies()) {
    EXPECT_EQ(b.kind, b.id == 1 ? 9u : 42u) << b.id;
  }
  auto plain = game::Match::create(scene, std::make_unique<CrateRules>());
  scene.bodies[0].kind = 0;
  auto unlabelled = game::Match::create(scene, std::make_unique<CrateRules>());
  ASSERT_TRUE(plain && unlabelled);
  EXPECT_NE(plain->hash(), unlabelled->hash());
  restored->set_body_kind(7, 3);
  EXPECT_EQ(restored->body_kind(7), 3u);
  EXPECT_NE(restored->hash(), match->hash());
}

// A world whose bodies did not change is not walked again, yet every change is seen:
// a body added or removed through the world itself, and a restore to an earlier state.
class QuietRules final : public game::Rules {
 public:
  game::GameSpec spec() const override {
    game::GameSpec s;
    s.name = "quiet";
    return s;
  }
};

TEST(WorldDescription, UnchangedBodiesAreSkippedAndEveryChangeIsSeen) {
  sim::SceneDef scene;
  sim::BodyDef ground;
  ground.id = 1;
  ground.motion = sim::MotionType::Static;
  ground.colliders.push_back(box({20.0f, 0.5f, 20.0f}, {0.0f, -0.5f, 0.0f}));
  scene.bodies.push_back(ground);
  auto match = game::Match::create(scene, std::make_unique<QuietRules>());
  ASSERT_TRUE(match) << match.error().message;
  WorldDescription known = WorldDescription::from_scene(scene);
  EXPECT_TRUE(update_description(known, *match).empty());
  const uint64_t stamp = match->world().membership_stamp();
  match->step({});
  EXPECT_EQ(match->world().membership_stamp(), stamp);  // a step adds nothing
  EXPECT_TRUE(update_description(known, *match).empty());
  const std::vector<uint8_t> one_body = match->save_state();

  sim::BodyDef crate;
  crate.id = 50;
  crate.position = {0.0f, 2.0f, 0.0f};
  crate.colliders.push_back(box({0.3f, 0.3f, 0.3f}, {0.0f, 0.0f, 0.0f}));
  ASSERT_TRUE(match->world_for_rules().add_body(crate));
  DescriptionChanges c = update_description(known, *match);
  ASSERT_EQ(c.added.size(), 1u);
  EXPECT_EQ(c.added[0].id, 50u);
  EXPECT_TRUE(update_description(known, *match).empty());

  ASSERT_TRUE(match->restore_state(one_body));
  c = update_description(known, *match);
  EXPECT_EQ(c.removed, (std::vector<uint32_t>{50}));
  EXPECT_TRUE(c.added.empty());

  // A description changed by hand is compared with the world again.
  known.remove(1);
  c = update_description(known, *match);
  ASSERT_EQ(c.added.size(), 1u);
  EXPECT_EQ(c.added[0].id, 1u);
}

// Bodies a hook adds and removes itself, labelled with set_body_kind: the label is read
// while the body lives and 0 after, and the labels of removed bodies do not pile up.
class DirectRules final : public game::Rules {
 public:
  game::GameSpec spec() const override {
    game::GameSpec s;
    s.name = "direct";
    s.max_extra_bodies = 4;
    return s;
  }
  void after_step(game::Match& match) override {
    sim::World& w = match.world_for_rules();
    if (last != 0) w.remove_body(w.find_body(last));
    sim::BodyDef def;
    def.id = match.next_body_id();
    def.colliders.push_back(sphere(0.2f));
    if (!w.add_body(def)) return;
    match.set_body_kind(def.id, 5);
    last = def.id;  // a test's rules: the one body id it needs between hooks
  }
  uint32_t last = 0;
};

TEST(WorldDescription, LabelsOfBodiesAHookRemovedAreForgotten) {
  sim::SceneDef scene;
  auto rules = std::make_unique<DirectRules>();
  DirectRules* r = rules.get();
  auto match = game::Match::create(scene, std::move(rules));
  ASSERT_TRUE(match) << match.error().message;
  uint32_t first = 0;
  for (int t = 0; t < 500; ++t) {
    match->step({});
    if (first == 0) first = r->last;
    EXPECT_EQ(match->body_kind(r->last), 5u);
  }
  EXPECT_EQ(match->body_kind(first), 0u);  // removed long ago
  EXPECT_EQ(WorldDescription::from_match(*match).bodies().size(), 1u);
  EXPECT_EQ(WorldDescription::from_match(*match).bodies()[0].kind, 5u);
}

// Seeds for fuzz_protocol_message (raw messages), written only when asked:
//   KEEL_WRITE_FUZZ_SEEDS=tests/fuzz/corpus build/bin/keel_protocol_tests --gtest_filter='WorldDescription.FuzzSeeds'
TEST(WorldDescription, FuzzSeeds) {
  DescriptionChanges changes;
  changes.removed = {4, 8, 15};
  changes.added = {body(16, 2, {sphere(0.15f)}), body(23, 1, {capsule(0.4f, 0.5f), box({1, 2, 3}, {0, 1, 0})}),
                   body(42, 0, {hull(12), mesh(6)}, sim::MotionType::Kinematic),
                   body(43, 3, {heightfield(3, 4)}, sim::MotionType::Static)};
  const auto messages = encode_description_changes(77, changes);
  ASSERT_EQ(apply(messages).last, DropReason::None);
  const char* dir = std::getenv("KEEL_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set KEEL_WRITE_FUZZ_SEEDS to write the seeds";
  const std::filesystem::path out = std::filesystem::path(dir) / "protocol_message";
  std::filesystem::create_directories(out);
  for (size_t i = 0; i < messages.size(); ++i) {
    const bool added = flatbuffers::GetRoot<fb::Message>(messages[i].data())->body_type() == fb::Body::BodyAdded;
    std::ofstream f(out / ((added ? "body_added_" : "body_removed_") + std::to_string(i)), std::ios::binary);
    f.write(reinterpret_cast<const char*>(messages[i].data()), std::streamsize(messages[i].size()));
    ASSERT_TRUE(f.good());
  }
}

}  // namespace
}  // namespace keel::protocol
