// The recording reader: byte sources, verified chunks, the tick cursor, the index.
#include <keel/replay/reader.h>

#include <keel/scene/scene.h>
#include <keel/base/byte_io.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

namespace keel::replay {

namespace {

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read(uint64_t offset, size_t n, std::vector<uint8_t>& out) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) return false;
    out.assign(bytes_.begin() + std::ptrdiff_t(offset), bytes_.begin() + std::ptrdiff_t(offset + n));
    return true;
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads on demand: a 30-minute recording is never loaded whole to dump one tick.
class FileSource final : public ByteSource {
 public:
  FileSource(std::FILE* f, uint64_t size) : file_(f), size_(size) {}
  ~FileSource() override { std::fclose(file_); }
  uint64_t size() const override { return size_; }
  bool read(uint64_t offset, size_t n, std::vector<uint8_t>& out) const override {
    if (offset > size_ || n > size_ - offset) return false;
    out.resize(n);
    if (n == 0) return true;
    // Chunks are mostly read in file order: seeking only when needed keeps stdio's
    // buffer (a seek discards it) and saves a system call per chunk.
    if (offset != pos_ && fseeko(file_, off_t(offset), SEEK_SET) != 0) {
      pos_ = UINT64_MAX;
      return false;
    }
    const bool ok = std::fread(out.data(), 1, n, file_) == n;
    pos_ = ok ? offset + n : UINT64_MAX;
    return ok;
  }

 private:
  std::FILE* file_;
  uint64_t size_;
  mutable uint64_t pos_ = UINT64_MAX;  // where the stream stands; UINT64_MAX: unknown
};

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

std::string at(uint64_t offset) { return "at byte " + std::to_string(offset); }

}  // namespace

keel::Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return keel::Error{path + ": cannot open: " + std::strerror(errno)};
  if (fseeko(f, 0, SEEK_END) != 0) {
    std::fclose(f);
    return keel::Error{path + ": cannot seek (not a regular file?)"};
  }
  off_t size = ftello(f);
  if (size < 0) {
    std::fclose(f);
    return keel::Error{path + ": cannot tell its size"};
  }
  return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(f, uint64_t(size)));
}

std::unique_ptr<ByteSource> memory_source(std::vector<uint8_t> bytes) {
  return std::make_unique<MemorySource>(std::move(bytes));
}

uint64_t ChunkLimits::of(uint32_t type) const {
  switch (ChunkType(type)) {
    case ChunkType::Tick: return kMaxTickPayload;
    case ChunkType::Checkpoint: return std::min<uint64_t>(checkpoint_payload, kMaxChunkPayload);
    case ChunkType::Sync: return kMaxSmallPayload;
    default: return kMaxChunkPayload;  // header, footer, types of newer writers: only ever what the file holds
  }
}

ChunkStatus read_chunk(const ByteSource& src, uint64_t offset, Chunk& out, std::string& why, const ChunkLimits& limits) {
  out = Chunk{};
  out.offset = offset;
  const uint64_t size = src.size();
  if (offset >= size) return ChunkStatus::End;
  const uint64_t left = size - offset;
  std::vector<uint8_t> head;
  if (left < kChunkHeadBytes || !src.read(offset, kChunkHeadBytes, head)) {
    why = "the file ends inside a chunk frame " + at(offset);
    return ChunkStatus::Truncated;
  }
  out.type = le32(head.data());
  const uint32_t length = le32(head.data() + 4);
  if (frame_check(out.type, length) != le32(head.data() + 8)) {
    why = "damaged chunk frame (its type or length fails the frame check) " + at(offset);
    return ChunkStatus::Damaged;
  }
  if (length > limits.of(out.type)) {
    why = "a " + std::string(to_string(ChunkType(out.type))) + " chunk of " + std::to_string(length) +
          " bytes exceeds the " + std::to_string(limits.of(out.type)) + "-byte limit " + at(offset);
    return ChunkStatus::Damaged;
  }
  const uint64_t total = uint64_t(length) + kChunkFrameBytes;
  if (total > left) {
    why = "the file ends inside a " + std::to_string(length) + "-byte " + to_string(ChunkType(out.type)) + " chunk " + at(offset);
    return ChunkStatus::Truncated;
  }
  out.end = offset + total;
  std::vector<uint8_t> all;
  if (!src.read(offset, size_t(total), all)) {
    why = "read error " + at(offset);
    return ChunkStatus::Damaged;
  }
  const size_t body = kChunkHeadBytes + length;
  if (chunk_checksum(std::span<const uint8_t>(all).first(body)) != le64(all.data() + body)) {
    why = "checksum mismatch in a " + std::string(to_string(ChunkType(out.type))) + " chunk " + at(offset);
    return ChunkStatus::Damaged;
  }
  out.payload.assign(all.begin() + kChunkHeadBytes, all.begin() + std::ptrdiff_t(body));
  return ChunkStatus::Ok;
}

// Reads the file in windows and tests the frame check at every offset: a random 12 bytes
// pass it once in 2^32, and a candidate must then pass its checksum too.
std::optional<uint64_t> find_next_chunk(const ByteSource& src, uint64_t from, const ChunkLimits& limits) {
  constexpr size_t kWindow = 1u << 16;
  std::vector<uint8_t> buf;
  for (uint64_t base = from; base + kChunkHeadBytes <= src.size(); base += kWindow) {
    const size_t n = size_t(std::min<uint64_t>(kWindow + kChunkHeadBytes - 1, src.size() - base));
    if (!src.read(base, n, buf)) return std::nullopt;
    for (size_t i = 0; i + kChunkHeadBytes <= n && i < kWindow; ++i) {
      if (frame_check(le32(&buf[i]), le32(&buf[i + 4])) != le32(&buf[i + 8])) continue;
      Chunk c;
      std::string why;
      ChunkStatus st = read_chunk(src, base + i, c, why, limits);
      if (st == ChunkStatus::Ok || (st == ChunkStatus::Truncated && c.type != 0)) return base + i;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------

TickCursor::TickCursor(const ByteSource& src, uint64_t offset, uint64_t expected_tick,
                       std::optional<std::pair<uint64_t, uint64_t>> after, ChunkLimits limits)
    : src_(src), limits_(limits), offset_(offset), expected_(expected_tick), start_tick_(expected_tick), good_end_(offset) {
  if (after) {
    last_tick_ = after->first;
    last_hash_ = after->second;
    segments_.push_back(TickRange{after->first, after->first});
  }
  full_ = !after;
}

void TickCursor::problem(uint64_t offset, const std::string& what) {
  lost_data_ = true;
  // Built by appending: `"literal" + std::string` trips a false gcc 12 -Wrestrict.
  std::string line = what;
  if (what.find("at byte") == std::string::npos) line.append(" ").append(at(offset));
  if (last_tick_) line.append(" (after tick ").append(std::to_string(*last_tick_)).append(")");
  else line.append(" (before any tick)");
  problems_.push_back(std::move(line));
}

std::optional<TickRecord> TickCursor::next() {
  while (!done_) {
    Chunk chunk;
    std::string why;
    ChunkStatus st = read_chunk(src_, offset_, chunk, why, limits_);
    if (st == ChunkStatus::End) {
      done_ = true;
      break;
    }
    if (st == ChunkStatus::Truncated) {
      // A cut inside the footer or a sync chunk loses no tick: the footer is rebuilt.
      bool harmless = chunk.type == uint32_t(ChunkType::Footer) || chunk.type == uint32_t(ChunkType::Sync);
      if (!harmless) lost_data_ = true;
      ended_in_footer_ = chunk.type == uint32_t(ChunkType::Footer);
      truncation_ = "cut short: " + why;
      done_ = truncated_ = true;
      break;
    }
    if (st == ChunkStatus::Damaged) {
      resync(chunk, why);
      continue;
    }
    std::optional<TickRecord> out;
    if (handle_chunk(chunk, out) && out) return out;
  }
  close_gap(std::nullopt);
  return std::nullopt;
}

// After damage the framing is resumed where the damaged chunk's own (verified) length
// says it ends, if a sound chunk starts there; otherwise at the next offset where a
// chunk verifies.
void TickCursor::resync(const Chunk& chunk, const std::string& why) {
  problem(chunk.offset, why);
  if (chunk.end != 0) {
    Chunk after;
    std::string ignored;
    ChunkStatus st = read_chunk(src_, chunk.end, after, ignored, limits_);
    if (st == ChunkStatus::Ok || st == ChunkStatus::End || (st == ChunkStatus::Truncated && after.type != 0)) {
      offset_ = chunk.end;
      return;
    }
  }
  std::optional<uint64_t> next = find_next_chunk(src_, chunk.offset + 1, limits_);
  if (!next) {
    done_ = true;
    return;
  }
  offset_ = *next;
}

bool TickCursor::handle_chunk(Chunk& chunk, std::optional<TickRecord>& out) {
  const uint64_t here = chunk.offset;
  bool accepted = true;
  switch (ChunkType(chunk.type)) {
    case ChunkType::Tick:
      accepted = handle_tick(chunk, out);
      break;
    case ChunkType::Checkpoint:
      handle_checkpoint(chunk);
      accepted = !checkpoints_.empty() && checkpoints_.back().offset == here;
      break;
    case ChunkType::Footer:
      check_footer(chunk);
      done_ = true;
      accepted = false;
      break;
    case ChunkType::Sync: {
      auto tick = decode_sync(chunk.payload);
      // A sync names the tick record before it; when that record was lost to damage the
      // sync still says how far the writer got.
      if (tick && last_record_ && *tick >= *last_record_) last_sync_ = *tick;
      else problem(here, "a sync chunk that does not follow its tick");
      accepted = false;  // describes the writer's flushes, not the match: not copied
      break;
    }
    case ChunkType::Header:
    case ChunkType::HeaderCopy:
      // The header's copy follows the header; any other header chunk is out of place.
      if (last_tick_ || here != good_end_ || chunk.type == uint32_t(ChunkType::Header)) problem(here, "a header chunk out of place");
      accepted = false;
      break;
    default:
      break;  // a chunk type from a newer writer: skipped, as the format promises
  }
  if (accepted && on_chunk && !skipped_max_) on_chunk(chunk);
  offset_ = chunk.end;
  good_end_ = chunk.end;
  return true;
}

bool TickCursor::handle_tick(const Chunk& chunk, std::optional<TickRecord>& out) {
  auto tick = decode_tick(chunk.payload);
  if (!tick) {
    problem(chunk.offset, tick.error().message);
    return false;
  }
  last_record_ = tick->tick;
  highest_ = std::max(highest_.value_or(0), tick->tick);
  if (tick->tick != expected_) {
    // Only a checkpoint right after the record lets a replay resume at it.
    if (tick->tick < expected_ || !followed_by_its_checkpoint(chunk, *tick)) {
      if (tick->tick < expected_) problem(chunk.offset, "tick " + std::to_string(tick->tick) + " out of order");
      skipped_max_ = std::max(skipped_max_.value_or(0), tick->tick);
      return false;
    }
    close_gap(tick->tick);
    segments_.push_back(TickRange{tick->tick, tick->tick});
  } else if (segments_.empty()) {
    segments_.push_back(TickRange{tick->tick, tick->tick});
  } else {
    segments_.back().last = tick->tick;
  }
  skipped_max_.reset();
  expected_ = tick->tick + 1;
  last_tick_ = tick->tick;
  last_hash_ = tick->hash;
  out = std::move(*tick);
  return true;
}

bool TickCursor::followed_by_its_checkpoint(const Chunk& chunk, const TickRecord& t) const {
  Chunk next;
  std::string why;
  if (read_chunk(src_, chunk.end, next, why, limits_) != ChunkStatus::Ok) return false;
  if (next.type != uint32_t(ChunkType::Checkpoint)) return false;
  auto peek = peek_checkpoint(next.payload);
  return peek && peek->first == t.tick && peek->second == t.hash;
}

// Ends the gap that began after the last accepted tick: at `resumed_at` (a tick record
// with its checkpoint), or at the end of the file when records were dropped after it.
void TickCursor::close_gap(std::optional<uint64_t> resumed_at) {
  if (resumed_at && *resumed_at > expected_) {
    gaps_.push_back(TickRange{expected_, *resumed_at - 1});
    lost_data_ = true;
  } else if (!resumed_at && skipped_max_ && *skipped_max_ >= expected_) {
    gaps_.push_back(TickRange{expected_, *skipped_max_});
    lost_data_ = true;
  }
  skipped_max_.reset();
}

void TickCursor::handle_checkpoint(const Chunk& chunk) {
  auto peek = peek_checkpoint(chunk.payload);
  if (skipped_max_) return;  // the checkpoint of a dropped record: dropped with it
  if (!peek || !last_tick_ || peek->first != *last_tick_ || good_end_ != chunk.offset ||
      (!checkpoints_.empty() && checkpoints_.back().tick == peek->first)) {
    problem(chunk.offset, "a checkpoint that does not follow its tick");
  } else if (peek->second != last_hash_) {
    problem(chunk.offset, "the checkpoint for tick " + std::to_string(peek->first) + " hashes " +
                              hex_hash(peek->second) + ", not the tick's recorded " + hex_hash(last_hash_));
  } else {
    checkpoints_.push_back(CheckpointRef{peek->first, chunk.offset});
  }
}

// A footer ends the file only when it agrees with what the chunks said (ticks,
// checkpoints and their offsets, gaps) and exactly the tail that points at it follows.
void TickCursor::check_footer(const Chunk& chunk) {
  if (!full_) return;  // a cursor behind a checkpoint saw only part of what the footer sums up
  auto footer = decode_footer(chunk.payload);
  if (!footer) {
    problem(chunk.offset, footer.error().message);
    return;
  }
  close_gap(std::nullopt);
  ended_in_footer_ = true;  // a sound footer: the writer recorded every tick it names
  // Ticks the footer says were recorded after the last one read were lost to damage.
  const uint64_t unseen = highest_ ? std::max(expected_, *highest_ + 1) : expected_;
  if (footer->last_tick >= unseen && footer->last_tick - unseen < (uint64_t(1) << 40)) {
    gaps_.push_back(TickRange{unseen, footer->last_tick});
  }
  std::vector<TickRange> inner;
  for (const TickRange& l : footer->lost) {
    if (!l.up_to) inner.push_back(l);
  }
  // The footer's last tick is the last the recording knew of: a recovered file's last
  // ticks may be a gap it lists.
  const uint64_t covered = std::max(last_tick_.value_or(0), gaps_.empty() ? 0 : gaps_.back().last);
  const bool agrees = last_tick_ && footer->last_tick == covered && footer->checkpoints == checkpoints_ &&
                      footer->first_tick == start_tick_ && inner == gaps_;
  if (!agrees) {
    // After damage the footer cannot agree; only a disagreement of its own is news.
    if (problems_.empty()) problem(chunk.offset, "the footer does not agree with the chunks before it (ticks, checkpoints or gaps)");
    return;
  }
  std::vector<uint8_t> tail;
  const std::vector<uint8_t> expected = encode_tail(chunk.offset);
  const uint64_t left = src_.size() - chunk.end;
  if (left < kTailBytes && src_.read(chunk.end, size_t(left), tail) && std::equal(tail.begin(), tail.end(), expected.begin())) {
    // Cut inside the tail: the writer had finished every tick and the footer.
    truncated_ = ended_in_footer_ = true;
    truncation_ = "cut short inside the tail " + at(chunk.end);
    return;
  }
  if (left != kTailBytes || !src_.read(chunk.end, kTailBytes, tail) || tail != expected) {
    problem(chunk.end, "the footer is not followed by exactly the 16-byte tail that points at it");
    return;
  }
  footer_ = std::move(*footer);
  finished_ = true;
}

// ---------------------------------------------------------------------------------------

uint64_t RecordingIndex::ticks_held() const {
  uint64_t n = 0;
  for (const TickRange& s : segments) n += s.count();
  return n;
}

keel::Expected<Recording> Recording::open(const std::string& path) {
  auto src = open_file_source(path);
  if (!src) return src.error();
  return from_source(std::move(*src), path);
}

keel::Expected<Recording> Recording::from_bytes(std::vector<uint8_t> bytes, const std::string& name) {
  return from_source(memory_source(std::move(bytes)), name);
}

ChunkLimits Recording::limits() const { return ChunkLimits{max_checkpoint_payload(max_state_bytes_)}; }

keel::Expected<Recording> Recording::from_source(std::unique_ptr<ByteSource> src, const std::string& name) {
  Recording rec;
  rec.name_ = name;
  rec.src_ = std::move(src);
  std::vector<uint8_t> pre;
  if (!rec.src_->read(0, std::min<uint64_t>(kPreambleBytes, rec.src_->size()), pre)) return keel::Error{name + ": cannot read"};
  Preamble preamble = decode_preamble(pre);
  if (keel::Status st = rec.read_header(preamble); !st) return keel::Error{name + ": " + st.error().message};
  rec.header_.format_version = kFormatVersion;
  auto spec = header_spec(rec.header_);
  if (!spec) return keel::Error{name + ": " + spec.error().message};
  rec.spec_ = std::move(*spec);
  if (auto scene = scene::parse_scene_binary(rec.header_.scene, name + " (embedded scene)")) {
    rec.max_state_bytes_ = max_checkpoint_state_bytes(*scene, rec.spec_);
  }
  rec.read_footer();
  return rec;
}

// The header is read from the first chunk, or, when that is damaged, from its copy (the
// next chunk that verifies). A preamble that is not sound is forgiven when a sound
// header follows it: only this version's frames pass their checks.
keel::Status Recording::read_header(const Preamble& preamble) {
  using S = Preamble::Status;
  // A sound preamble of another version is believed; anything else is forgiven when a
  // sound header of this version follows (a damaged byte, as its check shows).
  // An older version whose preamble check matches (2 and later carry one) is believed
  // too: its chunks may verify, but they do not mean what this version's mean.
  const bool checked_older = preamble.status == S::Older && preamble.version >= 2;
  if (preamble.status == S::Newer || checked_older ||
      (preamble.status == S::NotARecording && src_->size() < kPreambleBytes)) {
    return keel::Error{preamble.why};
  }
  Chunk chunk;
  std::string why;
  ChunkStatus st = read_chunk(*src_, kPreambleBytes, chunk, why);
  bool sound = st == ChunkStatus::Ok && chunk.type == uint32_t(ChunkType::Header);
  // The copy is looked for only in what claims to be a recording of this version.
  if (!sound && (preamble.status == S::Ok || preamble.status == S::Damaged)) {
    if (auto copy = find_next_chunk(*src_, kPreambleBytes + 1)) {
      Chunk c;
      std::string ignored;
      if (read_chunk(*src_, *copy, c, ignored) == ChunkStatus::Ok && c.type == uint32_t(ChunkType::HeaderCopy)) {
        open_problems_.push_back("the header chunk at byte 16 is damaged (" + why + "); its copy " + at(*copy) + " was used");
        chunk = std::move(c);
        sound = true;
      }
    }
  }
  if (!sound) {
    if (preamble.status == S::Damaged) return keel::Error{"the preamble (bytes 0..15) is damaged: " + preamble.why + ", and no header verifies"};
    if (preamble.status != S::Ok) return keel::Error{preamble.why};
    if (st == ChunkStatus::End) return keel::Error{"the file holds no header (cut short right after the preamble)"};
    if (st == ChunkStatus::Ok) return keel::Error{"the first chunk is not a header"};
    return keel::Error{"header chunk: " + why + ", and no copy of it verifies"};
  }
  if (preamble.status != S::Ok) {
    std::string what = preamble.status == S::Damaged ? preamble.why : "it reads \"" + preamble.why + "\"";
    open_problems_.insert(open_problems_.begin(), "the preamble (bytes 0..15) is damaged: " + what +
                                                      "; the header that follows verifies as version " +
                                                      std::to_string(kFormatVersion));
  }
  auto header = decode_header(chunk.payload);
  if (!header) return header.error();
  header_ = std::move(*header);
  body_offset_ = chunk.end;
  return keel::Status::ok();
}

// The tail names the footer's offset; any doubt (bad magic, bad chunk, offsets outside
// the file or out of order) and the footer is ignored: readers then scan instead.
void Recording::read_footer() {
  const uint64_t size = src_->size();
  std::vector<uint8_t> tail;
  if (size < body_offset_ + kChunkFrameBytes + kTailBytes || !src_->read(size - kTailBytes, kTailBytes, tail)) return;
  if (!std::equal(kTailMagic.begin(), kTailMagic.end(), tail.begin() + 8)) return;
  Chunk chunk;
  std::string why;
  uint64_t offset = le64(tail.data());
  if (offset < body_offset_ || read_chunk(*src_, offset, chunk, why) != ChunkStatus::Ok) return;
  if (chunk.type != uint32_t(ChunkType::Footer) || chunk.end != size - kTailBytes) return;
  auto footer = decode_footer(chunk.payload);
  if (!footer || footer->first_tick != header_.start_tick) return;
  for (const CheckpointRef& c : footer->checkpoints) {
    if (c.offset < body_offset_ || c.offset >= offset || c.tick < footer->first_tick || c.tick > footer->last_tick) return;
  }
  footer_ = std::move(*footer);
}

TickCursor Recording::ticks_from_start() const {
  return TickCursor(*src_, body_offset_, header_.start_tick, std::nullopt, limits());
}

TickCursor Recording::ticks_after(const CheckpointRef& ref) const {
  // The checkpoint's own hash stands for its tick record's (the index checked they agree).
  Chunk chunk;
  std::string why;
  uint64_t hash = 0;
  if (read_chunk(*src_, ref.offset, chunk, why, limits()) == ChunkStatus::Ok) {
    if (auto peek = peek_checkpoint(chunk.payload)) hash = peek->second;
  }
  return TickCursor(*src_, ref.offset, ref.tick + 1, std::pair{ref.tick, hash}, limits());
}

namespace {

struct PlayerTally {
  std::set<uint32_t> present, seen;
  void add(const game::TickInputs& in, RecordingIndex& idx) {
    for (const game::PlayerEvent& e : in.events) {
      if (e.kind == game::PlayerEvent::Kind::Join) {
        if (present.size() < game::kMaxPlayersPerMatch) present.insert(e.player), seen.insert(e.player);
      } else {
        present.erase(e.player);
      }
    }
    idx.max_players = std::max(idx.max_players, uint32_t(present.size()));
    idx.player_events += in.events.size();
    idx.input_frames += in.inputs.size();
  }
};

}  // namespace

const RecordingIndex& Recording::index() const {
  if (index_) return *index_;
  auto idx = std::make_shared<RecordingIndex>();
  idx->first_tick = header_.start_tick;
  idx->problems = open_problems_;
  TickCursor cursor = ticks_from_start();
  PlayerTally players;
  bool any = false;
  while (auto t = cursor.next()) {
    any = true;
    players.add(t->inputs, *idx);
  }
  idx->players_seen = uint32_t(players.seen.size());
  idx->last_tick = cursor.last_tick().value_or(idx->first_tick);
  if (!any) idx->problems.push_back("the recording holds no tick");
  idx->checkpoints = cursor.checkpoints();
  idx->segments = cursor.segments();
  idx->gaps = cursor.gaps();
  idx->finished = cursor.finished();
  idx->truncated = cursor.truncated();
  idx->truncation = cursor.truncation();
  idx->last_sync = cursor.last_sync();
  idx->good_end = cursor.good_end();
  idx->problems.insert(idx->problems.end(), cursor.problems().begin(), cursor.problems().end());
  if (cursor.footer()) idx->lost_before_recovery = cursor.footer()->lost;
  // A gap the footer does not account for is damage even when no chunk failed its check.
  for (const TickRange& g : idx->gaps) {
    bool listed = std::find(idx->lost_before_recovery.begin(), idx->lost_before_recovery.end(), g) !=
                  idx->lost_before_recovery.end();
    if (!listed && cursor.problems().empty()) idx->problems.push_back("ticks " + to_string(g) + " are missing");
  }
  idx->writer_finished = idx->finished || cursor.ended_in_footer();
  idx->highest_tick = std::max(idx->last_tick, cursor.highest_tick().value_or(idx->last_tick));
  if (!idx->writer_finished) {
    // The writer flushed through the last sync's tick and flushes again within
    // flush_every_ticks (it records nothing while a flush runs): it cannot have
    // recorded past that, so the ticks past the highest one on disk are bounded.
    uint64_t flushed = std::min(idx->last_sync.value_or(idx->highest_tick), idx->highest_tick);
    uint64_t reach = flushed + header_.flush_every_ticks;
    idx->tail_lost_up_to = reach > idx->highest_tick ? reach - idx->highest_tick : 0;
  }
  index_ = std::move(idx);
  return *index_;
}

std::vector<CheckpointRef> Recording::checkpoints() const {
  if (footer_) return footer_->checkpoints;
  return index().checkpoints;
}

keel::Expected<Checkpoint> Recording::read_checkpoint(const CheckpointRef& ref) const {
  Chunk chunk;
  std::string why;
  if (read_chunk(*src_, ref.offset, chunk, why, limits()) != ChunkStatus::Ok) return keel::Error{why};
  if (chunk.type != uint32_t(ChunkType::Checkpoint)) return keel::Error{"no checkpoint chunk " + at(ref.offset)};
  auto c = decode_checkpoint(chunk.payload, max_state_bytes_);
  if (!c) return keel::Error{c.error().message + " " + at(ref.offset)};
  if (c->tick != ref.tick) return keel::Error{"the checkpoint " + at(ref.offset) + " is for tick " + std::to_string(c->tick)};
  return c;
}

}  // namespace keel::replay
