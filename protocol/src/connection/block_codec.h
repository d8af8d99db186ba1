// zstd for block transfers (block_transfer.cpp), behind one seam:
//  - natively libzstd (block_codec_zstd.cpp): compression, and streaming decompression
//    that decodes each fragment as it arrives;
//  - in the wasm32 client (block_codec_web.cpp) a decoder the JavaScript around the module
//    provides (client-sdk/web/keel_web_imports.js, npm's fzstd), since Debian ships no
//    wasm32 libzstd. It keeps the compressed fragments until the last one and decodes the
//    frame whole; it never compresses (a browser client sends no blocks, and a server
//    refuses blocks from clients: max_receive_block_bytes 0).
// Both decoders bound the frame's window to 2^window_log and report the memory they hold,
// which the receiver charges to its connection's budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace keel::protocol::connection {

/// The largest zstd frame `bytes` bytes can compress to (ZSTD_COMPRESSBOUND's formula).
size_t block_compress_bound(size_t bytes);

/// Compresses `block` into one zstd frame; false when it cannot (always in the wasm32 build).
bool block_compress(std::span<const uint8_t> block, int level, std::vector<uint8_t>& frame);

/// One zstd frame's decoder, fed in order.
class BlockDecompressor {
 public:
  BlockDecompressor();
  ~BlockDecompressor();
  BlockDecompressor(const BlockDecompressor&) = delete;
  BlockDecompressor& operator=(const BlockDecompressor&) = delete;

  /// Ready for a frame of `content_bytes` bytes with a window of at most 2^window_log; false
  /// when out of memory.
  bool open(int window_log, size_t content_bytes);
  /// The memory the decoder holds now (its state, its window, what it keeps).
  size_t memory_bytes() const;

  struct Step {
    bool error = false;       ///< the bytes are not a valid frame (or break a bound)
    bool frame_done = false;  ///< the frame's last byte has been decoded and written
  };
  /// Like ZSTD_decompressStream: reads in[in_pos..], writes out[out_pos..], advancing both.
  /// `last_input`: `in` ends the frame's bytes (the block's last fragment).
  Step decompress(std::span<const uint8_t> in, size_t& in_pos, std::span<uint8_t> out, size_t& out_pos,
                  bool last_input);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace keel::protocol::connection
