// RulesRegistry: games by name, linked in or loaded from game modules.
#include <keel/game/registry.h>

#include "module_loader.h"

namespace keel::game {

RulesRegistry& RulesRegistry::add(std::string name, RulesFactory factory, GameOrigin origin) {
  games_[std::move(name)] = Entry{std::move(factory), std::move(origin)};
  return *this;
}

RulesRegistry& RulesRegistry::add(RulesFactory factory) {
  // Built once to learn the name the rules record; the object is not kept.
  std::string name = factory ? factory()->spec().name : std::string();
  return add(std::move(name), std::move(factory));
}

Status RulesRegistry::add_module(const std::string& path) {
  auto loaded = load_game_module(path);
  if (!loaded) return loaded.error();
  std::string name = loaded->name;
  add(name, std::move(loaded->factory), GameOrigin{path, loaded->build_id});
  module_game_ = name;
  return Status::ok();
}

std::vector<std::string> RulesRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : games_) out.push_back(name);
  return out;
}

Expected<RulesFactory> RulesRegistry::factory(const std::string& name) const {
  auto it = games_.find(name);
  if (it == games_.end() || !it->second.factory) {
    std::string known;
    for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
    return Error{"game \"" + name + "\" is not known to this program (it knows: " + (known.empty() ? "none" : known) +
                 "; load a game module with --game PATH)"};
  }
  return it->second.factory;
}

Expected<std::unique_ptr<Rules>> RulesRegistry::make(const std::string& name) const {
  auto f = factory(name);
  if (!f) return f.error();
  std::unique_ptr<Rules> rules = (*f)();
  // A factory registered under one name but building another game would replay a
  // recording with the wrong rules and report a desync that is not one.
  std::string made = rules ? rules->spec().name : std::string();
  if (!rules || made != name) {
    return Error{"the factory registered for game \"" + name + "\" makes " +
                 (rules ? "a game named \"" + made + "\"" : std::string("nothing"))};
  }
  return rules;
}

GameOrigin RulesRegistry::origin(const std::string& name) const {
  auto it = games_.find(name);
  return it == games_.end() ? GameOrigin{} : it->second.origin;
}

}  // namespace keel::game
