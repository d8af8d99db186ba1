// Game modules: dlopen, the versioned entry point, and the checks a module must pass.
#include "module_loader.h"

#include <keel/game/module.h>

#include <xxhash.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

namespace keel::game {

namespace {

// The library stays open while a factory (or a Rules it made) may still call into it.
struct ModuleHandle {
  void* handle = nullptr;
  const KeelGameModule* module = nullptr;
  ~ModuleHandle() = default;  // never dlclose: Rules objects may outlive every factory copy
};

Expected<std::string> file_build_id(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"game module " + path + " cannot be read"};
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    XXH3_64bits_update(st, buf, size_t(in.gcount()));
  }
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex);
}

bool has_text(const char* s, size_t max) { return s != nullptr && std::memchr(s, 0, max) != nullptr && s[0] != 0; }

#ifndef KEEL_HOST_VERSION_STRING
#error "keel_game is built with KEEL_HOST_VERSION_STRING (game/CMakeLists.txt)"
#endif

// The module's own copy of the game layer and the physics works on the host's objects
// (the Match, the World) and the host on the module's (its Rules): both copies must have
// the same layouts, so they must come from the same Keel.
Status check_same_keel(const std::string& path, const KeelGameModule& m) {
  if (!has_text(m.keel_version, 64)) {
    return Error{"game module " + path + " does not say which Keel version it was built from"};
  }
  if (std::strcmp(m.keel_version, KEEL_HOST_VERSION_STRING) != 0) {
    return Error{"game module " + path + " was built from Keel " + std::string(m.keel_version) +
                 "; this program is Keel " KEEL_HOST_VERSION_STRING " (rebuild the module against this Keel)"};
  }
  return {};
}

}  // namespace

Expected<LoadedModule> load_game_module(const std::string& path) {
  auto build_id = file_build_id(path);
  if (!build_id) return build_id.error();
  // A path without a slash would be searched for in the library path; a module is a file.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error{"game module " + path + " cannot be loaded: " + (why ? why : "unknown error")};
  }
  auto entry = reinterpret_cast<KeelGameModuleEntry>(dlsym(handle, KEEL_GAME_ENTRY_SYMBOL));
  if (entry == nullptr) {
    return Error{"game module " + path + " has no entry point " KEEL_GAME_ENTRY_SYMBOL
                 " (write one with KEEL_GAME_MODULE from keel/game/module.h)"};
  }
  const KeelGameModule* m = entry();
  if (m == nullptr) return Error{"game module " + path + ": its entry point returned nothing"};
  if (m->abi_version != KEEL_GAME_ABI_VERSION) {
    return Error{"game module " + path + " was built for game ABI version " + std::to_string(m->abi_version) +
                 "; this program loads version " + std::to_string(KEEL_GAME_ABI_VERSION) +
                 " (rebuild the module against this Keel)"};
  }
  if (m->struct_size < sizeof(KeelGameModule) || !has_text(m->name, 64) || m->create_rules == nullptr ||
      m->destroy_rules == nullptr) {
    return Error{"game module " + path + " has an incomplete description (name, create_rules, destroy_rules)"};
  }
  if (Status st = check_same_keel(path, *m); !st) return st.error();
  if (m->self_check != nullptr) {
    if (const char* problem = m->self_check()) {
      return Error{"game module " + path + " failed its own self-check: " + std::string(problem).substr(0, 500)};
    }
  }
  auto holder = std::make_shared<ModuleHandle>();
  holder->handle = handle;
  holder->module = m;
  RulesFactory factory = [holder]() -> std::unique_ptr<Rules> {
    void* r = holder->module->create_rules();
    return std::unique_ptr<Rules>(static_cast<Rules*>(r));
  };
  // Built once: the spec must be valid and carry the name the description gives. The
  // module's code may throw; that refuses it.
  GameSpec spec;
  try {
    std::unique_ptr<Rules> probe = factory();
    if (!probe) return Error{"game module " + path + ": create_rules returned nothing"};
    spec = probe->spec();
  } catch (const std::exception& e) {
    return Error{"game module " + path + " threw while making its rules: " + std::string(e.what()).substr(0, 300)};
  } catch (...) {
    return Error{"game module " + path + " threw while making its rules"};
  }
  if (Status st = spec.validate(); !st) return Error{"game module " + path + " declares an invalid game: " + st.error().message};
  if (spec.name != m->name) {
    return Error{"game module " + path + " is named \"" + std::string(m->name) + "\" but its rules call themselves \"" +
                 spec.name + "\""};
  }
  return LoadedModule{spec.name, *build_id, std::move(factory)};
}

}  // namespace keel::game
