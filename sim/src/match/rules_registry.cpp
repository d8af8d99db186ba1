#include <keel/sim/rules_registry.h>

namespace keel::sim {

RulesRegistry RulesRegistry::builtin() {
  RulesRegistry r;
  r.add("sandbox", [] { return std::make_unique<SandboxRules>(); });
  return r;
}

RulesRegistry& RulesRegistry::add(std::string name, RulesFactory factory) {
  factories_[std::move(name)] = std::move(factory);
  return *this;
}

RulesRegistry& RulesRegistry::add(RulesFactory factory) {
  // Built once to learn the name the rules record; the object is not kept.
  std::string name = factory ? factory()->name() : std::string();
  return add(std::move(name), std::move(factory));
}

std::vector<std::string> RulesRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : factories_) out.push_back(name);
  return out;
}

Expected<std::unique_ptr<Rules>> RulesRegistry::make(const std::string& name) const {
  auto it = factories_.find(name);
  if (it == factories_.end() || !it->second) {
    std::string known;
    for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
    return Error{"rules \"" + name + "\" are not known to this program (it knows: " +
                 (known.empty() ? "none" : known) + ")"};
  }
  std::unique_ptr<Rules> rules = it->second();
  // A factory registered under one name but building other rules would replay a
  // recording with the wrong rules and report a desync that is not one.
  if (!rules || rules->name() != name) {
    return Error{"the factory registered for rules \"" + name + "\" makes " +
                 (rules ? "rules named \"" + rules->name() + "\"" : std::string("nothing"))};
  }
  return rules;
}

}  // namespace keel::sim
