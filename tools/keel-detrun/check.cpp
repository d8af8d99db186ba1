#include "check.h"

#include "golden.h"
#include "match_script.h"

#include <keel/game/match.h>
#include <keel/games/sandbox.h>
#include <keel/sim/world.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <system_error>

namespace keel::det {

namespace {

/// What a chain steps: a bare World or a Match fed recorded inputs. Both are restored
/// into a freshly built instance, as a server or replay tool would do.
class Subject {
 public:
  virtual ~Subject() = default;
  virtual uint64_t tick() const = 0;
  virtual uint64_t hash() const = 0;
  virtual void step() = 0;
  virtual std::vector<uint8_t> save() const = 0;
  virtual keel::Status restore(std::span<const uint8_t> bytes) = 0;
};

class WorldSubject final : public Subject {
 public:
  WorldSubject(sim::World world, uint32_t threads) : world_(std::move(world)), threads_(threads) {
    world_.set_threads(threads);
  }
  uint64_t tick() const override { return world_.tick(); }
  uint64_t hash() const override { return world_.hash(); }
  void step() override { world_.step(); }
  std::vector<uint8_t> save() const override { return world_.save_state(); }
  keel::Status restore(std::span<const uint8_t> bytes) override {
    // A default world, as `keel-sim run --state` uses: the bytes carry everything.
    sim::World fresh;
    if (keel::Status st = fresh.restore_state(bytes); !st) return st;
    fresh.set_threads(threads_);
    world_ = std::move(fresh);
    return keel::Status::ok();
  }

 private:
  sim::World world_;
  uint32_t threads_;
};

class MatchSubject final : public Subject {
 public:
  MatchSubject(game::Match match, const std::map<uint64_t, game::TickInputs>& inputs)
      : match_(std::move(match)), inputs_(inputs) {}
  uint64_t tick() const override { return match_.tick(); }
  uint64_t hash() const override { return match_.hash(); }
  void step() override {
    auto it = inputs_.find(match_.tick());
    match_.step(it != inputs_.end() ? it->second : kNoInputs);
  }
  std::vector<uint8_t> save() const override { return match_.save_state(); }
  keel::Status restore(std::span<const uint8_t> bytes) override { return match_.restore_state(bytes); }
  const game::Match& match() const { return match_; }

 private:
  static inline const game::TickInputs kNoInputs{};
  game::Match match_;
  const std::map<uint64_t, game::TickInputs>& inputs_;
};

using SubjectPtr = std::unique_ptr<Subject>;

std::unique_ptr<game::Rules> make_rules(const DeterminismOptions& o) {
  return o.rules ? o.rules() : std::make_unique<games::SandboxRules>();
}

keel::Expected<SubjectPtr> make_subject(const sim::SceneDef& scene, uint32_t threads, bool match,
                                       const std::map<uint64_t, game::TickInputs>& inputs,
                                       std::unique_ptr<game::Rules> rules) {
  if (!match) {
    auto world = sim::World::from_scene(scene);
    if (!world) return world.error();
    return SubjectPtr(std::make_unique<WorldSubject>(std::move(*world), threads));
  }
  sim::SceneDef threaded = scene;
  threaded.settings.threads = threads;
  auto created = game::Match::create(threaded, std::move(rules));
  if (!created) return created.error();
  return SubjectPtr(std::make_unique<MatchSubject>(std::move(*created), inputs));
}

/// Whether stderr is a terminal. Emscripten's isatty says yes for every standard stream
/// (3.1.6, NODERAWFS), which would fill a CI log with progress lines, so the wasm32 runner
/// shows none.
bool stderr_is_terminal() {
#if defined(__EMSCRIPTEN__)
  return false;
#else
  return isatty(STDERR_FILENO) == 1;
#endif
}

/// "\r  pile.json 230/600" on a terminal, so long qemu runs show they are alive.
class Progress {
 public:
  Progress(const std::string& scene, uint64_t end) : scene_(scene), end_(end), on_(stderr_is_terminal()) {}
  ~Progress() {
    if (on_) std::fprintf(stderr, "\r\033[K");
  }
  void at(uint64_t tick) const {
    if (on_ && tick % 10 == 0) std::fprintf(stderr, "\r  %s %llu/%llu", scene_.c_str(), (unsigned long long)tick, (unsigned long long)end_);
  }

 private:
  const std::string& scene_;
  uint64_t end_;
  bool on_;
};

struct Failure {
  std::string line;  // the full output line
};

std::string mismatch_line(const std::string& scene, uint64_t tick, uint64_t want, uint64_t got) {
  return "mismatch " + scene + " at tick " + std::to_string(tick) + ": golden " + hex_hash(want) + " got " + hex_hash(got);
}

/// Steps `s` from its tick to `end`, comparing the hash at every multiple of `every`
/// with the golden; saves the state at each tick in `save_at` on the way. With
/// `step_ms`, also times each step alone (not the hashes or saves around it).
std::optional<Failure> run_chain(Subject& s, const Golden& g, const std::string& scene, uint64_t end, uint64_t every,
                                 const std::vector<uint64_t>& save_at,
                                 std::vector<std::pair<uint64_t, std::vector<uint8_t>>>* saved,
                                 std::vector<double>* step_ms = nullptr) {
  Progress progress(scene, end);
  for (;;) {
    const uint64_t t = s.tick();
    if (saved && std::binary_search(save_at.begin(), save_at.end(), t)) saved->emplace_back(t, s.save());
    if (t % every == 0) {
      const uint64_t want = g.hashes[t / g.every];
      const uint64_t got = s.hash();
      if (want != got) return Failure{mismatch_line(scene, t, want, got)};
    }
    if (t >= end) return std::nullopt;
    const auto t0 = std::chrono::steady_clock::now();
    s.step();
    if (step_ms) step_ms->push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    progress.at(t + 1);
  }
}

/// "timing SCENE ticks=N step_ms_mean=... step_ms_p50=... step_ms_p95=... step_ms_max=...",
/// the figures of `keel-sim run --timing`.
std::string timing_line(const std::string& scene, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0.0;
  for (double v : ms) sum += v;
  auto at = [&](double p) { return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, size_t(p * double(ms.size() - 1) + 0.5))]; };
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, " ticks=%zu step_ms_mean=%.4f step_ms_p50=%.4f step_ms_p95=%.4f step_ms_max=%.4f",
                ms.size(), ms.empty() ? 0.0 : sum / double(ms.size()), at(0.5), at(0.95), ms.empty() ? 0.0 : ms.back());
  return "timing " + scene + buffer;
}

std::string check_options_error(const DeterminismOptions& o, const Golden& g, uint64_t ticks, uint64_t every) {
  if (g.kind != (o.match ? ChainKind::Match : ChainKind::World)) {
    return o.match ? "is not a recorded-match golden (kind world); drop --match"
                   : "is a recorded-match golden (kind match); check it with --match";
  }
  if (ticks > g.ticks) {
    return "covers " + std::to_string(g.ticks) + " ticks, fewer than --ticks " + std::to_string(ticks);
  }
  if (every % g.every != 0) {
    return "has a hash every " + std::to_string(g.every) + " ticks; --every must be a multiple of it";
  }
  for (uint64_t r : o.restore_at) {
    if (r >= ticks) return "--restore-at " + std::to_string(r) + " is not below the " + std::to_string(ticks) + " ticks checked";
  }
  return {};
}

/// Checks one scene; returns the line to print. With --timing, `timing` receives the
/// first chain's step times (timing_line).
std::string check_scene(const DeterminismOptions& o, const std::string& scene, const sim::SceneDef& def,
                        std::string& timing) {
  const std::string path = golden_path(o.golden_dir, scene, o.match);
  if (!std::filesystem::exists(path)) return "error " + scene + ": no golden " + path + " (write one with --write)";
  auto golden = read_golden(path);
  if (!golden) return "error " + scene + ": " + golden.error().message;
  const Golden& g = *golden;
  const uint64_t ticks = o.ticks.value_or(g.ticks);
  const uint64_t every = o.every.value_or(g.every);
  if (std::string e = check_options_error(o, g, ticks, every); !e.empty()) return "error " + scene + ": " + path + " " + e;

  auto subject = make_subject(def, o.threads, o.match, g.inputs, make_rules(o));
  if (!subject) return "error " + scene + ": " + subject.error().message;
  if (o.match) {
    const std::string rules = static_cast<const MatchSubject&>(**subject).match().spec().name;
    if (rules != g.rules) return "error " + scene + ": " + path + " was recorded with rules \"" + g.rules + "\", this build has \"" + rules + "\"";
  }
  std::vector<uint64_t> save_at = o.restore_at;
  std::sort(save_at.begin(), save_at.end());
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> saved;
  std::vector<double> step_ms;
  if (auto f = run_chain(**subject, g, scene, ticks, every, save_at, &saved, o.timing ? &step_ms : nullptr)) return f->line;
  if (o.timing) timing = timing_line(scene, std::move(step_ms));

  // Restore each saved state into a fresh instance: it must save back to the same bytes
  // (Rapier's check), and step on to the very same chain.
  for (const auto& [tick, bytes] : saved) {
    auto fresh = make_subject(def, o.threads, o.match, g.inputs, make_rules(o));
    if (!fresh) return "error " + scene + ": " + fresh.error().message;
    if (keel::Status st = (*fresh)->restore(bytes); !st) {
      return "error " + scene + ": the state saved at tick " + std::to_string(tick) + " does not restore: " + st.error().message;
    }
    const std::string after = " (after restoring the state saved at tick " + std::to_string(tick) + ")";
    if ((*fresh)->save() != bytes) {
      return "mismatch " + scene + " at tick " + std::to_string(tick) + ": the restored state saves to different bytes" + after;
    }
    if (auto f = run_chain(**fresh, g, scene, ticks, every, {}, nullptr)) return f->line + after;
  }
  return "ok " + scene;
}

std::string write_scene(const DeterminismOptions& o, const std::string& scene, const sim::SceneDef& def) {
  Golden g;
  g.scene = scene;
  g.kind = o.match ? ChainKind::Match : ChainKind::World;
  g.ticks = o.ticks.value_or(kDefaultGoldenTicks);
  g.every = o.every.value_or(kDefaultGoldenEvery);
  if (o.match) g.inputs = scripted_match_inputs(g.ticks, make_rules(o)->spec().input);
  auto subject = make_subject(def, o.threads, o.match, g.inputs, make_rules(o));
  if (!subject) return "error " + scene + ": " + subject.error().message;
  if (o.match) g.rules = static_cast<const MatchSubject&>(**subject).match().spec().name;
  Progress progress(scene, g.ticks);
  for (;;) {
    Subject& s = **subject;
    if (s.tick() % g.every == 0) g.hashes.push_back(s.hash());
    if (s.tick() >= g.ticks) break;
    s.step();
    progress.at(s.tick());
  }
  const std::string path = golden_path(o.golden_dir, scene, o.match);
  if (keel::Status st = write_golden(path, g); !st) return "error " + scene + ": " + st.error().message;
  return "wrote " + path + " (" + std::to_string(g.ticks) + " ticks, every " + std::to_string(g.every) + ")";
}

}  // namespace

std::string golden_path(const std::string& dir, const std::string& scene, bool match) {
  const std::string stem = std::filesystem::path(scene).stem().string();
  return (std::filesystem::path(dir) / (stem + (match ? ".match.golden" : ".golden"))).string();
}

int run_determinism(const DeterminismOptions& o, const SceneLoader& load) {
  if (o.write) {
    std::error_code ec;
    std::filesystem::create_directories(o.golden_dir, ec);
    if (ec) {
      std::printf("error %s: cannot create the golden folder: %s\n", o.golden_dir.c_str(), ec.message().c_str());
      return 1;
    }
  }
  bool all_ok = true;
  std::vector<std::string> written;
  for (const std::string& scene : o.scenes) {
    std::string line, timing;
    const std::string path = golden_path(o.golden_dir, scene, o.match);
    if (o.write && std::find(written.begin(), written.end(), path) != written.end()) {
      line = "error " + scene + ": another scene with the same name already wrote " + path;
    } else if (auto def = load(scene); !def) {
      line = "error " + def.error().message;  // loaders start their messages with the path
    } else {
      line = o.write ? write_scene(o, scene, *def) : check_scene(o, scene, *def, timing);
    }
    written.push_back(path);
    all_ok = all_ok && (line.rfind("ok ", 0) == 0 || line.rfind("wrote ", 0) == 0);
    std::printf("%s\n", line.c_str());
    if (!timing.empty()) std::printf("%s\n", timing.c_str());
    std::fflush(stdout);
  }
  return all_ok ? 0 : 1;
}

}  // namespace keel::det
