// A sound game whose own self-check fails: the loader must refuse it with the check's
// message.
#include "rules_stub.h"

#include <keel/game/module.h>

namespace {
const char* check() { return "the tuning table is empty"; }
using Rules = keel::test_modules::StubRules;
}  // namespace

KEEL_GAME_MODULE("stub", Rules, check)
