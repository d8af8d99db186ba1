// The packet layer of one connection. Wire layout of a connected packet's payload: a run
// of chunks, each [kind u8] then kind-specific fields (little-endian) and bytes:
//   Reliable       id u16, len u16, bytes                        (control channel)
//   Unreliable     channel u8, len u16, bytes
//   Fragment       channel u8, group u16, index u8, count u8, len u16, bytes
//   BlockFragment  id u16, index u16, count u16, csize u32, usize u32, len u16, bytes
// docs/protocol.md has the same table.
#include <keel/protocol/connection.h>

#include <keel/base/byte_io.h>

#include <sodium.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace keel::protocol {
namespace {

enum ChunkKind : uint8_t { kReliable = 1, kUnreliable = 2, kFragment = 3, kBlockFragment = 4 };

constexpr size_t kFragmentBytes = 1024;       // unreliable fragments
constexpr size_t kBlockFragmentBytes = 1100;  // large-block fragments
constexpr size_t kReliableOverhead = 5;
constexpr size_t kUnreliableOverhead = 4;
constexpr size_t kFragmentOverhead = 8;
constexpr size_t kBlockOverhead = 17;
constexpr uint32_t kMaxFragments = 255;
constexpr size_t kRecentGroups = 32;
// Acks: a held ack is kept every kAckEvery packets carrying reliable data, which leaves
// 17 of the 33 ack bits for reordering; at most kMaxAcksDue are held between updates
// (128 packets, twice a full block window).
constexpr uint32_t kAckEvery = 16;
constexpr size_t kMaxAcksDue = 8;
// Large-block receive: decompressed output grows in steps of at least this, and the
// decompression window is bounded to 2^kMaxWindowLog (8 MiB; zstd levels 1-19 stay
// within it, only the --ultra levels 20-22 ask for more).
constexpr size_t kBlockOutputStep = 64u << 10;
constexpr int kMaxWindowLog = 23;

std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> nonce_for(uint64_t seq) {
  std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> n{};
  for (int i = 0; i < 8; ++i) n[4 + i] = static_cast<uint8_t>(seq >> (8 * i));
  return n;
}

}  // namespace

struct Connection::Outgoing {
  std::vector<uint8_t> payload;
  SentPacket record;
  size_t room() const { return kMaxPayloadBytes - payload.size(); }
};

Connection::Connection(const ConnectionConfig& config) : config_(config) {
  held_.shared = config_.shared_budget;
}

void Connection::set_keys(const ConnectionKeys& keys) {
  if (sodium_init() < 0) return;  // cannot happen on a supported platform
  keys_ = keys;
  authenticated_ = true;
}

bool Connection::send(Channel channel, std::span<const uint8_t> message) {
  if (channel >= Channel::kCount) return false;
  if (channel == Channel::Control) {
    if (message.size() > config_.max_control_message ||
        reliable_out_.size() >= config_.max_reliable_in_flight) {
      return false;
    }
    reliable_out_.push_back({next_reliable_id_++, {message.begin(), message.end()}, -1e9});
    return true;
  }
  if (message.size() > config_.max_unreliable_message ||
      message.size() > kFragmentBytes * kMaxFragments) {
    return false;
  }
  auto ch = static_cast<uint8_t>(channel);
  std::vector<uint8_t> chunk;
  keel::ByteWriter w(chunk);
  if (message.size() + kUnreliableOverhead <= kFragmentBytes + kFragmentOverhead) {
    w.u8(kUnreliable);
    w.u8(ch);
    w.u16(static_cast<uint16_t>(message.size()));
    w.bytes(message);
    unreliable_out_.emplace_back(ch, std::move(chunk));
    return true;
  }
  // Fragments: every one but the last carries exactly kFragmentBytes, which the
  // receiver checks, so the sizes cannot be used to inflate a reassembly.
  uint16_t group = next_group_++;
  auto count = static_cast<uint32_t>((message.size() + kFragmentBytes - 1) / kFragmentBytes);
  for (uint32_t i = 0; i < count; ++i) {
    size_t begin = i * kFragmentBytes;
    size_t len = std::min(kFragmentBytes, message.size() - begin);
    std::vector<uint8_t> frag;
    keel::ByteWriter f(frag);
    f.u8(kFragment);
    f.u8(ch);
    f.u16(group);
    f.u8(static_cast<uint8_t>(i));
    f.u8(static_cast<uint8_t>(count));
    f.u16(static_cast<uint16_t>(len));
    f.bytes(message.subspan(begin, len));
    unreliable_out_.emplace_back(ch, std::move(frag));
  }
  return true;
}

bool Connection::send_block(std::span<const uint8_t> block) {
  if (block_send_.active || block.size() > config_.max_block_bytes) return false;
  BlockSend b;
  b.active = true;
  b.id = next_block_id_++;
  b.compressed.resize(ZSTD_compressBound(block.size()));
  size_t n = ZSTD_compress(b.compressed.data(), b.compressed.size(), block.data(), block.size(),
                           config_.zstd_level);
  if (ZSTD_isError(n)) return false;
  b.compressed.resize(n);
  b.uncompressed_size = static_cast<uint32_t>(block.size());
  b.fragment_count = static_cast<uint32_t>((n + kBlockFragmentBytes - 1) / kBlockFragmentBytes);
  if (b.fragment_count == 0) b.fragment_count = 1;  // an empty block still sends one
  if (b.fragment_count > 65535) return false;
  b.acked.assign(b.fragment_count, 0);
  b.last_sent.assign(b.fragment_count, -1e9);
  block_send_ = std::move(b);
  return true;
}

std::vector<std::vector<uint8_t>> Connection::update(double now) {
  expire_reassemblies(now);
  update_loss(now);
  std::vector<std::vector<uint8_t>> out;
  // Held acks first, each in a bare packet: at most one per kAckEvery received packets.
  for (const AckState& a : acks_due_) {
    Outgoing o;
    out.push_back(seal(o, now, &a));
  }
  acks_due_.clear();
  for (;;) {
    Outgoing o;
    fill_packet(o, now);
    // Acks ride on payload packets. With nothing else to send, an ack-only packet goes
    // out when nothing has been sent for keepalive_interval (an idle connection costs ~10
    // packets/s), or at once when reliable data arrived since our last send: the peer
    // holds that data (and a block sender its window) until the ack comes back, and a
    // held ack also falls out of the 33 ack bits once more packets arrive. The prompt ack
    // is bounded: one per update() and only after a received packet asked for it (plus
    // the held ones above, one per kAckEvery such packets), and it is a bare header
    // (+ tag), smaller than any packet carrying a chunk: no reply is larger than what
    // caused it, and there are no more replies than packets received.
    bool keepalive = now - last_send_time_ >= config_.keepalive_interval;
    if (o.payload.empty() && !keepalive && ack_pending_ == 0) break;
    out.push_back(seal(o, now));
    if (o.payload.empty()) break;
  }
  return out;
}

void Connection::fill_packet(Outgoing& out, double now) {
  add_reliable(out, now);
  while (!unreliable_out_.empty() && unreliable_out_.front().second.size() <= out.room()) {
    auto& chunk = unreliable_out_.front().second;
    out.payload.insert(out.payload.end(), chunk.begin(), chunk.end());
    unreliable_out_.erase(unreliable_out_.begin());
  }
  add_block_fragments(out, now);
}

void Connection::add_reliable(Outgoing& out, double now) {
  keel::ByteWriter w(out.payload);
  // The peer may hold its ack for up to its keepalive interval when it has nothing else
  // to send, so a resend waits for a round trip plus that.
  double resend = std::max(config_.resend_interval,
                           1.25 * stats_.rtt_ms / 1000.0 + config_.keepalive_interval);
  for (auto& m : reliable_out_) {
    if (now - m.last_sent < resend) continue;
    if (m.bytes.size() + kReliableOverhead > out.room()) continue;
    w.u8(kReliable);
    w.u16(m.id);
    w.u16(static_cast<uint16_t>(m.bytes.size()));
    w.bytes(m.bytes);
    m.last_sent = now;
    out.record.reliable_ids.push_back(m.id);
  }
}

void Connection::add_block_fragments(Outgoing& out, double now) {
  BlockSend& b = block_send_;
  if (!b.active) return;
  if (b.budget_time < 0) b.budget_time = now;
  double cap = config_.block_bytes_per_second * 0.05 + kMaxPayloadBytes;
  b.budget = std::min(cap, b.budget + (now - b.budget_time) * config_.block_bytes_per_second);
  b.budget_time = now;
  double timeout = std::max(config_.resend_interval,
                            1.5 * stats_.rtt_ms / 1000.0 + config_.keepalive_interval);
  uint32_t in_flight = 0;
  for (uint32_t i = 0; i < b.fragment_count; ++i) {
    if (!b.acked[i] && b.last_sent[i] > -1e8 && now - b.last_sent[i] < timeout) ++in_flight;
  }
  keel::ByteWriter w(out.payload);
  for (uint32_t i = 0; i < b.fragment_count && in_flight < config_.block_window; ++i) {
    if (b.acked[i] || now - b.last_sent[i] < timeout) continue;
    size_t begin = size_t{i} * kBlockFragmentBytes;
    size_t len = std::min(kBlockFragmentBytes, b.compressed.size() - begin);
    if (len + kBlockOverhead > out.room() || b.budget < static_cast<double>(len)) break;
    w.u8(kBlockFragment);
    w.u16(b.id);
    w.u16(static_cast<uint16_t>(i));
    w.u16(static_cast<uint16_t>(b.fragment_count));
    w.u32(static_cast<uint32_t>(b.compressed.size()));
    w.u32(b.uncompressed_size);
    w.u16(static_cast<uint16_t>(len));
    w.bytes(std::span<const uint8_t>(b.compressed).subspan(begin, len));
    b.last_sent[i] = now;
    b.budget -= static_cast<double>(len);
    ++in_flight;
    out.record.block_fragments.push_back(i);
  }
}

std::vector<uint8_t> Connection::seal(Outgoing& out, double now, const AckState* ack) {
  uint64_t seq = send_sequence_++;
  PacketHeader h;
  h.sequence = static_cast<uint16_t>(seq);
  h.ack = ack != nullptr ? ack->ack : received_.ack();
  h.ack_bits = ack != nullptr ? ack->bits : received_.ack_bits();
  std::vector<uint8_t> packet(kPacketHeaderBytes);
  write_header(h, std::span<uint8_t, kPacketHeaderBytes>(packet.data(), kPacketHeaderBytes));
  if (authenticated_) {
    packet.resize(kPacketHeaderBytes + out.payload.size() + kAuthTagBytes);
    auto nonce = nonce_for(seq);
    unsigned long long clen = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(
        packet.data() + kPacketHeaderBytes, &clen, out.payload.data(), out.payload.size(),
        packet.data(), kPacketHeaderBytes, nullptr, nonce.data(), keys_.send.data());
  } else {
    packet.insert(packet.end(), out.payload.begin(), out.payload.end());
  }
  if (ack == nullptr) ack_pending_ = 0;  // every packet carries the current acks
  out.record.time = now;
  *sent_.insert(h.sequence) = std::move(out.record);
  unresolved_.push_back(h.sequence);
  if (unresolved_.size() > 1024) unresolved_.pop_front();
  last_send_time_ = now;
  ++stats_.packets_sent;
  stats_.bytes_sent += packet.size();
  return packet;
}

DropReason Connection::receive(std::span<const uint8_t> datagram, double now) {
  PacketHeader h;
  DropReason r = read_header(datagram, h);
  if (r == DropReason::None && h.type != PacketType::Connected) r = DropReason::TypeNotAllowed;
  std::vector<uint8_t> plain;
  uint64_t seq64 = 0;
  if (r == DropReason::None) r = open(h, datagram, plain, seq64);
  if (r != DropReason::None) {
    drops_.add(r);
    return r;
  }
  replay_.accept(seq64);
  newest_received_ = std::max(newest_received_, seq64);
  last_receive_time_ = now;
  ++stats_.packets_received;
  stats_.bytes_received += datagram.size();
  process_acks(h, now);
  packet_wants_ack_ = false;
  packet_refused_ = false;
  r = read_chunks(plain, now);
  // Recorded (and so acked) after its chunks were read: a packet whose data could not be
  // held is left unacked, and the reliable data in it comes again. Everything else in it
  // that was taken is deduplicated when it does.
  if (!packet_refused_) received_.record(h.sequence);
  if (packet_wants_ack_ && ++ack_pending_ >= kAckEvery) {
    // Held now, while the ack bits still cover all of these packets.
    if (acks_due_.size() < kMaxAcksDue) {
      acks_due_.push_back({received_.ack(), received_.ack_bits()});
    }
    ack_pending_ = 0;
  }
  drops_.add(r);
  return r;
}

DropReason Connection::open(const PacketHeader& h, std::span<const uint8_t> datagram,
                            std::vector<uint8_t>& plain, uint64_t& seq64) {
  seq64 = expand_sequence(h.sequence, newest_received_);
  if (replay_.is_replay(seq64)) return DropReason::Replayed;
  auto body = datagram.subspan(kPacketHeaderBytes);
  if (!authenticated_) {
    if (body.size() > kMaxPayloadBytes) return DropReason::TooLarge;
    plain.assign(body.begin(), body.end());
    return DropReason::None;
  }
  if (body.size() < kAuthTagBytes) return DropReason::TooSmall;
  plain.resize(body.size() - kAuthTagBytes);
  auto nonce = nonce_for(seq64);
  unsigned long long plen = 0;
  if (crypto_aead_chacha20poly1305_ietf_decrypt(plain.data(), &plen, nullptr, body.data(),
                                                body.size(), datagram.data(), kPacketHeaderBytes,
                                                nonce.data(), keys_.receive.data()) != 0) {
    return DropReason::AuthFailed;
  }
  return DropReason::None;
}

void Connection::process_acks(const PacketHeader& h, double now) {
  std::vector<uint16_t> acked;
  acked_sequences(h.ack, h.ack_bits, acked);
  for (uint16_t s : acked) {
    SentPacket* p = sent_.find(s);
    if (p != nullptr && !p->acked) on_packet_acked(*p, now);
  }
}

void Connection::on_packet_acked(SentPacket& sent, double now) {
  sent.acked = true;
  double sample = (now - sent.time) * 1000.0;
  if (stats_.rtt_ms == 0) {
    stats_.rtt_ms = sample;
  } else {
    stats_.jitter_ms += 0.1 * (std::fabs(sample - stats_.rtt_ms) - stats_.jitter_ms);
    stats_.rtt_ms += 0.1 * (sample - stats_.rtt_ms);
  }
  for (uint16_t id : sent.reliable_ids) {
    auto it = std::find_if(reliable_out_.begin(), reliable_out_.end(),
                           [id](const ReliableOut& m) { return m.id == id; });
    if (it != reliable_out_.end()) reliable_out_.erase(it);
  }
  BlockSend& b = block_send_;
  if (!b.active) return;
  for (uint32_t i : sent.block_fragments) {
    if (i < b.fragment_count && !b.acked[i]) {
      b.acked[i] = 1;
      ++b.acked_count;
    }
  }
  if (b.acked_count == b.fragment_count) b = BlockSend{};
}

void Connection::update_loss(double now) {
  // A packet is judged once it is old enough that its ack would have arrived.
  double horizon = std::max(0.25, 3.0 * stats_.rtt_ms / 1000.0);
  while (!unresolved_.empty()) {
    const SentPacket* p = sent_.find(unresolved_.front());
    if (p != nullptr && now - p->time < horizon) break;
    double lost = (p != nullptr && p->acked) ? 0.0 : 1.0;
    stats_.loss += 0.02 * (lost - stats_.loss);
    unresolved_.pop_front();
  }
}

DropReason Connection::read_chunks(std::span<const uint8_t> payload, double now) {
  keel::ByteReader r(payload);
  DropReason first = DropReason::None;
  while (r.left() > 0) {
    uint8_t kind = r.u8();
    DropReason d = DropReason::None;
    if (kind == kReliable) {
      uint16_t id = r.u16();
      auto bytes = r.bytes(r.u16());
      if (r.ok()) d = on_reliable(id, bytes);
      packet_wants_ack_ = packet_wants_ack_ || r.ok();  // duplicates too: our ack was lost
    } else if (kind == kUnreliable) {
      uint8_t ch = r.u8();
      auto bytes = r.bytes(r.u16());
      if (r.ok()) d = on_unreliable(ch, bytes);
    } else if (kind == kFragment) {
      uint8_t ch = r.u8();
      uint16_t group = r.u16();
      uint8_t index = r.u8();
      uint8_t count = r.u8();
      auto bytes = r.bytes(r.u16());
      if (r.ok()) d = on_fragment(ch, group, index, count, bytes, now);
    } else if (kind == kBlockFragment) {
      uint16_t id = r.u16();
      uint16_t index = r.u16();
      uint16_t count = r.u16();
      uint32_t csize = r.u32();
      uint32_t usize = r.u32();
      auto bytes = r.bytes(r.u16());
      if (r.ok()) d = on_block_fragment(id, index, count, csize, usize, bytes);
      packet_wants_ack_ = packet_wants_ack_ || (r.ok() && d != DropReason::BlockRefused);
    } else {
      return DropReason::MalformedPayload;
    }
    if (!r.ok()) return DropReason::MalformedPayload;
    if (d == DropReason::MemoryBudget) packet_refused_ = true;
    // A bad chunk is counted but does not stop the good ones after it.
    if (d != DropReason::None && d != DropReason::Duplicate && first == DropReason::None) {
      first = d;
    }
  }
  return first;
}

DropReason Connection::on_reliable(uint16_t id, std::span<const uint8_t> bytes) {
  if (bytes.size() > config_.max_control_message) return DropReason::OutOfRange;
  // Accept ids in [next_expected, next_expected + window); older ones are duplicates.
  auto ahead = static_cast<uint16_t>(id - next_expected_id_);
  if (ahead >= config_.max_reliable_in_flight) return DropReason::Duplicate;
  if (reliable_in_.count(id) != 0) return DropReason::Duplicate;
  // Charged here and released by take(): waiting ahead of a gap or delivered, it is held.
  if (!hold(bytes.size())) return DropReason::MemoryBudget;
  reliable_in_.emplace(id, std::vector<uint8_t>(bytes.begin(), bytes.end()));
  for (auto it = reliable_in_.find(next_expected_id_); it != reliable_in_.end();
       it = reliable_in_.find(next_expected_id_)) {
    queues_[0].push_back(std::move(it->second));
    reliable_in_.erase(it);
    ++next_expected_id_;
  }
  return DropReason::None;
}

DropReason Connection::on_unreliable(uint8_t channel, std::span<const uint8_t> bytes) {
  if (channel == 0 || channel >= static_cast<uint8_t>(Channel::kCount)) {
    return DropReason::OutOfRange;
  }
  return deliver(channel, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

DropReason Connection::deliver(uint8_t channel, std::vector<uint8_t> message) {
  auto& q = queues_[channel];
  if (q.size() >= config_.max_queued_messages) return DropReason::ReceiveQueueFull;
  if (!hold(message.size())) return DropReason::MemoryBudget;
  q.push_back(std::move(message));
  return DropReason::None;
}

DropReason Connection::on_fragment(uint8_t channel, uint16_t group, uint32_t index,
                                   uint32_t count, std::span<const uint8_t> bytes, double now) {
  if (channel == 0 || channel >= static_cast<uint8_t>(Channel::kCount)) {
    return DropReason::OutOfRange;
  }
  bool last = index + 1 == count;
  if (count < 2 || index >= count || bytes.empty() || bytes.size() > kFragmentBytes ||
      (!last && bytes.size() != kFragmentBytes) ||
      size_t{count - 1} * kFragmentBytes >= config_.max_unreliable_message) {
    return DropReason::FragmentInvalid;
  }
  uint32_t key = (uint32_t{channel} << 16) | group;
  if (std::find(recent_groups_.begin(), recent_groups_.end(), key) != recent_groups_.end()) {
    return DropReason::Duplicate;
  }
  Reassembly* a = find_or_start_reassembly(channel, group, count, now);
  if (a == nullptr) return DropReason::ReassemblyFull;
  if (a->count != count) return DropReason::FragmentInvalid;
  if (!a->parts[index].empty()) return DropReason::Duplicate;
  if (!hold(bytes.size())) return DropReason::MemoryBudget;
  a->parts[index].assign(bytes.begin(), bytes.end());
  a->bytes += bytes.size();
  reassembly_bytes_ += bytes.size();
  if (++a->received < a->count) return DropReason::None;
  std::vector<uint8_t> message;
  message.reserve(a->bytes);
  for (auto& p : a->parts) message.insert(message.end(), p.begin(), p.end());
  reassembly_bytes_ -= a->bytes;
  unhold(a->bytes);  // deliver() charges the whole message
  reassemblies_.erase(reassemblies_.begin() + (a - reassemblies_.data()));
  recent_groups_.push_back(key);
  if (recent_groups_.size() > kRecentGroups) recent_groups_.pop_front();
  return deliver(channel, std::move(message));
}

Connection::Reassembly* Connection::find_or_start_reassembly(uint8_t channel, uint16_t group,
                                                             uint32_t count, double now) {
  for (auto& a : reassemblies_) {
    if (a.channel == channel && a.group == group) return &a;
  }
  // Full: the oldest partial message gives way. Newer messages matter more on unreliable
  // channels, and refusing new ones would let stale partials block a lossy link for a
  // whole timeout. Evictions are counted.
  size_t need = size_t{count} * kFragmentBytes;
  while (!reassemblies_.empty() && (reassemblies_.size() >= config_.max_reassemblies ||
                                    reassembly_bytes_ + need > config_.max_reassembly_bytes)) {
    reassembly_bytes_ -= reassemblies_.front().bytes;
    unhold(reassemblies_.front().bytes);
    reassemblies_.erase(reassemblies_.begin());
    drops_.add(DropReason::ReassemblyFull);
  }
  if (need > config_.max_reassembly_bytes || config_.max_reassemblies == 0) return nullptr;
  reassemblies_.push_back({channel, group, count, 0, 0, now, {}});
  reassemblies_.back().parts.resize(count);
  return &reassemblies_.back();
}

void Connection::expire_reassemblies(double now) {
  for (size_t i = 0; i < reassemblies_.size();) {
    if (now - reassemblies_[i].started > config_.reassembly_timeout) {
      reassembly_bytes_ -= reassemblies_[i].bytes;
      unhold(reassemblies_[i].bytes);
      reassemblies_.erase(reassemblies_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

DropReason Connection::on_block_fragment(uint16_t id, uint32_t index, uint32_t count,
                                         uint32_t csize, uint32_t usize,
                                         std::span<const uint8_t> bytes) {
  // Refused before anything is looked at or kept: a peer that may not send blocks costs
  // one comparison per fragment.
  if (config_.max_receive_block_bytes == 0) return DropReason::BlockRefused;
  BlockReceive& b = block_receive_;
  if (last_block_done_ && !sequence_greater_than(id, *last_block_done_)) {
    return DropReason::Duplicate;  // a resend of a block we already have (its ack was lost)
  }
  if (!b.active || b.id != id) {
    DropReason r = start_block_receive(id, count, csize, usize);
    if (r != DropReason::None) return r;
  }
  if (count != b.fragment_count || csize != b.compressed_size || usize != b.uncompressed_size ||
      index >= count) {
    return DropReason::BlockInvalid;
  }
  size_t begin = size_t{index} * kBlockFragmentBytes;
  size_t expect = std::min(kBlockFragmentBytes, size_t{csize} - std::min<size_t>(begin, csize));
  if (bytes.size() != expect) return DropReason::BlockInvalid;
  if (index < b.next_feed || b.ahead.count(index) != 0) return DropReason::Duplicate;
  if (index > b.next_feed) {
    // Early: kept (and charged) until the fragments before it have arrived.
    if (!hold(bytes.size())) return DropReason::MemoryBudget;
    b.ahead.emplace(index, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    return DropReason::None;
  }
  DropReason r = feed_block(bytes);
  ++b.next_feed;
  for (auto it = b.ahead.find(b.next_feed); r == DropReason::None && it != b.ahead.end();
       it = b.ahead.find(b.next_feed)) {
    r = feed_block(it->second);
    unhold(it->second.size());
    b.ahead.erase(it);
    ++b.next_feed;
  }
  if (r == DropReason::None && b.next_feed < b.fragment_count) return DropReason::None;
  if (r == DropReason::None) r = finish_block();
  // Done or failed: either way this block id is finished, and its later fragments are
  // duplicates rather than the start of another transfer.
  last_block_done_ = id;
  reset_block_receive();
  return r;
}

DropReason Connection::start_block_receive(uint16_t id, uint32_t count, uint32_t csize,
                                           uint32_t usize) {
  const size_t cap = config_.max_receive_block_bytes;
  if (usize > cap || csize > ZSTD_compressBound(cap) ||
      count != std::max<uint32_t>(1, (csize + kBlockFragmentBytes - 1) / kBlockFragmentBytes)) {
    return DropReason::BlockInvalid;
  }
  reset_block_receive();
  std::unique_ptr<void, StreamFree> stream(ZSTD_createDStream());
  if (!stream) return DropReason::MemoryBudget;
  auto* ds = static_cast<ZSTD_DStream*>(stream.get());
  // The decompressor keeps a window of the frame's declared size: bounded here, so a
  // frame cannot make it allocate more than the block could ever need (nor more than
  // kMaxWindowLog, which every zstd level up to 19 stays within).
  int window_log = 10;
  while (window_log < kMaxWindowLog && (size_t{1} << window_log) < cap) ++window_log;
  ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, window_log);
  size_t stream_bytes = ZSTD_sizeof_DStream(ds);
  if (!hold(stream_bytes)) return DropReason::MemoryBudget;
  BlockReceive& b = block_receive_;
  b.active = true;
  b.id = id;
  b.fragment_count = count;
  b.compressed_size = csize;
  b.uncompressed_size = usize;
  b.stream = std::move(stream);
  b.stream_bytes = stream_bytes;
  return DropReason::None;
}

DropReason Connection::feed_block(std::span<const uint8_t> compressed) {
  BlockReceive& b = block_receive_;
  auto* ds = static_cast<ZSTD_DStream*>(b.stream.get());
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  for (;;) {
    if (b.frame_done) return in.pos == in.size ? DropReason::None : DropReason::BlockInvalid;
    // Room for more output, grown as output is actually produced (charged first). One
    // byte past the claimed size is offered too: if the frame fills it, it lied.
    if (b.out.size() == b.out.capacity()) {
      size_t want = std::min<size_t>(size_t{b.uncompressed_size} + 1,
                                     std::max<size_t>(kBlockOutputStep, 2 * b.out.capacity()));
      if (want <= b.out.capacity()) return DropReason::BlockInvalid;
      if (!hold(want - b.out.capacity())) return DropReason::MemoryBudget;
      size_t before = b.out.capacity();
      b.out.reserve(want);
      if (b.out.capacity() > want && !hold(b.out.capacity() - want)) {
        unhold(want - before);  // cannot happen with libstdc++ (reserve is exact)
        return DropReason::MemoryBudget;
      }
    }
    size_t produced = b.out.size();
    b.out.resize(b.out.capacity());
    ZSTD_outBuffer out{b.out.data(), b.out.size(), produced};
    size_t ret = ZSTD_decompressStream(ds, &out, &in);
    b.out.resize(out.pos);
    if (ZSTD_isError(ret) || out.pos > b.uncompressed_size) return DropReason::BlockInvalid;
    size_t now_bytes = ZSTD_sizeof_DStream(ds);
    if (now_bytes > b.stream_bytes) {
      // The window the frame asked for (bounded by windowLogMax above).
      if (!hold(now_bytes - b.stream_bytes)) return DropReason::MemoryBudget;
      b.stream_bytes = now_bytes;
    }
    if (ret == 0) b.frame_done = true;
    else if (in.pos == in.size && out.pos < out.size) return DropReason::None;  // wants input
  }
}

DropReason Connection::finish_block() {
  BlockReceive& b = block_receive_;
  if (!b.frame_done || b.out.size() != b.uncompressed_size) return DropReason::BlockInvalid;
  // Handed over still charged; take_block() releases it.
  size_t charged = b.out.capacity();
  blocks_done_.push_back(std::move(b.out));
  blocks_done_charges_.push_back(charged);
  b.out = {};
  return DropReason::None;
}

void Connection::reset_block_receive() {
  BlockReceive& b = block_receive_;
  for (const auto& [index, bytes] : b.ahead) unhold(bytes.size());
  unhold(b.out.capacity());
  unhold(b.stream_bytes);
  b = BlockReceive{};
}

void Connection::StreamFree::operator()(void* dstream) const {
  ZSTD_freeDStream(static_cast<ZSTD_DStream*>(dstream));
}

bool MemoryBudget::try_charge(size_t n) {
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (n > limit() || used > limit() - n) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
  size_t peak = peak_.load(std::memory_order_relaxed);
  while (used + n > peak && !peak_.compare_exchange_weak(peak, used + n, std::memory_order_relaxed)) {
  }
  return true;
}

Connection::Held& Connection::Held::operator=(Held&& o) noexcept {
  if (this != &o) {
    if (shared != nullptr) shared->release(bytes);
    shared = o.shared;
    bytes = o.bytes;
    o.bytes = 0;
  }
  return *this;
}

bool Connection::hold(size_t n) {
  if (n > config_.max_held_bytes || held_.bytes > config_.max_held_bytes - n) return false;
  if (held_.shared != nullptr && !held_.shared->try_charge(n)) return false;
  held_.bytes += n;
  return true;
}

void Connection::unhold(size_t n) {
  n = std::min(n, held_.bytes);
  held_.bytes -= n;
  if (held_.shared != nullptr) held_.shared->release(n);
}

std::optional<std::vector<uint8_t>> Connection::take(Channel channel) {
  if (channel >= Channel::kCount) return std::nullopt;
  auto& q = queues_[static_cast<size_t>(channel)];
  if (q.empty()) return std::nullopt;
  auto m = std::move(q.front());
  q.pop_front();
  unhold(m.size());
  return m;
}

std::optional<std::vector<uint8_t>> Connection::take_block() {
  if (blocks_done_.empty()) return std::nullopt;
  auto b = std::move(blocks_done_.front());
  blocks_done_.pop_front();
  unhold(blocks_done_charges_.front());
  blocks_done_charges_.pop_front();
  return b;
}

}  // namespace keel::protocol
