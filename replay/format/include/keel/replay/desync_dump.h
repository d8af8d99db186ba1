// A desync dump: one match state at one tick, written by whoever notices a desync (a
// client whose predicted hash disagrees with the server's, a server cross-checking a
// peer) so that `keel-replay diff REC DUMP` can name the bodies that differ.
//
// Layout (little-endian): magic "KEELDSYN" | u32 version (2) | u64 tick | u64 hash
// (Match::hash of the state) | u64 expected hash (the authority's, 0 if unknown) |
// u32 note length | note (UTF-8) | u32 game length | game (GameSpec::name) |
// u64 state length | state (Match::save_state) | u64 XXH3-64 of every byte before it. docs/recording-format.md has the table.
#pragma once

#include <keel/base/expected.h>
#include <keel/game/match.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace keel::replay {

inline constexpr std::array<uint8_t, 8> kDesyncDumpMagic = {'K', 'E', 'E', 'L', 'D', 'S', 'Y', 'N'};
inline constexpr uint32_t kDesyncDumpVersion = 2;  ///< 2: the game is named
/// The one file name ending for a desync dump, whoever writes it (keel-server beside its
/// recording, a predicting client in its dump directory). Readers go by the magic.
inline constexpr const char* kDesyncDumpExtension = ".kdsy";

struct DesyncDump {
  uint64_t tick = 0;
  uint64_t hash = 0;           ///< Match::hash() of `state`
  uint64_t expected_hash = 0;  ///< what the authority's hash for this tick was; 0 = unknown
  std::string note;            ///< who wrote it and with what build (free text)
  std::string game;            ///< GameSpec::name of the match: what the state is restored into
  std::vector<uint8_t> state;  ///< Match::save_state()
};

/// A dump of `match` as it is now. The note defaults to this build's description.
DesyncDump make_desync_dump(const game::Match& match, uint64_t expected_hash = 0, std::string note = {});
std::vector<uint8_t> encode_desync_dump(const DesyncDump& dump);
/// Untrusted bytes: magic, version, lengths and checksum are all checked, and the state
/// must hash to the recorded hash.
keel::Expected<DesyncDump> decode_desync_dump(std::span<const uint8_t> bytes);
/// True when `bytes` start with the desync dump magic.
bool looks_like_desync_dump(std::span<const uint8_t> bytes);

/// Writes make_desync_dump(match, expected_hash, note) to `path` (created or truncated).
keel::Status write_desync_dump(const std::string& path, const game::Match& match, uint64_t expected_hash = 0,
                              std::string note = {});
keel::Expected<DesyncDump> read_desync_dump(const std::string& path);

}  // namespace keel::replay
