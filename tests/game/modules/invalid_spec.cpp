// A game whose spec declares an input field with a name outside [a-z0-9_]: the loader
// builds the rules once and must refuse the spec.
#include "rules_stub.h"

#include <keel/game/module.h>

namespace {

class BadNameRules final : public keel::test_modules::StubRules {
 public:
  keel::game::GameSpec spec() const override {
    keel::game::GameSpec spec = StubRules::spec();
    spec.input.add_bool("Jump!");
    return spec;
  }
};

}  // namespace

KEEL_GAME_MODULE("stub", BadNameRules, nullptr)
