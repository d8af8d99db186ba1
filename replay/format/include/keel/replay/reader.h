// Reading a recording. The file is untrusted: every chunk's frame check and checksum are
// verified before its payload is decoded, every length and count is bounded (by the
// bytes left and by limits derived from the scene, never by a field of the file alone),
// unknown chunk types are skipped, damage is stepped over to the next chunk that
// verifies, and a file cut short still yields every complete tick.
#pragma once

#include <keel/replay/format.h>
#include <keel/base/expected.h>

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

keel::Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path);
std::unique_ptr<ByteSource> memory_source(std::vector<uint8_t> bytes);

/// One verified chunk.
struct Chunk {
  uint32_t type = 0;
  uint64_t offset = 0;  ///< of its frame
  uint64_t end = 0;     ///< offset just past its checksum
  std::vector<uint8_t> payload;
};

enum class ChunkStatus {
  Ok,         ///< `out` holds a chunk whose frame check and checksum matched
  End,        ///< no bytes left at `offset`
  Truncated,  ///< the file ends inside the chunk (a crash while writing it): the frame
              ///< check vouches for the length, or fewer than 12 bytes are left
  Damaged,    ///< the frame check, the length limit or the checksum is wrong; `out.end`
              ///< says where the chunk ends when its frame check vouches for the length
};

/// Payload limits per chunk type: what a reader allocates at most for one chunk, set
/// from the recording's scene (checkpoints) and constants (everything else).
struct ChunkLimits {
  uint64_t checkpoint_payload = kMaxChunkPayload;
  uint64_t of(uint32_t type) const;
};

/// Reads and verifies the chunk framed at `offset`; `why` explains anything but Ok.
ChunkStatus read_chunk(const ByteSource& src, uint64_t offset, Chunk& out, std::string& why,
                       const ChunkLimits& limits = {});

/// The first offset at or after `from` where a chunk frame verifies (Ok, or Truncated
/// with a frame check that matched): where reading resumes after damage. nullopt if none.
std::optional<uint64_t> find_next_chunk(const ByteSource& src, uint64_t from, const ChunkLimits& limits = {});

/// Reads tick records in file order, verifying every chunk. After a damaged chunk it
/// scans forward to the next chunk that verifies. Ticks must be consecutive; a jump
/// forward (ticks lost to damage, or a gap a recovered file records) is accepted only at
/// a tick record followed by its checkpoint, since only a checkpoint lets a replay
/// resume: the records in between are dropped and counted as lost.
class TickCursor {
 public:
  /// Starts at `offset` expecting tick `expected_tick` next; `after` is the tick (and its
  /// hash) whose record precedes `offset`, when the cursor resumes behind a checkpoint.
  TickCursor(const ByteSource& src, uint64_t offset, uint64_t expected_tick,
             std::optional<std::pair<uint64_t, uint64_t>> after = std::nullopt, ChunkLimits limits = {});

  /// The next tick record, or nullopt at the end of the usable ticks. A record whose
  /// tick is not the previous one + 1 starts a new segment (its checkpoint follows).
  std::optional<TickRecord> next();
  /// Checkpoint chunks passed so far whose checksum matched and that follow their tick.
  const std::vector<CheckpointRef>& checkpoints() const { return checkpoints_; }
  /// Damage: chunks that did not verify, records out of order, inconsistent checkpoints
  /// or footer, each naming a byte offset and the last good tick before it.
  const std::vector<std::string>& problems() const { return problems_; }
  /// Tick ranges the cursor stepped over: between the last tick before a jump and the
  /// tick record (with its checkpoint) it resumed at, or after the last tick when the
  /// file holds later records that no checkpoint makes usable.
  const std::vector<TickRange>& gaps() const { return gaps_; }
  /// The replayable runs of consecutive ticks, in order.
  const std::vector<TickRange>& segments() const { return segments_; }
  /// True once a footer that agrees with the chunks and a valid tail ended the file.
  bool finished() const { return finished_; }
  /// The footer the file ended with (when finished).
  const std::optional<Footer>& footer() const { return footer_; }
  /// True if it stopped at a chunk the file ends inside (a crash while writing).
  bool truncated() const { return truncated_; }
  /// True if the file ends inside its footer or tail: the writer had recorded every
  /// tick and was closing the file.
  bool ended_in_footer() const { return ended_in_footer_; }
  /// What the last partial chunk was, when truncated.
  const std::string& truncation() const { return truncation_; }
  /// The highest tick of any sound tick record read, used or dropped.
  std::optional<uint64_t> highest_tick() const { return highest_; }
  /// The tick of the last sync chunk passed (how far the writer had flushed).
  std::optional<uint64_t> last_sync() const { return last_sync_; }
  /// True if anything but a footer, tail or sync chunk was dropped (what `recover`
  /// counts as lost): damage, a partial chunk, a gap.
  bool lost_data() const { return lost_data_; }
  /// Called with every chunk the cursor accepts (ticks, consistent checkpoints, unknown
  /// types), in file order; `recover` copies them through.
  std::function<void(const Chunk&)> on_chunk;
  /// End offset of the last chunk the cursor accepted.
  uint64_t good_end() const { return good_end_; }
  std::optional<uint64_t> last_tick() const { return last_tick_; }

 private:
  void problem(uint64_t offset, const std::string& what);
  bool handle_chunk(Chunk& chunk, std::optional<TickRecord>& out);
  bool handle_tick(const Chunk& chunk, std::optional<TickRecord>& out);
  void handle_checkpoint(const Chunk& chunk);
  bool followed_by_its_checkpoint(const Chunk& chunk, const TickRecord& t) const;
  void resync(const Chunk& chunk, const std::string& why);
  void check_footer(const Chunk& chunk);
  void close_gap(std::optional<uint64_t> resumed_at);

  const ByteSource& src_;
  ChunkLimits limits_;
  uint64_t offset_;
  uint64_t expected_;
  uint64_t start_tick_;
  std::optional<uint64_t> last_tick_;
  uint64_t last_hash_ = 0;
  uint64_t good_end_;
  std::optional<uint64_t> skipped_max_;  // highest tick of the records dropped since the last accepted tick
  std::optional<uint64_t> last_sync_;
  std::optional<uint64_t> last_record_;  // tick of the last record read, used or dropped
  std::optional<uint64_t> highest_;
  bool full_ = true;  // started at the first chunk after the header
  bool done_ = false;
  bool finished_ = false;
  bool lost_data_ = false;
  bool truncated_ = false;
  bool ended_in_footer_ = false;
  std::string truncation_;
  std::optional<Footer> footer_;
  std::vector<CheckpointRef> checkpoints_;
  std::vector<std::string> problems_;
  std::vector<TickRange> gaps_;
  std::vector<TickRange> segments_;
};

/// What a full pass over a recording found.
struct RecordingIndex {
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;   ///< the last usable tick
  std::vector<CheckpointRef> checkpoints;
  std::vector<TickRange> segments;  ///< replayable runs of consecutive ticks
  /// Ticks between first_tick and last_tick the file does not hold (damage, or what a
  /// recovered file's footer says was lost before it was recovered).
  std::vector<TickRange> gaps;
  /// What a recovered file's footer says was lost (gaps and a lost tail).
  std::vector<TickRange> lost_before_recovery;
  bool finished = false;    ///< ended by a consistent footer and a valid tail
  bool truncated = false;   ///< ended by a partial chunk (a crash while writing)
  /// The writer recorded every tick and began the footer (finished, or cut short
  /// inside the footer or tail): no tick after last_tick can be lost.
  bool writer_finished = false;
  /// Damage anywhere (preamble, header, chunks, footer, tail), each naming a byte
  /// offset: a file with any is never reported verified.
  std::vector<std::string> problems;
  /// The highest tick any sound tick record holds (> last_tick when records after the
  /// last usable tick were dropped).
  uint64_t highest_tick = 0;
  /// When !writer_finished: the writer did not close the file (a crash, or it still runs).
  /// The ticks after highest_tick are lost, up to this many: the last sync chunk's tick
  /// + the header's flush_every_ticks - highest_tick (0 when that is negative).
  uint64_t tail_lost_up_to = 0;
  std::optional<uint64_t> last_sync;
  std::string truncation;   ///< the partial last chunk, when truncated
  uint64_t good_end = 0;
  uint32_t players_seen = 0;     ///< distinct players that ever joined
  uint32_t max_players = 0;      ///< most players present at once
  uint64_t player_events = 0;
  uint64_t input_frames = 0;
  /// Ticks the file holds (the sum of the segments' lengths).
  uint64_t ticks_held() const;
};

class Recording {
 public:
  /// Opens a file: reads and checks the preamble and header, and the footer if the file
  /// was finished. `name` (the path) starts every error message.
  static keel::Expected<Recording> open(const std::string& path);
  static keel::Expected<Recording> from_bytes(std::vector<uint8_t> bytes, const std::string& name = "<memory>");

  const std::string& name() const { return name_; }
  const Header& header() const { return header_; }
  /// The game the header declares (its input layout, state and events); opening fails
  /// when the header's spec does not read back as a valid spec.
  const game::GameSpec& spec() const { return spec_; }
  const ByteSource& source() const { return *src_; }
  /// Offset of the first chunk after the header.
  uint64_t body_offset() const { return body_offset_; }
  /// The footer, when the tail points at a valid one.
  const std::optional<Footer>& footer() const { return footer_; }
  /// The most bytes a checkpoint's state may have: max_checkpoint_state_bytes() of the
  /// header's scene (0 when the scene does not parse: then no checkpoint is read).
  uint64_t max_state_bytes() const { return max_state_bytes_; }
  ChunkLimits limits() const;
  /// Damage found while opening: the preamble, the header or its copy.
  const std::vector<std::string>& open_problems() const { return open_problems_; }

  /// Walks the whole file once (cached): which ticks and checkpoints are usable, what is
  /// damaged, and player statistics.
  const RecordingIndex& index() const;
  /// Checkpoints for seeking: the footer's when the file is finished, else the index's.
  std::vector<CheckpointRef> checkpoints() const;
  /// Reads, verifies and decodes the checkpoint chunk at `ref.offset`.
  keel::Expected<Checkpoint> read_checkpoint(const CheckpointRef& ref) const;
  /// A cursor over the ticks from the start (the first record is tick start_tick).
  TickCursor ticks_from_start() const;
  /// A cursor over the ticks after a checkpoint.
  TickCursor ticks_after(const CheckpointRef& ref) const;

 private:
  static keel::Expected<Recording> from_source(std::unique_ptr<ByteSource> src, const std::string& name);
  keel::Status read_header(const Preamble& preamble);
  void read_footer();

  std::string name_;
  std::unique_ptr<ByteSource> src_;
  Header header_;
  game::GameSpec spec_;
  uint64_t body_offset_ = 0;
  std::optional<Footer> footer_;
  uint64_t max_state_bytes_ = 0;
  std::vector<std::string> open_problems_;
  mutable std::shared_ptr<RecordingIndex> index_;
};

}  // namespace keel::replay
