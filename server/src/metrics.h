// The server's counters: lock-free atomics written by the I/O thread and the match tasks,
// read by /metrics (Prometheus text exposition format) and Server::counters().
#pragma once

#include <keel/protocol/connection.h>
#include <keel/protocol/drop.h>
#include <keel/server/server.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace keel::server {

/// Reasons the server itself drops a datagram, beside protocol::DropReason.
enum class ServerDrop : uint8_t {
  UnknownAddress = 0,  ///< a connected packet from an address with no session
  RateLimited,         ///< over --max-packets-per-second
  InboxFull,           ///< the match's inbox is full (the match is not keeping up)
  NotAdmitting,        ///< a handshake while shutting down
  SendFailed,          ///< the socket refused a datagram (buffer full)
  Late,                ///< an input for a tick already stepped
  HandshakeRateLimited,  ///< a handshake over the per-address or whole-server rate
  SendWithheld,        ///< a datagram not sent to an unproven client: over its allowance
  // The WebSocket listener's refusals (websocket_listener.h): connections, then messages.
  WebSocketFull,            ///< a connection past --websocket-max-connections (closed at accept)
  WebSocketAddressFull,     ///< a connection past --websocket-max-per-address from one IP
  WebSocketUpgradeTimeout,  ///< the HTTP upgrade did not finish within --websocket-handshake-timeout
  WebSocketUpgradeFailed,   ///< not a valid WebSocket upgrade request
  WebSocketTooLarge,        ///< a message longer than the largest Keel datagram (closed)
  WebSocketTextFrame,       ///< a text message (closed: Keel datagrams are binary)
  WebSocketBadFrame,        ///< a frame that breaks RFC 6455 (closed)
  WebSocketRateLimited,     ///< a message over --websocket-max-messages-per-second
  WebSocketIdle,            ///< a connection silent for --websocket-idle-timeout (closed)
  WebSocketSendBacklog,     ///< a datagram not queued: the peer is not reading
  kCount
};
const char* to_string(ServerDrop d);

class Metrics {
 public:
  /// Upper bounds (ms) of the duration histograms' buckets (+Inf implied): fine up to the
  /// 8 ms a 60 Hz tick may take (what a big match is sized by), coarse past a period.
  static constexpr std::array<double, 15> kTickBucketsMs = {0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64, 128};

  /// A duration histogram over kTickBucketsMs, for /metrics.
  class Durations {
   public:
    void observe_ms(double ms);
    /// The Prometheus lines of histogram `name`.
    void append_text(std::string& out, const char* name, const char* help) const;

   private:
    std::array<std::atomic<uint64_t>, kTickBucketsMs.size() + 1> buckets_{};
    std::atomic<uint64_t> count_{0};
    std::atomic<uint64_t> sum_ns_{0};
  };

  std::atomic<uint64_t> packets_in{0}, packets_out{0}, bytes_in{0}, bytes_out{0};
  std::atomic<uint64_t> matches{0}, players{0}, spectators{0};
  std::atomic<uint64_t> ticks{0}, ticks_late{0}, ticks_dropped{0};
  std::atomic<uint64_t> desyncs{0}, hash_checks{0}, inputs_missing{0}, views_clamped{0};
  std::atomic<uint64_t> snapshots_sent{0}, snapshots_skipped{0};
  std::atomic<uint64_t> connections{0}, matches_started{0};
  /// WebSocket connections open now (upgrading ones included) and accepted in all.
  std::atomic<uint64_t> websocket_connections{0}, websocket_accepted{0};
  /// Bytes held for all clients' connections together (ServerOptions::clients_memory_bytes
  /// is its limit), and the per-client bound, for /metrics.
  protocol::MemoryBudget client_memory;
  std::atomic<uint64_t> client_memory_per_client_limit{0};

  void drop(protocol::DropReason r, uint64_t n = 1);
  void drop(ServerDrop r, uint64_t n = 1);
  /// Adds every count of `after - before` (a connection's counters around a receive).
  void drops_delta(const protocol::DropCounters& before, const protocol::DropCounters& after);
  void observe_tick_ms(double ms) { ticks_ms_.observe_ms(ms); }
  /// One run of a match's task (MatchHost::run): datagrams in, the due ticks stepped,
  /// snapshots and frames encoded, datagrams out.
  void observe_run_ms(double ms) { runs_ms_.observe_ms(ms); }
  /// One reading of a match's schedule error (ticks stepped + dropped - elapsed x rate);
  /// keeps the largest magnitude seen by any match.
  void observe_schedule_error(double error_ticks);
  double schedule_error_ticks() const;

  ServerCounters snapshot() const;
  std::string prometheus_text() const;

 private:
  std::array<std::atomic<uint64_t>, static_cast<size_t>(protocol::DropReason::kCount)> proto_drops_{};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(ServerDrop::kCount)> server_drops_{};
  Durations ticks_ms_;
  Durations runs_ms_;
  std::atomic<uint64_t> schedule_error_micro_{0};  // max |error|, in millionths of a tick
};

}  // namespace keel::server
