#include "block_transfer.h"

#include <keel/protocol/packet.h>
#include <keel/base/byte_io.h>

#include "block_codec.h"

#include <algorithm>

namespace keel::protocol::connection {
namespace {

// Decompressed output grows in steps of at least this, and the decompression window is
// bounded to 2^kMaxWindowLog (8 MiB; zstd levels 1-19 stay within it, only the --ultra
// levels 20-22 ask for more).
constexpr size_t kBlockOutputStep = 64u << 10;
constexpr int kMaxWindowLog = 23;

}  // namespace

// --- sending ---------------------------------------------------------------------------

bool BlockSender::start(std::span<const uint8_t> block) {
  if (active_ || block.size() > config_.max_block_bytes) return false;
  std::vector<uint8_t> compressed;
  if (!block_compress(block, config_.zstd_level, compressed)) return false;
  const size_t n = compressed.size();
  uint32_t count = static_cast<uint32_t>((n + kBlockFragmentBytes - 1) / kBlockFragmentBytes);
  if (count == 0) count = 1;  // an empty block still sends one
  if (count > 65535) return false;
  active_ = true;
  id_ = next_id_++;
  compressed_ = std::move(compressed);
  uncompressed_size_ = static_cast<uint32_t>(block.size());
  fragment_count_ = count;
  acked_.assign(count, 0);
  last_sent_.assign(count, -1e9);
  acked_count_ = 0;
  budget_ = 0;
  budget_time_ = -1;
  return true;
}

void BlockSender::write_fragments(std::vector<uint8_t>& payload, SentPacket& record, double now, double timeout) {
  if (!active_) return;
  if (budget_time_ < 0) budget_time_ = now;
  double cap = config_.block_bytes_per_second * 0.05 + kMaxPayloadBytes;
  budget_ = std::min(cap, budget_ + (now - budget_time_) * config_.block_bytes_per_second);
  budget_time_ = now;
  uint32_t in_flight = 0;
  for (uint32_t i = 0; i < fragment_count_; ++i) {
    if (!acked_[i] && last_sent_[i] > -1e8 && now - last_sent_[i] < timeout) ++in_flight;
  }
  keel::ByteWriter w(payload);
  for (uint32_t i = 0; i < fragment_count_ && in_flight < config_.block_window; ++i) {
    if (acked_[i] || now - last_sent_[i] < timeout) continue;
    size_t begin = size_t{i} * kBlockFragmentBytes;
    size_t len = std::min(kBlockFragmentBytes, compressed_.size() - begin);
    if (len + kBlockOverhead > kMaxPayloadBytes - payload.size() || budget_ < static_cast<double>(len)) break;
    w.u8(kBlockFragment);
    w.u16(id_);
    w.u16(static_cast<uint16_t>(i));
    w.u16(static_cast<uint16_t>(fragment_count_));
    w.u32(static_cast<uint32_t>(compressed_.size()));
    w.u32(uncompressed_size_);
    w.u16(static_cast<uint16_t>(len));
    w.bytes(std::span<const uint8_t>(compressed_).subspan(begin, len));
    last_sent_[i] = now;
    budget_ -= static_cast<double>(len);
    ++in_flight;
    record.add_block_fragment(i);
  }
}

void BlockSender::on_acked(const SentPacket& record) {
  if (!active_) return;
  record.for_each_block_fragment([this](uint32_t i) {
    if (i < fragment_count_ && !acked_[i]) {
      acked_[i] = 1;
      ++acked_count_;
    }
  });
  if (acked_count_ < fragment_count_) return;
  active_ = false;
  compressed_ = {};
  acked_ = {};
  last_sent_ = {};
}

// --- receiving -------------------------------------------------------------------------

BlockReceiver::~BlockReceiver() { reset(); }

DropReason BlockReceiver::on_fragment(uint16_t id, uint32_t index, uint32_t count, uint32_t csize, uint32_t usize,
                                      std::span<const uint8_t> bytes) {
  // Refused before anything is looked at or kept: a peer that may not send blocks costs
  // one comparison per fragment.
  if (config_.max_receive_block_bytes == 0) return DropReason::BlockRefused;
  if (last_done_ && !sequence_greater_than(id, *last_done_)) {
    return DropReason::Duplicate;  // a resend of a block we already have (its ack was lost)
  }
  if (!active_ || id_ != id) {
    DropReason r = start(id, count, csize, usize);
    if (r != DropReason::None) return r;
  }
  if (count != fragment_count_ || csize != compressed_size_ || usize != uncompressed_size_ || index >= count) {
    return DropReason::BlockInvalid;
  }
  size_t begin = size_t{index} * kBlockFragmentBytes;
  size_t expect = std::min(kBlockFragmentBytes, size_t{csize} - std::min<size_t>(begin, csize));
  if (bytes.size() != expect) return DropReason::BlockInvalid;
  if (index < next_feed_ || ahead_.count(index) != 0) return DropReason::Duplicate;
  if (index > next_feed_) {
    // Early: kept (and charged) until the fragments before it have arrived.
    if (!held_.hold(bytes.size())) return DropReason::MemoryBudget;
    ahead_.emplace(index, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    return DropReason::None;
  }
  DropReason r = feed(bytes, next_feed_ + 1 == fragment_count_);
  ++next_feed_;
  for (auto it = ahead_.find(next_feed_); r == DropReason::None && it != ahead_.end(); it = ahead_.find(next_feed_)) {
    r = feed(it->second, next_feed_ + 1 == fragment_count_);
    held_.unhold(it->second.size());
    ahead_.erase(it);
    ++next_feed_;
  }
  if (r == DropReason::None && next_feed_ < fragment_count_) return DropReason::None;
  if (r == DropReason::None) r = finish();
  // Done or failed: either way this block id is finished, and its later fragments are
  // duplicates rather than the start of another transfer.
  last_done_ = id;
  reset();
  return r;
}

DropReason BlockReceiver::start(uint16_t id, uint32_t count, uint32_t csize, uint32_t usize) {
  const size_t cap = config_.max_receive_block_bytes;
  if (usize > cap || csize > block_compress_bound(cap) ||
      count != std::max<uint32_t>(1, (csize + kBlockFragmentBytes - 1) / kBlockFragmentBytes)) {
    return DropReason::BlockInvalid;
  }
  reset();
  auto stream = std::make_unique<BlockDecompressor>();
  // The decompressor keeps a window of the frame's declared size: bounded here, so a
  // frame cannot make it allocate more than the block could ever need (nor more than
  // kMaxWindowLog, which every zstd level up to 19 stays within).
  int window_log = 10;
  while (window_log < kMaxWindowLog && (size_t{1} << window_log) < cap) ++window_log;
  if (!stream->open(window_log, usize)) return DropReason::MemoryBudget;
  size_t stream_bytes = stream->memory_bytes();
  if (!held_.hold(stream_bytes)) return DropReason::MemoryBudget;
  active_ = true;
  id_ = id;
  fragment_count_ = count;
  compressed_size_ = csize;
  uncompressed_size_ = usize;
  stream_ = std::move(stream);
  stream_bytes_ = stream_bytes;
  return DropReason::None;
}

// Room for more output, grown as output is actually produced (charged first). One byte
// past the claimed size is offered too: if the frame fills it, it lied.
DropReason BlockReceiver::grow_output() {
  size_t want = std::min<size_t>(size_t{uncompressed_size_} + 1, std::max<size_t>(kBlockOutputStep, 2 * out_.capacity()));
  if (want <= out_.capacity()) return DropReason::BlockInvalid;
  if (!held_.hold(want - out_.capacity())) return DropReason::MemoryBudget;
  size_t before = out_.capacity();
  out_.reserve(want);
  if (out_.capacity() > want && !held_.hold(out_.capacity() - want)) {
    held_.unhold(want - before);  // cannot happen with libstdc++ (reserve is exact)
    return DropReason::MemoryBudget;
  }
  return DropReason::None;
}

DropReason BlockReceiver::feed(std::span<const uint8_t> compressed, bool last) {
  size_t in_pos = 0;
  for (;;) {
    if (frame_done_) return in_pos == compressed.size() ? DropReason::None : DropReason::BlockInvalid;
    if (out_.size() == out_.capacity()) {
      if (DropReason r = grow_output(); r != DropReason::None) return r;
    }
    size_t produced = out_.size();
    out_.resize(out_.capacity());
    size_t out_pos = produced;
    BlockDecompressor::Step step = stream_->decompress(compressed, in_pos, out_, out_pos, last);
    const size_t room = out_.size();
    out_.resize(out_pos);
    if (step.error || out_pos > uncompressed_size_) return DropReason::BlockInvalid;
    size_t now_bytes = stream_->memory_bytes();
    if (now_bytes > stream_bytes_) {
      // The window the frame asked for (bounded by windowLogMax above).
      if (!held_.hold(now_bytes - stream_bytes_)) return DropReason::MemoryBudget;
      stream_bytes_ = now_bytes;
    }
    if (step.frame_done) frame_done_ = true;
    else if (in_pos == compressed.size() && out_pos < room) return DropReason::None;  // wants input
  }
}

DropReason BlockReceiver::finish() {
  if (!frame_done_ || out_.size() != uncompressed_size_) return DropReason::BlockInvalid;
  // Handed over still charged; take() releases it.
  size_t charged = out_.capacity();
  done_.push_back(std::move(out_));
  done_charges_.push_back(charged);
  out_ = {};
  return DropReason::None;
}

void BlockReceiver::reset() {
  for (const auto& [index, bytes] : ahead_) held_.unhold(bytes.size());
  held_.unhold(out_.capacity());
  held_.unhold(stream_bytes_);
  active_ = false;
  id_ = 0;
  fragment_count_ = compressed_size_ = uncompressed_size_ = 0;
  next_feed_ = 0;
  ahead_.clear();
  out_ = {};
  stream_.reset();
  stream_bytes_ = 0;
  frame_done_ = false;
}

std::optional<std::vector<uint8_t>> BlockReceiver::take() {
  if (done_.empty()) return std::nullopt;
  auto b = std::move(done_.front());
  done_.pop_front();
  held_.unhold(done_charges_.front());
  done_charges_.pop_front();
  return b;
}

}  // namespace keel::protocol::connection
