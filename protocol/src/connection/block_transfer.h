// Reliable large blocks (a scene, a multi-MB state checkpoint), one at a time in each
// direction: zstd-compressed, cut into fragments, flow-controlled by a window of
// fragments in flight and a byte budget per second, each fragment resent until acked.
// A receiver may refuse blocks altogether (max_receive_block_bytes = 0: a server never
// needs one from its clients); one that takes them decompresses as the fragments arrive,
// in order, into memory that grows with what actually arrives and decompresses, never
// with what a fragment claims.
#pragma once

#include "block_codec.h"
#include "chunk_format.h"
#include "held_bytes.h"

#include <keel/protocol/connection.h>
#include <keel/protocol/drop.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace keel::protocol::connection {

class BlockSender {
 public:
  explicit BlockSender(const ConnectionConfig& config) : config_(config) {}

  /// Starts sending `block`; false while one is in progress or when it is too large.
  bool start(std::span<const uint8_t> block);
  bool active() const { return active_; }
  /// Appends the fragments due (new ones, or ones unacked past the timeout) that the
  /// window, the byte budget and the packet's room allow, noting them in `record`.
  void write_fragments(std::vector<uint8_t>& payload, SentPacket& record, double now, double timeout);
  void on_acked(const SentPacket& record);

 private:
  const ConnectionConfig& config_;
  bool active_ = false;
  uint16_t id_ = 0;
  uint16_t next_id_ = 0;
  std::vector<uint8_t> compressed_;
  uint32_t uncompressed_size_ = 0;
  uint32_t fragment_count_ = 0;
  std::vector<uint8_t> acked_;
  std::vector<double> last_sent_;
  uint32_t acked_count_ = 0;
  double budget_ = 0;
  double budget_time_ = -1;
};

class BlockReceiver {
 public:
  BlockReceiver(const ConnectionConfig& config, HeldBytes& held) : config_(config), held_(held) {}
  ~BlockReceiver();

  DropReason on_fragment(uint16_t id, uint32_t index, uint32_t count, uint32_t csize, uint32_t usize,
                         std::span<const uint8_t> bytes);
  /// A completed block, decompressed.
  std::optional<std::vector<uint8_t>> take();

 private:
  DropReason start(uint16_t id, uint32_t count, uint32_t csize, uint32_t usize);
  /// `last`: these bytes end the block (its last fragment).
  DropReason feed(std::span<const uint8_t> compressed, bool last);
  DropReason grow_output();
  DropReason finish();
  void reset();

  const ConnectionConfig& config_;
  HeldBytes& held_;
  // The block being received: fragments are fed to the decompressor in index order as
  // soon as they are contiguous; ones that arrive early wait in `ahead_`.
  bool active_ = false;
  uint16_t id_ = 0;
  uint32_t fragment_count_ = 0;
  uint32_t compressed_size_ = 0;
  uint32_t uncompressed_size_ = 0;
  uint32_t next_feed_ = 0;  // fragments [0, next_feed_) are decompressed
  std::map<uint32_t, std::vector<uint8_t>> ahead_;
  std::vector<uint8_t> out_;  // decompressed so far (out_.capacity() bytes are charged)
  std::unique_ptr<BlockDecompressor> stream_;
  size_t stream_bytes_ = 0;                    // charged for the decompressor's own memory
  bool frame_done_ = false;

  std::optional<uint16_t> last_done_;
  std::deque<std::vector<uint8_t>> done_;
  std::deque<size_t> done_charges_;  // bytes charged for each, released by take()
};

}  // namespace keel::protocol::connection
