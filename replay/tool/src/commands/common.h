// Helpers shared by the keel-replay commands.
#pragma once

#include <keel/replay/commands.h>
#include <keel/replay/reader.h>
#include <keel/game/match.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace keel::replay::cli::detail {

/// A one-line progress bar redrawn on `err` (only when enabled; never on a pipe).
class Progress {
 public:
  Progress(Io io, std::string label) : io_(io), label_(std::move(label)) {}
  ~Progress() { done(); }
  void update(uint64_t done, uint64_t total);
  void done();

 private:
  Io io_;
  std::string label_;
  bool drawn_ = false;
  int last_permille_ = -1;
};

/// Every body (sorted by id) and player of a match as JSON, in the keel-sim
/// --dump-final vocabulary plus motion type and players.
nlohmann::ordered_json match_json(const game::Match& match);
/// A tick's inputs and events by the game's declared names (dump, export).
nlohmann::ordered_json inputs_json(const game::GameSpec& spec, const game::TickInputs& inputs);
nlohmann::ordered_json events_json(const game::GameSpec& spec, const std::vector<game::GameEvent>& events);

/// Where two recordings first differ: `tick` is the first tick both hold whose hashes
/// differ (nullopt when every common tick matches), `inputs_at` the first whose inputs do.
/// `diff` and `view --against` both start from it.
struct FirstDifference {
  std::optional<uint64_t> tick;
  uint64_t hash_a = 0, hash_b = 0;
  std::optional<uint64_t> inputs_at;
  uint64_t common_last = 0;
};
FirstDifference first_difference(const Recording& a, const Recording& b);

/// The hash a recording holds for `tick`, if it reaches it.
std::optional<uint64_t> recorded_hash_at(const Recording& rec, uint64_t tick);

/// A float printed so that it reads back to the same bits.
std::string exact(float v);

}  // namespace keel::replay::cli::detail
