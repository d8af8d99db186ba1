// Reading a recording. The file is untrusted: every chunk's checksum is verified before
// its payload is decoded, every count is bounded by the bytes left, unknown chunk types
// are skipped, and a file cut short or damaged in its tail still yields every complete
// tick before the damage.
#pragma once

#include <keel/replay/format.h>
#include <keel/sim/expected.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keel::replay {

/// Where a recording's bytes come from: a file read on demand, or memory (tests, fuzzing).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Reads exactly n bytes at `offset` into `out` (resized); false if they are not there.
  virtual bool read(uint64_t offset, size_t n, std::vector<uint8_t>& out) const = 0;
};

sim::Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path);
std::unique_ptr<ByteSource> memory_source(std::vector<uint8_t> bytes);

/// One verified chunk.
struct Chunk {
  uint32_t type = 0;
  uint64_t offset = 0;  ///< of its frame
  uint64_t end = 0;     ///< offset just past its checksum
  std::vector<uint8_t> payload;
};

enum class ChunkStatus {
  Ok,         ///< `out` holds a chunk whose checksum matched
  End,        ///< no bytes left at `offset`
  Truncated,  ///< the file ends inside the chunk (a crash while writing it)
  Damaged,    ///< the bytes are all there but the checksum (or the frame) is wrong;
              ///< `out.end` says where the frame claims the chunk ends, when plausible
};

/// Reads and verifies the chunk framed at `offset`; `why` explains anything but Ok.
ChunkStatus read_chunk(const ByteSource& src, uint64_t offset, Chunk& out, std::string& why);

/// Reads tick records in file order, verifying every chunk. It skips a damaged chunk when
/// the chunk after it is sound (a damaged checkpoint costs nothing but seeking), and stops
/// at the first tick that is not the one expected (a damaged tick cannot be stepped over).
class TickCursor {
 public:
  /// Starts at `offset` expecting tick `expected_tick` next; `after` is the tick (and its
  /// hash) whose record precedes `offset`, when the cursor resumes behind a checkpoint.
  TickCursor(const ByteSource& src, uint64_t offset, uint64_t expected_tick,
             std::optional<std::pair<uint64_t, uint64_t>> after = std::nullopt);

  /// The next tick record, or nullopt at the end of the usable ticks.
  std::optional<TickRecord> next();
  /// Checkpoint chunks passed so far whose checksum matched and that follow their tick.
  const std::vector<CheckpointRef>& checkpoints() const { return checkpoints_; }
  /// Damaged or skipped chunks, and why the cursor stopped, each naming a byte offset and
  /// the last good tick before it.
  const std::vector<std::string>& problems() const { return problems_; }
  /// True once a valid footer and tail ended the file.
  bool finished() const { return finished_; }
  /// True if the cursor stopped at damage or a partial chunk rather than the file's end.
  bool stopped_early() const { return stopped_early_; }
  /// True if it stopped at a chunk the file ends inside (a crash while writing), as
  /// opposed to damage with more bytes after it.
  bool truncated() const { return truncated_; }
  /// True if anything but a footer or tail was dropped: a damaged or partial chunk, a
  /// tick out of order, an inconsistent checkpoint (what `recover` counts as lost).
  bool lost_data() const { return lost_data_; }
  /// Called with every chunk the cursor accepts (ticks, consistent checkpoints, unknown
  /// types), in file order; `recover` copies them through.
  std::function<void(const Chunk&)> on_chunk;
  /// End offset of the last chunk the cursor accepted.
  uint64_t good_end() const { return good_end_; }
  std::optional<uint64_t> last_tick() const { return last_tick_; }

 private:
  void problem(uint64_t offset, const std::string& what, bool lost = true);
  bool handle_chunk(Chunk& chunk, std::optional<TickRecord>& out);
  bool skip_damaged(const Chunk& chunk, const std::string& why);
  void check_tail(uint64_t footer_end);

  const ByteSource& src_;
  uint64_t offset_;
  uint64_t expected_;
  std::optional<uint64_t> last_tick_;
  uint64_t last_hash_ = 0;
  uint64_t good_end_;
  bool done_ = false;
  bool finished_ = false;
  bool stopped_early_ = false;
  bool lost_data_ = false;
  bool truncated_ = false;
  std::vector<CheckpointRef> checkpoints_;
  std::vector<std::string> problems_;
};

/// What a full pass over a recording found.
struct RecordingIndex {
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;   ///< ticks first..last are all present and in order
  std::vector<CheckpointRef> checkpoints;
  bool finished = false;    ///< ended by a valid footer and tail
  bool stopped_early = false;  ///< ended by damage or a partial chunk
  bool truncated = false;      ///< ...by a partial chunk at the end (a crash while writing)
  std::vector<std::string> problems;
  uint64_t good_end = 0;
  uint32_t players_seen = 0;     ///< distinct players that ever joined
  uint32_t max_players = 0;      ///< most players present at once
  uint64_t player_events = 0;
  uint64_t input_frames = 0;
};

class Recording {
 public:
  /// Opens a file: reads and checks the preamble and header, and the footer if the file
  /// was finished. `name` (the path) starts every error message.
  static sim::Expected<Recording> open(const std::string& path);
  static sim::Expected<Recording> from_bytes(std::vector<uint8_t> bytes, const std::string& name = "<memory>");

  const std::string& name() const { return name_; }
  const Header& header() const { return header_; }
  const ByteSource& source() const { return *src_; }
  /// Offset of the first chunk after the header.
  uint64_t body_offset() const { return body_offset_; }
  /// The footer, when the tail points at a valid one.
  const std::optional<Footer>& footer() const { return footer_; }

  /// Walks the whole file once (cached): which ticks and checkpoints are usable, what is
  /// damaged, and player statistics.
  const RecordingIndex& index() const;
  /// Checkpoints for seeking: the footer's when the file is finished, else the index's.
  std::vector<CheckpointRef> checkpoints() const;
  /// Reads, verifies and decodes the checkpoint chunk at `ref.offset`.
  sim::Expected<Checkpoint> read_checkpoint(const CheckpointRef& ref) const;
  /// A cursor over the ticks from the start (the first record is tick start_tick).
  TickCursor ticks_from_start() const;
  /// A cursor over the ticks after a checkpoint.
  TickCursor ticks_after(const CheckpointRef& ref) const;

 private:
  static sim::Expected<Recording> from_source(std::unique_ptr<ByteSource> src, const std::string& name);
  void read_footer();

  std::string name_;
  std::unique_ptr<ByteSource> src_;
  Header header_;
  uint64_t body_offset_ = 0;
  std::optional<Footer> footer_;
  mutable std::shared_ptr<RecordingIndex> index_;
};

}  // namespace keel::replay
