// Writing a recording while a match runs: the header at creation, then one tick record
// per Match::step, a full checkpoint every N ticks, and a footer when finished.
//
// The file is only ever appended to and is flushed to the operating system at least
// every `flush_every_ticks` ticks, at every checkpoint and on flush(), so a process that
// dies loses at most the ticks since the last flush; `keel-replay recover` turns what is
// left into a finished file.
#pragma once

#include <keel/replay/format.h>
#include <keel/base/expected.h>
#include <keel/game/match.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace keel::replay {

struct WriterOptions {
  /// A checkpoint after every tick that is a multiple of this (0: none but the start's).
  uint32_t checkpoint_interval = 600;
  Compression checkpoint_compression = Compression::Zstd;
  /// Flush after this many ticks. 0 means the scene's tick rate: once per second of
  /// match time, which a server stepping in real time turns into once per second.
  uint32_t flush_every_ticks = 0;
  /// Free-form key/value pairs stored in the header (match id, start time, ...).
  std::vector<std::pair<std::string, std::string>> metadata;
  /// The game module the match runs (its file name and build id, game::GameOrigin), or
  /// empty for a game linked into the program. A replay refuses another module build.
  std::string game_module;
  std::string game_build_id;
};

/// The build that is running, as a header records it: Keel version, build id, compiler,
/// flags and target (from CMake, at configure time).
Header describe_build();

class RecordingWriter {
 public:
  /// Creates (or truncates) `path` and writes the header and the record of the match's
  /// current tick. A match past tick 0 also gets a checkpoint, since its state is no
  /// longer the scene's.
  static keel::Expected<RecordingWriter> create(const std::string& path, const game::Match& match,
                                               const WriterOptions& options = {});

  RecordingWriter(RecordingWriter&&) noexcept;
  RecordingWriter& operator=(RecordingWriter&&) noexcept;
  /// Finishes the file (footer and tail) unless finish() already ran.
  ~RecordingWriter();

  /// Records one tick the host has stepped: `applied` exactly as Match::step received
  /// it, `after` the match just after that step (with the game events it emitted), and
  /// `hash`, after.hash(), which the host computes once per tick for everything that
  /// observes the step (the recording, the frame stream, the desync checks). The writer
  /// observes the match and never steps it. Fails if `after` is not at the next tick, or
  /// on I/O error (the error is sticky: every later call fails the same way).
  keel::Status record(const game::TickInputs& applied, const game::Match& after, uint64_t hash);
  /// Hands everything written so far to the operating system.
  keel::Status flush();
  /// Writes the footer (checkpoint index) and the tail, and closes the file.
  keel::Status finish();

  uint64_t first_tick() const;
  uint64_t last_tick() const;
  uint64_t bytes_written() const;
  const std::string& path() const;

 private:
  struct Impl;
  explicit RecordingWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace keel::replay
