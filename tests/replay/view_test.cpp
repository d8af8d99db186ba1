// keel-replay view: the data the page embeds, decoded here independently of the writer
// (the layout of docs/replay.md, "The viewer page"), against the recording itself and
// against keel-replay diff. tests/viewer/ opens the same pages in a real browser.
#include "../common/loopback.h"
#include "replay_test_util.h"
#include <keel/games/sandbox.h>

#include <keel/replay/commands.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/replayer.h>
#include <keel/replay/state_diff.h>
#include <keel/replay/view.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

namespace keel::replay::test {
namespace {

// ---- Reading a page back ------------------------------------------------------------

using keel::testing::read_text;

// The text of <script ... id="ID">...</script>.
std::string script_block(const std::string& html, const std::string& id) {
  const std::string open = "id=\"" + id + "\">";
  size_t at = html.find(open);
  if (at == std::string::npos) return {};
  at += open.size();
  return html.substr(at, html.find("</script>", at) - at);
}

std::vector<uint8_t> base64_decode(const std::string& s) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
          : c == '+' ? 62 : c == '/' ? 63 : -1;
    if (v < 0) continue;
    acc = acc << 6 | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t(acc >> bits));
    }
  }
  return out;
}

struct Reader {
  const std::vector<uint8_t>& b;
  size_t at = 0;
  uint64_t u(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(b.at(at++)) << (8 * i);
    return v;
  }
  float f32() {
    uint32_t v = uint32_t(u(4));
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }
  float bf16() {
    uint32_t v = uint32_t(u(2)) << 16;
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }
  float q() { return float(int16_t(uint16_t(u(2)))) / 32767.0f; }
  // Three in order (function arguments are evaluated in no fixed order).
  sim::Vec3 vec() {
    float x = f32(), y = f32(), z = f32();
    return sim::Vec3(x, y, z);
  }
  sim::Vec3 bf16_vec() {
    float x = bf16(), y = bf16(), z = bf16();
    return sim::Vec3(x, y, z);
  }
};

struct DrawnPose {
  sim::Vec3 position, linear_velocity, angular_velocity;
  float rotation[4];
  bool sleeping;
};

struct PageData {
  nlohmann::json meta;
  std::vector<uint64_t> sample_ticks;
  std::vector<uint64_t> hashes;
  std::vector<std::map<uint32_t, DrawnPose>> poses;           // per sample: body id -> pose
  std::vector<std::map<uint32_t, sim::Vec3>> other_positions;  // per sample: body id -> position
};

PageData read_page(const std::string& path) {
  const std::string html = read_text(path);
  PageData p;
  p.meta = nlohmann::json::parse(script_block(html, "keel-meta"));
  std::vector<uint32_t> ids;
  for (const auto& b : p.meta["bodies"]) ids.push_back(b["id"].get<uint32_t>());
  const uint64_t first = p.meta["first_tick"].get<uint64_t>();
  std::vector<uint8_t> ticks = base64_decode(script_block(html, "keel-ticks"));
  for (Reader r{ticks}; r.at < ticks.size();) p.sample_ticks.push_back(first + r.u(4));
  std::vector<uint8_t> hashes = base64_decode(script_block(html, "keel-hashes"));
  for (Reader r{hashes}; r.at < hashes.size();) p.hashes.push_back(r.u(8));
  std::vector<uint8_t> poses = base64_decode(script_block(html, "keel-poses"));
  Reader r{poses};
  std::map<uint32_t, DrawnPose> current;
  for (size_t s = 0; s < p.sample_ticks.size(); ++s) {
    for (uint64_t n = r.u(4); n > 0; --n) {
      uint32_t id = ids.at(size_t(r.u(2)));
      uint64_t flags = r.u(1);
      if (flags & 2) {
        current.erase(id);
        continue;
      }
      DrawnPose d;
      d.sleeping = (flags & 1) != 0;
      d.position = r.vec();
      for (float& c : d.rotation) c = r.q();
      d.linear_velocity = r.bf16_vec();
      d.angular_velocity = r.bf16_vec();
      current[id] = d;
    }
    p.poses.push_back(current);
  }
  EXPECT_EQ(r.at, poses.size());
  std::vector<uint8_t> other = base64_decode(script_block(html, "keel-against"));
  Reader o{other};
  while (o.at < other.size()) {
    std::map<uint32_t, sim::Vec3> m;
    for (uint64_t n = o.u(4); n > 0; --n) {
      uint32_t id = ids.at(size_t(o.u(2)));
      const bool absent = o.u(1) != 0;
      sim::Vec3 pos = o.vec();
      if (!absent) m[id] = pos;
      o.at += 8 + 24;  // rotation, velocities
    }
    p.other_positions.push_back(m);
  }
  return p;
}

// ---- Helpers ------------------------------------------------------------------------

int run_view(const std::string& rec, const std::string& against, const std::string& out, uint64_t every,
             std::string* text = nullptr) {
  std::ostringstream o, e;
  cli::ViewArgs args;
  args.rec = rec;
  args.against = against;
  args.out = out;
  args.every = every;
  int code = cli::view(args, cli::Io{o, e});
  if (text) *text = o.str() + e.str();
  return code;
}

// keel-replay diff's first differing tick and the bodies of its rows, in order.
std::pair<uint64_t, std::vector<uint32_t>> run_diff(const std::string& a, const std::string& b) {
  std::ostringstream o, e;
  EXPECT_EQ(cli::diff(cli::DiffArgs{a, b, 1, 1000}, cli::Io{o, e}), 1) << o.str() << e.str();
  std::smatch m;
  const std::string out = o.str();
  EXPECT_TRUE(std::regex_search(out, m, std::regex("first differing tick: (\\d+)"))) << out;
  uint64_t tick = std::stoull(m[1]);
  std::vector<uint32_t> bodies;
  std::istringstream lines(out.substr(out.find("fields that differ")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (!std::regex_search(line, m, std::regex("^  (\\d+) +[a-z_]+\\.[xyzw] "))) {
      if (line.rfind("  body", 0) == 0) continue;
      break;
    }
    uint32_t id = uint32_t(std::stoul(m[1]));
    if (std::find(bodies.begin(), bodies.end(), id) == bodies.end()) bodies.push_back(id);
  }
  return {tick, bodies};
}

// Records the scripted demo session twice; in B, body `body`'s velocity is nudged right
// after tick `at` is stepped (at a checkpoint tick, so B's own checkpoint holds it and
// the divergence grows from there as the other bodies feel it).
void record_diverging(const std::string& a, const std::string& b, uint64_t at, uint64_t ticks, uint32_t interval,
                      uint32_t body, sim::Vec3 nudge) {
  record(a, load_scene("demo.json"), ticks, true, interval);
  record(b, load_scene("demo.json"), ticks, true, interval, [&](uint64_t t, game::Match& match) {
    if (t != at) return;
    sim::World& w = match.world_for_rules();
    sim::BodyId id = w.find_body(body);
    w.set_linear_velocity(id, w.body_state(id).linear_velocity + nudge);
  });
}

void expect_pose(const DrawnPose& d, const sim::BodyState& s, uint64_t tick) {
  SCOPED_TRACE("body " + std::to_string(s.id) + " tick " + std::to_string(tick));
  EXPECT_EQ(d.position, s.position);  // bit for bit
  const float q[4] = {s.rotation.x, s.rotation.y, s.rotation.z, s.rotation.w};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(d.rotation[k], q[k], 0.5f / 32767.0f + 1e-7f);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(d.linear_velocity[k], s.linear_velocity[k], std::abs(s.linear_velocity[k]) / 256.0f + 1e-30f);
    EXPECT_NEAR(d.angular_velocity[k], s.angular_velocity[k], std::abs(s.angular_velocity[k]) / 256.0f + 1e-30f);
  }
  EXPECT_EQ(d.sleeping, s.sleeping);
}

// ---- Tests --------------------------------------------------------------------------

TEST(View, PageHoldsEveryTickHashAndThePosesOfTheRecording) {
  TempDir dir;
  const std::string rec_path = dir.path("m.krec"), page = dir.path("m.html");
  record(rec_path, load_scene("demo.json"), 150, true, 30);
  for (uint64_t every : {1u, 7u}) {
    SCOPED_TRACE("every " + std::to_string(every));
    ASSERT_EQ(run_view(rec_path, "", page, every), 0);
    PageData p = read_page(page);
    EXPECT_EQ(p.meta["format"], "keel-view-1");
    EXPECT_EQ(p.meta["first_tick"], 0u);
    EXPECT_EQ(p.meta["last_tick"], 150u);
    EXPECT_EQ(p.meta["every"], every);
    EXPECT_TRUE(p.meta["not_reproduced"].empty());
    // Every tick's hash, exactly as recorded.
    auto rec = Recording::open(rec_path);
    ASSERT_TRUE(rec);
    std::vector<uint64_t> recorded;
    TickCursor c = rec->ticks_from_start();
    while (auto t = c.next()) recorded.push_back(t->hash);
    EXPECT_EQ(p.hashes, recorded);
    // Drawn ticks: every K-th and the last; each one's bodies as a re-run has them.
    std::vector<uint64_t> expected_ticks;
    for (uint64_t t = 0; t <= 150; t += every) expected_ticks.push_back(t);
    if (expected_ticks.back() != 150) expected_ticks.push_back(150);
    ASSERT_EQ(p.sample_ticks, expected_ticks);
    for (size_t s = 0; s < p.sample_ticks.size(); s += (every == 1 ? 17 : 1)) {
      auto replay = Replay::start(*rec, p.sample_ticks[s]);
      ASSERT_TRUE(replay);
      const sim::World& w = replay->match().world();
      ASSERT_EQ(p.poses[s].size(), w.body_count()) << "tick " << p.sample_ticks[s];
      for (sim::BodyId id : w.bodies()) {
        sim::BodyState st = w.body_state(id);
        auto it = p.poses[s].find(st.id);
        ASSERT_NE(it, p.poses[s].end()) << "body " << st.id << " at tick " << p.sample_ticks[s];
        expect_pose(it->second, st, p.sample_ticks[s]);
      }
    }
  }
  // Shapes: the scene's, and the rules' capsule for a player's character.
  PageData p = read_page(page);
  std::map<uint32_t, std::string> first_shape;
  uint32_t characters = 0;
  for (const auto& b : p.meta["bodies"]) {
    first_shape[b["id"]] = p.meta["shapes"][b["shapes"][0].get<size_t>()]["type"];
    if (b["role"] == "character") {
      EXPECT_EQ(first_shape[b["id"]], "capsule");
      EXPECT_EQ(b["kind"], games::SandboxRules::kKindCharacter);  // the sandbox's label, from the match
      ++characters;
    }
    if (b["role"] == "game" && first_shape[b["id"]] == "sphere") {
      EXPECT_EQ(b["kind"], games::SandboxRules::kKindBall);
    }
    if (b["role"] == "ball") {
      EXPECT_EQ(first_shape[b["id"]], "sphere");
    }
  }
  EXPECT_GT(characters, 0u);
  EXPECT_EQ(first_shape[1], "box");
  EXPECT_EQ(first_shape[8], "sphere");
  EXPECT_EQ(first_shape[11], "capsule");
}

// Hulls, meshes and heightfields reach the page with the geometry the viewer draws them
// from: a tetrahedron hull as its 4 triangular faces, a two-triangle mesh as given, a
// 3 x 3 heightfield as its grid.
// A recording that starts mid-match begins from a checkpoint: the bodies spawned before
// it (the players' characters, the balls they threw) keep the kinds the game gave them.
TEST(View, ARecordingStartedMidMatchKnowsTheKindsOfEarlierBodies) {
  TempDir dir;
  const std::string rec_path = dir.path("late.krec");
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match) << match.error().message;
  for (uint64_t t = 1; t <= 60; ++t) match->step(scripted_inputs(t));
  std::map<uint32_t, uint32_t> kinds;  // every labelled body at the recording's start
  for (sim::BodyId id : match->world().bodies()) {
    const uint32_t user = match->world().body_state(id).id;
    if (match->body_kind(user) != 0) kinds[user] = match->body_kind(user);
  }
  ASSERT_GE(kinds.size(), 3u);  // three characters at least
  auto writer = RecordingWriter::create(rec_path, *match, WriterOptions{});
  ASSERT_TRUE(writer) << writer.error().message;
  for (uint64_t t = 61; t <= 80; ++t) ASSERT_TRUE(step_and_record(*writer, *match, scripted_inputs(t)));
  ASSERT_TRUE(writer->finish());

  view::CollectOptions co;
  auto data = view::collect(rec_path, "", co);
  ASSERT_TRUE(data) << data.error().message;
  EXPECT_EQ(data->first_tick, 60u);
  uint32_t characters = 0;
  for (const auto& [id, kind] : kinds) {
    auto it = std::find_if(data->bodies.begin(), data->bodies.end(), [&](const view::Body& b) { return b.id == id; });
    ASSERT_NE(it, data->bodies.end()) << id;
    EXPECT_EQ(it->kind, kind) << id;
    characters += kind == games::SandboxRules::kKindCharacter;
  }
  EXPECT_GE(characters, 3u);
}

TEST(View, HullsMeshesAndHeightfieldsCarryTheirGeometry) {
  sim::SceneDef scene;
  scene.name = "geometry";
  sim::BodyDef mesh;
  mesh.id = 1;
  mesh.motion = sim::MotionType::Static;
  sim::ColliderDef m;
  m.shape = sim::ShapeType::Mesh;
  m.points = {{-5, 0, -5}, {-5, 0, 5}, {5, 0, -5}, {5, 0, 5}};
  m.indices = {0, 1, 2, 2, 1, 3};
  mesh.colliders.push_back(m);
  sim::BodyDef field;
  field.id = 2;
  field.motion = sim::MotionType::Static;
  field.position = sim::Vec3(20, 0, 0);
  sim::ColliderDef f;
  f.shape = sim::ShapeType::Heightfield;
  f.rows = f.columns = 3;
  f.cell_size = 2.0f;
  f.heights = {0, 0.5f, 0, 0.5f, 1, 0.5f, 0, 0.5f, 0};
  field.colliders.push_back(f);
  sim::BodyDef hull;
  hull.id = 3;
  hull.position = sim::Vec3(0, 2, 0);
  sim::ColliderDef h;
  h.shape = sim::ShapeType::Hull;
  h.points = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1f, 0.1f, 0.1f}};  // one point inside
  hull.colliders.push_back(h);
  scene.bodies = {mesh, field, hull};
  TempDir dir;
  const std::string rec_path = dir.path("g.krec"), page = dir.path("g.html");
  record(rec_path, scene, 20, false, 10);
  ASSERT_EQ(run_view(rec_path, "", page, 1), 0);
  PageData p = read_page(page);
  std::map<uint32_t, nlohmann::json> shape_of;
  for (const auto& b : p.meta["bodies"]) shape_of[b["id"]] = p.meta["shapes"][b["shapes"][0].get<size_t>()];
  EXPECT_EQ(shape_of[1]["type"], "mesh");
  EXPECT_EQ(shape_of[1]["vertices"], nlohmann::json({-5, 0, -5, -5, 0, 5, 5, 0, -5, 5, 0, 5}));
  EXPECT_EQ(shape_of[1]["indices"], nlohmann::json({0, 1, 2, 2, 1, 3}));
  EXPECT_EQ(shape_of[2]["type"], "heightfield");
  EXPECT_EQ(shape_of[2]["rows"], 3);
  EXPECT_EQ(shape_of[2]["columns"], 3);
  EXPECT_EQ(shape_of[2]["cell_size"], 2.0);
  EXPECT_EQ(shape_of[2]["heights"], nlohmann::json({0, 0.5, 0, 0.5, 1, 0.5, 0, 0.5, 0}));
  EXPECT_EQ(shape_of[3]["type"], "hull");
  EXPECT_EQ(shape_of[3]["vertices"].size(), 12u);  // the inside point is not a vertex
  ASSERT_EQ(shape_of[3]["indices"].size(), 12u);   // four triangles
  // Each face's triangle, from the corners the page gets, faces away from the inside.
  const auto& v = shape_of[3]["vertices"];
  const auto& idx = shape_of[3]["indices"];
  for (size_t t = 0; t < 12; t += 3) {
    sim::Vec3 c[3];
    for (int k = 0; k < 3; ++k) {
      const size_t i = idx[t + k].get<size_t>() * 3;
      c[k] = sim::Vec3(v[i].get<float>(), v[i + 1].get<float>(), v[i + 2].get<float>());
    }
    const sim::Vec3 n = glm::cross(c[1] - c[0], c[2] - c[0]);
    EXPECT_GT(glm::dot(n, (c[0] + c[1] + c[2]) / 3.0f - sim::Vec3(0.25f)), 0.0f) << "triangle " << t / 3;
  }
}

TEST(View, AgainstARecordingMarksWhatDiffFinds) {
  TempDir dir;
  const std::string a = dir.path("a.krec"), b = dir.path("b.krec"), page = dir.path("ab.html");
  record_diverging(a, b, 60, 150, 30, 9, sim::Vec3(0.0f, 0.5f, 0.0f));
  auto [tick, bodies] = run_diff(a, b);
  EXPECT_EQ(tick, 60u);
  EXPECT_EQ(bodies, std::vector<uint32_t>{9});
  std::string text;
  ASSERT_EQ(run_view(a, b, page, 1, &text), 0) << text;
  EXPECT_NE(text.find("first differing tick: 60"), std::string::npos) << text;
  PageData p = read_page(page);
  const auto& g = p.meta["against"];
  EXPECT_EQ(g["kind"], "recording");
  EXPECT_EQ(g["first_tick"], tick);
  EXPECT_EQ(g["diff_bodies"].get<std::vector<uint32_t>>(), bodies);
  EXPECT_FALSE(g["reruns_agree"].get<bool>());
  // Before tick 60 nothing differs; at 60 only body 9, where B's re-run has it; later
  // the difference spreads, and every drawn difference is a real one.
  auto rb = Recording::open(b);
  ASSERT_TRUE(rb);
  ASSERT_EQ(p.other_positions.size(), p.sample_ticks.size());
  for (size_t s = 0; s < p.sample_ticks.size(); ++s) {
    const uint64_t t = p.sample_ticks[s];
    if (t < 60) {
      EXPECT_TRUE(p.other_positions[s].empty()) << t;
      continue;
    }
    if (t == 60) {
      ASSERT_EQ(p.other_positions[s].size(), 1u);
      EXPECT_EQ(p.other_positions[s].begin()->first, 9u);
    }
    if (t % 30 != 0) continue;
    auto replay = Replay::start(*rb, t);
    ASSERT_TRUE(replay);
    // Each body of B's state is either listed with B's position, or drawn where A has it.
    const sim::World& wb = replay->match().world();
    for (sim::BodyId id : wb.bodies()) {
      sim::BodyState st = wb.body_state(id);
      auto listed = p.other_positions[s].find(st.id);
      if (listed != p.other_positions[s].end()) EXPECT_EQ(listed->second, st.position) << st.id << " at " << t;
      else EXPECT_EQ(p.poses[s].at(st.id).position, st.position) << st.id << " at " << t;
    }
  }
  EXPECT_TRUE(p.other_positions.back().count(9)) << "body 9 still differs at tick 150";
}

TEST(View, AgainstADesyncDumpMarksWhatDiffFinds) {
  TempDir dir;
  const std::string a = dir.path("a.krec"), dump = dir.path("c.kdsy"), page = dir.path("ad.html");
  record(a, load_scene("demo.json"), 80, true, 30);
  auto match = game::Match::create(load_scene("demo.json"), std::make_unique<games::SandboxRules>());
  ASSERT_TRUE(match);
  for (uint64_t t = 1; t <= 45; ++t) match->step(scripted_inputs(t));
  sim::World& w = match->world_for_rules();
  for (uint32_t id : {9u, 4u}) {  // two bodies, 2 mm and 5 mm off along x
    sim::BodyId body = w.find_body(id);
    sim::BodyState s = w.body_state(body);
    w.set_transform(body, sim::Transform{s.position + sim::Vec3(id == 9 ? 0.002f : 0.005f, 0.0f, 0.0f), s.rotation});
  }
  ASSERT_TRUE(write_desync_dump(dump, *match, 0, "test client"));
  auto [tick, bodies] = run_diff(a, dump);
  EXPECT_EQ(tick, 45u);
  EXPECT_EQ(bodies, (std::vector<uint32_t>{4, 9}));
  ASSERT_EQ(run_view(a, dump, page, 10), 0);  // 45 is drawn although it is no multiple of 10
  PageData p = read_page(page);
  EXPECT_EQ(p.meta["against"]["kind"], "desync dump");
  EXPECT_EQ(p.meta["against"]["first_tick"], 45u);
  EXPECT_EQ(p.meta["against"]["diff_bodies"].get<std::vector<uint32_t>>(), bodies);
  auto at = std::find(p.sample_ticks.begin(), p.sample_ticks.end(), 45u);
  ASSERT_NE(at, p.sample_ticks.end());
  const auto& other = p.other_positions[size_t(at - p.sample_ticks.begin())];
  // 4 and 9 moved; moving them may also wake bodies, whose sleep state then differs too.
  ASSERT_TRUE(other.count(4) && other.count(9));
  EXPECT_NEAR(other.at(4).x - p.poses[size_t(at - p.sample_ticks.begin())].at(4).position.x, 0.005f, 1e-5f);
}

TEST(View, SizeBudgetPicksASparserSampling) {
  TempDir dir;
  const std::string rec = dir.path("m.krec"), page = dir.path("m.html");
  record(rec, load_scene("demo.json"), 600, true, 120);
  std::ostringstream o, e;
  cli::ViewArgs args;
  args.rec = rec;
  args.out = page;
  args.max_mb = 0.75;  // the page's scripts alone are ~0.6 MB
  ASSERT_EQ(cli::view(args, cli::Io{o, e}), 0) << e.str();
  PageData p = read_page(page);
  EXPECT_GT(p.meta["every"].get<uint64_t>(), 1u);
  EXPECT_LE(read_bytes(page).size(), 750'000u) << o.str();
  EXPECT_EQ(p.hashes.size(), 601u);  // hashes stay complete
}

TEST(View, BadInputsAreRejectedWithAMessage) {
  TempDir dir;
  const std::string good = dir.path("g.krec"), page = dir.path("p.html");
  record(good, load_scene("pyramid.json"), 20, false);
  write_bytes(dir.path("junk.krec"), std::vector<uint8_t>(300, 0x5a));
  std::vector<uint8_t> cut = read_bytes(good);
  cut.resize(40);
  write_bytes(dir.path("cut.krec"), cut);
  std::vector<uint8_t> dump(8 + 20, 0);
  std::memcpy(dump.data(), kDesyncDumpMagic.data(), 8);
  write_bytes(dir.path("junk.kdsy"), dump);
  for (auto [rec, against] : std::vector<std::pair<std::string, std::string>>{
           {dir.path("missing.krec"), ""}, {dir.path("junk.krec"), ""}, {dir.path("cut.krec"), ""},
           {good, dir.path("junk.krec")}, {good, dir.path("junk.kdsy")}, {good, dir.path("missing.krec")}}) {
    std::string text;
    EXPECT_EQ(run_view(rec, against, page, 0, &text), 2) << rec << " " << against;
    EXPECT_NE(text.find("error: "), std::string::npos) << text;
  }
  std::string text;
  EXPECT_EQ(run_view(good, "", dir.path("no/such/dir/p.html"), 0, &text), 2);
  EXPECT_NE(text.find("cannot write"), std::string::npos) << text;
}

// The recordings behind docs/replay.md's viewer screenshot and tests/viewer/:
// KEEL_VIEW_EXAMPLE_DIR=DIR build/bin/keel_replay_tests --gtest_filter='ViewExample.*'
// writes DIR/server.krec and DIR/client.krec (crate 4 nudged 0.3 m/s sideways after tick
// 240, a checkpoint tick, so the client's recording holds the nudge) and DIR/client-240.kdsy.
TEST(ViewExample, DivergingRecordings) {
  const char* dir = std::getenv("KEEL_VIEW_EXAMPLE_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set KEEL_VIEW_EXAMPLE_DIR=DIR to write the example";
  const std::string base = std::string(dir) + "/";
  record_diverging(base + "server.krec", base + "client.krec", 240, 600, 60, 4, sim::Vec3(0.3f, 0.0f, 0.0f));
  auto rec = Recording::open(base + "client.krec");
  ASSERT_TRUE(rec);
  auto replay = Replay::start(*rec, 240);
  ASSERT_TRUE(replay);
  ASSERT_TRUE(write_desync_dump(base + "client-240.kdsy", replay->match(), 0, "client 3, example"));
}

}  // namespace
}  // namespace keel::replay::test
