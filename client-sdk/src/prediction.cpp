#include <keel/client/prediction.h>
#include <keel/protocol/frame_window.h>
#include <keel/replay/desync_dump.h>
#include <keel/games/sandbox.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace keel::client {
namespace {

// Frames further ahead of the confirmed tick than this are refused: the server never
// sends more than FrameWindow::kMaxFrames unacknowledged ones, so anything beyond is
// forged or from a stale session, and holding it would only cost memory.
constexpr uint64_t kMaxPendingAhead = 4 * protocol::FrameWindow::kMaxFrames;
// Local inputs kept behind the confirmed tick (the newest is the "repeat" fallback).
constexpr uint64_t kLocalHistory = 8;

// The configured rules, or the sandbox's (what keel-server runs by default).
std::unique_ptr<game::Rules> make_rules(const PredictionConfig& config) {
  return config.rules ? config.rules() : std::make_unique<games::SandboxRules>();
}

}  // namespace

Predictor::Predictor(game::Match confirmed, game::Match predicted, uint32_t local_player,
                     const PredictionConfig& config)
    : confirmed_(std::move(confirmed)),
      predicted_(std::move(predicted)),
      local_player_(local_player),
      config_(config) {}

keel::Expected<std::unique_ptr<Predictor>> Predictor::create(const sim::SceneDef& scene,
                                                            std::span<const uint8_t> checkpoint,
                                                            uint64_t tick, uint32_t local_player,
                                                            const PredictionConfig& config) {
  auto confirmed = game::Match::create(scene, make_rules(config));
  if (!confirmed) return keel::Error{"checkpoint: scene does not build: " + confirmed.error().message};
  auto predicted = game::Match::create(scene, make_rules(config));
  if (!predicted) return keel::Error{"checkpoint: scene does not build: " + predicted.error().message};
  keel::Status s = confirmed->restore_state(checkpoint);
  if (!s) return keel::Error{"checkpoint: state refused: " + s.error().message};
  if (confirmed->tick() != tick) {
    return keel::Error{"checkpoint: state is at tick " + std::to_string(confirmed->tick()) +
                      ", announced " + std::to_string(tick)};
  }
  s = predicted->restore_state(checkpoint);
  if (!s) return keel::Error{"checkpoint: state refused: " + s.error().message};
  return std::unique_ptr<Predictor>(
      new Predictor(std::move(*confirmed), std::move(*predicted), local_player, config));
}

bool Predictor::add_confirmed(protocol::InputFrameMessage frame) {
  uint64_t c = confirmed_tick();
  if (frame.tick < c || frame.tick - c > kMaxPendingAhead) return false;
  pending_.emplace(frame.tick, std::move(frame));  // a duplicate keeps the first
  return true;
}

void Predictor::set_local_input(uint64_t tick, const game::InputFrame& input) {
  if (tick + kLocalHistory < confirmed_tick()) return;
  local_inputs_[tick] = input;
  // Bounded: the client produces inputs at most max_lead ahead, so this only trims
  // after a long stall.
  while (local_inputs_.size() > 1024) local_inputs_.erase(local_inputs_.begin());
}

bool Predictor::needs_resync() const {
  // A hole at the confirmed tick while frames pile up past what the server resends.
  return !pending_.empty() && pending_.count(confirmed_tick()) == 0 &&
         newest_frame_tick() - confirmed_tick() >= protocol::FrameWindow::kMaxFrames;
}

game::InputFrame Predictor::local_input_at(uint64_t tick) const {
  // The input sent for `tick`, else the newest one before it (the server repeats a
  // player's last input when one is missing), else what the match last applied.
  auto it = local_inputs_.upper_bound(tick);
  if (it != local_inputs_.begin()) return std::prev(it)->second;
  return game::missing_input(confirmed(), {}, local_player_).frame;
}

game::TickInputs Predictor::predict_inputs(uint64_t tick) const {
  // No events (joins and leaves cannot be guessed); every present player's input: ours
  // as sent, the others' last confirmed one.
  game::TickInputs in;
  for (const game::PlayerSlot& slot : predicted().players()) {
    if (slot.player == local_player_) {
      // Ours as sent, seen in the present (a predicting client shows this tick).
      in.inputs.push_back({slot.player, local_input_at(tick)});
      continue;
    }
    // The others get the server's rule for a missing frame, applied to their last
    // confirmed one (or, for a player the confirmed match no longer holds, the predicted).
    const bool confirmed_holds = confirmed().find_player(slot.player) != nullptr;
    in.inputs.push_back(game::missing_input(confirmed_holds ? confirmed() : predicted(), {}, slot.player));
  }
  return in;
}

void Predictor::note_local_input(const protocol::InputFrameMessage& frame) {
  auto sent = local_inputs_.find(frame.tick);
  if (sent == local_inputs_.end()) return;
  for (const game::PlayerInput& pi : frame.inputs.inputs) {
    if (pi.player != local_player_) continue;
    if (pi.frame == sent->second) {
      ++stats_.local_inputs_applied;
    } else {
      ++stats_.local_inputs_late;
    }
    return;
  }
}

void Predictor::write_dump(uint64_t expected_hash) {
  if (config_.dump_dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(config_.dump_dir, ec);
  std::string path = config_.dump_dir + "/desync-player" + std::to_string(local_player_) + "-tick" +
                     std::to_string(confirmed_tick()) + replay::kDesyncDumpExtension;
  std::string note = config_.dump_note.empty() ? "keel client, player " + std::to_string(local_player_)
                                               : config_.dump_note;
  if (replay::write_desync_dump(path, confirmed(), expected_hash, note)) stats_.last_dump_path = path;
}

void Predictor::step_confirmed(const protocol::InputFrameMessage& frame,
                               std::vector<HashCheck>& checks, std::vector<GameEventRecord>* events) {
  note_local_input(frame);
  const game::StepResult stepped = confirmed_.step(frame.inputs);
  ++stats_.confirmed_ticks;
  for (const game::GameEvent& e : confirmed().events()) {
    ++stats_.confirmed_event_records;
    if (events != nullptr) events->push_back({stepped.tick, e, false});
  }
  HashCheck check;
  check.tick = stepped.tick;  // frame.tick + 1
  check.hash = stepped.hash;
  check.expected = frame.state_hash;
  check.mismatch = check.hash != check.expected;
  check.report = check.mismatch ||
                 (config_.hash_report_interval != 0 && check.tick % config_.hash_report_interval == 0);
  ++stats_.hash_checks;
  if (check.mismatch) {
    ++stats_.hash_mismatches;
    if (stats_.first_mismatch_tick == 0) {
      // Only the first: every later state descends from it and would say nothing new
      // (and a broken client must not fill the disk).
      stats_.first_mismatch_tick = check.tick;
      write_dump(frame.state_hash);
    }
  }
  checks.push_back(check);
}

void Predictor::predict_to(uint64_t target, bool rebase, std::vector<GameEventRecord>* events) {
  game::Restep ahead;
  ahead.inputs = [this](const game::Match& before, game::TickInputs& out) {
    out = predict_inputs(before.tick());
    return true;
  };
  ahead.stepped = [this, events](const game::Match& after, game::TickInputs& applied) {
    predicted_stepped(after, applied, events);
  };
  // A rebase copies the confirmed state (the one copy a rollback makes); restoring our
  // own canonical bytes cannot fail.
  const std::vector<uint8_t> state = rebase ? confirmed().save_state() : std::vector<uint8_t>{};
  keel::Status s = predicted_.restore_and_step(state, target, ahead);
  (void)s;
}

void Predictor::predicted_stepped(const game::Match& after_step, game::TickInputs& applied,
                                  std::vector<GameEventRecord>* events) {
  const uint64_t after = after_step.tick();
  predicted_inputs_[after - 1] = std::move(applied);
  ++stats_.predicted_ticks;
  const std::vector<game::GameEvent>& now = after_step.events();
  if (rollback_open_ && after <= rollback_end_) count_rollback_types(types_of(now));
  // A tick's events are reported the first time they are predicted, and again only when
  // a re-prediction makes them differ; a tick whose re-prediction lost its events reports
  // nothing (the confirmed events are the truth; a retraction is their absence there).
  auto it = reported_.find(after);
  const bool differ = it == reported_.end() ? !now.empty() : it->second != now;
  if (!differ) return;
  reported_[after] = now;
  if (now.empty()) return;
  for (const game::GameEvent& e : now) {
    ++stats_.predicted_event_records;
    if (events != nullptr) events->push_back({after, e, true});
  }
}

uint64_t Predictor::types_of(const std::vector<game::GameEvent>& events) {
  uint64_t mask = 0;
  for (const game::GameEvent& e : events) mask |= e.type < 64 ? uint64_t(1) << e.type : 0;
  return mask;
}

uint64_t Predictor::reported_types_in(uint64_t from, uint64_t to) const {
  // Ticks are keyed after their step: the step of tick t is key t + 1.
  uint64_t mask = 0;
  for (auto it = reported_.upper_bound(from); it != reported_.end() && it->first <= to; ++it) mask |= types_of(it->second);
  return mask;
}

// The open rollback's range held events of `types`: the rollback counts once in all, and
// once for each type not counted for it yet.
void Predictor::count_rollback_types(uint64_t types) {
  const uint64_t fresh = types & ~rollback_types_;
  if (fresh == 0) return;
  if (rollback_types_ == 0) ++stats_.rollbacks_across_state_changes;
  for (uint32_t t = 0; t < game::kMaxEventTypes; ++t) {
    if ((fresh >> t) & 1u) ++stats_.rollbacks_across_event[t];
  }
  rollback_types_ |= fresh;
}

void Predictor::prune(uint64_t tick) {
  predicted_inputs_.erase(predicted_inputs_.begin(), predicted_inputs_.lower_bound(tick));
  reported_.erase(reported_.begin(), reported_.upper_bound(tick));
  uint64_t keep = tick > kLocalHistory ? tick - kLocalHistory : 0;
  local_inputs_.erase(local_inputs_.begin(), local_inputs_.lower_bound(keep));
}

void Predictor::advance(uint64_t present, std::vector<HashCheck>& checks, std::vector<GameEventRecord>* events) {
  uint64_t old_predicted = predicted_tick();
  bool contradicted = false;  // a frame the prediction got wrong, before old_predicted
  uint64_t first_contradicted = 0;
  uint64_t confirmed_types = 0;  // event types confirmed steps at or after first_contradicted emitted
  for (auto it = pending_.find(confirmed_tick()); it != pending_.end();
       it = pending_.find(confirmed_tick())) {
    const protocol::InputFrameMessage& frame = it->second;
    if (frame.tick < old_predicted && !contradicted) {
      auto p = predicted_inputs_.find(frame.tick);
      if (p == predicted_inputs_.end() || p->second != frame.inputs) {
        contradicted = true;
        first_contradicted = frame.tick;
      }
    }
    step_confirmed(frame, checks, events);
    if (contradicted) confirmed_types |= types_of(confirmed().events());
    pending_.erase(it);
  }
  uint64_t c = confirmed_tick();
  bool rebase = false;
  if (predicted_tick() <= c) {
    prune(c);
    rebase = true;  // the prediction fell behind (or never ran): start from the truth
  } else if (contradicted) {
    uint32_t depth = static_cast<uint32_t>(old_predicted - c);
    ++stats_.rollbacks;
    stats_.rollback_ticks += depth;
    stats_.last_rollback_ticks = depth;
    stats_.max_rollback_ticks = std::max(stats_.max_rollback_ticks, depth);
    // The range is first_contradicted .. old_predicted; the re-prediction covers c .. old_predicted.
    rollback_end_ = old_predicted;
    rollback_open_ = true;
    rollback_types_ = 0;
    count_rollback_types(confirmed_types | reported_types_in(first_contradicted, old_predicted));
    prune(c);
    predicted_inputs_.clear();
    rebase = true;
  } else {
    prune(c);
  }
  uint64_t limit = c + config_.max_rollback_ticks;
  if (present > limit) ++stats_.stalls;
  uint64_t target = std::min(present, limit);
  predict_to(target, rebase, events);
  if (predicted_tick() >= rollback_end_) rollback_open_ = false;  // its range is re-predicted
}

std::optional<sim::BodyState> Predictor::predicted_body(uint32_t id) const {
  const sim::World& w = predicted().world();
  sim::BodyId b = w.find_body(id);
  if (!w.is_valid(b)) return std::nullopt;
  return w.body_state(b);
}

bool Predictor::perturb_for_test() {
  // Find a dynamic body's position bytes in the canonical state and flip the lowest
  // mantissa bit of its x: a change the state keeps, so the next hash must differ.
  std::vector<uint8_t> state = confirmed().save_state();
  const sim::World& w = confirmed().world();
  for (sim::BodyId id : w.bodies()) {
    sim::BodyState b = w.body_state(id);
    if (b.motion != sim::MotionType::Dynamic) continue;
    uint8_t pattern[12];
    std::memcpy(pattern, &b.position.x, 4);  // canonical state is little-endian, as is x86/arm
    std::memcpy(pattern + 4, &b.position.y, 4);
    std::memcpy(pattern + 8, &b.position.z, 4);
    auto at = std::search(state.begin(), state.end(), pattern, pattern + 12);
    if (at == state.end()) continue;
    *at ^= 1u;
    if (!confirmed_.restore(state)) return false;
    (void)predicted_.restore(state);
    return true;
  }
  return false;
}

}  // namespace keel::client
