// A description built from another Keel version: its copy of the game layer and the
// physics could lay out the Match and the World differently from the loading program's,
// so the loader must refuse it before making its rules.
#include "rules_stub.h"

#include <keel/game/module.h>

extern "C" __attribute__((visibility("default"))) const KeelGameModule* keel_game_module(void) {
  static const KeelGameModule module = {
      KEEL_GAME_ABI_VERSION,
      sizeof(KeelGameModule),
      "stub",
      "0.0.0-other",
      []() -> void* { return static_cast<keel::game::Rules*>(new keel::test_modules::StubRules()); },
      [](void* r) { delete static_cast<keel::game::Rules*>(r); },
      nullptr};
  return &module;
}
