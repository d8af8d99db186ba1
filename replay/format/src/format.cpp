// Encoders and decoders of the recording's chunk payloads (docs/recording-format.md).
#include <keel/replay/format.h>

#include <keel/base/byte_io.h>
#include "compress.h"

#include <keel/sim/state_hash.h>
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace keel::replay {

using keel::ByteReader;
using keel::ByteWriter;

namespace {

constexpr size_t kEventBytes = 5;       // u8 kind, u32 player
constexpr size_t kInputBytes = 5;       // u32 player, u8 component count (then the codes)
constexpr size_t kGameEventBytes = 5;   // u32 type, u8 component count (then the codes)
constexpr size_t kViewBytes = 7;        // u32 input index, u16 lag, u8 fraction
constexpr size_t kCheckpointRefBytes = 16;
constexpr size_t kLostRangeBytes = 17;  // u64 first, u64 last, u8 up_to

keel::Error field_error(const char* chunk, const ByteReader& r) {
  return keel::Error{std::string(chunk) + " chunk: " + r.error()};
}

}  // namespace

const char* to_string(ChunkType t) {
  switch (t) {
    case ChunkType::Header: return "header";
    case ChunkType::Tick: return "tick";
    case ChunkType::Checkpoint: return "checkpoint";
    case ChunkType::Footer: return "footer";
    case ChunkType::HeaderCopy: return "header copy";
    case ChunkType::Sync: return "sync";
  }
  return "unknown";
}

std::string to_string(const TickRange& r) {
  if (r.first == r.last && !r.up_to) return std::to_string(r.first);
  return std::to_string(r.first) + ".." + (r.up_to ? "up to " : "") + std::to_string(r.last);
}

// Generous per-item allowances over what sim's canonical state spends on each (a body is
// ~200 bytes, a contact with four points 121, a touching pair 8): a body's 4 KiB covers
// its slot, its character and sixteen contact pairs. Bodies the game makes are counted
// as its spec bounds them (GameSpec::max_bodies_per_player for each of
// kMaxPlayersPerMatch players, plus max_extra_bodies), and its declared state at 8 bytes
// an element.
uint64_t max_checkpoint_state_bytes(const sim::SceneDef& scene, const game::GameSpec& spec) {
  constexpr uint64_t kBase = 1u << 20, kPerBody = 4096, kPerCollider = 2048, kPerJoint = 1024;
  const uint64_t players = game::kMaxPlayersPerMatch;
  uint64_t bodies = scene.bodies.size() + players * spec.max_bodies_per_player + spec.max_extra_bodies;
  uint64_t bytes = kBase + bodies * kPerBody + (scene.joints.size() + scene.characters.size()) * kPerJoint;
  bytes += 8 * (uint64_t(spec.state.global.elements()) + players * spec.state.player.elements());
  bytes += players * 4 * game::kMaxComponents + 12 * game::kMaxTimers;
  // A game's pose history: its frames (12 bytes each) of 32 bytes a body, and each
  // player's view (3 bytes).
  if (spec.pose_history_ticks != 0) {
    bytes += (uint64_t(spec.pose_history_ticks) + 1) * (12 + bodies * game::kPastPoseBytes) + 4 + players * 3;
  }
  for (const sim::BodyDef& b : scene.bodies) {
    for (const sim::ColliderDef& c : b.colliders) {
      bytes += kPerCollider + 12 * uint64_t(c.points.size()) + 4 * uint64_t(c.indices.size()) + 4 * uint64_t(c.heights.size());
    }
  }
  return std::min<uint64_t>(bytes, kMaxCheckpointStateBytes);
}

uint64_t max_checkpoint_payload(uint64_t state_limit) {
  // 25 bytes of fields, then the state stored raw or as a zstd frame (which stays within
  // ZSTD_compressBound: the size plus 1/256 plus a little).
  return 25 + state_limit + state_limit / 128 + 4096;
}

std::string hex_hash(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

// Each chunk's fields are one list over the direction (keel/base/byte_io.h: a ByteWriter
// with a const record, or a FieldReader): the reader's checks sit under IO::kReading.
namespace {

template <class IO, class H>
void visit_header(IO& io, H& h) {
  io.str(h.keel_version, kMaxStringBytes, "keel_version");
  io.str(h.build_id, kMaxStringBytes, "build_id");
  io.str(h.compiler, kMaxStringBytes, "compiler");
  io.str(h.compiler_flags, kMaxStringBytes, "compiler_flags");
  io.str(h.target, kMaxStringBytes, "target");
  io.str(h.game, kMaxStringBytes, "game");
  io.u64(h.start_tick);
  io.u32(h.tick_rate);
  io.u32(h.checkpoint_interval);
  io.u32(h.flush_every_ticks);
  uint8_t compression = uint8_t(h.checkpoint_compression);
  io.u8(compression);
  if constexpr (IO::kReading) {
    if (io.ok() && compression > uint8_t(Compression::Zstd)) io.fail("unknown checkpoint compression " + std::to_string(compression));
    h.checkpoint_compression = Compression(compression);
  }
  io.count(h.metadata, 8, kMaxMetadataEntries, "metadata");
  for (auto& [key, value] : h.metadata) {
    io.str(key, kMaxStringBytes, "metadata key");
    io.str(value, kMaxStringBytes, "metadata value");
  }
  io.blob(h.scene, kMaxChunkPayload, "scene");
  io.blob(h.game_spec, kMaxStringBytes, "game spec");
  io.str(h.game_module, kMaxStringBytes, "game_module");
  io.str(h.game_build_id, kMaxStringBytes, "game_build_id");
  io.u64(h.game_seed);
  if constexpr (IO::kReading) {
    if (io.ok() && h.tick_rate == 0) io.fail("tick_rate is 0");
    if (io.ok() && h.flush_every_ticks == 0) io.fail("flush_every_ticks is 0");
  }
}

}  // namespace

void encode_header(const Header& h, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  visit_header(w, h);
}

keel::Expected<Header> decode_header(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  keel::FieldReader io(r);
  Header h;
  visit_header(io, h);
  if (!r.ok()) return field_error("header", r);
  return h;
}

namespace {

// Components in use: the last nonzero code decides (the layout is not needed to write
// a record, and a reader checks the codes against the layout when it replays them).
uint32_t used_components(const game::Values& v) {
  uint32_t n = game::kMaxComponents;
  while (n > 0 && v.code[n - 1] == 0) --n;
  return n;
}

// A u8 component count, then that many codes.
template <class IO, class V>
void visit_codes(IO& io, V& v, const char* what) {
  uint8_t n = 0;
  if constexpr (!IO::kReading) n = uint8_t(used_components(v));
  io.u8(n);
  if constexpr (IO::kReading) {
    if (io.ok() && n > game::kMaxComponents) io.fail(std::string(what) + " has " + std::to_string(n) + " components");
  }
  for (uint32_t c = 0; c < n && io.ok(); ++c) io.u32(v.code[c]);
}

template <class IO, class Ev>
void visit_player_event(IO& io, Ev& e) {
  uint8_t kind = uint8_t(e.kind);
  io.u8(kind);
  if constexpr (IO::kReading) {
    if (io.ok() && kind > uint8_t(game::PlayerEvent::Kind::Leave)) io.fail("unknown player event kind " + std::to_string(kind));
    e.kind = game::PlayerEvent::Kind(kind);
  }
  io.u32(e.player);
}

template <class IO, class V>
void visit_view(IO& io, uint32_t& input, V& v) {
  io.u32(input);
  io.u16(v.lag);
  io.u8(v.fraction);
}

// The inputs' view stamps (lag compensation), appended so that readers before them skip
// them, and only when one is not the present: a tick without any is the bytes it was.
// Each names an input by its index, ascending, at most one per input.
template <class IO, class T>
void visit_views(IO& io, T& t) {
  if constexpr (!IO::kReading) {
    uint32_t views = 0;
    for (const game::PlayerInput& in : t.inputs.inputs) views += in.view != game::ViewStamp{} ? 1 : 0;
    if (views == 0) return;
    io.u32(views);
    for (uint32_t i = 0; i < t.inputs.inputs.size(); ++i) {
      game::ViewStamp v = t.inputs.inputs[i].view;
      if (v != game::ViewStamp{}) visit_view(io, i, v);
    }
  } else {
    ByteReader& r = io.reader();
    if (!r.ok() || r.left() == 0) return;
    const size_t inputs = t.inputs.inputs.size();
    const uint32_t n = r.count(kViewBytes, uint32_t(inputs), "view stamp");
    uint64_t next = 0;
    for (uint32_t k = 0; k < n && r.ok(); ++k) {
      uint32_t i = 0;
      game::ViewStamp v;
      visit_view(io, i, v);
      if (!r.ok()) break;
      if (i < next || i >= inputs) {
        r.fail("view stamp " + std::to_string(k) + " names input " + std::to_string(i) + " out of order or past the " +
               std::to_string(inputs) + " inputs");
        break;
      }
      t.inputs.inputs[i].view = v;
      next = uint64_t(i) + 1;
    }
  }
}

template <class IO, class T>
void visit_tick(IO& io, T& t) {
  io.u64(t.tick);
  io.u64(t.hash);
  io.count(t.inputs.events, kEventBytes, kMaxChunkPayload, "event");
  for (auto& e : t.inputs.events) visit_player_event(io, e);
  io.count(t.inputs.inputs, kInputBytes, kMaxChunkPayload, "input");
  for (auto& in : t.inputs.inputs) {
    io.u32(in.player);
    visit_codes(io, in.frame, "an input");
  }
  io.count(t.events, kGameEventBytes, game::kMaxEventsPerTick, "game event");
  for (auto& e : t.events) {
    io.u32(e.type);
    visit_codes(io, e.payload, "a game event");
  }
  visit_views(io, t);
}

}  // namespace

void encode_tick(const TickRecord& t, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  visit_tick(w, t);
}

keel::Expected<TickRecord> decode_tick(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  keel::FieldReader io(r);
  TickRecord t;
  visit_tick(io, t);
  if (!r.ok()) return field_error("tick", r);
  return t;
}

keel::Status check_tick_against(const TickRecord& t, const game::GameSpec& spec) {
  for (const game::PlayerInput& in : t.inputs.inputs) {
    if (!spec.input.valid(in.frame)) {
      return keel::Error{"tick " + std::to_string(t.tick) + ": player " + std::to_string(in.player) +
                        "'s input is out of range for game \"" + spec.name + "\""};
    }
  }
  for (const game::GameEvent& e : t.events) {
    if (e.type >= spec.events.size() || !spec.events[e.type].payload.valid(e.payload)) {
      return keel::Error{"tick " + std::to_string(t.tick) + ": a game event of type " + std::to_string(e.type) +
                        " is not one game \"" + spec.name + "\" declares"};
    }
  }
  return keel::Status::ok();
}

keel::Expected<game::GameSpec> header_spec(const Header& h) {
  auto spec = game::read_spec(h.game_spec);
  if (!spec) return keel::Error{"header: " + spec.error().message};
  if (spec->name != h.game) return keel::Error{"header: the game spec is named \"" + spec->name + "\", the header \"" + h.game + "\""};
  return spec;
}

namespace {

// The checkpoint's fields before its state (stored raw or as a zstd frame).
struct CheckpointFields {
  uint64_t tick = 0;
  uint64_t hash = 0;
  uint8_t compression = 0;
  uint64_t raw_size = 0;
};

template <class IO, class C>
void visit_checkpoint(IO& io, C& c) {
  io.u64(c.tick);
  io.u64(c.hash);
  io.u8(c.compression);
  io.u64(c.raw_size);
}

}  // namespace

void encode_checkpoint(const Checkpoint& c, Compression compression, std::vector<uint8_t>& out) {
  std::vector<uint8_t> packed;
  if (compression == Compression::Zstd && !detail::zstd_compress(c.state, packed)) compression = Compression::None;
  ByteWriter w(out);
  const CheckpointFields fields{c.tick, c.hash, uint8_t(compression), c.state.size()};
  visit_checkpoint(w, fields);
  w.bytes(compression == Compression::None ? std::span<const uint8_t>(c.state) : std::span<const uint8_t>(packed));
}

keel::Expected<std::pair<uint64_t, uint64_t>> peek_checkpoint(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  uint64_t tick = r.u64();
  uint64_t hash = r.u64();
  if (!r.ok()) return field_error("checkpoint", r);
  return std::pair{tick, hash};
}

keel::Expected<Checkpoint> decode_checkpoint(std::span<const uint8_t> payload, uint64_t max_state_bytes) {
  ByteReader r(payload);
  keel::FieldReader io(r);
  CheckpointFields f;
  visit_checkpoint(io, f);
  Checkpoint c;
  c.tick = f.tick;
  c.hash = f.hash;
  const uint8_t compression = f.compression;
  const uint64_t raw_size = f.raw_size;
  if (r.ok() && compression > uint8_t(Compression::Zstd)) r.fail("unknown compression " + std::to_string(compression));
  if (r.ok() && raw_size > std::min(max_state_bytes, kMaxCheckpointStateBytes)) {
    r.fail("state size " + std::to_string(raw_size) + " exceeds the " + std::to_string(max_state_bytes) +
           "-byte limit for this recording's scene");
  }
  if (r.ok() && compression == uint8_t(Compression::None) && raw_size != r.left()) {
    r.fail("state size " + std::to_string(raw_size) + " does not match the " + std::to_string(r.left()) + " bytes stored");
  }
  if (!r.ok()) return field_error("checkpoint", r);
  std::span<const uint8_t> stored = r.rest();
  if (compression == uint8_t(Compression::None)) {
    c.state.assign(stored.begin(), stored.end());
  } else {
    auto raw = detail::zstd_decompress(stored, raw_size);
    if (!raw) return keel::Error{"checkpoint chunk: " + raw.error().message};
    c.state = std::move(*raw);
  }
  uint64_t actual = sim::state_hash(c.state);
  if (actual != c.hash) {
    return keel::Error{"checkpoint chunk: state hashes to " + hex_hash(actual) + ", not the recorded " + hex_hash(c.hash)};
  }
  return c;
}

namespace {

template <class IO, class F>
void visit_footer(IO& io, F& f) {
  io.u64(f.first_tick);
  io.u64(f.last_tick);
  io.count(f.checkpoints, kCheckpointRefBytes, kMaxCheckpointsInFooter, "checkpoint");
  for (auto& c : f.checkpoints) {
    io.u64(c.tick);
    io.u64(c.offset);
  }
  io.count(f.lost, kLostRangeBytes, kMaxLostRangesInFooter, "lost range");
  for (auto& l : f.lost) {
    io.u64(l.first);
    io.u64(l.last);
    uint8_t up_to = l.up_to ? 1 : 0;
    io.u8(up_to);
    if constexpr (IO::kReading) {
      if (io.ok() && (up_to > 1 || l.last < l.first)) io.fail("a lost range is not a range");
      l.up_to = up_to == 1;
    }
  }
}

}  // namespace

void encode_footer(const Footer& f, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  visit_footer(w, f);
}

keel::Expected<Footer> decode_footer(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  keel::FieldReader io(r);
  Footer f;
  visit_footer(io, f);
  if (r.ok() && f.last_tick < f.first_tick) r.fail("last_tick is before first_tick");
  bool sorted = std::is_sorted(f.checkpoints.begin(), f.checkpoints.end(),
                               [](const CheckpointRef& a, const CheckpointRef& b) { return a.tick < b.tick; });
  if (r.ok() && !sorted) r.fail("checkpoints are not in tick order");
  if (!r.ok()) return field_error("footer", r);
  return f;
}

namespace {

uint32_t preamble_check(std::span<const uint8_t> first12) {
  return uint32_t(XXH3_64bits(first12.data(), first12.size()));
}

}  // namespace

std::vector<uint8_t> encode_preamble(uint32_t version) {
  std::vector<uint8_t> out(kRecordingMagic.begin(), kRecordingMagic.end());
  ByteWriter w(out);
  w.u32(version);
  w.u32(preamble_check(out));
  return out;
}

Preamble decode_preamble(std::span<const uint8_t> bytes) {
  Preamble p;
  if (bytes.size() < kPreambleBytes || !std::equal(kRecordingMagic.begin(), kRecordingMagic.end(), bytes.begin())) {
    p.why = "not a Keel recording (the file does not start with the .krec magic)";
    return p;
  }
  ByteReader r(bytes.subspan(kRecordingMagic.size()));
  p.version = r.u32();
  const uint32_t check = r.u32();
  const std::string ours = " (this build reads version " + std::to_string(kFormatVersion) + ")";
  if (p.version == 1) {
    // Version 1 had no check here (its last 4 bytes were reserved zeros).
    p.status = Preamble::Status::Older;
    p.why = "recording format version 1 is older than this build reads" + ours +
            "; read it with a keel-replay from the Keel release that wrote it";
  } else if (p.version < kFormatVersion && check == preamble_check(bytes.first(12))) {
    // Version 2 stored the sandbox's fixed input fields; version 3 a game's own layout.
    p.status = Preamble::Status::Older;
    p.why = "recording format version " + std::to_string(p.version) + " is older than this build reads" + ours +
            "; read it with a keel-replay from the Keel release that wrote it";
  } else if (check != preamble_check(bytes.first(12))) {
    // The version itself may be the damaged byte: it is believed only with its check.
    p.status = Preamble::Status::Damaged;
    p.why = "its check does not match (it reads version " + std::to_string(p.version) + ")";
  } else if (p.version > kFormatVersion) {
    p.status = Preamble::Status::Newer;
    p.why = "recording format version " + std::to_string(p.version) + " is newer than this build reads (version " +
            std::to_string(kFormatVersion) + "); use a keel-replay from the Keel release that wrote it";
  } else if (p.version != kFormatVersion) {
    p.status = Preamble::Status::Damaged;
    p.why = "recording format version " + std::to_string(p.version) + " is not a valid version";
  } else {
    p.status = Preamble::Status::Ok;
  }
  return p;
}

uint32_t frame_check(uint32_t type, uint32_t length) {
  uint8_t head[8];
  for (int i = 0; i < 4; ++i) {
    head[i] = uint8_t(type >> (8 * i));
    head[4 + i] = uint8_t(length >> (8 * i));
  }
  return uint32_t(XXH3_64bits(head, sizeof head));
}

void encode_sync(uint64_t tick, std::vector<uint8_t>& out) {
  ByteWriter w(out);
  w.u64(tick);
}

keel::Expected<uint64_t> decode_sync(std::span<const uint8_t> payload) {
  ByteReader r(payload);
  uint64_t tick = r.u64();
  if (!r.ok()) return field_error("sync", r);
  return tick;
}

uint64_t chunk_checksum(std::span<const uint8_t> head_and_payload) {
  return XXH3_64bits(head_and_payload.data(), head_and_payload.size());
}

void frame_chunk(uint32_t type, std::span<const uint8_t> payload, std::vector<uint8_t>& out) {
  size_t start = out.size();
  ByteWriter w(out);
  w.u32(type);
  w.u32(uint32_t(payload.size()));
  w.u32(frame_check(type, uint32_t(payload.size())));
  w.bytes(payload);
  w.u64(chunk_checksum(std::span<const uint8_t>(out).subspan(start)));
}

void frame_chunk(ChunkType type, std::span<const uint8_t> payload, std::vector<uint8_t>& out) {
  frame_chunk(uint32_t(type), payload, out);
}

std::vector<uint8_t> encode_tail(uint64_t footer_offset) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.u64(footer_offset);
  w.bytes(kTailMagic);
  return out;
}

}  // namespace keel::replay
