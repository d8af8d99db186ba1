/* keel/game/module.h — the entry point of a game module: a shared library that a Keel
 * program (keel-server, keel-replay, keel-bot, keel-sim) loads with dlopen, so a game
 * runs on Keel without rebuilding it.
 *
 * A module is built against the installed package alone (find_package(Keel),
 * keel_add_game_module) and exports one C symbol, keel_game_module, returning a
 * description whose first field is the ABI version. The rules behind it are a C++
 * keel::game::Rules subclass. A module is self-contained: it links its own private copy
 * of the game layer and the physics and needs no symbol of the program that loads it, so
 * a program that links only libkeel_client.so (a Python process, an engine) loads it
 * too. The module's copy and the program's share objects (the Match, the World, the
 * Rules), so both must come from the same Keel version: the loader compares
 * keel_version with its own and refuses another. Write the entry point with
 * KEEL_GAME_MODULE (below). docs/game-rules.md has the walk-through.
 */
#pragma once

#include <stdint.h>

/* 2: modules carry their own Keel (version 1 modules called into the host's) and must
 * be built from the loading program's Keel version.
 * 3: Match, GameSpec and PlayerInput gained lag compensation (the pose history and
 * view stamps), so a version 2 module's objects have other layouts. */
#define KEEL_GAME_ABI_VERSION 3u
#define KEEL_GAME_ENTRY_SYMBOL "keel_game_module"

#ifdef __cplusplus
extern "C" {
#endif

/* What keel_game_module returns. Fields are only ever appended; struct_size tells how
 * many this module has. */
typedef struct KeelGameModule {
  uint32_t abi_version;     /* KEEL_GAME_ABI_VERSION the module was built with */
  uint32_t struct_size;     /* sizeof(KeelGameModule) at build time */
  const char* name;         /* the game's name, equal to its GameSpec::name */
  const char* keel_version; /* the Keel version the module was built against; must be the host's */
  void* (*create_rules)(void);       /* a new keel::game::Rules (C++ object), or NULL */
  void (*destroy_rules)(void* rules);
  /* NULL when the module is sound, else a message saying what is wrong; the loader
   * refuses a module whose self-check fails. */
  const char* (*self_check)(void);
} KeelGameModule;

typedef const KeelGameModule* (*KeelGameModuleEntry)(void);

#ifdef __cplusplus
}  /* extern "C" */

#include <keel/game/rules.h>

#ifndef KEEL_VERSION_STRING
#define KEEL_VERSION_STRING "unknown"
#endif

/* Defines the entry point for Rules class `RULES` (default constructible) with
 * self-check function `CHECK` (const char* CHECK(), NULL when sound). */
#define KEEL_GAME_MODULE(NAME, RULES, CHECK)                                            \
  extern "C" __attribute__((visibility("default"))) const KeelGameModule*              \
  keel_game_module(void) {                                                             \
    static const KeelGameModule module = {                                             \
        KEEL_GAME_ABI_VERSION,                                                         \
        sizeof(KeelGameModule),                                                        \
        NAME,                                                                          \
        KEEL_VERSION_STRING,                                                           \
        []() -> void* { return static_cast<::keel::game::Rules*>(new RULES()); },     \
        [](void* r) { delete static_cast<::keel::game::Rules*>(r); },                  \
        CHECK};                                                                        \
    return &module;                                                                    \
  }
#endif
