// Helpers shared by the keel-replay commands.
#pragma once

#include <keel/replay/commands.h>
#include <keel/sim/match.h>

#include <nlohmann/json.hpp>

#include <cstdint>
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
nlohmann::ordered_json match_json(const sim::Match& match);

/// A float printed so that it reads back to the same bits.
std::string exact(float v);

}  // namespace keel::replay::cli::detail
