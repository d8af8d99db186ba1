// Recovery: re-frame every sound chunk before the damage, then a new footer.
#include <keel/replay/recover.h>

#include <keel/replay/reader.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>

namespace keel::replay {

namespace {

// Appends to a file, keeping the offset and the first error.
struct Appender {
  std::FILE* file = nullptr;
  uint64_t offset = 0;
  bool ok = true;

  void write(const std::vector<uint8_t>& bytes) {
    if (ok && std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) ok = false;
    offset += bytes.size();
  }
  void chunk(uint32_t type, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> framed;
    frame_chunk(type, payload, framed);
    write(framed);
  }
};

}  // namespace

keel::Expected<RecoverResult> recover_recording(const std::string& in, const std::string& out) {
  auto rec = Recording::open(in);
  if (!rec) return rec.error();
  const RecordingIndex& idx = rec->index();  // the lost tail and the gaps need the whole pass
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (f == nullptr) return keel::Error{out + ": cannot create: " + std::strerror(errno)};
  Appender app{f};
  app.write(encode_preamble());
  std::vector<uint8_t> header;
  encode_header(rec->header(), header);
  app.chunk(uint32_t(ChunkType::Header), header);
  app.chunk(uint32_t(ChunkType::HeaderCopy), header);

  RecoverResult result;
  Footer footer;
  footer.first_tick = rec->header().start_tick;
  TickCursor cursor = rec->ticks_from_start();
  cursor.on_chunk = [&](const Chunk& c) {
    if (c.type == uint32_t(ChunkType::Checkpoint)) {
      footer.checkpoints.push_back(CheckpointRef{cursor.checkpoints().back().tick, app.offset});
    }
    app.chunk(c.type, c.payload);
  };
  while (auto t = cursor.next()) {
    ++result.ticks_kept;
    footer.last_tick = t->tick;
  }
  // What an earlier recovery lost stays listed; what this one loses is added.
  for (const TickRange& l : idx.lost_before_recovery) {
    if (l.up_to) result.lost_tail = l;
  }
  result.lost = cursor.gaps();
  // The footer covers every tick the recording knew of, lost ones too: a recovered file
  // that lost its last ticks to damage still says how far it went.
  for (const TickRange& g : result.lost) footer.last_tick = std::max(footer.last_tick, g.last);
  result.flush_every_ticks = rec->header().flush_every_ticks;
  result.last_sync = idx.last_sync;
  if (!idx.writer_finished && idx.tail_lost_up_to > 0) {
    result.lost_tail = TickRange{idx.highest_tick + 1, idx.highest_tick + idx.tail_lost_up_to, true};
  }
  footer.lost = result.lost;
  if (result.lost_tail) footer.lost.push_back(*result.lost_tail);
  std::vector<uint8_t> payload;
  encode_footer(footer, payload);
  uint64_t footer_offset = app.offset;
  app.chunk(uint32_t(ChunkType::Footer), payload);
  app.write(encode_tail(footer_offset));
  bool closed = std::fclose(f) == 0;
  if (!app.ok || !closed) return keel::Error{out + ": write failed"};

  result.first_tick = footer.first_tick;
  result.last_tick = cursor.last_tick().value_or(footer.first_tick);
  result.checkpoints_kept = uint32_t(footer.checkpoints.size());
  result.segments = cursor.segments();
  result.problems = rec->open_problems();
  result.problems.insert(result.problems.end(), cursor.problems().begin(), cursor.problems().end());
  // Only what this recovery loses counts: a recovered file recovers losing nothing more.
  bool new_loss = !result.problems.empty() || (result.lost_tail && !idx.writer_finished);
  for (const TickRange& g : result.lost) {
    new_loss = new_loss || std::find(idx.lost_before_recovery.begin(), idx.lost_before_recovery.end(), g) ==
                               idx.lost_before_recovery.end();
  }
  result.lost_data = new_loss;
  return result;
}

}  // namespace keel::replay
