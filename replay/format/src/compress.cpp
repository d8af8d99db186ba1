#include "compress.h"

#include <zstd.h>

#include <algorithm>
#include <string>

namespace keel::replay::detail {

namespace {
// Level 3 (zstd's default) compresses a pile checkpoint several-fold in about a
// millisecond; higher levels cost the server's tick loop more than they save.
constexpr int kLevel = 3;
}  // namespace

bool zstd_compress(std::span<const uint8_t> in, std::vector<uint8_t>& out) {
  std::vector<uint8_t> buf(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress(buf.data(), buf.size(), in.data(), in.size(), kLevel);
  if (ZSTD_isError(n)) return false;
  out.insert(out.end(), buf.begin(), buf.begin() + std::ptrdiff_t(n));
  return true;
}

keel::Expected<std::vector<uint8_t>> zstd_decompress(std::span<const uint8_t> in, uint64_t raw_size) {
  // Streamed, growing the output only as bytes really come out: a hostile frame that
  // declares gigabytes gets no allocation until it produces them, and none past raw_size
  // (which the caller has capped).
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (ds == nullptr) return keel::Error{"zstd: out of memory"};
  std::vector<uint8_t> out;
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  std::string error;
  size_t ret = 1;
  while (error.empty() && ret != 0) {
    size_t step = size_t(std::min<uint64_t>(raw_size - out.size() + 1, 1u << 20));
    size_t old = out.size();
    out.resize(old + step);
    ZSTD_outBuffer dst{out.data() + old, step, 0};
    ret = ZSTD_decompressStream(ds, &dst, &src);
    out.resize(old + dst.pos);
    if (ZSTD_isError(ret)) error = std::string("zstd: ") + ZSTD_getErrorName(ret);
    else if (out.size() > raw_size) error = "zstd frame expands past the checkpoint's raw size " + std::to_string(raw_size);
    else if (ret != 0 && src.pos == src.size && dst.pos < step) error = "zstd frame is cut short";
  }
  ZSTD_freeDStream(ds);
  if (!error.empty()) return keel::Error{error};
  if (src.pos != src.size) return keel::Error{"bytes follow the zstd frame"};
  if (out.size() != raw_size) {
    return keel::Error{"zstd frame expands to " + std::to_string(out.size()) + " bytes, not " + std::to_string(raw_size)};
  }
  return out;
}

}  // namespace keel::replay::detail
