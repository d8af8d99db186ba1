// MatchTimeline: a match, its one hash per tick, a bounded history, and its observers.
#include <keel/game/timeline.h>

namespace keel::game {

PlayerInput missing_input(const Match& match, std::span<const PlayerEvent> events, uint32_t player) {
  for (const PlayerEvent& e : events) {
    if (e.kind == PlayerEvent::Kind::Join && e.player == player) return PlayerInput(player, InputFrame{});
  }
  const PlayerSlot* slot = match.find_player(player);
  if (slot == nullptr) return PlayerInput(player, InputFrame{});
  return PlayerInput(player, slot->last_input, slot->view);
}

MatchTimeline::MatchTimeline(Match match, TimelineHistory history)
    : match_(std::move(match)), limits_(history) {
  restart_history();
}

StepResult MatchTimeline::step(const TickInputs& inputs) {
  const uint64_t from = match_.tick();
  match_.step(inputs);
  // Hashed once: every observer and the history share this one value.
  const uint64_t hash = match_.hash();
  remember(from, hash, inputs);
  const TimelineStep seen{from, inputs, match_, hash};
  for (const Observer& o : observers_) o(seen);
  return StepResult{match_.tick(), hash};
}

void MatchTimeline::remember(uint64_t from_tick, uint64_t hash, const TickInputs& inputs) {
  if (limits_.hash_ticks != 0) {
    hashes_.emplace_back(from_tick + 1, hash);
    while (hashes_.size() > limits_.hash_ticks) hashes_.pop_front();
  }
  if (limits_.state_every == 0 || limits_.states_kept == 0) return;
  inputs_.emplace_back(from_tick, inputs);
  // A saved state every state_every ticks bounds a rebuild to that many re-steps; it is
  // the only copy of the state the history makes.
  if (match_.tick() % limits_.state_every == 0) saved_.emplace_back(match_.tick(), match_.save_state());
  while (saved_.size() > limits_.states_kept) saved_.pop_front();
  const uint64_t oldest = saved_.empty() ? match_.tick() : saved_.front().first;
  while (!inputs_.empty() && inputs_.front().first < oldest) inputs_.pop_front();
}

void MatchTimeline::restart_history() {
  hashes_.clear();
  inputs_.clear();
  saved_.clear();
  if (limits_.state_every != 0 && limits_.states_kept != 0) saved_.emplace_back(match_.tick(), match_.save_state());
}

Status MatchTimeline::restore_and_step(std::span<const uint8_t> state, uint64_t to_tick, const Restep& how) {
  if (!state.empty()) {
    if (Status st = match_.restore_state(state); !st) return st;
  }
  TickInputs in;
  while (match_.tick() < to_tick && how.inputs) {
    in = TickInputs{};
    if (!how.inputs(match_, in)) break;
    match_.step(in);
    if (how.stepped) how.stepped(match_, in);
  }
  restart_history();
  return Status::ok();
}

std::optional<Match> MatchTimeline::rebuild(uint64_t tick, Match scratch) const {
  const std::vector<uint8_t>* base = nullptr;
  uint64_t base_tick = 0;
  for (const auto& [t, bytes] : saved_) {
    if (t <= tick) {
      base = &bytes;
      base_tick = t;
    }
  }
  if (base == nullptr) return std::nullopt;
  MatchTimeline again(std::move(scratch));
  auto next = inputs_.begin();
  while (next != inputs_.end() && next->first < base_tick) ++next;
  Restep from_log;
  from_log.inputs = [&](const Match& m, TickInputs& out) {
    if (next == inputs_.end() || next->first != m.tick()) return false;
    out = next->second;
    ++next;
    return true;
  };
  if (!again.restore_and_step(*base, tick, from_log) || again.tick() != tick) return std::nullopt;
  return again.release();
}

std::optional<uint64_t> MatchTimeline::hash_at(uint64_t tick) const {
  if (hashes_.empty() || tick < hashes_.front().first || tick > hashes_.back().first) return std::nullopt;
  return hashes_[tick - hashes_.front().first].second;
}

const TickInputs* MatchTimeline::inputs_at(uint64_t tick) const {
  if (inputs_.empty() || tick < inputs_.front().first || tick > inputs_.back().first) return nullptr;
  return &inputs_[tick - inputs_.front().first].second;
}

}  // namespace keel::game
