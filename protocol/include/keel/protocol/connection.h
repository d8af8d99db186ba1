// keel::protocol::Connection — one end of an established connection, transport-agnostic.
// Its layers (packet crypto, acks, channels, large blocks) are private: docs/protocol.md.
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
  ~Connection();
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;

  /// Turns on authentication; must be the same (swapped) keys on both ends.
  void set_keys(const ConnectionKeys& keys);

  /// Queues a message. Control: reliable-ordered; others: unreliable. Returns false when
  /// the message is too large for its channel or the reliable window is full (the span
  /// from the oldest unacked control message to the newest is max_reliable_in_flight).
  bool send(Channel channel, std::span<const uint8_t> message);
  /// Starts a reliable large-block transfer; false while one is still in progress or
  /// when the block is larger than max_block_bytes.
  bool send_block(std::span<const uint8_t> block);
  bool block_in_progress() const;

  /// Builds the datagrams to send now: queued messages, resends, block fragments, acks.
  /// With nothing else to send it returns an ack-only packet when a packet carrying
  /// reliable data arrived since the last send, or when keepalive_interval has passed;
  /// and one more for every 16 such packets received since the last update(). The
  /// datagrams are the connection's own buffers, valid until the next update().
  std::span<const std::vector<uint8_t>> update(double now);

  /// Processes one received datagram. Returns why it was dropped (None when accepted;
  /// drops are also counted in drops()).
  DropReason receive(std::span<const uint8_t> datagram, double now);

  /// Takes the next delivered message of a channel (control messages in order).
  std::optional<std::vector<uint8_t>> take(Channel channel);
  /// The same into the caller's buffer, which keeps its memory for the next one: the way
  /// to take a steady stream of messages without allocating.
  bool take(Channel channel, std::vector<uint8_t>& into);
  /// Takes a completed large block, decompressed.
  std::optional<std::vector<uint8_t>> take_block();

  const ConnectionStats& stats() const;
  const DropCounters& drops() const;
  /// Bytes held for the peer now (bounded by max_held_bytes).
  size_t held_bytes() const;
  /// Seconds since the last accepted packet (for time-outs), given the current time.
  double idle_seconds(double now) const;

 private:
  struct Impl;  // protocol/src/connection.cpp and its layers in protocol/src/connection/
  std::unique_ptr<Impl> impl_;
};

}  // namespace keel::protocol
