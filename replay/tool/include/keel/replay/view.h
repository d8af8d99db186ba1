// What `keel-replay view` draws: a recording re-run tick by tick into body poses,
// contact points and hashes (collect), then written as one self-contained HTML page
// (render). The page's data layout is docs/replay.md, "The viewer page"; the page's
// script (replay/tool/viewer/viewer.js) and tests/replay/view_test.cpp decode it.
#pragma once

#include <keel/replay/format.h>
#include <keel/base/expected.h>
#include <keel/game/match.h>
#include <keel/game/registry.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel::replay::view {

/// One collider in its body's frame. `type` is "sphere", "box" or "capsule" today; the
/// page draws a type it does not know as `bounds`, so new shapes (hulls, meshes,
/// heightfields) need only a drawing function to appear as themselves.
struct Shape {
  std::string type;
  sim::Vec3 center{0.0f};
  sim::Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  float radius = 0.0f;
  float half_height = 0.0f;
  sim::Vec3 half_extents{0.0f};
  /// Half extents of the box around the shape, in the shape's own frame (around `center`).
  sim::Vec3 bounds{0.0f};
  bool trigger = false;
  /// Hulls and meshes: triangles in the shape's frame (x, y, z per vertex; three indices
  /// per triangle, counter-clockwise seen from outside).
  std::vector<float> vertices;
  std::vector<uint32_t> indices;
  /// Heightfields: the grid of samples (row-major), sample (r, c) at
  /// (origin[0] + c * cell_size, heights[r * columns + c], origin[1] + r * cell_size).
  uint32_t rows = 0;
  uint32_t columns = 0;
  float cell_size = 0.0f;
  std::vector<float> heights;
  float origin[2] = {0.0f, 0.0f};
};

/// A body as the page draws it. Its shapes come from the scene, or, for bodies the rules
/// create, from the rules ("character": the sandbox capsule, "ball": a thrown sphere);
/// "unknown" bodies are drawn as a 1 m box.
struct Body {
  uint32_t id = 0;
  sim::MotionType motion = sim::MotionType::Dynamic;
  std::string role;  ///< "scene", "character", "ball" or "unknown"
  uint32_t kind = 0;  ///< the game's label (BodyDef::kind, Match::body_kind), 0 = none
  std::vector<Shape> shapes;
};

/// A body's state at one tick, exactly as the match held it.
struct Pose {
  uint32_t body = 0;  ///< index into Data::bodies
  sim::Vec3 position{0.0f};
  sim::Quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  sim::Vec3 linear_velocity{0.0f};
  sim::Vec3 angular_velocity{0.0f};
  bool sleeping = false;
  /// Against::poses only: the body is in this run but not in the other one at this tick.
  bool absent = false;
};

struct ContactPoint {
  sim::Vec3 point{0.0f};
  sim::Vec3 normal{0.0f};
};

/// Every live body and contact point after one tick.
struct Frame {
  uint64_t tick = 0;
  uint64_t hash = 0;  ///< the re-run's Match::hash()
  std::vector<Pose> poses;  ///< ordered by body id
  std::vector<ContactPoint> contacts;
};

/// The second run (`--against`): a recording of the same match, or a desync dump.
struct Against {
  std::string path;
  std::string kind;  ///< "recording" or "desync dump"
  std::string note;  ///< the dump's note, or the recording's build
  /// The first tick whose hashes differ (keel-replay diff's "first differing tick").
  std::optional<uint64_t> first_tick;
  uint64_t hash_a = 0, hash_b = 0;  ///< at first_tick
  std::optional<uint64_t> inputs_at;  ///< first tick whose recorded inputs differ
  uint64_t common_last = 0;          ///< last tick both hold (recordings)
  /// Bodies that differ at first_tick, as keel-replay diff lists them (largest first).
  std::vector<uint32_t> diff_bodies;
  /// True when both re-runs agree at first_tick although the recorded hashes differ.
  bool reruns_agree = false;
  /// The other run's pose of every body whose state (pose, velocities, sleep, motion)
  /// differs from this run's, or that only one run has (`absent`: only this one), per tick from first_tick on (index = tick - first_tick). A dump has one.
  std::vector<std::vector<Pose>> poses;
};

/// A game event of the recording, for the timeline: its tick, its type's name and its
/// payload as `field=value` text (the game's declared names).
struct EventMark {
  uint64_t tick = 0;
  std::string name;
  std::string payload;
};

/// Events kept for the page at most (the timeline shows them all as marks).
inline constexpr size_t kMaxEventMarks = 5000;

struct Data {
  std::string source;  ///< the recording's path
  Header header;
  std::string scene_name;
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;
  std::vector<uint64_t> recorded_hashes;  ///< per tick, first..last
  std::vector<Body> bodies;               ///< sorted by id
  std::vector<Frame> frames;              ///< per tick, first..last
  std::optional<Against> against;
  std::vector<EventMark> events;  ///< the recorded game events, in tick order (at most kMaxEventMarks)
  std::vector<std::string> warnings;
};

struct CollectOptions {
  uint32_t threads = 1;
  const game::RulesRegistry* rules = nullptr;  ///< where the recordings' rules are found; nullptr: built-ins
  /// Called now and then with (ticks done, ticks total); for a progress bar.
  std::function<void(uint64_t, uint64_t)> progress;
};

/// Re-runs `rec` from its first tick to its last usable one, and `against` (optional)
/// from the first tick where the two differ, the way keel-replay diff reaches it.
keel::Expected<Data> collect(const std::string& rec, const std::string& against, const CollectOptions& options);

struct PageOptions {
  /// Draw every K-th tick (0: the smallest K whose page fits `max_bytes`). The first
  /// tick, the last and the first differing tick are always drawn; hashes cover every tick.
  uint64_t every = 0;
  uint64_t max_bytes = 19'000'000;
};

struct Page {
  std::string html;
  uint64_t every = 1;          ///< pose sampling stride used
  uint64_t contact_every = 1;  ///< contact sampling stride used (a multiple of `every`)
};

/// The page: template + three.js + viewer script + the data, base64 blobs in
/// <script type="application/octet-stream"> elements and the rest as JSON.
keel::Expected<Page> render(const Data& data, const PageOptions& options);

/// The quantum of a stored quaternion component: components are stored as round(c * 32767).
inline constexpr float kQuatScale = 32767.0f;

}  // namespace keel::replay::view
