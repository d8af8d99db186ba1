// keel::game::RulesRegistry — games by name. A recording names the game its match ran
// (GameSpec::name), so every program that rebuilds a match from a name — the replay
// tool, the bot, keel-sim, tests — looks the name up here. A program registers the games
// it links in (add) and the game modules it is given (add_module, keel/game/module.h).
#pragma once

#include <keel/game/match.h>
#include <keel/base/expected.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace keel::game {

/// Makes a fresh Rules object (one per match: rules may keep per-match settings).
using RulesFactory = std::function<std::unique_ptr<Rules>()>;

/// Where a game came from: linked in, or a module file with its build id.
struct GameOrigin {
  std::string module_path;  ///< empty for a game linked into the program
  std::string build_id;     ///< XXH3-64 of the module file, 16 hex digits ("" when linked in)
};

class RulesRegistry {
 public:
  RulesRegistry() = default;

  /// Registers `factory` under `name`, replacing any earlier entry of that name.
  /// make() checks that what it builds calls itself `name`.
  RulesRegistry& add(std::string name, RulesFactory factory, GameOrigin origin = {});
  /// Registers rules under the name their spec gives.
  RulesRegistry& add(RulesFactory factory);
  /// Loads a game module (keel/game/module.h) and registers its game; the error says
  /// why a module is refused (not found, no entry point, ABI version, self-check).
  Status add_module(const std::string& path);

  bool knows(const std::string& name) const { return games_.count(name) != 0; }
  /// The registered names, sorted.
  std::vector<std::string> names() const;
  /// New rules of that name, or an error naming the games this registry knows.
  Expected<std::unique_ptr<Rules>> make(const std::string& name) const;
  /// The factory of a registered game, or an error as make() gives.
  Expected<RulesFactory> factory(const std::string& name) const;
  /// Where a registered game came from (empty origin for an unknown name).
  GameOrigin origin(const std::string& name) const;
  /// The one game registered, when exactly one module was added (what a tool given
  /// --game picks), else the empty string.
  const std::string& module_game() const { return module_game_; }

 private:
  struct Entry {
    RulesFactory factory;
    GameOrigin origin;
  };
  std::map<std::string, Entry> games_;
  std::string module_game_;
};

}  // namespace keel::game
