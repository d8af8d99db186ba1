// The Keel recording format (.krec): constants, the records it holds, and the encoders
// and decoders of each chunk's payload. docs/recording-format.md describes it byte by
// byte; this header is the code's side of that description.
//
// A file is a 16-byte preamble, then chunks, each framed as
//   u32 type | u32 payload length | u32 frame check | payload | u64 XXH3-64 of all before
// then, when the writer finished cleanly, a footer chunk and a 16-byte tail. The frame
// check (XXH3 of type and length) lets a reader trust a length before it reads the
// payload, tell a damaged length from a file cut short, and find the next chunk after
// damage by scanning. Everything is little-endian. Chunks are only ever appended, so a
// file cut short by a crash is a valid prefix plus at most one partial chunk.
#pragma once

#include <keel/base/expected.h>
#include <keel/game/match.h>
#include <keel/game/rules.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace keel::replay {

/// First 8 bytes of every recording. The high first byte and the CR LF / ^Z catch
/// transfers that mangle binary files (the PNG trick).
inline constexpr std::array<uint8_t, 8> kRecordingMagic = {0x89, 'K', 'R', 'E', 'C', '\r', '\n', 0x1a};
/// Last 8 bytes of a finished recording (after the footer's offset).
inline constexpr std::array<uint8_t, 8> kTailMagic = {'K', 'R', 'E', 'C', 'T', 'A', 'I', 'L'};

/// The format version this code writes and the only one it reads (older files are
/// refused with a message that says so; version 3 stores a game's own input layout). Additions that old readers can ignore (new
/// chunk types, fields appended to a payload) keep the version; anything else bumps it.
inline constexpr uint32_t kFormatVersion = 3;

inline constexpr size_t kPreambleBytes = 16;    ///< magic, version, check
inline constexpr size_t kChunkHeadBytes = 12;   ///< type, length, frame check
inline constexpr size_t kChunkFrameBytes = 20;  ///< the head before, the checksum after
inline constexpr size_t kTailBytes = 16;

/// Limits that keep a hostile file from exhausting memory. A checkpoint's limit is not a
/// constant: max_checkpoint_state_bytes() derives it from the recording's scene.
inline constexpr uint32_t kMaxChunkPayload = 1u << 30;            ///< 1 GiB (a header's scene)
inline constexpr uint32_t kMaxTickPayload = 2u << 20;             ///< 2 MiB: ~100,000 inputs
inline constexpr uint32_t kMaxSmallPayload = 4096;                ///< sync chunks
inline constexpr uint64_t kMaxCheckpointStateBytes = 1ull << 31;  ///< 2 GiB: the cap on the scene's limit
inline constexpr uint32_t kMaxStringBytes = 1u << 16;
inline constexpr uint32_t kMaxMetadataEntries = 1024;
inline constexpr uint32_t kMaxCheckpointsInFooter = 1u << 24;
inline constexpr uint32_t kMaxLostRangesInFooter = 1u << 20;

enum class ChunkType : uint32_t {
  Header = 1,      ///< exactly one, first
  Tick = 2,        ///< one per tick, consecutive
  Checkpoint = 3,  ///< the full match state after a tick chunk
  Footer = 4,      ///< the checkpoint index; last chunk of a finished file
  HeaderCopy = 5,  ///< the header's payload again, right after it: one damaged copy loses nothing
  Sync = 6,        ///< written at every flush: how far the writer had got (what a crash can lose)
};

/// "Header", "Tick", ... or "unknown".
const char* to_string(ChunkType t);

enum class Compression : uint8_t { None = 0, Zstd = 1 };

/// What the header chunk says: who made the file, and what to build the match from.
struct Header {
  uint32_t format_version = kFormatVersion;  ///< from the preamble
  std::string keel_version;    ///< e.g. "0.1.0"
  std::string build_id;        ///< version + commit at configure time
  std::string compiler;        ///< e.g. "GNU 12.2.0"
  std::string compiler_flags;  ///< flags every source of that build was compiled with
  std::string target;          ///< CPU architecture, e.g. "x86_64"
  std::string game;            ///< GameSpec::name of the match, e.g. "sandbox"
  uint64_t start_tick = 0;     ///< first tick recorded; > 0 means a checkpoint follows it
  uint32_t tick_rate = 60;
  uint32_t checkpoint_interval = 600;
  /// The writer flushes at least every this many ticks: what a crash can lose at most.
  uint32_t flush_every_ticks = 60;
  Compression checkpoint_compression = Compression::None;
  /// Free-form key/value pairs the writer's owner adds (server: match id, start time, ...).
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<uint8_t> scene;  ///< scene::scene_to_binary of the match's scene
  std::vector<uint8_t> game_spec;  ///< game::write_spec of the game: layouts, state, events
  std::string game_module;         ///< the module's file name; empty for a game linked in
  std::string game_build_id;       ///< the module's build id (XXH3 of its file); empty when linked in
  uint64_t game_seed = 0;          ///< Match::seed() the match was created with
};

/// The game spec a header stores, checked (and named as the header names its game).
keel::Expected<game::GameSpec> header_spec(const Header& h);

/// One tick: what Match::step received, the game events it emitted, and the match hash
/// after it. The first tick of a recording (tick start_tick) has no inputs; its hash is
/// the starting state's.
struct TickRecord {
  uint64_t tick = 0;
  uint64_t hash = 0;
  game::TickInputs inputs;
  std::vector<game::GameEvent> events;
};

/// Checks a decoded tick's input codes and events against the recording's game: a code
/// out of its range, an event type the game does not declare.
keel::Status check_tick_against(const TickRecord& t, const game::GameSpec& spec);

/// A full match state (Match::save_state bytes, uncompressed here) after tick `tick`.
struct Checkpoint {
  uint64_t tick = 0;
  uint64_t hash = 0;  ///< Match::hash() of `state`; equals the tick record's hash
  std::vector<uint8_t> state;
};

struct CheckpointRef {
  uint64_t tick = 0;
  uint64_t offset = 0;  ///< file offset of the checkpoint chunk's frame
  friend bool operator==(const CheckpointRef&, const CheckpointRef&) = default;
};

/// Ticks first..last, both included. `up_to`: `last` is only an upper bound (the tail a
/// crash lost: the writer may have got less far).
struct TickRange {
  uint64_t first = 0;
  uint64_t last = 0;
  bool up_to = false;
  uint64_t count() const { return last - first + 1; }
  friend bool operator==(const TickRange&, const TickRange&) = default;
};

/// "41..59", or "96..up to 110".
std::string to_string(const TickRange& r);

struct Footer {
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;
  std::vector<CheckpointRef> checkpoints;  ///< ascending by tick
  /// Ticks a recovered file does not hold (recover writes them; a writer none).
  std::vector<TickRange> lost;
};

/// The largest checkpoint state (uncompressed Match::save_state bytes) a match of this
/// scene and game can produce, with room to spare (docs/recording-format.md gives the formula):
/// every checkpoint of a recording of `scene` is refused above it before anything is
/// allocated, whatever the file claims. At most kMaxCheckpointStateBytes.
uint64_t max_checkpoint_state_bytes(const sim::SceneDef& scene, const game::GameSpec& spec);
/// The largest checkpoint chunk payload that can hold a state of `state_limit` bytes.
uint64_t max_checkpoint_payload(uint64_t state_limit);

// Payload encoders: append one chunk's payload (no frame) to `out`.
void encode_header(const Header& h, std::vector<uint8_t>& out);
void encode_tick(const TickRecord& t, std::vector<uint8_t>& out);
/// `compression` is applied to the state bytes; Zstd falls back to None if it fails.
void encode_checkpoint(const Checkpoint& c, Compression compression, std::vector<uint8_t>& out);
void encode_footer(const Footer& f, std::vector<uint8_t>& out);

// Payload decoders: the payload is untrusted; errors say which field is wrong. Bytes
// past the fields this version knows are ignored (room for compatible additions).
keel::Expected<Header> decode_header(std::span<const uint8_t> payload);
keel::Expected<TickRecord> decode_tick(std::span<const uint8_t> payload);
/// Decompresses and checks the state against the checkpoint's own hash. A state that
/// claims more than `max_state_bytes` is refused before anything is allocated.
keel::Expected<Checkpoint> decode_checkpoint(std::span<const uint8_t> payload,
                                            uint64_t max_state_bytes = kMaxCheckpointStateBytes);
/// Reads only a checkpoint's tick and hash (no decompression).
keel::Expected<std::pair<uint64_t, uint64_t>> peek_checkpoint(std::span<const uint8_t> payload);
keel::Expected<Footer> decode_footer(std::span<const uint8_t> payload);
/// A sync chunk's payload: the last tick written before the flush it precedes.
void encode_sync(uint64_t tick, std::vector<uint8_t>& out);
keel::Expected<uint64_t> decode_sync(std::span<const uint8_t> payload);

/// The 16-byte preamble for `version`: magic, version, and a check over both.
std::vector<uint8_t> encode_preamble(uint32_t version = kFormatVersion);

/// What the preamble says. Only Ok is a sound preamble; for the rest the reader still
/// looks for a sound header chunk (a damaged preamble costs nothing when it finds one).
struct Preamble {
  enum class Status { Ok, Damaged, Older, Newer, NotARecording };
  Status status = Status::NotARecording;
  uint32_t version = 0;  ///< as stored (trustworthy only when Ok)
  std::string why;       ///< the message for anything but Ok
};
Preamble decode_preamble(std::span<const uint8_t> bytes);

/// Frames a payload: type, length, frame check, payload, checksum.
void frame_chunk(ChunkType type, std::span<const uint8_t> payload, std::vector<uint8_t>& out);
void frame_chunk(uint32_t type, std::span<const uint8_t> payload, std::vector<uint8_t>& out);
/// The frame check: the low 32 bits of XXH3-64 of the little-endian type and length.
uint32_t frame_check(uint32_t type, uint32_t length);
/// XXH3-64 of a frame's head and payload (what the checksum field holds).
uint64_t chunk_checksum(std::span<const uint8_t> head_and_payload);

/// The tail after a footer chunk: the footer's offset, then kTailMagic.
std::vector<uint8_t> encode_tail(uint64_t footer_offset);

/// Hash as 16 lowercase hex digits (the form every tool prints).
std::string hex_hash(uint64_t h);

}  // namespace keel::replay
