// Desync dumps: one match state, framed and checksummed.
#include <keel/replay/desync_dump.h>

#include <keel/replay/format.h>
#include <keel/replay/writer.h>

#include <keel/base/byte_io.h>

#include <keel/sim/state_hash.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace keel::replay {

using keel::ByteReader;
using keel::ByteWriter;

DesyncDump make_desync_dump(const game::Match& match, uint64_t expected_hash, std::string note) {
  DesyncDump d;
  d.tick = match.tick();
  d.state = match.save_state();
  d.hash = match.hash();  // sim::state_hash(d.state)
  d.expected_hash = expected_hash;
  d.game = match.spec().name;
  if (note.empty()) {
    Header b = describe_build();
    note = "keel " + b.build_id + ", " + b.compiler + ", " + b.target;
  }
  d.note = std::move(note);
  return d;
}

namespace {

// The dump's fields after its magic and version, one list over the direction
// (keel/base/byte_io.h); the checksum over everything before it follows.
template <class IO, class D>
void visit_dump(IO& io, D& d) {
  io.u64(d.tick);
  io.u64(d.hash);
  io.u64(d.expected_hash);
  io.str_prefix(d.note, kMaxStringBytes, "note");
  io.str_prefix(d.game, game::kMaxNameBytes, "game");
  uint64_t n = d.state.size();
  io.u64(n);
  if constexpr (IO::kReading) {
    const size_t left = io.reader().left();
    if (io.ok() && n != left) io.fail("state length " + std::to_string(n) + " is not the " + std::to_string(left) + " bytes left");
    d.state.resize(io.ok() ? size_t(n) : 0);
  }
  io.bytes(d.state);
}

}  // namespace

std::vector<uint8_t> encode_desync_dump(const DesyncDump& d) {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes(kDesyncDumpMagic);
  w.u32(kDesyncDumpVersion);
  visit_dump(w, d);
  w.u64(XXH3_64bits(out.data(), out.size()));
  return out;
}

bool looks_like_desync_dump(std::span<const uint8_t> bytes) {
  return bytes.size() >= kDesyncDumpMagic.size() && std::equal(kDesyncDumpMagic.begin(), kDesyncDumpMagic.end(), bytes.begin());
}

keel::Expected<DesyncDump> decode_desync_dump(std::span<const uint8_t> bytes) {
  if (!looks_like_desync_dump(bytes)) return keel::Error{"not a Keel desync dump (bad magic)"};
  if (bytes.size() < kDesyncDumpMagic.size() + 8) return keel::Error{"desync dump is cut short"};
  const size_t body = bytes.size() - 8;
  ByteReader check(bytes.subspan(body));
  if (XXH3_64bits(bytes.data(), body) != check.u64()) return keel::Error{"desync dump checksum mismatch (damaged file)"};
  ByteReader r(bytes.subspan(kDesyncDumpMagic.size(), body - kDesyncDumpMagic.size()));
  uint32_t version = r.u32();
  if (r.ok() && version != kDesyncDumpVersion) {
    return keel::Error{"desync dump version " + std::to_string(version) + " is not the one this build reads (" +
                      std::to_string(kDesyncDumpVersion) + ")"};
  }
  DesyncDump d;
  keel::FieldReader io(r);
  visit_dump(io, d);
  if (!r.ok()) return keel::Error{"desync dump: " + r.error()};
  if (sim::state_hash(d.state) != d.hash) return keel::Error{"desync dump: the state does not hash to its recorded hash"};
  return d;
}

keel::Status write_desync_dump(const std::string& path, const game::Match& match, uint64_t expected_hash, std::string note) {
  std::vector<uint8_t> bytes = encode_desync_dump(make_desync_dump(match, expected_hash, std::move(note)));
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return keel::Error{path + ": cannot create: " + std::strerror(errno)};
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return keel::Error{path + ": write failed"};
  return keel::Status::ok();
}

keel::Expected<DesyncDump> read_desync_dump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return keel::Error{path + ": cannot open"};
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto d = decode_desync_dump(bytes);
  if (!d) return keel::Error{path + ": " + d.error().message};
  return d;
}

}  // namespace keel::replay
