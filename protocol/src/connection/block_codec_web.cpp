// The wasm32 client's block codec (block_codec.h): the frame is decoded whole by a function
// the JavaScript around the module provides (client-sdk/web/keel_web_imports.js, with npm's
// fzstd), once its last fragment has arrived. Until then the fragments are kept here, and
// counted in memory_bytes(), so the receiver charges them to the connection's budget like
// libzstd's window natively. The output is bounded by the block's announced size: the
// JavaScript refuses a frame whose header declares another size or a larger window.
#include "block_codec.h"

#include <algorithm>

extern "C" {
/// Decodes the zstd frame src[0, src_bytes) into dst, which holds exactly `content_bytes`;
/// returns the bytes written, or -1 when the frame is invalid, declares another content
/// size or a window above 2^window_log.
int keel_web_zstd_decompress(const uint8_t* src, size_t src_bytes, uint8_t* dst, size_t content_bytes,
                             int window_log);
}

namespace keel::protocol::connection {

struct BlockDecompressor::State {
  int window_log = 0;
  size_t content_bytes = 0;
  std::vector<uint8_t> frame;    // the compressed bytes so far
  std::vector<uint8_t> decoded;  // the whole block, once decoded
  size_t handed_out = 0;         // decoded bytes already written to the caller's output
  bool decoded_all = false;
};

size_t block_compress_bound(size_t bytes) {
  // ZSTD_COMPRESSBOUND (zstd.h): the frame's overhead, plus a small margin for inputs
  // under 128 KiB.
  constexpr size_t kSmall = size_t{128} << 10;
  return bytes + (bytes >> 8) + (bytes < kSmall ? (kSmall - bytes) >> 11 : 0);
}

bool block_compress(std::span<const uint8_t>, int, std::vector<uint8_t>&) { return false; }

BlockDecompressor::BlockDecompressor() = default;
BlockDecompressor::~BlockDecompressor() = default;

bool BlockDecompressor::open(int window_log, size_t content_bytes) {
  state_ = std::make_unique<State>();
  state_->window_log = window_log;
  state_->content_bytes = content_bytes;
  return true;
}

size_t BlockDecompressor::memory_bytes() const {
  return state_ ? sizeof(State) + state_->frame.capacity() + state_->decoded.capacity() : 0;
}

BlockDecompressor::Step BlockDecompressor::decompress(std::span<const uint8_t> in, size_t& in_pos,
                                                      std::span<uint8_t> out, size_t& out_pos, bool last_input) {
  State& s = *state_;
  if (in_pos < in.size()) {
    if (s.decoded_all) return {true, false};  // bytes past the frame's end
    s.frame.insert(s.frame.end(), in.begin() + static_cast<std::ptrdiff_t>(in_pos), in.end());
    in_pos = in.size();
    if (!last_input) return {false, false};
    s.decoded.resize(s.content_bytes);
    int n = keel_web_zstd_decompress(s.frame.data(), s.frame.size(), s.decoded.data(), s.decoded.size(),
                                     s.window_log);
    if (n < 0 || static_cast<size_t>(n) != s.content_bytes) return {true, false};
    s.frame = {};
    s.decoded_all = true;
  }
  if (!s.decoded_all) return {false, false};
  size_t take = std::min(s.decoded.size() - s.handed_out, out.size() - std::min(out.size(), out_pos));
  std::copy_n(s.decoded.begin() + static_cast<std::ptrdiff_t>(s.handed_out), take,
              out.begin() + static_cast<std::ptrdiff_t>(out_pos));
  s.handed_out += take;
  out_pos += take;
  return {false, s.handed_out == s.decoded.size()};
}

}  // namespace keel::protocol::connection
