// keel-replay view, part 1: re-running a recording (and the run it is compared with)
// into per-tick poses, contact points and hashes for the page to draw.
#include <keel/replay/desync_dump.h>
#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>
#include <keel/replay/state_diff.h>
#include <keel/replay/view.h>
#include <keel/sim/hull.h>

#include "commands/common.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>

namespace keel::replay::view {

namespace {

// A hull's polygon faces as triangle fans, for the page to draw.
void hull_triangles(const std::vector<sim::Vec3>& points, Shape& s) {
  s.type = "hull";
  auto hull = sim::build_hull(points);
  if (!hull) return;  // the world accepted these points, so this does not happen
  const sim::ConvexHull& h = **hull;
  for (const sim::Vec3& v : h.vertices) s.vertices.insert(s.vertices.end(), {v.x, v.y, v.z});
  for (const sim::HullFace& f : h.faces) {
    for (int k = 1; k + 1 < f.count; ++k) {
      s.indices.insert(s.indices.end(), {h.loops[f.first], h.loops[f.first + k], h.loops[f.first + k + 1]});
    }
  }
  s.bounds = glm::max(glm::abs(h.bounds_lower), glm::abs(h.bounds_upper));
}

Shape make_shape(const sim::ColliderDef& c) {
  Shape s;
  s.center = c.center;
  s.rotation = c.rotation;
  s.trigger = c.is_trigger;
  switch (c.shape) {
    case sim::ShapeType::Sphere:
      s.type = "sphere";
      s.radius = c.radius;
      s.bounds = sim::Vec3(c.radius);
      break;
    case sim::ShapeType::Box:
      s.type = "box";
      s.half_extents = c.half_extents;
      s.bounds = c.half_extents;
      break;
    case sim::ShapeType::Capsule:
      s.type = "capsule";
      s.radius = c.radius;
      s.half_height = c.half_height;
      s.bounds = sim::Vec3(c.radius, c.half_height + c.radius, c.radius);
      break;
    case sim::ShapeType::Hull:
      hull_triangles(c.points, s);
      break;
    case sim::ShapeType::Mesh:
    case sim::ShapeType::Heightfield: {
      // Drawn from their own triangles (a heightfield from its grid, built in the page).
      s.type = c.shape == sim::ShapeType::Mesh ? "mesh" : "heightfield";
      sim::Vec3 lo(0.0f), hi(0.0f);
      if (c.shape == sim::ShapeType::Mesh && !c.points.empty()) {
        lo = hi = c.points[0];
        for (const sim::Vec3& p : c.points) {
          lo = glm::min(lo, p);
          hi = glm::max(hi, p);
          s.vertices.insert(s.vertices.end(), {p.x, p.y, p.z});
        }
        s.indices = c.indices;
      } else if (c.shape == sim::ShapeType::Heightfield && !c.heights.empty()) {
        float h0 = c.heights[0], h1 = c.heights[0];
        for (float h : c.heights) {
          h0 = std::min(h0, h);
          h1 = std::max(h1, h);
        }
        lo = sim::Vec3(0.0f, h0, 0.0f);
        hi = sim::Vec3(float(c.columns > 0 ? c.columns - 1 : 0) * c.cell_size, h1,
                       float(c.rows > 0 ? c.rows - 1 : 0) * c.cell_size);
        s.rows = c.rows;
        s.columns = c.columns;
        s.cell_size = c.cell_size;
        s.heights = c.heights;
      }
      s.half_extents = (hi - lo) * 0.5f;
      s.bounds = glm::max(glm::abs(lo), glm::abs(hi));
      break;
    }
  }
  return s;
}

// What a body looks like: the colliders the world gave it (scene bodies and bodies game
// rules spawned alike), and what it is in the match (a scene body, a player's character, a
// body the game made) for the page's body panel.
Body describe(const game::Match& m, uint32_t id, sim::MotionType motion) {
  Body b{id, motion, "unknown", 0, {}};
  b.kind = m.body_kind(id);  // state: known from a checkpoint or a desync dump too
  for (const sim::ColliderDef& c : m.world().colliders(m.world().find_body(id))) {
    if (c.enabled) b.shapes.push_back(make_shape(c));
  }
  const auto& scene = m.scene().bodies;
  const bool in_scene = std::any_of(scene.begin(), scene.end(), [&](const sim::BodyDef& d) { return d.id == id; });
  b.role = in_scene ? "scene" : "game";
  for (const game::PlayerSlot& p : m.players()) {
    if (p.character == id) b.role = "character";
  }
  if (b.shapes.empty()) {
    Shape unknown;  // a body with every collider disabled: drawn as a small marker box
    unknown.type = "unknown";
    unknown.bounds = sim::Vec3(0.5f);
    b.shapes.push_back(unknown);
  }
  return b;
}

// Assigns each body id one index into Data::bodies, described when first seen.
class BodyTable {
 public:
  explicit BodyTable(std::vector<Body>& bodies) : bodies_(bodies) {}
  uint32_t index(const game::Match& m, const sim::BodyState& s) {
    auto [it, added] = index_.try_emplace(s.id, uint32_t(bodies_.size()));
    if (added) bodies_.push_back(describe(m, s.id, s.motion));
    return it->second;
  }

 private:
  std::vector<Body>& bodies_;
  std::map<uint32_t, uint32_t> index_;
};

std::vector<sim::BodyState> states_by_id(const game::Match& m) {
  std::vector<sim::BodyState> out;
  for (sim::BodyId id : m.world().bodies()) out.push_back(m.world().body_state(id));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

Pose pose_of(uint32_t index, const sim::BodyState& s) {
  return Pose{index, s.position, s.rotation, s.linear_velocity, s.angular_velocity, s.sleeping};
}

Frame capture(const game::Match& m, BodyTable& table) {
  Frame f{m.tick(), m.hash(), {}, {}};
  for (const sim::BodyState& s : states_by_id(m)) f.poses.push_back(pose_of(table.index(m, s), s));
  for (const sim::ContactView& c : m.world().contacts()) {
    if (c.sensor) continue;
    for (int i = 0; i < c.count && i < 4; ++i) f.contacts.push_back(ContactPoint{c.points[i].point, c.normal});
  }
  return f;
}

// Bit for bit (a NaN never equals itself, so it always counts as a difference).
bool same_state(const sim::BodyState& a, const sim::BodyState& b) {
  return a.position == b.position && a.rotation == b.rotation && a.linear_velocity == b.linear_velocity &&
         a.angular_velocity == b.angular_velocity && a.sleeping == b.sleeping && a.motion == b.motion;
}

// The other run's poses of the bodies whose state differs from this run's at one tick.
std::vector<Pose> differing_poses(const game::Match& a, const game::Match& b, BodyTable& table) {
  std::map<uint32_t, sim::BodyState> in_a;
  for (const sim::BodyState& s : states_by_id(a)) in_a.emplace(s.id, s);
  std::vector<Pose> out;
  for (const sim::BodyState& s : states_by_id(b)) {
    auto it = in_a.find(s.id);
    if (it != in_a.end()) {
      const bool same = same_state(it->second, s);
      in_a.erase(it);
      if (same) continue;
    }
    out.push_back(pose_of(table.index(b, s), s));
  }
  for (const auto& [id, s] : in_a) {  // in this run only
    Pose p = pose_of(table.index(a, s), s);
    p.absent = true;
    out.push_back(p);
  }
  return out;
}

bool is_desync_dump(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  char magic[8] = {};
  probe.read(magic, sizeof magic);
  return looks_like_desync_dump({reinterpret_cast<const uint8_t*>(magic), size_t(probe.gcount())});
}

// The other run: where it first differs and how it is reached from there.
struct Other {
  std::optional<Recording> rec;
  std::optional<game::Match> dump_match;
  std::optional<Replay> replay;  // the other recording, from first_tick on
};

keel::Status open_other(const std::string& path, const Recording& a, Data& d, Other& o,
                       const game::RulesRegistry* rules) {
  Against g;
  g.path = path;
  if (is_desync_dump(path)) {
    auto dump = read_desync_dump(path);
    if (!dump) return dump.error();
    g.kind = "desync dump";
    g.note = dump->note;
    auto held = cli::detail::recorded_hash_at(a, dump->tick);
    if (!held) return keel::Error{path + ": desync dump at tick " + std::to_string(dump->tick) + ", which " + d.source + " does not hold"};
    if (*held != dump->hash) {
      g.first_tick = dump->tick;
      g.hash_a = *held;
      g.hash_b = dump->hash;
      auto m = make_match(a.header(), d.source, rules);
      if (!m) return m.error();
      if (keel::Status st = m->restore_state(dump->state); !st) return keel::Error{path + ": " + st.error().message};
      o.dump_match.emplace(std::move(*m));
    }
  } else {
    auto b = Recording::open(path);
    if (!b) return b.error();
    g.kind = "recording";
    g.note = b->header().build_id + ", " + b->header().compiler + ", " + b->header().target;
    cli::detail::FirstDifference fd = cli::detail::first_difference(a, *b);
    g.first_tick = fd.tick;
    g.hash_a = fd.hash_a;
    g.hash_b = fd.hash_b;
    g.inputs_at = fd.inputs_at;
    g.common_last = fd.common_last;
    o.rec.emplace(std::move(*b));
  }
  d.against = std::move(g);
  return {};
}

// At the first differing tick: the other side's state, reached as keel-replay diff
// reaches it, and the bodies diff would name.
keel::Status start_other(const game::Match& a, Data& d, Other& o, const ReplayOptions& ro) {
  Against& g = *d.against;
  if (o.rec) {
    auto r = Replay::start(*o.rec, *g.first_tick, ro);
    if (!r) return r.error();
    o.replay.emplace(std::move(*r));
  }
  const game::Match& b = o.replay ? o.replay->match() : *o.dump_match;
  StateDiff diff = diff_states(a, b);
  g.diff_bodies = diff.bodies();
  g.reruns_agree = diff.identical();
  return {};
}

}  // namespace

keel::Expected<Data> collect(const std::string& path, const std::string& against, const CollectOptions& options) {
  auto rec = Recording::open(path);
  if (!rec) return rec.error();
  const RecordingIndex& idx = rec->index();
  if (idx.last_tick - idx.first_tick >= std::numeric_limits<uint32_t>::max()) {
    return keel::Error{path + ": " + std::to_string(idx.last_tick - idx.first_tick) + " ticks is more than one page can show"};
  }
  Data d;
  d.source = path;
  d.header = rec->header();
  d.first_tick = idx.first_tick;
  d.last_tick = idx.last_tick;
  for (const std::string& p : idx.problems) d.warnings.push_back(p);
  Other other;
  if (!against.empty()) {
    if (keel::Status st = open_other(against, *rec, d, other, options.rules); !st) return st.error();
  }
  const ReplayOptions ro{options.threads, options.rules};
  auto replay = Replay::start(*rec, d.first_tick, ro);
  if (!replay) return replay.error();
  for (const std::string& w : replay->warnings()) d.warnings.push_back(w);
  d.scene_name = replay->match().scene().name;
  BodyTable table(d.bodies);
  for (;;) {
    const game::Match& m = replay->match();
    d.frames.push_back(capture(m, table));
    d.recorded_hashes.push_back(replay->recorded_hash());
    for (const game::GameEvent& e : replay->recorded_events()) {
      if (d.events.size() == kMaxEventMarks || e.type >= rec->spec().events.size()) break;
      const game::EventType& type = rec->spec().events[e.type];
      d.events.push_back(EventMark{m.tick(), type.name, type.payload.format(e.payload)});
    }
    if (d.against && d.against->first_tick && m.tick() >= *d.against->first_tick) {
      if (m.tick() == *d.against->first_tick) {
        if (keel::Status st = start_other(m, d, other, ro); !st) return st.error();
      }
      const game::Match* b = other.replay ? &other.replay->match() : other.dump_match ? &*other.dump_match : nullptr;
      if (b != nullptr && b->tick() == m.tick()) d.against->poses.push_back(differing_poses(m, *b, table));
      if (other.replay && !other.replay->step()) other.replay.reset();
      other.dump_match.reset();
    }
    if (options.progress) options.progress(m.tick() - d.first_tick, d.last_tick - d.first_tick);
    if (m.tick() >= d.last_tick || !replay->step()) break;
  }
  if (replay->tick() < d.last_tick) {
    d.last_tick = replay->tick();
    for (const std::string& p : replay->cursor_problems()) d.warnings.push_back(p);
  }
  return d;
}

}  // namespace keel::replay::view
