// A description named "alpha" whose rules call themselves "beta": a recording of one
// would be replayed with the other, so the loader must refuse it.
#include "rules_stub.h"

#include <keel/game/module.h>

namespace {

class BetaRules final : public keel::test_modules::StubRules {
 public:
  BetaRules() : StubRules("beta") {}
};

}  // namespace

KEEL_GAME_MODULE("alpha", BetaRules, nullptr)
