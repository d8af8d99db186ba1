// The native block codec (block_codec.h): libzstd, streaming.
#include "block_codec.h"

#include <zstd.h>

namespace keel::protocol::connection {

struct BlockDecompressor::State {
  ZSTD_DStream* stream = nullptr;
  ~State() { ZSTD_freeDStream(stream); }
};

size_t block_compress_bound(size_t bytes) { return ZSTD_compressBound(bytes); }

bool block_compress(std::span<const uint8_t> block, int level, std::vector<uint8_t>& frame) {
  frame.resize(ZSTD_compressBound(block.size()));
  size_t n = ZSTD_compress(frame.data(), frame.size(), block.data(), block.size(), level);
  if (ZSTD_isError(n)) return false;
  frame.resize(n);
  return true;
}

BlockDecompressor::BlockDecompressor() = default;
BlockDecompressor::~BlockDecompressor() = default;

bool BlockDecompressor::open(int window_log, size_t /*content_bytes: the frame's header says it*/) {
  auto state = std::make_unique<State>();
  state->stream = ZSTD_createDStream();
  if (state->stream == nullptr) return false;
  ZSTD_DCtx_setParameter(state->stream, ZSTD_d_windowLogMax, window_log);
  state_ = std::move(state);
  return true;
}

size_t BlockDecompressor::memory_bytes() const { return state_ ? ZSTD_sizeof_DStream(state_->stream) : 0; }

BlockDecompressor::Step BlockDecompressor::decompress(std::span<const uint8_t> in, size_t& in_pos,
                                                      std::span<uint8_t> out, size_t& out_pos, bool /*last_input*/) {
  ZSTD_inBuffer zin{in.data(), in.size(), in_pos};
  ZSTD_outBuffer zout{out.data(), out.size(), out_pos};
  size_t ret = ZSTD_decompressStream(state_->stream, &zout, &zin);
  in_pos = zin.pos;
  out_pos = zout.pos;
  if (ZSTD_isError(ret)) return {true, false};
  return {false, ret == 0};
}

}  // namespace keel::protocol::connection
