// The one rule for every name a game declares (fields, labels, state, events, the game):
// 1..32 bytes of [a-z0-9_], so tools can print and parse them without quoting.
#pragma once

#include <keel/base/expected.h>

#include <string>

namespace keel::game {

inline keel::Status check_name(const std::string& name, const std::string& what) {
  bool ok = !name.empty() && name.size() <= 32;
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (ok) return keel::Status::ok();
  return keel::Error{what + " \"" + name.substr(0, 40) + "\" must be 1 to 32 characters of a-z, 0-9 and _"};
}

}  // namespace keel::game
