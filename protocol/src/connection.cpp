// One end of a connection, as three layers (protocol/src/connection/):
//   packet_crypto   seals and opens packets (authentication, encryption, replays)
//   ack_layer       sequences and acks, what each sent packet carried, RTT and loss
//   channels        the control channel, unreliable channels and fragments, delivery
//   block_transfer  large blocks, one at a time each way
// This file puts them together: update() fills and seals packets, receive() opens one
// and hands each chunk to the layer it belongs to. The packets update() returns live in
// buffers the connection reuses, so a steady stream of them allocates nothing.
#include <keel/protocol/connection.h>

#include "connection/ack_layer.h"
#include "connection/block_transfer.h"
#include "connection/channels.h"
#include "connection/chunk_format.h"
#include "connection/held_bytes.h"
#include "connection/packet_crypto.h"

#include <keel/base/byte_io.h>

#include <algorithm>

namespace keel::protocol {

using namespace connection;

struct Connection::Impl {
  explicit Impl(const ConnectionConfig& c)
      : config(c),
        held(config.max_held_bytes, config.shared_budget),
        acks(stats),
        channels(config, held, drops),
        blocks_out(config),
        blocks_in(config, held) {}

  ConnectionConfig config;
  ConnectionStats stats;
  DropCounters drops;
  HeldBytes held;
  PacketCrypto crypto;
  AckLayer acks;
  Channels channels;
  BlockSender blocks_out;
  BlockReceiver blocks_in;

  // update()'s packets: the first `packet_count` of `packets` (reused buffers).
  std::vector<std::vector<uint8_t>> packets;
  size_t packet_count = 0;
  std::vector<uint8_t> payload;  // the packet being built
  std::vector<uint8_t> plain;    // the packet being read, opened
  // Set while a packet is read: a chunk asked for an ack, or one was dropped for want of
  // memory (the packet is then left unacked, so the peer resends what it carried).
  bool packet_wants_ack = false;
  bool packet_refused = false;
  double last_receive_time = 0;

  std::vector<uint8_t>& next_packet() {
    if (packet_count == packets.size()) packets.emplace_back();
    return packets[packet_count++];
  }
  void seal(double now, const AckFields* held_ack);
  void fill_payload(double now);
  void on_acked(const SentPacket& p) {
    channels.on_acked(p);
    blocks_out.on_acked(p);
  }
  DropReason read_chunks(std::span<const uint8_t> payload, double now);
  DropReason read_chunk(uint8_t kind, keel::ByteReader& r, double now);
};

void Connection::Impl::seal(double now, const AckFields* held_ack) {
  PacketHeader h;
  const uint64_t seq = acks.commit(now, held_ack, h);
  std::vector<uint8_t>& packet = next_packet();
  crypto.seal(seq, h, payload, packet);
  ++stats.packets_sent;
  stats.bytes_sent += packet.size();
}

void Connection::Impl::fill_payload(double now) {
  payload.clear();
  SentPacket& record = acks.draft();
  // The peer may hold its ack for up to its keepalive interval when it has nothing else
  // to send, so a resend waits for a round trip plus that.
  const double rtt = stats.rtt_ms / 1000.0;
  channels.write_control(payload, record, now, std::max(config.resend_interval, 1.25 * rtt + config.keepalive_interval));
  channels.write_unreliable(payload);
  blocks_out.write_fragments(payload, record, now, std::max(config.resend_interval, 1.5 * rtt + config.keepalive_interval));
}

DropReason Connection::Impl::read_chunk(uint8_t kind, keel::ByteReader& r, double now) {
  if (kind == kReliable) {
    uint16_t id = r.u16();
    auto bytes = r.bytes(r.u16());
    packet_wants_ack = packet_wants_ack || r.ok();  // duplicates too: our ack was lost
    return r.ok() ? channels.on_control(id, bytes) : DropReason::None;
  }
  if (kind == kUnreliable) {
    uint8_t ch = r.u8();
    auto bytes = r.bytes(r.u16());
    return r.ok() ? channels.on_unreliable(ch, bytes) : DropReason::None;
  }
  if (kind == kFragment) {
    uint8_t ch = r.u8();
    uint16_t group = r.u16();
    uint8_t index = r.u8();
    uint8_t count = r.u8();
    auto bytes = r.bytes(r.u16());
    return r.ok() ? channels.on_fragment(ch, group, index, count, bytes, now) : DropReason::None;
  }
  uint16_t id = r.u16();
  uint16_t index = r.u16();
  uint16_t count = r.u16();
  uint32_t csize = r.u32();
  uint32_t usize = r.u32();
  auto bytes = r.bytes(r.u16());
  if (!r.ok()) return DropReason::None;
  DropReason d = blocks_in.on_fragment(id, index, count, csize, usize, bytes);
  packet_wants_ack = packet_wants_ack || d != DropReason::BlockRefused;
  return d;
}

DropReason Connection::Impl::read_chunks(std::span<const uint8_t> bytes, double now) {
  keel::ByteReader r(bytes);
  DropReason first = DropReason::None;
  while (r.left() > 0) {
    uint8_t kind = r.u8();
    if (kind < kReliable || kind > kBlockFragment) return DropReason::MalformedPayload;
    DropReason d = read_chunk(kind, r, now);
    if (!r.ok()) return DropReason::MalformedPayload;
    if (d == DropReason::MemoryBudget) packet_refused = true;
    // A bad chunk is counted but does not stop the good ones after it.
    if (d != DropReason::None && d != DropReason::Duplicate && first == DropReason::None) first = d;
  }
  return first;
}

// --- Connection ------------------------------------------------------------------------

Connection::Connection(const ConnectionConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Connection::~Connection() = default;
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;

void Connection::set_keys(const ConnectionKeys& keys) { impl_->crypto.set_keys(keys); }

bool Connection::send(Channel channel, std::span<const uint8_t> message) { return impl_->channels.send(channel, message); }

bool Connection::send_block(std::span<const uint8_t> block) { return impl_->blocks_out.start(block); }
bool Connection::block_in_progress() const { return impl_->blocks_out.active(); }

std::span<const std::vector<uint8_t>> Connection::update(double now) {
  Impl& m = *impl_;
  m.channels.expire_reassemblies(now);
  m.acks.update_loss(now);
  m.packet_count = 0;
  // Held acks first, each in a bare packet: at most one per kAckEvery received packets.
  for (const AckFields& a : m.acks.held_acks()) {
    m.payload.clear();
    m.acks.draft();
    m.seal(now, &a);
  }
  m.acks.clear_held_acks();
  for (;;) {
    m.fill_payload(now);
    // Acks ride on payload packets. With nothing else to send, an ack-only packet goes
    // out when nothing has been sent for keepalive_interval (an idle connection costs ~10
    // packets/s), or at once when reliable data arrived since our last send: the peer
    // holds that data (and a block sender its window) until the ack comes back, and a
    // held ack also falls out of the 33 ack bits once more packets arrive. The prompt ack
    // is bounded: one per update() and only after a received packet asked for it (plus
    // the held ones above, one per kAckEvery such packets), and it is a bare header
    // (+ tag), smaller than any packet carrying a chunk: no reply is larger than what
    // caused it, and there are no more replies than packets received.
    const bool keepalive = m.acks.idle_send_seconds(now) >= m.config.keepalive_interval;
    if (m.payload.empty() && !keepalive && !m.acks.ack_owed()) break;
    m.seal(now, nullptr);
    if (m.payload.empty()) break;
  }
  return {m.packets.data(), m.packet_count};
}

DropReason Connection::receive(std::span<const uint8_t> datagram, double now) {
  Impl& m = *impl_;
  PacketHeader h;
  DropReason r = read_header(datagram, h);
  if (r == DropReason::None && h.type != PacketType::Connected) r = DropReason::TypeNotAllowed;
  uint64_t seq = 0;
  if (r == DropReason::None) r = m.crypto.open(h, datagram, m.plain, seq);
  if (r != DropReason::None) {
    m.drops.add(r);
    return r;
  }
  m.acks.note_received(m.crypto.accept(seq));
  m.last_receive_time = now;
  ++m.stats.packets_received;
  m.stats.bytes_received += datagram.size();
  m.acks.read_acks(h, now, [&m](const SentPacket& p) { m.on_acked(p); });
  m.packet_wants_ack = false;
  m.packet_refused = false;
  r = m.read_chunks(m.plain, now);
  // Recorded (and so acked) after its chunks were read: a packet whose data could not be
  // held is left unacked, and the reliable data in it comes again. Everything else in it
  // that was taken is deduplicated when it does.
  if (!m.packet_refused) m.acks.record_received(h.sequence);
  if (m.packet_wants_ack) m.acks.note_wants_ack();
  m.drops.add(r);
  return r;
}

std::optional<std::vector<uint8_t>> Connection::take(Channel channel) { return impl_->channels.take(channel); }
bool Connection::take(Channel channel, std::vector<uint8_t>& into) { return impl_->channels.take(channel, into); }
std::optional<std::vector<uint8_t>> Connection::take_block() { return impl_->blocks_in.take(); }

const ConnectionStats& Connection::stats() const { return impl_->stats; }
const DropCounters& Connection::drops() const { return impl_->drops; }
size_t Connection::held_bytes() const { return impl_->held.bytes(); }
double Connection::idle_seconds(double now) const { return now - impl_->last_receive_time; }

// --- MemoryBudget ----------------------------------------------------------------------

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

}  // namespace keel::protocol
