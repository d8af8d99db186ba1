// The recording reader: byte sources, verified chunks, the tick cursor, the index.
#include <keel/replay/reader.h>

#include <keel/sim/byte_io.h>

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
    if (fseeko(file_, off_t(offset), SEEK_SET) != 0) return false;
    return std::fread(out.data(), 1, n, file_) == n;
  }

 private:
  std::FILE* file_;
  uint64_t size_;
};

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

std::string at(uint64_t offset) { return "at byte " + std::to_string(offset); }

}  // namespace

sim::Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return sim::Error{path + ": cannot open: " + std::strerror(errno)};
  if (fseeko(f, 0, SEEK_END) != 0) {
    std::fclose(f);
    return sim::Error{path + ": cannot seek (not a regular file?)"};
  }
  off_t size = ftello(f);
  if (size < 0) {
    std::fclose(f);
    return sim::Error{path + ": cannot tell its size"};
  }
  return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(f, uint64_t(size)));
}

std::unique_ptr<ByteSource> memory_source(std::vector<uint8_t> bytes) {
  return std::make_unique<MemorySource>(std::move(bytes));
}

ChunkStatus read_chunk(const ByteSource& src, uint64_t offset, Chunk& out, std::string& why) {
  out = Chunk{};
  out.offset = offset;
  const uint64_t size = src.size();
  if (offset >= size) return ChunkStatus::End;
  const uint64_t left = size - offset;
  std::vector<uint8_t> frame;
  if (left < 8 || !src.read(offset, 8, frame)) {
    why = "the file ends inside a chunk frame " + at(offset);
    return ChunkStatus::Truncated;
  }
  out.type = le32(frame.data());
  const uint32_t length = le32(frame.data() + 4);
  if (length > kMaxChunkPayload) {
    why = "chunk length " + std::to_string(length) + " exceeds the 1 GiB limit " + at(offset);
    return ChunkStatus::Damaged;
  }
  const uint64_t total = uint64_t(length) + kChunkFrameBytes;
  if (total > left) {
    why = "the file ends inside a " + std::to_string(length) + "-byte chunk " + at(offset);
    return ChunkStatus::Truncated;
  }
  out.end = offset + total;
  std::vector<uint8_t> all;
  if (!src.read(offset, size_t(total), all)) {
    why = "read error " + at(offset);
    return ChunkStatus::Damaged;
  }
  uint64_t stored = le64(all.data() + 8 + length);
  if (chunk_checksum(std::span<const uint8_t>(all).first(8 + length)) != stored) {
    why = "checksum mismatch in a chunk of type " + std::to_string(out.type) + " " + at(offset);
    return ChunkStatus::Damaged;
  }
  out.payload.assign(all.begin() + 8, all.begin() + 8 + length);
  return ChunkStatus::Ok;
}

// ---------------------------------------------------------------------------------------

TickCursor::TickCursor(const ByteSource& src, uint64_t offset, uint64_t expected_tick,
                       std::optional<std::pair<uint64_t, uint64_t>> after)
    : src_(src), offset_(offset), expected_(expected_tick), good_end_(offset) {
  if (after) {
    last_tick_ = after->first;
    last_hash_ = after->second;
  }
}

void TickCursor::problem(uint64_t offset, const std::string& what, bool lost) {
  if (lost) lost_data_ = true;
  // Built by appending: `"literal" + std::string` trips a false gcc 12 -Wrestrict.
  std::string line = what;
  if (last_tick_) line.append(" (after tick ").append(std::to_string(*last_tick_)).append(")");
  else line.append(" (before any tick)");
  if (what.find("at byte") == std::string::npos) line.append(" ").append(at(offset));
  problems_.push_back(std::move(line));
}

std::optional<TickRecord> TickCursor::next() {
  while (!done_) {
    Chunk chunk;
    std::string why;
    ChunkStatus st = read_chunk(src_, offset_, chunk, why);
    if (st == ChunkStatus::End) {
      done_ = true;
      break;
    }
    if (st == ChunkStatus::Truncated) {
      // A cut inside the footer loses nothing: the footer is rebuilt from the chunks.
      bool footer = chunk.type == uint32_t(ChunkType::Footer) && src_.size() - offset_ >= 8;
      problem(offset_, "cut short: " + why, !footer);
      stopped_early_ = done_ = truncated_ = true;
      break;
    }
    if (st == ChunkStatus::Damaged) {
      if (!skip_damaged(chunk, why)) stopped_early_ = done_ = true;
      continue;
    }
    std::optional<TickRecord> out;
    if (handle_chunk(chunk, out) && out) return out;
  }
  return std::nullopt;
}

// A damaged chunk is stepped over only when its frame is plausible and the chunk after it
// verifies; otherwise the framing itself is lost and nothing after can be trusted.
bool TickCursor::skip_damaged(const Chunk& chunk, const std::string& why) {
  if (chunk.end != 0) {
    Chunk after;
    std::string ignored;
    ChunkStatus next = read_chunk(src_, chunk.end, after, ignored);
    if (next == ChunkStatus::Ok) {
      problem(chunk.offset, "skipped a damaged chunk: " + why);
      offset_ = chunk.end;
      return true;
    }
  }
  problem(chunk.offset, "damaged: " + why);
  return false;
}

bool TickCursor::handle_chunk(Chunk& chunk, std::optional<TickRecord>& out) {
  const uint64_t here = chunk.offset;
  switch (ChunkType(chunk.type)) {
    case ChunkType::Tick: {
      auto tick = decode_tick(chunk.payload);
      if (!tick) {
        problem(here, tick.error().message);
        stopped_early_ = done_ = true;
        return false;
      }
      if (tick->tick != expected_) {
        problem(here, "tick " + std::to_string(expected_) + " is missing (found tick " + std::to_string(tick->tick) + ")");
        stopped_early_ = done_ = true;
        return false;
      }
      ++expected_;
      last_tick_ = tick->tick;
      last_hash_ = tick->hash;
      out = std::move(*tick);
      break;
    }
    case ChunkType::Checkpoint: {
      auto peek = peek_checkpoint(chunk.payload);
      if (!peek || !last_tick_ || peek->first != *last_tick_) {
        problem(here, "ignored a checkpoint that does not follow its tick");
      } else if (peek->second != last_hash_) {
        problem(here, "ignored the checkpoint for tick " + std::to_string(peek->first) + ": its hash " +
                          hex_hash(peek->second) + " is not the tick's recorded " + hex_hash(last_hash_));
      } else {
        checkpoints_.push_back(CheckpointRef{peek->first, here});
      }
      break;
    }
    case ChunkType::Footer:
      check_tail(chunk.end);
      done_ = true;
      break;
    case ChunkType::Header:
      problem(here, "a second header chunk");
      stopped_early_ = done_ = true;
      return false;
    default:
      break;  // a chunk type from a newer writer: skipped, as the format promises
  }
  if (on_chunk && chunk.type != uint32_t(ChunkType::Footer) &&
      (chunk.type != uint32_t(ChunkType::Checkpoint) || (!checkpoints_.empty() && checkpoints_.back().offset == here))) {
    on_chunk(chunk);
  }
  offset_ = chunk.end;
  good_end_ = chunk.end;
  return true;
}

void TickCursor::check_tail(uint64_t footer_end) {
  std::vector<uint8_t> tail;
  if (src_.size() - footer_end != kTailBytes || !src_.read(footer_end, kTailBytes, tail) ||
      !std::equal(kTailMagic.begin(), kTailMagic.end(), tail.begin() + 8)) {
    problem(footer_end, "the footer is not followed by exactly the 16-byte tail", false);
    return;
  }
  finished_ = true;
}

// ---------------------------------------------------------------------------------------

sim::Expected<Recording> Recording::open(const std::string& path) {
  auto src = open_file_source(path);
  if (!src) return src.error();
  return from_source(std::move(*src), path);
}

sim::Expected<Recording> Recording::from_bytes(std::vector<uint8_t> bytes, const std::string& name) {
  return from_source(memory_source(std::move(bytes)), name);
}

sim::Expected<Recording> Recording::from_source(std::unique_ptr<ByteSource> src, const std::string& name) {
  Recording rec;
  rec.name_ = name;
  rec.src_ = std::move(src);
  std::vector<uint8_t> pre;
  if (!rec.src_->read(0, std::min<uint64_t>(kPreambleBytes, rec.src_->size()), pre)) return sim::Error{name + ": cannot read"};
  auto version = decode_preamble(pre);
  if (!version) return sim::Error{name + ": " + version.error().message};
  Chunk chunk;
  std::string why;
  ChunkStatus st = read_chunk(*rec.src_, kPreambleBytes, chunk, why);
  if (st == ChunkStatus::End) return sim::Error{name + ": the file holds no header (cut short right after the preamble)"};
  if (st != ChunkStatus::Ok) return sim::Error{name + ": header chunk: " + why};
  if (chunk.type != uint32_t(ChunkType::Header)) return sim::Error{name + ": the first chunk is not a header"};
  auto header = decode_header(chunk.payload);
  if (!header) return sim::Error{name + ": " + header.error().message};
  rec.header_ = std::move(*header);
  rec.header_.format_version = *version;
  rec.body_offset_ = chunk.end;
  rec.read_footer();
  return rec;
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

TickCursor Recording::ticks_from_start() const { return TickCursor(*src_, body_offset_, header_.start_tick); }

TickCursor Recording::ticks_after(const CheckpointRef& ref) const {
  // The checkpoint's own hash stands for its tick record's (the index checked they agree).
  Chunk chunk;
  std::string why;
  uint64_t hash = 0;
  if (read_chunk(*src_, ref.offset, chunk, why) == ChunkStatus::Ok) {
    if (auto peek = peek_checkpoint(chunk.payload)) hash = peek->second;
  }
  return TickCursor(*src_, ref.offset, ref.tick + 1, std::pair{ref.tick, hash});
}

const RecordingIndex& Recording::index() const {
  if (index_) return *index_;
  auto idx = std::make_shared<RecordingIndex>();
  idx->first_tick = header_.start_tick;
  TickCursor cursor = ticks_from_start();
  std::set<uint32_t> present, seen;
  bool any = false;
  while (auto t = cursor.next()) {
    any = true;
    for (const sim::PlayerEvent& e : t->inputs.events) {
      if (e.kind == sim::PlayerEvent::Kind::Join) {
        if (present.size() < sim::kMaxPlayersPerMatch) present.insert(e.player), seen.insert(e.player);
      } else {
        present.erase(e.player);
      }
    }
    idx->max_players = std::max(idx->max_players, uint32_t(present.size()));
    idx->player_events += t->inputs.events.size();
    idx->input_frames += t->inputs.inputs.size();
  }
  idx->players_seen = uint32_t(seen.size());
  idx->last_tick = cursor.last_tick().value_or(header_.start_tick);
  if (!any) idx->problems.push_back("the recording holds no tick");
  idx->checkpoints = cursor.checkpoints();
  idx->finished = cursor.finished();
  idx->stopped_early = cursor.stopped_early();
  idx->truncated = cursor.truncated();
  idx->good_end = cursor.good_end();
  idx->problems.insert(idx->problems.end(), cursor.problems().begin(), cursor.problems().end());
  index_ = std::move(idx);
  return *index_;
}

std::vector<CheckpointRef> Recording::checkpoints() const {
  if (footer_) return footer_->checkpoints;
  return index().checkpoints;
}

sim::Expected<Checkpoint> Recording::read_checkpoint(const CheckpointRef& ref) const {
  Chunk chunk;
  std::string why;
  if (read_chunk(*src_, ref.offset, chunk, why) != ChunkStatus::Ok) return sim::Error{why};
  if (chunk.type != uint32_t(ChunkType::Checkpoint)) return sim::Error{"no checkpoint chunk " + at(ref.offset)};
  auto c = decode_checkpoint(chunk.payload);
  if (!c) return c.error();
  if (c->tick != ref.tick) return sim::Error{"the checkpoint " + at(ref.offset) + " is for tick " + std::to_string(c->tick)};
  return c;
}

}  // namespace keel::replay
