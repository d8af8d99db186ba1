// A description built for a game ABI this Keel does not speak (version 99): the loader
// must refuse it before touching any other field.
#include "rules_stub.h"

#include <keel/game/module.h>

extern "C" __attribute__((visibility("default"))) const KeelGameModule* keel_game_module(void) {
  static const KeelGameModule module = {
      99u,
      sizeof(KeelGameModule),
      "stub",
      KEEL_VERSION_STRING,
      []() -> void* { return static_cast<keel::game::Rules*>(new keel::test_modules::StubRules()); },
      [](void* r) { delete static_cast<keel::game::Rules*>(r); },
      nullptr};
  return &module;
}
