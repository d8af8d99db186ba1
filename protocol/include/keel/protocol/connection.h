// keel::protocol::Connection — one end of an established connection, transport-agnostic.
//
// The caller owns the socket and the clock (docs/architecture.md, "Conventions"): it hands received datagrams to
// receive(datagram, now) and sends whatever update(now) returns. Over the packet header
// (packet.h) a connection multiplexes:
//   - the reliable-ordered control channel (Channel::Control): resent every
//     resend_interval until a packet carrying it is acked, delivered once and in order;
//   - unreliable channels (Snapshot, Input, Frames): sent once; a message larger than a
//     packet is fragmented and reassembled (bounded, with a timeout), and lost whole if
//     any fragment is lost — the codecs above make that harmless;
//   - one reliable large-block transfer at a time (a scene, a multi-MB state checkpoint):
//     zstd-compressed, fragmented, flow-controlled by a window of fragments in flight and
//     a byte budget per second, each fragment resent until acked. A receiver may refuse
//     blocks altogether (max_receive_block_bytes = 0: a server never needs one from its
//     clients); one that takes them decompresses as the fragments arrive, in order, into
//     memory that grows with what actually arrives and decompresses, never with what a
//     fragment claims.
// Everything a connection holds for its peer (partial messages, out-of-order control
// messages, delivered messages not yet taken, block fragments and their decompressed
// bytes) is charged to a per-connection bound (max_held_bytes) and, when given, to a
// MemoryBudget shared with other connections; what does not fit is dropped and counted
// (memory_budget), and the peer's resends bring it again once there is room.
// Every packet is authenticated (ChaCha20-Poly1305 IETF, the 64-bit packet counter as the
// nonce, the header as additional data) when keys are set, and replayed or old
// sequences are dropped. RTT, jitter and loss are estimated from the acks.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/packet.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace keel::protocol {

enum class Channel : uint8_t {
  Control = 0,   ///< reliable, ordered
  Snapshot = 1,  ///< unreliable
  Input = 2,     ///< unreliable
  Frames = 3,    ///< unreliable (server input frames; redundancy is in the message)
  kCount
};

/// A bound on the bytes many connections hold for their peers together (one server's
/// clients): charged before an allocation, released when it is freed. Thread-safe; the
/// connections charging it may live on different threads.
class MemoryBudget {
 public:
  explicit MemoryBudget(size_t limit = std::numeric_limits<size_t>::max()) : limit_(limit) {}
  void set_limit(size_t limit) { limit_.store(limit); }
  /// Charges n bytes if they fit under the limit; false (and nothing charged) otherwise.
  bool try_charge(size_t n);
  void release(size_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }
  size_t limit() const { return limit_.load(std::memory_order_relaxed); }
  /// Charges refused because the limit was reached.
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  std::atomic<size_t> used_{0}, peak_{0}, limit_;
  std::atomic<uint64_t> refusals_{0};
};

struct ConnectionConfig {
  /// s between resends of an unacked reliable message (at least RTT + keepalive_interval)
  double resend_interval = 0.1;
  /// s: with nothing else to send, an ack-only packet goes out this often (acks
  /// otherwise ride on payload packets). A packet carrying reliable data (control
  /// messages, block fragments) is acked sooner: at the next update(), see there.
  double keepalive_interval = 0.1;
  size_t max_control_message = 1024;   ///< bytes; larger control messages are refused
  size_t max_unreliable_message = 256 * 1024;  ///< bytes, after fragmentation limits
  size_t max_reliable_in_flight = 256; ///< unacked control messages
  size_t max_reassemblies = 8;         ///< unreliable messages being reassembled at once
  size_t max_reassembly_bytes = 1 << 20;  ///< bytes held in partial messages
  double reassembly_timeout = 1.0;     ///< s before a partial message is dropped
  size_t max_queued_messages = 256;    ///< per channel, delivered but not yet taken
  size_t max_block_bytes = 64u << 20;  ///< uncompressed large block we send
  /// Uncompressed large block we accept from the peer; 0 refuses every block fragment
  /// (counted block_refused, never acked, nothing kept).
  size_t max_receive_block_bytes = 64u << 20;
  /// Bytes held for the peer at once (see the file comment). The default leaves room for
  /// a full receive block, its decompression window and the other bounds above.
  size_t max_held_bytes = 96u << 20;
  /// Shared with other connections when set (not owned; must outlive the connection).
  MemoryBudget* shared_budget = nullptr;
  uint32_t block_window = 64;          ///< block fragments in flight
  double block_bytes_per_second = 2.0e6;  ///< flow control for large blocks
  int zstd_level = 3;
};

/// Per-direction keys from the connect token (32 bytes each).
struct ConnectionKeys {
  std::array<uint8_t, 32> send{};
  std::array<uint8_t, 32> receive{};
};

struct ConnectionStats {
  double rtt_ms = 0;     ///< smoothed round-trip time
  double jitter_ms = 0;  ///< smoothed |sample - rtt|
  double loss = 0;       ///< smoothed fraction of packets never acked
  uint64_t packets_sent = 0;
  uint64_t packets_received = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  /// Smoothed fraction of the peer's packets that never arrived: each gap in its packet
  /// sequence counts as lost, a packet that fills one later as received.
  double loss_in = 0;
};

class Connection {
 public:
  explicit Connection(const ConnectionConfig& config = {});
  /// Turns on authentication; must be the same (swapped) keys on both ends.
  void set_keys(const ConnectionKeys& keys);

  /// Queues a message. Control: reliable-ordered; others: unreliable. Returns false when
  /// the message is too large for its channel or the reliable window is full.
  bool send(Channel channel, std::span<const uint8_t> message);
  /// Starts a reliable large-block transfer; false while one is still in progress or
  /// when the block is larger than max_block_bytes.
  bool send_block(std::span<const uint8_t> block);
  bool block_in_progress() const { return block_send_.active; }

  /// Builds the datagrams to send now: queued messages, resends, block fragments, acks.
  /// With nothing else to send it returns an ack-only packet when a packet carrying
  /// reliable data arrived since the last send, or when keepalive_interval has passed;
  /// and one more for every 16 such packets received since the last update().
  std::vector<std::vector<uint8_t>> update(double now);

  /// Processes one received datagram. Returns why it was dropped (None when accepted;
  /// drops are also counted in drops()).
  DropReason receive(std::span<const uint8_t> datagram, double now);

  /// Takes the next delivered message of a channel (control messages in order).
  std::optional<std::vector<uint8_t>> take(Channel channel);
  /// Takes a completed large block, decompressed.
  std::optional<std::vector<uint8_t>> take_block();

  const ConnectionStats& stats() const { return stats_; }
  const DropCounters& drops() const { return drops_; }
  /// Bytes held for the peer now (bounded by max_held_bytes).
  size_t held_bytes() const { return held_.bytes; }
  /// Seconds since the last accepted packet (for time-outs), given the current time.
  double idle_seconds(double now) const { return now - last_receive_time_; }

 private:
  struct Outgoing;
  struct AckState {  // a packet header's ack fields
    uint16_t ack = 0;
    uint32_t bits = 0;
  };
  struct SentPacket {
    double time = 0;
    bool acked = false;
    std::vector<uint16_t> reliable_ids;
    std::vector<uint32_t> block_fragments;
  };
  struct ReliableOut {
    uint16_t id = 0;
    std::vector<uint8_t> bytes;
    double last_sent = -1e9;
  };
  struct Reassembly {
    uint8_t channel = 0;
    uint16_t group = 0;
    uint32_t count = 0;
    uint32_t received = 0;
    size_t bytes = 0;
    double started = 0;
    std::vector<std::vector<uint8_t>> parts;
  };
  struct BlockSend {
    bool active = false;
    uint16_t id = 0;
    std::vector<uint8_t> compressed;
    uint32_t uncompressed_size = 0;
    uint32_t fragment_count = 0;
    std::vector<uint8_t> acked;
    std::vector<double> last_sent;
    uint32_t acked_count = 0;
    double budget = 0;
    double budget_time = -1;
  };
  // Bytes charged to this connection's bound and the shared budget; released when the
  // connection goes (a move carries the charge along).
  struct Held {
    MemoryBudget* shared = nullptr;
    size_t bytes = 0;
    Held() = default;
    Held(Held&& o) noexcept : shared(o.shared), bytes(o.bytes) { o.bytes = 0; }
    Held& operator=(Held&& o) noexcept;
    ~Held() {
      if (shared != nullptr) shared->release(bytes);
    }
  };
  struct StreamFree {
    void operator()(void* dstream) const;
  };
  // A block being received: fragments are fed to the decompressor in index order as soon
  // as they are contiguous; ones that arrive early wait in `ahead`.
  struct BlockReceive {
    bool active = false;
    uint16_t id = 0;
    uint32_t fragment_count = 0;
    uint32_t compressed_size = 0;
    uint32_t uncompressed_size = 0;
    uint32_t next_feed = 0;  // fragments [0, next_feed) are decompressed
    std::map<uint32_t, std::vector<uint8_t>> ahead;
    std::vector<uint8_t> out;  // decompressed so far (out.size() bytes are charged)
    std::unique_ptr<void, StreamFree> stream;  // ZSTD_DStream
    size_t stream_bytes = 0;   // charged for the decompressor's own memory
    bool frame_done = false;
  };

  void fill_packet(Outgoing& out, double now);
  void add_reliable(Outgoing& out, double now);
  void add_block_fragments(Outgoing& out, double now);
  std::vector<uint8_t> seal(Outgoing& out, double now, const AckState* ack = nullptr);
  void process_acks(const PacketHeader& header, double now);
  void on_packet_acked(SentPacket& sent, double now);
  void update_loss(double now);
  DropReason open(const PacketHeader& header, std::span<const uint8_t> datagram,
                  std::vector<uint8_t>& plain, uint64_t& seq64);
  DropReason read_chunks(std::span<const uint8_t> payload, double now);
  void update_incoming_loss(uint64_t seq64);
  DropReason on_reliable(uint16_t id, std::span<const uint8_t> bytes);
  DropReason on_unreliable(uint8_t channel, std::span<const uint8_t> bytes);
  DropReason on_fragment(uint8_t channel, uint16_t group, uint32_t index, uint32_t count,
                         std::span<const uint8_t> bytes, double now);
  DropReason on_block_fragment(uint16_t id, uint32_t index, uint32_t count, uint32_t csize,
                               uint32_t usize, std::span<const uint8_t> bytes);
  DropReason start_block_receive(uint16_t id, uint32_t count, uint32_t csize, uint32_t usize);
  DropReason feed_block(std::span<const uint8_t> compressed);
  DropReason finish_block();
  void reset_block_receive();
  bool hold(size_t n);  // charges n bytes; false (nothing charged) when over a bound
  void unhold(size_t n);
  Reassembly* find_or_start_reassembly(uint8_t channel, uint16_t group, uint32_t count,
                                       double now);
  DropReason deliver(uint8_t channel, std::vector<uint8_t> message);
  void expire_reassemblies(double now);

  ConnectionConfig config_;
  bool authenticated_ = false;
  ConnectionKeys keys_;

  // Next 64-bit packet counter. It starts at 1: a peer that has received nothing yet
  // sends ack 0 with no ack bits, which must not read as an ack of our first packet
  // (that packet, carrying ConnectionAccept, would then never be resent if lost).
  uint64_t send_sequence_ = 1;
  uint64_t newest_received_ = 0;
  ReplayWindow replay_;
  ReceivedPackets received_;
  double last_send_time_ = -1e9;
  // Packets carrying reliable data received since we last sent anything: the next
  // update() acks them at once, even with nothing else to send. Every kAckEvery of them
  // the acks as they stand are kept in acks_due_ (bounded) and each goes out in its own
  // ack-only packet, so a burst larger than the 33 ack bits is still acked in full.
  uint32_t ack_pending_ = 0;
  std::vector<AckState> acks_due_;
  bool packet_wants_ack_ = false;  // set by read_chunks for the packet being read
  // Set by read_chunks when a chunk of the packet being read was dropped for want of
  // memory: the packet is then not acked, so the peer resends what it carried.
  bool packet_refused_ = false;
  double last_receive_time_ = 0;
  SequenceBuffer<SentPacket> sent_;
  std::deque<uint16_t> unresolved_;  // sent sequences not yet counted as acked or lost

  // Control channel.
  uint16_t next_reliable_id_ = 0;
  std::deque<ReliableOut> reliable_out_;  // ordered by id, oldest first
  uint16_t next_expected_id_ = 0;
  std::map<uint16_t, std::vector<uint8_t>> reliable_in_;  // ahead of next_expected_id_

  // Unreliable channels.
  std::array<std::deque<std::vector<uint8_t>>, static_cast<size_t>(Channel::kCount)> queues_;
  std::vector<std::pair<uint8_t, std::vector<uint8_t>>> unreliable_out_;
  uint16_t next_group_ = 0;
  std::vector<Reassembly> reassemblies_;
  size_t reassembly_bytes_ = 0;
  std::deque<uint32_t> recent_groups_;  // (channel << 16 | group) of completed messages

  BlockSend block_send_;
  BlockReceive block_receive_;
  uint16_t next_block_id_ = 0;
  std::optional<uint16_t> last_block_done_;
  std::deque<std::vector<uint8_t>> blocks_done_;
  std::deque<size_t> blocks_done_charges_;  // bytes charged for each, released by take_block

  ConnectionStats stats_;
  DropCounters drops_;
  Held held_;
};

}  // namespace keel::protocol
