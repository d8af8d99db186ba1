// Mesh and Heightfield colliders in scene files: inline data, OBJ files next to the scene,
// errors that name the file, body, collider and field, and exact binary round trips
// (an OBJ-sourced mesh travels inline).
#include <gtest/gtest.h>
#include <keel/scene/scene.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace keel::scene {
namespace {

namespace fs = std::filesystem;

std::string error_of(const keel::Expected<sim::SceneDef>& r) { return r ? std::string() : r.error().message; }

// A scratch folder per test, removed afterwards.
struct Folder {
  fs::path dir;
  explicit Folder(const std::string& name) : dir(fs::temp_directory_path() / ("keel_mesh_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir / "meshes");
  }
  ~Folder() { fs::remove_all(dir); }
  std::string write(const std::string& rel, const std::string& text) const {
    std::ofstream(dir / rel) << text;
    return (dir / rel).string();
  }
};

const char* kMeshScene = R"({"bodies": [{"id": 4, "motion": "Static", "colliders": [{"shape": "Mesh",
  "points": [{"x": 0, "y": 0, "z": 0}, {"x": 0, "y": 0, "z": 1}, {"x": 1, "y": 0, "z": 0}],
  "indices": [0, 1, 2]}]},
  {"id": 5, "motion": "Static", "colliders": [{"shape": "Heightfield", "rows": 2, "columns": 3,
  "cell_size": 0.5, "heights": [0, 1, 2, 3, 4, 5]}]},
  {"id": 6, "bullet": true, "colliders": [{"shape": "Sphere", "radius": 0.1}]}]})";

TEST(SceneMesh, InlineMeshHeightfieldAndBulletLoadAndRoundTrip) {
  auto scene = parse_scene_json(kMeshScene, "m.json");
  ASSERT_TRUE(scene) << scene.error().message;
  const sim::ColliderDef& mesh = scene->bodies[0].colliders[0];
  EXPECT_EQ(mesh.shape, sim::ShapeType::Mesh);
  ASSERT_EQ(mesh.points.size(), 3u);
  EXPECT_EQ(mesh.points[1], sim::Vec3(0, 0, 1));
  EXPECT_EQ(mesh.indices, (std::vector<uint32_t>{0, 1, 2}));
  const sim::ColliderDef& field = scene->bodies[1].colliders[0];
  EXPECT_EQ(field.shape, sim::ShapeType::Heightfield);
  EXPECT_EQ(field.rows, 2u);
  EXPECT_EQ(field.columns, 3u);
  EXPECT_EQ(field.cell_size, 0.5f);
  EXPECT_EQ(field.heights.size(), 6u);
  EXPECT_TRUE(scene->bodies[2].bullet);
  EXPECT_FALSE(scene->bodies[0].bullet);
  auto back = parse_scene_binary(scene_to_binary(*scene), "wire");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->bodies[0].colliders[0].points, mesh.points);
  EXPECT_EQ(back->bodies[0].colliders[0].indices, mesh.indices);
  EXPECT_EQ(back->bodies[1].colliders[0].heights, field.heights);
  EXPECT_EQ(back->bodies[1].colliders[0].rows, 2u);
  EXPECT_EQ(back->bodies[1].colliders[0].cell_size, 0.5f);
  EXPECT_TRUE(back->bodies[2].bullet);
}

TEST(SceneMesh, ObjFileRelativeToTheSceneFanTriangulatesAndTravelsInline) {
  Folder f("obj");
  // A quad written with v/vt/vn corners (a fan: 0 1 2, 0 2 3) and a triangle written with
  // negative (relative) indices: -3 -2 -1 are vertices 3 4 5 (0-based) after six vertices.
  f.write("meshes/level.obj",
          "# level\nv 0 0 0\nv 0 0 1\nv 1 0 1\nv 1 0 0\nvt 0 0\nvn 0 1 0\n"
          "f 1/1/1 2/1/1 3//1 4\nv 2 0 0\nv 2 0 1\nf -3 -2 -1\n");
  const std::string path = f.write(
      "scene.json", R"({"bodies": [{"id": 9, "motion": "Static", "colliders": [{"shape": "Mesh", "mesh_file": "meshes/level.obj"}]}]})");
  auto scene = load_scene_file(path);
  ASSERT_TRUE(scene) << scene.error().message;
  const sim::ColliderDef& c = scene->bodies[0].colliders[0];
  EXPECT_EQ(c.points.size(), 6u);
  EXPECT_EQ(c.indices, (std::vector<uint32_t>{0, 1, 2, 0, 2, 3, 3, 4, 5}));
  auto back = parse_scene_binary(scene_to_binary(*scene), "wire");  // no file needed at the other end
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->bodies[0].colliders[0].indices, c.indices);
}

TEST(SceneMesh, ObjErrorsNameFileLineBodyAndCollider) {
  Folder f("objbad");
  f.write("meshes/bad.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 7\n");
  f.write("meshes/nan.obj", "v 0 0 0\nv nan 0 0\nv 0 0 1\nf 1 2 3\n");
  const std::string body = R"({"bodies": [{"id": 3, "motion": "Static", "colliders": [{"shape": "Box", "half_extents": {"x": 1, "y": 1, "z": 1}}, {"shape": "Mesh", "mesh_file": ")";
  const std::string bad = f.write("a.json", body + R"(meshes/bad.obj"}]}]})");
  const std::string msg = error_of(load_scene_file(bad));
  EXPECT_NE(msg.find("body 3: colliders[1].mesh_file: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad.obj:4: face index '7' is out of range (3 vertices so far)"), std::string::npos) << msg;
  const std::string nan = error_of(load_scene_file(f.write("b.json", body + R"(meshes/nan.obj"}]}]})")));
  EXPECT_NE(nan.find("nan.obj:2: vertex coordinate 'nan' is not a finite number"), std::string::npos) << nan;
  const std::string missing = error_of(load_scene_file(f.write("c.json", body + R"(meshes/none.obj"}]}]})")));
  EXPECT_NE(missing.find("none.obj: cannot read"), std::string::npos) << missing;
  const std::string up = error_of(load_scene_file(f.write("d.json", body + R"(../x.obj"}]}]})")));
  EXPECT_NE(up.find("may not leave the scene's folder"), std::string::npos) << up;
  // From memory (or the network) a scene may not name files at all.
  const std::string mem = error_of(parse_scene_json(body + R"(meshes/bad.obj"}]}]})", "net"));
  EXPECT_NE(mem.find("mesh_file is only read from scene files on disk"), std::string::npos) << mem;
}

TEST(SceneMesh, BadInlineGeometryIsRejectedWithTheField) {
  auto with = [](const std::string& collider, const char* motion = "Static") {
    return std::string(R"({"bodies": [{"id": 8, "motion": ")") + motion + R"(", "colliders": [)" + collider + "]}]}";
  };
  const std::string tri = R"("points": [{"x": 0, "y": 0, "z": 0}, {"x": 0, "y": 0, "z": 1}, {"x": 1, "y": 0, "z": 0}])";
  std::string m = error_of(parse_scene_json(with(R"({"shape": "Mesh", )" + tri + R"(, "indices": [0, 1, 3]})"), "x.json"));
  EXPECT_NE(m.find("x.json: body 8: colliders[0].indices[2] = 3 is out of range (3 points)"), std::string::npos) << m;
  m = error_of(parse_scene_json(with(R"({"shape": "Mesh", )" + tri + R"(, "indices": [0, 1, 1]})"), "x.json"));
  EXPECT_NE(m.find("body 8: colliders[0].triangle 0 (indices[0..2]) is degenerate"), std::string::npos) << m;
  m = error_of(parse_scene_json(with(R"({"shape": "Mesh", )" + tri + R"(, "indices": [0, 1]})"), "x.json"));
  EXPECT_NE(m.find("indices must hold three vertex indices per triangle (got 2)"), std::string::npos) << m;
  m = error_of(parse_scene_json(with(R"({"shape": "Mesh", )" + tri + R"(, "indices": [0, 1, 2]})", "Dynamic"), "x.json"));
  EXPECT_NE(m.find("body 8: colliders[0].shape Mesh is only allowed on a Static body"), std::string::npos) << m;
  m = error_of(parse_scene_json(
      with(R"({"shape": "Heightfield", "rows": 2, "columns": 2, "heights": [0, 1, 2]})"), "x.json"));
  EXPECT_NE(m.find("body 8: colliders[0].heights has 3 values, rows x columns needs 4"), std::string::npos) << m;
  m = error_of(parse_scene_json(
      with(R"({"shape": "Heightfield", "rows": 2, "columns": 2, "cell_size": 0, "heights": [0, 1, 2, 3]})"), "x.json"));
  EXPECT_NE(m.find("body 8: colliders[0].cell_size must be > 0"), std::string::npos) << m;
  m = error_of(parse_scene_json(with(R"({"shape": "Sphere", "radius": 1, "heights": [1]})"), "x.json"));
  EXPECT_NE(m.find("body 8: colliders[0].heights: only Heightfield shapes use rows, columns and heights"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace keel::scene
