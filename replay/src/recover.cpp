// Recovery: re-frame every sound chunk before the damage, then a new footer.
#include <keel/replay/recover.h>

#include <keel/replay/reader.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

sim::Expected<RecoverResult> recover_recording(const std::string& in, const std::string& out) {
  auto rec = Recording::open(in);
  if (!rec) return rec.error();
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (f == nullptr) return sim::Error{out + ": cannot create: " + std::strerror(errno)};
  Appender app{f};
  app.write(encode_preamble(rec->header().format_version));
  std::vector<uint8_t> header;
  encode_header(rec->header(), header);
  app.chunk(uint32_t(ChunkType::Header), header);

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
  std::vector<uint8_t> payload;
  encode_footer(footer, payload);
  uint64_t footer_offset = app.offset;
  app.chunk(uint32_t(ChunkType::Footer), payload);
  app.write(encode_tail(footer_offset));
  bool closed = std::fclose(f) == 0;
  if (!app.ok || !closed) return sim::Error{out + ": write failed"};

  result.first_tick = footer.first_tick;
  result.last_tick = footer.last_tick;
  result.checkpoints_kept = uint32_t(footer.checkpoints.size());
  result.lost_data = cursor.lost_data();
  result.problems = cursor.problems();
  return result;
}

}  // namespace keel::replay
