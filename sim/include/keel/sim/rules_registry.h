// keel::sim::RulesRegistry — rules by name. A recording names the rules its match ran
// (Rules::name()), so every program that rebuilds a match from a name — the replay tool,
// a user's own replay tool, tests — looks the name up here. Keel's built-in rules are
// registered by builtin(); a program with its own rules adds them under their name.
#pragma once

#include <keel/sim/expected.h>
#include <keel/sim/match.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace keel::sim {

/// Makes a fresh Rules object (one per match: rules may keep per-match settings).
using RulesFactory = std::function<std::unique_ptr<Rules>()>;

class RulesRegistry {
 public:
  /// An empty registry (knows no rules).
  RulesRegistry() = default;
  /// The rules Keel ships: "sandbox" (SandboxRules).
  static RulesRegistry builtin();

  /// Registers `factory` under `name`, replacing any earlier entry of that name.
  /// make() checks that what it builds calls itself `name`.
  RulesRegistry& add(std::string name, RulesFactory factory);
  /// Registers rules under the name they give themselves.
  RulesRegistry& add(RulesFactory factory);

  bool knows(const std::string& name) const { return factories_.count(name) != 0; }
  /// The registered names, sorted.
  std::vector<std::string> names() const;
  /// New rules of that name, or an error naming the rules this registry knows.
  Expected<std::unique_ptr<Rules>> make(const std::string& name) const;

 private:
  std::map<std::string, RulesFactory> factories_;
};

}  // namespace keel::sim
