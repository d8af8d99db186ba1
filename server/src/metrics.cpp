#include "metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace keel::server {

const char* to_string(ServerDrop d) {
  switch (d) {
    case ServerDrop::UnknownAddress: return "unknown_address";
    case ServerDrop::RateLimited: return "rate_limited";
    case ServerDrop::InboxFull: return "inbox_full";
    case ServerDrop::NotAdmitting: return "not_admitting";
    case ServerDrop::SendFailed: return "send_failed";
    case ServerDrop::Late: return "late";
    case ServerDrop::HandshakeRateLimited: return "handshake_rate_limited";
    case ServerDrop::SendWithheld: return "send_withheld";
    case ServerDrop::WebSocketFull: return "websocket_full";
    case ServerDrop::WebSocketAddressFull: return "websocket_address_full";
    case ServerDrop::WebSocketUpgradeTimeout: return "websocket_upgrade_timeout";
    case ServerDrop::WebSocketUpgradeFailed: return "websocket_upgrade_failed";
    case ServerDrop::WebSocketTooLarge: return "websocket_too_large";
    case ServerDrop::WebSocketTextFrame: return "websocket_text_frame";
    case ServerDrop::WebSocketBadFrame: return "websocket_bad_frame";
    case ServerDrop::WebSocketRateLimited: return "websocket_rate_limited";
    case ServerDrop::WebSocketIdle: return "websocket_idle";
    case ServerDrop::WebSocketSendBacklog: return "websocket_send_backlog";
    case ServerDrop::kCount: break;
  }
  return "unknown";
}

void Metrics::drop(protocol::DropReason r, uint64_t n) {
  if (r == protocol::DropReason::None || r >= protocol::DropReason::kCount) return;
  proto_drops_[static_cast<size_t>(r)].fetch_add(n, std::memory_order_relaxed);
}

void Metrics::drop(ServerDrop r, uint64_t n) {
  if (r >= ServerDrop::kCount) return;
  server_drops_[static_cast<size_t>(r)].fetch_add(n, std::memory_order_relaxed);
}

void Metrics::drops_delta(const protocol::DropCounters& before, const protocol::DropCounters& after) {
  for (size_t i = 1; i < before.counts.size(); ++i) {
    if (after.counts[i] > before.counts[i]) {
      proto_drops_[i].fetch_add(after.counts[i] - before.counts[i], std::memory_order_relaxed);
    }
  }
}

void Metrics::Durations::observe_ms(double ms) {
  size_t b = 0;
  while (b < kTickBucketsMs.size() && ms > kTickBucketsMs[b]) ++b;
  buckets_[b].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(ms * 1e6), std::memory_order_relaxed);
}

void Metrics::Durations::append_text(std::string& out, const char* name, const char* help) const {
  char buf[256];
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= kTickBucketsMs.size(); ++b) {
    cumulative += buckets_[b].load();
    if (b < kTickBucketsMs.size()) {
      std::snprintf(buf, sizeof buf, "%s_bucket{le=\"%g\"} %llu\n", name, kTickBucketsMs[b] / 1000.0,
                    static_cast<unsigned long long>(cumulative));
    } else {
      std::snprintf(buf, sizeof buf, "%s_bucket{le=\"+Inf\"} %llu\n", name, static_cast<unsigned long long>(cumulative));
    }
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "%s_sum %.9f\n%s_count %llu\n", name, sum_ns_.load() / 1e9, name,
                static_cast<unsigned long long>(count_.load()));
  out += buf;
}

void Metrics::observe_schedule_error(double error_ticks) {
  uint64_t micro = static_cast<uint64_t>(std::min(std::fabs(error_ticks), 1e12) * 1e6 + 0.5);
  uint64_t seen = schedule_error_micro_.load(std::memory_order_relaxed);
  // Several match tasks may report at once: keep the maximum without a lock.
  while (micro > seen && !schedule_error_micro_.compare_exchange_weak(seen, micro, std::memory_order_relaxed)) {
  }
}

double Metrics::schedule_error_ticks() const { return schedule_error_micro_.load() * 1e-6; }

ServerCounters Metrics::snapshot() const {
  ServerCounters c;
  c.packets_in = packets_in.load();
  c.packets_out = packets_out.load();
  c.bytes_in = bytes_in.load();
  c.bytes_out = bytes_out.load();
  c.matches = matches.load();
  c.players = players.load();
  c.spectators = spectators.load();
  c.ticks = ticks.load();
  c.ticks_late = ticks_late.load();
  c.ticks_dropped = ticks_dropped.load();
  c.tick_schedule_error = schedule_error_ticks();
  c.desyncs = desyncs.load();
  c.hash_checks = hash_checks.load();
  c.inputs_missing = inputs_missing.load();
  c.views_clamped = views_clamped.load();
  for (size_t i = 1; i < proto_drops_.size(); ++i) {
    c.drops[protocol::to_string(static_cast<protocol::DropReason>(i))] = proto_drops_[i].load();
  }
  for (size_t i = 0; i < server_drops_.size(); ++i) {
    c.drops[to_string(static_cast<ServerDrop>(i))] = server_drops_[i].load();
  }
  return c;
}

namespace {

void line(std::string& out, const char* name, const char* type, const char* help, uint64_t v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type,
                name, static_cast<unsigned long long>(v));
  out += buf;
}

}  // namespace

std::string Metrics::prometheus_text() const {
  ServerCounters c = snapshot();
  std::string out;
  line(out, "keel_packets_in_total", "counter", "Keel datagrams received (UDP datagrams and WebSocket messages).", c.packets_in);
  line(out, "keel_packets_out_total", "counter", "Keel datagrams sent (UDP datagrams and WebSocket messages).", c.packets_out);
  line(out, "keel_bytes_in_total", "counter", "Keel datagram bytes received.", c.bytes_in);
  line(out, "keel_bytes_out_total", "counter", "Keel datagram bytes sent.", c.bytes_out);
  line(out, "keel_matches", "gauge", "Matches running.", c.matches);
  line(out, "keel_players", "gauge", "Clients connected.", c.players);
  line(out, "keel_spectators", "gauge", "Clients connected as spectators (part of keel_players).", c.spectators);
  line(out, "keel_ticks_total", "counter", "Ticks stepped, all matches.", c.ticks);
  line(out, "keel_ticks_late_total", "counter", "Ticks stepped more than one tick period after they were due.", c.ticks_late);
  line(out, "keel_ticks_dropped_total", "counter", "Ticks skipped after a stall (backlog past --max-catch-up-ticks).", c.ticks_dropped);
  line(out, "keel_desyncs_total", "counter", "Hash reports that disagreed with the server.", c.desyncs);
  line(out, "keel_hash_checks_total", "counter", "Hash reports that agreed with the server.", c.hash_checks);
  line(out, "keel_inputs_missing_total", "counter", "Player ticks stepped with the repeat-last-input rule.", c.inputs_missing);
  line(out, "keel_views_clamped_total", "counter", "Input view stamps from the future or older than any pose history, clamped.",
       c.views_clamped);
  line(out, "keel_snapshots_sent_total", "counter", "Snapshot messages sent.", snapshots_sent.load());
  line(out, "keel_snapshots_skipped_total", "counter", "Snapshots skipped by a client's send budget.", snapshots_skipped.load());
  line(out, "keel_connections_total", "counter", "Clients admitted.", connections.load());
  line(out, "keel_websocket_connections", "gauge", "WebSocket connections open (upgrading ones included).",
       websocket_connections.load());
  line(out, "keel_websocket_connections_total", "counter", "WebSocket connections accepted by the caps.",
       websocket_accepted.load());
  line(out, "keel_client_memory_bytes", "gauge",
       "Bytes held for clients now (partial messages, out-of-order control messages, blocks).",
       client_memory.used());
  line(out, "keel_client_memory_peak_bytes", "gauge", "Most bytes held for clients at once.",
       client_memory.peak());
  line(out, "keel_client_memory_limit_bytes", "gauge", "Bound on the bytes held for all clients.",
       client_memory.limit());
  line(out, "keel_client_memory_per_client_limit_bytes", "gauge",
       "Bound on the bytes held for one client.", client_memory_per_client_limit.load());
  out += "# HELP keel_drops_total Datagrams, messages or inputs dropped, by reason.\n# TYPE keel_drops_total counter\n";
  char buf[256];
  for (const auto& [reason, n] : c.drops) {
    std::snprintf(buf, sizeof buf, "keel_drops_total{reason=\"%s\"} %llu\n", reason.c_str(),
                  static_cast<unsigned long long>(n));
    out += buf;
  }
  out += "# HELP keel_tick_schedule_error_ticks Largest |ticks stepped + dropped - elapsed x rate| of any "
         "match, read each time it steps.\n# TYPE keel_tick_schedule_error_ticks gauge\n";
  std::snprintf(buf, sizeof buf, "keel_tick_schedule_error_ticks %.6f\n", c.tick_schedule_error);
  out += buf;
  ticks_ms_.append_text(out, "keel_tick_duration_seconds",
                        "Time to run one match tick (inputs, step, recording, hash).");
  runs_ms_.append_text(out, "keel_match_run_duration_seconds",
                       "Time of one run of a match's task (datagrams in, due ticks stepped, snapshots and "
                       "frames encoded, datagrams out).");
  return out;
}

}  // namespace keel::server
