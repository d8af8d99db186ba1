// libFuzzer: the Agones SDK sidecar's GameServer JSON (GET /gameserver and the watch
// stream), as keel-server reads it: parse_agones_gameserver, then what the server takes
// from a report — the public address tokens name and the allocation's match settings.
// The sidecar is local but its JSON carries labels and annotations anyone allocating the
// server may set, so every field is untrusted.
// Input: [port name length:u8][port name][max players cap:u8] then the JSON text.
#include <keel/server/agones.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace ks = keel::server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 256 * 1024) return -1;
  size_t name_len = std::min<size_t>(data[0], size - 2);
  std::string port_name(reinterpret_cast<const char*>(data + 1), name_len);
  uint32_t cap = 1 + data[1 + name_len];
  std::string json(reinterpret_cast<const char*>(data + 2 + name_len), size - 2 - name_len);
  auto gs = ks::parse_agones_gameserver(json);
  if (!gs) return 0;
  auto address = ks::agones_public_address(*gs, port_name);
  if (address && address->empty()) std::abort();
  ks::AllocationSettings s = ks::read_allocation_settings(*gs, cap);
  // What passes the checks is what the server would use: in range, a bare file name.
  if (s.max_players && (*s.max_players < 1 || *s.max_players > cap)) std::abort();
  if (s.tick_rate && *s.tick_rate != 30 && *s.tick_rate != 60 && *s.tick_rate != 120) std::abort();
  if (s.scene && (s.scene->empty() || s.scene->find('/') != std::string::npos)) std::abort();
  return 0;
}
