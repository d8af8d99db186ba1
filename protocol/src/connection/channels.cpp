#include "channels.h"

#include <keel/base/byte_io.h>

#include <algorithm>
#include <utility>

namespace keel::protocol::connection {
namespace {

// What spare message buffers may keep for reuse, per connection (see BufferPool).
constexpr size_t kKeptBufferBytes = 64u << 10;
constexpr size_t kKeptBuffers = 64;
// Partial messages kept as spare slots (their fragment buffers) for the next ones.
constexpr size_t kMaxSpareReassemblies = 16;

}  // namespace

Channels::Channels(const ConnectionConfig& config, HeldBytes& held, DropCounters& drops)
    : config_(config),
      held_(held),
      drops_(drops),
      buffers_(kKeptBufferBytes, kKeptBuffers),
      control_out_(config.max_reliable_in_flight),
      control_in_(config.max_reliable_in_flight) {
  for (size_t c = 0; c < delivered_.size(); ++c) delivered_[c] = MessageRing(queue_limit(static_cast<uint8_t>(c)));
  reassemblies_.reserve(std::min(config.max_reassemblies, kMaxSpareReassemblies));
  spare_reassemblies_.reserve(kMaxSpareReassemblies);
}

// Delivered control messages are bounded by the receive window as well: one that finds
// the queue full waits in its window slot until the owner takes one.
size_t Channels::queue_limit(uint8_t channel) const {
  return channel == 0 ? config_.max_queued_messages + config_.max_reliable_in_flight : config_.max_queued_messages;
}

bool Channels::send(Channel channel, std::span<const uint8_t> message) {
  if (channel >= Channel::kCount) return false;
  if (channel != Channel::Control) return send_unreliable(static_cast<uint8_t>(channel), message);
  // The span from the oldest unacked id to the next is what the receiver's window
  // accepts; an id past it would be taken for a duplicate there.
  if (message.size() > config_.max_control_message || control_out_span_ >= config_.max_reliable_in_flight) {
    return false;
  }
  ControlOut& slot = control_out_.at(control_out_span_);
  slot.bytes = buffers_.take();
  slot.bytes.assign(message.begin(), message.end());
  slot.live = true;
  slot.id = static_cast<uint16_t>(control_out_base_ + control_out_span_);
  slot.last_sent = -1e9;
  ++control_out_span_;
  return true;
}

void Channels::queue_chunk(std::span<const uint8_t> header, std::span<const uint8_t> bytes) {
  ChunkRef ref{static_cast<uint32_t>(unreliable_bytes_.size()), static_cast<uint32_t>(header.size() + bytes.size())};
  unreliable_bytes_.insert(unreliable_bytes_.end(), header.begin(), header.end());
  unreliable_bytes_.insert(unreliable_bytes_.end(), bytes.begin(), bytes.end());
  unreliable_chunks_.push_back(ref);
}

bool Channels::send_unreliable(uint8_t ch, std::span<const uint8_t> message) {
  if (message.size() > config_.max_unreliable_message || message.size() > kFragmentBytes * kMaxFragments) {
    return false;
  }
  std::array<uint8_t, kFragmentOverhead> header{};
  if (message.size() + kUnreliableOverhead <= kFragmentBytes + kFragmentOverhead) {
    header = {kUnreliable, ch, static_cast<uint8_t>(message.size()), static_cast<uint8_t>(message.size() >> 8)};
    queue_chunk(std::span<const uint8_t>(header.data(), kUnreliableOverhead), message);
    return true;
  }
  // Fragments: every one but the last carries exactly kFragmentBytes, which the
  // receiver checks, so the sizes cannot be used to inflate a reassembly.
  const uint16_t group = next_group_++;
  const auto count = static_cast<uint32_t>((message.size() + kFragmentBytes - 1) / kFragmentBytes);
  for (uint32_t i = 0; i < count; ++i) {
    size_t begin = i * kFragmentBytes;
    size_t len = std::min(kFragmentBytes, message.size() - begin);
    header = {kFragment,
              ch,
              static_cast<uint8_t>(group),
              static_cast<uint8_t>(group >> 8),
              static_cast<uint8_t>(i),
              static_cast<uint8_t>(count),
              static_cast<uint8_t>(len),
              static_cast<uint8_t>(len >> 8)};
    queue_chunk(header, message.subspan(begin, len));
  }
  return true;
}

void Channels::write_control(std::vector<uint8_t>& payload, SentPacket& record, double now, double resend) {
  keel::ByteWriter w(payload);
  for (uint32_t i = 0; i < control_out_span_; ++i) {
    ControlOut& m = control_out_.at(i);
    if (!m.live || now - m.last_sent < resend) continue;
    if (m.bytes.size() + kReliableOverhead > kMaxPayloadBytes - payload.size()) continue;
    w.u8(kReliable);
    w.u16(m.id);
    w.u16(static_cast<uint16_t>(m.bytes.size()));
    w.bytes(m.bytes);
    m.last_sent = now;
    record.add_control(m.id);
  }
}

void Channels::write_unreliable(std::vector<uint8_t>& payload) {
  while (unreliable_sent_ < unreliable_chunks_.size()) {
    const ChunkRef& c = unreliable_chunks_[unreliable_sent_];
    if (c.size > kMaxPayloadBytes - payload.size()) break;
    payload.insert(payload.end(), unreliable_bytes_.begin() + c.offset, unreliable_bytes_.begin() + c.offset + c.size);
    ++unreliable_sent_;
  }
  if (unreliable_sent_ < unreliable_chunks_.size()) return;
  unreliable_chunks_.clear();
  unreliable_sent_ = 0;
  // Kept for the next tick's chunks, unless one burst made it large.
  if (unreliable_bytes_.capacity() > kKeptBufferBytes) std::vector<uint8_t>().swap(unreliable_bytes_);
  unreliable_bytes_.clear();
}

void Channels::on_acked(const SentPacket& record) {
  record.for_each_control([this](uint16_t id) {
    auto ahead = static_cast<uint16_t>(id - control_out_base_);
    if (ahead >= control_out_span_) return;
    ControlOut& m = control_out_.at(ahead);
    if (!m.live || m.id != id) return;
    m.live = false;
    buffers_.give(m.bytes);
  });
  while (control_out_span_ > 0 && !control_out_.base().live) {
    control_out_.advance();
    ++control_out_base_;
    --control_out_span_;
  }
}

DropReason Channels::on_control(uint16_t id, std::span<const uint8_t> bytes) {
  if (bytes.size() > config_.max_control_message) return DropReason::OutOfRange;
  // Accept ids in [next_expected, next_expected + window); older ones are duplicates.
  auto ahead = static_cast<uint16_t>(id - next_expected_id_);
  if (ahead >= config_.max_reliable_in_flight) return DropReason::Duplicate;
  ControlIn& slot = control_in_.at(ahead);
  if (slot.present) return DropReason::Duplicate;
  // Charged here and released by take(): waiting ahead of a gap or delivered, it is held.
  if (!held_.hold(bytes.size())) return DropReason::MemoryBudget;
  slot.bytes = buffers_.take();
  slot.bytes.assign(bytes.begin(), bytes.end());
  slot.present = true;
  deliver_control();
  return DropReason::None;
}

// Moves the control messages that are next in order to the delivered queue, while it has
// room (they stay charged until taken).
void Channels::deliver_control() {
  MessageRing& q = delivered_[0];
  while (control_in_.base().present && q.size() < queue_limit(0) && !q.full()) {
    ControlIn& slot = control_in_.base();
    q.push(std::move(slot.bytes));  // the message's buffer moves on, none is drawn
    slot.bytes.clear();
    slot.present = false;
    control_in_.advance();
    ++next_expected_id_;
  }
}

DropReason Channels::on_unreliable(uint8_t channel, std::span<const uint8_t> bytes) {
  if (channel == 0 || channel >= static_cast<uint8_t>(Channel::kCount)) return DropReason::OutOfRange;
  return deliver(channel, bytes);
}

DropReason Channels::deliver(uint8_t channel, std::span<const uint8_t> message) {
  MessageRing& q = delivered_[channel];
  if (q.size() >= queue_limit(channel) || q.full()) return DropReason::ReceiveQueueFull;
  if (!held_.hold(message.size())) return DropReason::MemoryBudget;
  q.back_slot(buffers_).assign(message.begin(), message.end());
  q.push();
  return DropReason::None;
}

bool Channels::recently_completed(uint32_t key) const {
  return std::find(recent_groups_.begin(), recent_groups_.begin() + static_cast<std::ptrdiff_t>(recent_count_), key) !=
         recent_groups_.begin() + static_cast<std::ptrdiff_t>(recent_count_);
}

void Channels::remember_completed(uint32_t key) {
  recent_groups_[recent_next_] = key;
  recent_next_ = (recent_next_ + 1) % kRecentGroups;
  recent_count_ = std::min(recent_count_ + 1, kRecentGroups);
}

DropReason Channels::on_fragment(uint8_t channel, uint16_t group, uint32_t index, uint32_t count,
                                 std::span<const uint8_t> bytes, double now) {
  if (channel == 0 || channel >= static_cast<uint8_t>(Channel::kCount)) return DropReason::OutOfRange;
  bool last = index + 1 == count;
  if (count < 2 || index >= count || bytes.empty() || bytes.size() > kFragmentBytes ||
      (!last && bytes.size() != kFragmentBytes) || size_t{count - 1} * kFragmentBytes >= config_.max_unreliable_message) {
    return DropReason::FragmentInvalid;
  }
  const uint32_t key = (uint32_t{channel} << 16) | group;
  if (recently_completed(key)) return DropReason::Duplicate;
  Reassembly* a = find_or_start_reassembly(channel, group, count, now);
  if (a == nullptr) return DropReason::ReassemblyFull;
  if (a->count != count) return DropReason::FragmentInvalid;
  if (!a->parts[index].empty()) return DropReason::Duplicate;
  if (!held_.hold(bytes.size())) return DropReason::MemoryBudget;
  a->parts[index] = buffers_.take();
  a->parts[index].assign(bytes.begin(), bytes.end());
  a->bytes += bytes.size();
  reassembly_bytes_ += bytes.size();
  if (++a->received < a->count) return DropReason::None;
  remember_completed(key);
  return deliver_reassembled(static_cast<size_t>(a - reassemblies_.data()));
}

DropReason Channels::deliver_reassembled(size_t index) {
  Reassembly& a = reassemblies_[index];
  const uint8_t channel = a.channel;
  const size_t size = a.bytes;
  held_.unhold(size);  // the whole message is charged again as it is delivered
  MessageRing& q = delivered_[channel];
  DropReason r = DropReason::None;
  if (q.size() >= queue_limit(channel) || q.full()) {
    r = DropReason::ReceiveQueueFull;
  } else if (!held_.hold(size)) {
    r = DropReason::MemoryBudget;
  } else {
    std::vector<uint8_t>& into = q.back_slot(buffers_);
    into.reserve(size);
    for (uint32_t i = 0; i < a.count; ++i) into.insert(into.end(), a.parts[i].begin(), a.parts[i].end());
    q.push();
  }
  reassembly_bytes_ -= size;
  a.bytes = 0;
  retire_reassembly(index);
  return r;
}

Channels::Reassembly* Channels::find_or_start_reassembly(uint8_t channel, uint16_t group, uint32_t count,
                                                          double now) {
  for (auto& a : reassemblies_) {
    if (a.channel == channel && a.group == group) return &a;
  }
  // Full: the oldest partial message gives way. Newer messages matter more on unreliable
  // channels, and refusing new ones would let stale partials block a lossy link for a
  // whole timeout. Evictions are counted.
  const size_t need = size_t{count} * kFragmentBytes;
  while (!reassemblies_.empty() && (reassemblies_.size() >= config_.max_reassemblies ||
                                    reassembly_bytes_ + need > config_.max_reassembly_bytes)) {
    reassembly_bytes_ -= reassemblies_.front().bytes;
    held_.unhold(reassemblies_.front().bytes);
    retire_reassembly(0);
    drops_.add(DropReason::ReassemblyFull);
  }
  if (need > config_.max_reassembly_bytes || config_.max_reassemblies == 0) return nullptr;
  if (!spare_reassemblies_.empty()) {
    reassemblies_.push_back(std::move(spare_reassemblies_.back()));
    spare_reassemblies_.pop_back();
  } else {
    reassemblies_.emplace_back();
  }
  Reassembly& a = reassemblies_.back();
  a.channel = channel;
  a.group = group;
  a.count = count;
  a.received = 0;
  a.bytes = 0;
  a.started = now;
  if (a.parts.size() < count) a.parts.resize(count);
  return &a;
}

// Lets a partial message go (its fragments' charge already released by the caller); its
// slot, fragment buffers and all, is kept for a later message.
void Channels::retire_reassembly(size_t index) {
  for (size_t i = index; i + 1 < reassemblies_.size(); ++i) std::swap(reassemblies_[i], reassemblies_[i + 1]);
  Reassembly& a = reassemblies_.back();
  for (auto& part : a.parts) buffers_.give(part);
  if (spare_reassemblies_.size() < kMaxSpareReassemblies) spare_reassemblies_.push_back(std::move(a));
  reassemblies_.pop_back();
}

void Channels::expire_reassemblies(double now) {
  for (size_t i = 0; i < reassemblies_.size();) {
    if (now - reassemblies_[i].started > config_.reassembly_timeout) {
      reassembly_bytes_ -= reassemblies_[i].bytes;
      held_.unhold(reassemblies_[i].bytes);
      retire_reassembly(i);
    } else {
      ++i;
    }
  }
}

std::optional<std::vector<uint8_t>> Channels::take(Channel channel) {
  if (channel >= Channel::kCount) return std::nullopt;
  MessageRing& q = delivered_[static_cast<size_t>(channel)];
  if (q.empty()) return std::nullopt;
  std::vector<uint8_t> m = std::move(q.front());
  q.pop(buffers_);
  held_.unhold(m.size());
  if (channel == Channel::Control) deliver_control();
  return m;
}

bool Channels::take(Channel channel, std::vector<uint8_t>& into) {
  if (channel >= Channel::kCount) return false;
  MessageRing& q = delivered_[static_cast<size_t>(channel)];
  if (q.empty()) return false;
  into.assign(q.front().begin(), q.front().end());
  held_.unhold(q.front().size());
  q.pop(buffers_);
  if (channel == Channel::Control) deliver_control();
  return true;
}

}  // namespace keel::protocol::connection
