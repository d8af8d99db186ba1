// Re-running recordings: building the match, seeking by checkpoint, verifying hashes.
#include <keel/replay/replayer.h>
#include <keel/games/sandbox.h>

#include <keel/scene/scene.h>

#include <algorithm>

namespace keel::replay {

const game::RulesRegistry& builtin_rules() {
  static const game::RulesRegistry registry = games::builtin_games();
  return registry;
}

keel::Expected<std::unique_ptr<game::Rules>> make_rules(const std::string& name, const game::RulesRegistry* rules) {
  auto made = (rules != nullptr ? *rules : builtin_rules()).make(name);
  if (!made) return keel::Error{"the recording's " + made.error().message};
  return std::move(*made);
}

keel::Status check_game_origin(const Header& header, const game::RulesRegistry& registry) {
  const game::GameOrigin origin = registry.origin(header.game);
  // An unknown name is make_rules' refusal to make (it lists what the program knows).
  if (header.game_build_id.empty() || !registry.knows(header.game) || origin.build_id == header.game_build_id) {
    return keel::Status::ok();
  }
  // The same name from another build may compute other bits: refuse rather than report a
  // desync that is only a different module.
  return keel::Error{"the recording ran game \"" + header.game + "\" from module " + header.game_module + " build " +
                    header.game_build_id + "; this program's \"" + header.game + "\" is " +
                    (origin.build_id.empty() ? std::string("linked in, not that module")
                                             : "module " + origin.module_path + " build " + origin.build_id) +
                    " (load the module the recording names)"};
}

keel::Expected<game::Match> make_match(const Header& header, const std::string& source_name,
                                     const game::RulesRegistry* registry) {
  const game::RulesRegistry& games = registry != nullptr ? *registry : builtin_rules();
  if (keel::Status st = check_game_origin(header, games); !st) return keel::Error{source_name + ": " + st.error().message};
  auto rules = make_rules(header.game, registry);
  if (!rules) return keel::Error{source_name + ": " + rules.error().message};
  std::vector<uint8_t> spec;
  game::write_spec((*rules)->spec(), spec);
  if (!header.game_spec.empty() && spec != header.game_spec) {
    auto recorded = header_spec(header);
    return keel::Error{source_name + ": the recording's game \"" + header.game + "\" declares another spec (version " +
                      (recorded ? std::to_string(recorded->version) : std::string("?")) + ") than this program's (version " +
                      std::to_string((*rules)->spec().version) + "): its input, state or events differ"};
  }
  auto scene = scene::parse_scene_binary(header.scene, source_name + " (embedded scene)");
  if (!scene) return scene.error();
  auto match = game::Match::create(*scene, std::move(*rules), header.game_seed);
  if (!match) return keel::Error{source_name + " (embedded scene): " + match.error().message};
  return std::move(*match);
}

Replay::Replay(game::Match match, TickCursor cursor) : timeline_(std::move(match)), cursor_(std::move(cursor)) {}

namespace {

std::string tick_str(uint64_t t) { return std::to_string(t); }

// Restores `match` from the newest checkpoint at or before `tick` that is sound. Returns
// the checkpoint used, or nullopt (then `match` is untouched: the scene's start state).
std::optional<Checkpoint> restore_nearest(const Recording& rec, uint64_t tick, game::Match& match,
                                          std::vector<std::string>& warnings) {
  std::vector<CheckpointRef> refs = rec.checkpoints();
  for (auto it = refs.rbegin(); it != refs.rend(); ++it) {
    if (it->tick > tick) continue;
    auto c = rec.read_checkpoint(*it);
    if (!c) {
      warnings.push_back("checkpoint at tick " + tick_str(it->tick) + " is unusable: " + c.error().message);
      continue;
    }
    keel::Status st = match.restore_state(c->state);
    if (!st || match.tick() != c->tick || match.hash() != c->hash) {
      warnings.push_back("checkpoint at tick " + tick_str(it->tick) + " does not restore: " +
                         (st ? "its state is not at that tick" : st.error().message));
      continue;
    }
    return std::move(*c);
  }
  return std::nullopt;
}

}  // namespace

keel::Expected<Replay> Replay::start(const Recording& rec, uint64_t tick, const ReplayOptions& options) {
  const Header& h = rec.header();
  if (tick < h.start_tick) {
    return keel::Error{rec.name() + ": tick " + tick_str(tick) + " is before the recording starts (tick " + tick_str(h.start_tick) + ")"};
  }
  auto built = make_match(h, rec.name(), options.rules);
  if (!built) return built.error();
  game::Match match = std::move(*built);
  match.set_threads(options.threads);  // threads never change results

  std::vector<std::string> warnings;
  std::optional<Checkpoint> base = restore_nearest(rec, tick, match, warnings);
  std::optional<Replay> replay;
  if (base) {
    CheckpointRef ref{base->tick, 0};
    for (const CheckpointRef& r : rec.checkpoints()) {
      if (r.tick == base->tick) ref = r;
    }
    replay.emplace(Replay(std::move(match), rec.ticks_after(ref)));
    replay->recorded_hash_ = base->hash;
  } else {
    if (h.start_tick != 0) return keel::Error{rec.name() + ": no usable checkpoint at or before tick " + tick_str(tick)};
    replay.emplace(Replay(std::move(match), rec.ticks_from_start()));
    auto first = replay->cursor_.next();
    if (!first) return keel::Error{rec.name() + ": the recording holds no tick"};
    replay->recorded_hash_ = first->hash;
  }
  replay->base_tick_ = replay->tick();
  replay->warnings_ = std::move(warnings);
  if (!replay->seek(tick)) {
    std::string why = replay->cursor_problems().empty() ? "" : " (" + replay->cursor_problems().back() + ")";
    return keel::Error{rec.name() + ": the recording ends at tick " + tick_str(replay->tick()) + ", before tick " +
                      tick_str(tick) + why};
  }
  replay->replayed_hash_ = replay->match().hash();
  return std::move(*replay);
}

bool Replay::take_next(const game::Match& before, game::TickInputs& out) {
  std::optional<TickRecord> t = cursor_.next();
  // A jump is a gap in the recording: the ticks after it need their checkpoint.
  if (!t || t->tick != before.tick() + 1) return false;
  out = std::move(t->inputs);
  recorded_events_ = std::move(t->events);
  recorded_hash_ = t->hash;
  return true;
}

bool Replay::seek(uint64_t tick) {
  game::Restep recorded;
  recorded.inputs = [this](const game::Match& before, game::TickInputs& out) { return take_next(before, out); };
  recorded.stepped = [this](const game::Match&, game::TickInputs& applied) { inputs_ = std::move(applied); };
  (void)timeline_.restore_and_step({}, tick, recorded);  // no state given: nothing to refuse
  return timeline_.tick() >= tick;
}

bool Replay::step() {
  game::TickInputs in;
  if (!take_next(timeline_.match(), in)) return false;
  replayed_hash_ = timeline_.step(in).hash;
  inputs_ = std::move(in);
  return true;
}

namespace {

// Decodes every checkpoint in range: a checkpoint whose chunk verifies but whose state
// does not hash to its recorded hash is reported here, at its tick.
void check_checkpoints(const Recording& rec, uint64_t from, uint64_t to, std::vector<std::string>& warnings) {
  for (const CheckpointRef& ref : rec.index().checkpoints) {
    if (ref.tick < from || ref.tick > to) continue;
    auto c = rec.read_checkpoint(ref);
    if (!c) warnings.push_back("checkpoint at tick " + tick_str(ref.tick) + " is damaged: " + c.error().message);
  }
}

}  // namespace

namespace {

// Re-runs ticks a..b of one segment, comparing every hash; false on a divergence or an
// error (both written into `result`).
bool verify_run(const Recording& rec, const VerifyOptions& options, uint64_t a, uint64_t b, uint64_t total,
                VerifyResult& result) {
  auto replay = Replay::start(rec, a, ReplayOptions{options.threads, options.rules});
  if (!replay) {
    result.error = replay.error().message;
    return false;
  }
  result.warnings.insert(result.warnings.end(), replay->warnings().begin(), replay->warnings().end());
  if (!replay->warnings().empty()) result.damaged = true;
  auto compare = [&]() {
    uint64_t replayed = replay->replayed_hash();
    const bool events_match = replay->tick() == replay->base_tick() || replay->match().events() == replay->recorded_events();
    if (replayed == replay->recorded_hash() && events_match) return true;
    result.events_differ = replayed == replay->recorded_hash();
    result.diverged_at = replay->tick();
    result.recorded = replay->recorded_hash();
    result.replayed = replayed;
    return false;
  };
  if (!compare()) return false;
  while (replay->tick() < b) {
    if (!replay->step()) {
      result.error = rec.name() + ": the ticks end at " + tick_str(replay->tick()) + " although the index reached " + tick_str(b);
      return false;
    }
    if (!compare()) return false;
    ++result.verified;
    if (options.progress && (result.verified % 32 == 0 || replay->tick() == b)) options.progress(result.verified, total);
  }
  return true;
}

}  // namespace

VerifyResult verify(const Recording& rec, const VerifyOptions& options) {
  VerifyResult result;
  const RecordingIndex& idx = rec.index();
  result.warnings = idx.problems;
  result.damaged = !idx.problems.empty();
  const uint64_t from = options.from.value_or(idx.first_tick);
  const uint64_t to = options.to.value_or(idx.last_tick);
  if (from > to || from < idx.first_tick || to > idx.last_tick || idx.segments.empty()) {
    result.error = rec.name() + ": the range " + tick_str(from) + ".." + tick_str(to) + " is not inside the recorded ticks " +
                   tick_str(idx.first_tick) + ".." + tick_str(idx.last_tick);
    return result;
  }
  size_t before = result.warnings.size();
  check_checkpoints(rec, from, to, result.warnings);
  if (result.warnings.size() != before) result.damaged = true;
  // Each run of consecutive ticks is re-run from its own start (a checkpoint after a gap).
  uint64_t total = 0;
  for (const TickRange& s : idx.segments) {
    if (s.last >= from && s.first <= to) total += std::min(to, s.last) - std::max(from, s.first);
  }
  for (const TickRange& s : idx.segments) {
    if (s.last < from || s.first > to) continue;
    if (!verify_run(rec, options, std::max(from, s.first), std::min(to, s.last), total, result)) return result;
    result.verified_ranges.push_back(TickRange{std::max(from, s.first), std::min(to, s.last)});
  }
  return result;
}

}  // namespace keel::replay
