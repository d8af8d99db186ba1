// The smallest valid game, shared by the refused modules: each of them breaks exactly one
// thing the loader checks, so its refusal can only have one reason.
#pragma once

#include <keel/game/rules.h>

#include <string>

namespace keel::test_modules {

class StubRules : public game::Rules {
 public:
  explicit StubRules(std::string name = "stub") : name_(std::move(name)) {}
  game::GameSpec spec() const override {
    game::GameSpec spec;
    spec.name = name_;
    spec.input.add_bool("go");
    return spec;
  }

 private:
  std::string name_;
};

}  // namespace keel::test_modules
