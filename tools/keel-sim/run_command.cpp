#include "run_command.h"

#include <keel/scene/scene.h>
#include <keel/replay/writer.h>
#include <keel/game/match.h>
#include <keel/game/registry.h>
#include <keel/game/scripted_input.h>
#include <keel/games/sandbox.h>
#include <keel/sim/world.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <vector>

namespace keel::tools {

namespace {

using sim::World;

void print_hash(const char* label, uint64_t tick, uint64_t hash) {
  std::printf("%s %" PRIu64 " %016" PRIx64 "\n", label, tick, hash);
}

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return bool(out);
}

/// Reads the scene file (errors printed), applying --sleep off to every body.
std::optional<sim::SceneDef> load_scene(const RunOptions& o) {
  auto scene = scene::load_scene_file(o.scene);
  if (!scene) {
    std::cerr << scene.error().message << "\n";
    return std::nullopt;
  }
  if (!o.sleep) {
    for (sim::BodyDef& b : scene->bodies) b.can_sleep = false;
  }
  return std::move(*scene);
}

bool load_world(const RunOptions& o, World& world) {
  if (!o.state.empty()) {
    std::vector<uint8_t> bytes;
    if (!read_file(o.state, bytes)) {
      std::cerr << o.state << ": cannot read\n";
      return false;
    }
    if (auto st = world.restore_state(bytes); !st) {
      std::cerr << o.state << ": " << st.error().message << "\n";
      return false;
    }
    return true;
  }
  std::optional<sim::SceneDef> scene = load_scene(o);
  if (!scene) return false;
  auto built = World::from_scene(*scene);
  if (!built) {
    std::cerr << o.scene << ": " << built.error().message << "\n";
    return false;
  }
  world = std::move(*built);
  return true;
}

nlohmann::json vec_json(const sim::Vec3& v) { return nlohmann::json::array({v.x, v.y, v.z}); }

bool dump_bodies(const World& world, const std::string& path) {
  std::vector<sim::BodyState> states;
  for (sim::BodyId id : world.bodies()) states.push_back(world.body_state(id));
  std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  nlohmann::json bodies = nlohmann::json::array();
  for (const sim::BodyState& s : states) {
    bodies.push_back({{"id", s.id},
                      {"position", vec_json(s.position)},
                      {"rotation", {s.rotation.x, s.rotation.y, s.rotation.z, s.rotation.w}},
                      {"linear_velocity", vec_json(s.linear_velocity)},
                      {"angular_velocity", vec_json(s.angular_velocity)},
                      {"sleeping", s.sleeping}});
  }
  nlohmann::json doc = {{"tick", world.tick()}, {"bodies", std::move(bodies)}};
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(1) << "\n";
  return bool(out);
}

double percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0.0;
  size_t i = size_t(p * double(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

void print_timing(const std::vector<double>& ms, uint32_t threads) {
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0.0;
  for (double v : ms) sum += v;
  double mean = ms.empty() ? 0.0 : sum / double(ms.size());
  std::printf("timing ticks=%zu threads=%u step_ms_mean=%.4f step_ms_p50=%.4f step_ms_p95=%.4f step_ms_max=%.4f\n",
              ms.size(), threads, mean, percentile(sorted, 0.5), percentile(sorted, 0.95),
              sorted.empty() ? 0.0 : sorted.back());
}

bool save_state_to(const World& world, const std::string& path) {
  if (write_file(path, world.save_state())) return true;
  std::cerr << path << ": cannot write state\n";
  return false;
}

// --record steps a Match with zero players instead of a bare World: Match::step({}) is
// World::step() and nothing else, so the printed World hashes are the same with or
// without --record, while the recording stores Match hashes like every recording.
/// Scripted headless players 1..bots: all join on the first tick, then each picks a new
/// frame of the game's scripted values (keel/game/scripted_input.h) every second or so,
/// on its own period.
game::TickInputs bot_inputs(const game::Layout& layout, uint64_t tick, uint32_t bots) {
  game::TickInputs in;
  for (uint32_t b = 1; b <= bots; ++b) {
    if (tick == 0) in.events.push_back({game::PlayerEvent::Kind::Join, b});
    const uint32_t period = 50u + 7u * b;
    if (tick % period != 0) continue;  // otherwise the match repeats the bot's last frame
    in.inputs.push_back({b, game::scripted_values(layout, b, uint32_t(tick / period))});
  }
  return in;
}

struct Recorder {
  std::optional<game::Match> match;
  std::optional<replay::RecordingWriter> writer;

  bool start(const RunOptions& o) {
    if (!o.state.empty()) {
      std::cerr << "keel-sim: --record and --match need a SCENE (a match starts from a scene, not a saved world)\n";
      return false;
    }
    std::optional<sim::SceneDef> scene = load_scene(o);
    if (!scene) return false;
    game::RulesRegistry games = games::builtin_games();
    std::string name = "sandbox";
    if (!o.game_module.empty()) {
      if (keel::Status st = games.add_module(o.game_module); !st) {
        std::cerr << "keel-sim: --game: " << st.error().message << "\n";
        return false;
      }
      name = games.module_game();
    }
    origin = games.origin(name);
    auto rules = games.make(name);
    if (!rules) {
      std::cerr << "keel-sim: " << rules.error().message << "\n";
      return false;
    }
    auto created = game::Match::create(*scene, std::move(*rules));
    if (!created) {
      std::cerr << o.scene << ": " << created.error().message << "\n";
      return false;
    }
    match.emplace(std::move(*created));
    bots = o.bots;
    if (o.record.empty()) return true;  // --match alone: nothing is recorded
    replay::WriterOptions wo;
    wo.game_module = std::filesystem::path(origin.module_path).filename().string();
    wo.game_build_id = origin.build_id;
    auto w = replay::RecordingWriter::create(o.record, *match, wo);
    if (!w) std::cerr << w.error().message << "\n";
    else writer.emplace(std::move(*w));
    return w.has_value();
  }
  uint32_t bots = 0;
  game::GameOrigin origin;

  bool step() {
    game::TickInputs inputs = bot_inputs(match->input_layout(), match->tick(), bots);
    match->step(inputs);
    if (!writer) return true;
    keel::Status st = writer->record(inputs, *match, match->hash());
    if (!st) std::cerr << st.error().message << "\n";
    return bool(st);
  }
  bool finish() {
    if (!writer) return true;
    keel::Status st = writer->finish();
    if (!st) std::cerr << st.error().message << "\n";
    return bool(st);
  }
};

}  // namespace

int run_simulation(const RunOptions& o) {
  World bare;
  Recorder recorder;
  if (!o.record.empty() || o.match ? !recorder.start(o) : !load_world(o, bare)) return 1;
  // Only threads are set through this reference to the match's world (never results).
  World& world = recorder.match ? recorder.match->world_for_rules() : bare;
  world.set_threads(o.threads);

  const uint64_t start = world.tick();
  const uint64_t end = start + o.ticks;
  if (o.save_at && (*o.save_at < start || *o.save_at > end)) {
    std::cerr << "keel-sim: --save-at " << *o.save_at << " is outside the ticks this run steps (" << start
              << ".." << end << ")\n";
    return 2;
  }
  auto maybe_save = [&]() {
    return !(o.save_at && world.tick() == *o.save_at) || save_state_to(world, o.state_out);
  };
  // --match prints the match's hash (its own state, then the world's); otherwise the world's.
  auto hash = [&] { return o.match ? recorder.match->hash() : world.hash(); };
  if (o.hash_every > 0 && start % o.hash_every == 0) print_hash("tick", start, hash());
  if (!maybe_save()) return 1;

  std::vector<double> step_ms;
  // The step profile's buckets, named as World::step's stages.
  struct Bucket {
    const char* name;
    double sim::StepProfile::*ms;
    double sum = 0;
  };
  Bucket buckets[] = {{"ccd", &sim::StepProfile::ccd_ms},           {"bounds", &sim::StepProfile::bounds_ms},
                      {"contacts", &sim::StepProfile::contacts_ms}, {"characters", &sim::StepProfile::characters_ms},
                      {"touching", &sim::StepProfile::touching_ms}, {"events", &sim::StepProfile::events_ms},
                      {"solve", &sim::StepProfile::solve_ms},       {"sleep", &sim::StepProfile::sleep_ms}};
  if (o.timing) step_ms.reserve(o.ticks);
  while (world.tick() < end) {
    auto t0 = std::chrono::steady_clock::now();
    if (!recorder.match) world.step();
    else if (!recorder.step()) return 1;
    if (o.timing) {
      step_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      for (Bucket& b : buckets) b.sum += world.profile().*b.ms;
    }
    uint64_t t = world.tick();
    if (o.hash_every > 0 && t % o.hash_every == 0) print_hash("tick", t, hash());
    if (!maybe_save()) return 1;
  }
  if (o.timing) {
    print_timing(step_ms, o.threads);
    double n = step_ms.empty() ? 1.0 : double(step_ms.size());
    std::printf("stages");
    for (const Bucket& b : buckets) std::printf(" %s_ms_mean=%.4f", b.name, b.sum / n);
    std::printf(" contacts=%u touching=%u solve_parts=%u team_bodies=%u kernels=%s\n", world.profile().contact_pairs,
                world.profile().touching_pairs, world.profile().solve_parts, world.profile().team_bodies,
                world.profile().kernels);
  }
  if (!o.dump_final.empty() && !dump_bodies(world, o.dump_final)) {
    std::cerr << o.dump_final << ": cannot write\n";
    return 1;
  }
  if (recorder.writer && !recorder.finish()) return 1;
  print_hash("final", world.tick(), hash());
  return 0;
}

}  // namespace keel::tools
