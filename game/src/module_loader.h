// Loading a game module (keel/game/module.h) with dlopen and checking it before use.
#pragma once

#include <keel/game/registry.h>

#include <string>

namespace keel::game {

struct LoadedModule {
  std::string name;
  std::string build_id;  // XXH3-64 of the file's bytes, 16 hex digits
  RulesFactory factory;  // keeps the library loaded while any copy of it lives
};

/// Opens `path`, finds keel_game_module, checks the ABI version, the description's
/// fields and the module's self-check, and builds its rules once to check the spec.
/// Every refusal says which check failed.
Expected<LoadedModule> load_game_module(const std::string& path);

}  // namespace keel::game
