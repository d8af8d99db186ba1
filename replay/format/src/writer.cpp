// The recording writer: append-only chunks, periodic checkpoints and flushes, a footer.
#include <keel/replay/writer.h>

#include <keel/scene/scene.h>

#include "build_info.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace keel::replay {

Header describe_build() {
  Header h;
  h.keel_version = KEEL_BUILD_VERSION;
  h.build_id = KEEL_BUILD_ID;
  h.compiler = KEEL_BUILD_COMPILER;
  h.compiler_flags = KEEL_BUILD_FLAGS;
  h.target = KEEL_BUILD_TARGET;
  return h;
}

struct RecordingWriter::Impl {
  std::string path;
  std::FILE* file = nullptr;
  WriterOptions options;
  uint32_t flush_every = 60;
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;
  uint64_t last_hash = 0;  // Match::hash() of the last recorded tick
  uint64_t offset = 0;  // bytes written so far: the next chunk's offset
  uint64_t ticks_since_flush = 0;
  std::vector<CheckpointRef> checkpoints;
  std::vector<uint8_t> payload;  // reused between chunks
  std::vector<uint8_t> framed;
  std::string error;             // sticky: the first I/O failure

  ~Impl() {
    if (file != nullptr) std::fclose(file);
  }

  keel::Status failed() const { return keel::Error{path + ": " + error}; }

  bool write_bytes(const std::vector<uint8_t>& bytes) {
    if (!error.empty()) return false;
    if (std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) {
      error = std::string("write failed: ") + std::strerror(errno);
      return false;
    }
    offset += bytes.size();
    return true;
  }

  bool write_chunk(ChunkType type) {
    framed.clear();
    frame_chunk(type, payload, framed);
    return write_bytes(framed);
  }

  // Every flush is preceded by a sync chunk naming the last tick written: after a crash
  // the reader knows the writer got through that tick and at most flush_every more.
  bool flush_now() {
    if (!error.empty()) return false;
    payload.clear();
    encode_sync(last_tick, payload);
    if (!write_chunk(ChunkType::Sync)) return false;
    return flush_file();
  }

  bool flush_file() {
    if (!error.empty()) return false;
    ticks_since_flush = 0;
    if (std::fflush(file) != 0) error = std::string("flush failed: ") + std::strerror(errno);
    return error.empty();
  }

  bool write_tick(const game::TickInputs& inputs, const game::Match& match, const std::vector<game::GameEvent>& events,
                  uint64_t hash) {
    payload.clear();
    encode_tick(TickRecord{match.tick(), hash, inputs, events}, payload);
    if (payload.size() > kMaxTickPayload) {
      // A reader refuses a larger record: refuse to write one rather than lose the tick.
      error = "tick " + std::to_string(match.tick()) + " holds " + std::to_string(inputs.events.size()) + " events and " +
              std::to_string(inputs.inputs.size()) + " inputs, more than a tick record can hold";
      return false;
    }
    if (!write_chunk(ChunkType::Tick)) return false;
    last_tick = match.tick();
    last_hash = hash;
    return true;
  }

  bool write_checkpoint(const game::Match& match) {
    Checkpoint c{match.tick(), 0, match.save_state()};
    // The tick chunk just written hashed this very state: no second serialisation.
    c.hash = match.tick() == last_tick ? last_hash : match.hash();
    payload.clear();
    encode_checkpoint(c, options.checkpoint_compression, payload);
    CheckpointRef ref{c.tick, offset};
    if (!write_chunk(ChunkType::Checkpoint)) return false;
    checkpoints.push_back(ref);
    // A checkpoint is the costly part to redo: hand it to the OS at once.
    return flush_now();
  }

  bool due_checkpoint(uint64_t tick) const {
    return options.checkpoint_interval != 0 && tick % options.checkpoint_interval == 0;
  }
};

RecordingWriter::RecordingWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RecordingWriter::RecordingWriter(RecordingWriter&&) noexcept = default;
RecordingWriter& RecordingWriter::operator=(RecordingWriter&& other) noexcept {
  if (this != &other) {
    if (impl_) finish();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
RecordingWriter::~RecordingWriter() {
  if (impl_) finish();
}

keel::Expected<RecordingWriter> RecordingWriter::create(const std::string& path, const game::Match& match,
                                                       const WriterOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  impl->file = std::fopen(path.c_str(), "wb");
  if (impl->file == nullptr) return keel::Error{path + ": cannot create: " + std::strerror(errno)};
  const uint32_t rate = match.world().settings().tick_rate;
  impl->flush_every = options.flush_every_ticks != 0 ? options.flush_every_ticks : (rate != 0 ? rate : 60);

  Header h = describe_build();
  h.game = match.spec().name;
  game::write_spec(match.spec(), h.game_spec);
  h.game_module = options.game_module;
  h.game_build_id = options.game_build_id;
  h.game_seed = match.seed();
  h.start_tick = match.tick();
  h.tick_rate = rate;
  h.checkpoint_interval = options.checkpoint_interval;
  h.flush_every_ticks = impl->flush_every;
  h.checkpoint_compression = options.checkpoint_compression;
  h.metadata = options.metadata;
  h.scene = scene::scene_to_binary(match.scene());
  impl->payload.clear();
  encode_header(h, impl->payload);

  impl->first_tick = match.tick();
  // The header twice: a damaged byte in one copy leaves the other to read.
  bool ok = impl->write_bytes(encode_preamble()) && impl->write_chunk(ChunkType::Header) &&
            impl->write_chunk(ChunkType::HeaderCopy) && impl->write_tick({}, match, {}, match.hash()) &&
            (match.tick() == 0 || impl->write_checkpoint(match)) && impl->flush_now();
  if (!ok) return keel::Error{path + ": " + impl->error};
  return RecordingWriter(std::move(impl));
}

keel::Status RecordingWriter::record(const game::TickInputs& applied, const game::Match& after, uint64_t hash) {
  Impl& w = *impl_;
  if (!w.error.empty()) return w.failed();
  if (w.file == nullptr) return keel::Error{w.path + ": the recording is already finished"};
  if (after.tick() != w.last_tick + 1) {
    return keel::Error{w.path + ": recorded tick " + std::to_string(w.last_tick) + ", then a match at tick " +
                      std::to_string(after.tick()) + " (record once after every step)"};
  }
  if (!w.write_tick(applied, after, after.events(), hash)) return w.failed();
  if (w.due_checkpoint(after.tick()) && !w.write_checkpoint(after)) return w.failed();
  if (++w.ticks_since_flush >= w.flush_every && !w.flush_now()) return w.failed();
  return keel::Status::ok();
}

keel::Status RecordingWriter::flush() {
  if (impl_->file == nullptr) return keel::Status::ok();
  return impl_->flush_now() ? keel::Status::ok() : impl_->failed();
}

keel::Status RecordingWriter::finish() {
  Impl& w = *impl_;
  if (w.file == nullptr) return w.error.empty() ? keel::Status::ok() : w.failed();
  w.payload.clear();
  encode_footer(Footer{w.first_tick, w.last_tick, w.checkpoints, {}}, w.payload);
  uint64_t footer_offset = w.offset;
  bool ok = w.write_chunk(ChunkType::Footer) && w.write_bytes(encode_tail(footer_offset)) && w.flush_file();
  if (std::fclose(w.file) != 0 && ok) {
    w.error = std::string("close failed: ") + std::strerror(errno);
    ok = false;
  }
  w.file = nullptr;
  return ok ? keel::Status::ok() : w.failed();
}

uint64_t RecordingWriter::first_tick() const { return impl_->first_tick; }
uint64_t RecordingWriter::last_tick() const { return impl_->last_tick; }
uint64_t RecordingWriter::bytes_written() const { return impl_->offset; }
const std::string& RecordingWriter::path() const { return impl_->path; }

}  // namespace keel::replay
