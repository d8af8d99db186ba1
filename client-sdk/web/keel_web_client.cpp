// The wasm32 client's surface (docs/browser.md, "The wasm32 client"): plain C functions
// the JavaScript around the module calls. The page (or the node test) owns the WebSocket:
// it hands every binary message it receives to keel_web_receive, calls keel_web_update
// every frame, and sends whatever keel_web_take_datagram gives it, one binary message per
// datagram. Everything in between is keel::client::Client, the same C++ as keel-bot's,
// with the packet AEAD and the block decoder reached through the JavaScript imports of
// keel_web_imports.js.
//
// Every byte from JavaScript is as untrusted as a datagram: lengths are bounded here, and
// the datagrams go through the protocol layer's checks like any other.
#include <keel/client/client.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/packet.h>
#include <keel/protocol/token.h>

#include <emscripten/emscripten.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

namespace {

using keel::client::TransportStats;

// Datagrams waiting in either direction beyond this are dropped and counted: a page that
// stops calling update, or stops sending, cannot make the module grow without bound.
constexpr size_t kMaxQueuedDatagrams = 1024;

/// The Transport of a page: two queues the JavaScript fills and drains.
class PageTransport final : public keel::client::Transport {
 public:
  void send(std::span<const uint8_t> datagram, double) override {
    if (outgoing_.size() >= kMaxQueuedDatagrams) {
      ++stats_.send_errors;
      return;
    }
    outgoing_.emplace_back(datagram.begin(), datagram.end());
    ++stats_.datagrams_sent;
    stats_.bytes_sent += datagram.size();
  }
  void receive(std::vector<std::vector<uint8_t>>& out, double, size_t max) override {
    while (!incoming_.empty() && max-- > 0) {
      out.push_back(std::move(incoming_.front()));
      incoming_.pop_front();
    }
  }
  const TransportStats& stats() const override { return stats_; }

  void arrived(const uint8_t* bytes, size_t size) {
    if (size > keel::protocol::kMaxPacketBytes) {
      ++stats_.oversized_datagrams;
      return;
    }
    if (incoming_.size() >= kMaxQueuedDatagrams) return;  // the session's loss handling copes
    incoming_.emplace_back(bytes, bytes + size);
    ++stats_.datagrams_received;
    stats_.bytes_received += size;
  }
  /// Copies the oldest outgoing datagram to `out` (at most `capacity` bytes); its size, or
  /// 0 when none waits.
  size_t take(uint8_t* out, size_t capacity) {
    if (outgoing_.empty()) return 0;
    std::vector<uint8_t> d = std::move(outgoing_.front());
    outgoing_.pop_front();
    if (d.size() > capacity) return 0;  // cannot happen: kMaxPacketBytes is the cap
    std::memcpy(out, d.data(), d.size());
    return d.size();
  }

 private:
  std::deque<std::vector<uint8_t>> incoming_;
  std::deque<std::vector<uint8_t>> outgoing_;
  TransportStats stats_;
};

}  // namespace

struct keel_web_client {
  PageTransport* transport = nullptr;  // owned by client
  std::unique_ptr<keel::client::Client> client;
};

// The counters keel_web_stat reads, by number (keel_web_client.mjs names them).
enum keel_web_stat_id {
  KEEL_WEB_CONFIRMED_TICKS = 0,
  KEEL_WEB_HASH_CHECKS = 1,
  KEEL_WEB_HASH_MISMATCHES = 2,
  KEEL_WEB_PREDICTED_TICKS = 3,
  KEEL_WEB_ROLLBACKS = 4,
  KEEL_WEB_SNAPSHOTS_RECEIVED = 5,
  KEEL_WEB_BODIES = 6,
  KEEL_WEB_FIRST_MISMATCH_TICK = 7,
  KEEL_WEB_SERVER_DESYNCS = 8,
  KEEL_WEB_CONNECTS = 9,
  KEEL_WEB_CHECKPOINT_TICK = 10,
  KEEL_WEB_DATAGRAMS_RECEIVED = 11,
  KEEL_WEB_DATAGRAMS_SENT = 12,
  KEEL_WEB_INPUTS_SENT = 13,
  KEEL_WEB_OVERSIZED_DATAGRAMS = 14,  ///< longer than any Keel packet, refused before the protocol
  KEEL_WEB_STAT_COUNT = 15,
};

extern "C" {

/// A client; `predict` non-zero predicts (and checks every confirmed tick's hash), zero
/// interpolates.
EMSCRIPTEN_KEEPALIVE keel_web_client* keel_web_create(int predict) {
  auto transport = std::make_unique<PageTransport>();
  auto* web = new keel_web_client;
  web->transport = transport.get();
  keel::client::ClientConfig config;
  config.mode = predict != 0 ? keel::client::Mode::Predict : keel::client::Mode::Interpolate;
  config.auto_reconnect = false;  // a page fetches a fresh token instead
  config.prediction.dump_dir.clear();  // no file system: the mismatch tick is a counter
  web->client = std::make_unique<keel::client::Client>(std::move(transport), std::move(config));
  return web;
}

EMSCRIPTEN_KEEPALIVE void keel_web_destroy(keel_web_client* web) { delete web; }

/// Starts connecting with a connect token's binary form (the base64 of /token decoded).
/// 0, or -1 when the bytes are not a token.
EMSCRIPTEN_KEEPALIVE int keel_web_connect(keel_web_client* web, const uint8_t* token, size_t size, double now) {
  if (web == nullptr || token == nullptr || size > 4096) return -1;
  auto parsed = keel::protocol::parse_token({token, size});
  if (!parsed) return -1;
  web->client->connect(*parsed, now);
  return 0;
}

EMSCRIPTEN_KEEPALIVE void keel_web_receive(keel_web_client* web, const uint8_t* datagram, size_t size) {
  if (web != nullptr && datagram != nullptr) web->transport->arrived(datagram, size);
}

EMSCRIPTEN_KEEPALIVE void keel_web_update(keel_web_client* web, double now) {
  if (web != nullptr) web->client->update(now);
}

EMSCRIPTEN_KEEPALIVE size_t keel_web_max_datagram_bytes() { return keel::protocol::kMaxPacketBytes; }

/// The next datagram to send, copied to `out`; its size, or 0 when none waits.
EMSCRIPTEN_KEEPALIVE size_t keel_web_take_datagram(keel_web_client* web, uint8_t* out, size_t capacity) {
  return web != nullptr && out != nullptr ? web->transport->take(out, capacity) : 0;
}

/// keel::client::State as a number (0 disconnected, 1 connecting, 2 accepted, 3 playing,
/// 4 reconnecting).
EMSCRIPTEN_KEEPALIVE int keel_web_state(keel_web_client* web) {
  return web != nullptr ? static_cast<int>(web->client->state()) : 0;
}

EMSCRIPTEN_KEEPALIVE int keel_web_close_reason(keel_web_client* web) {
  return web != nullptr ? static_cast<int>(web->client->close_reason()) : 0;
}

EMSCRIPTEN_KEEPALIVE uint32_t keel_web_player_id(keel_web_client* web) {
  return web != nullptr ? web->client->player_id() : 0;
}

/// A counter by keel_web_stat_id, as a double (exact below 2^53); -1 for an unknown id.
EMSCRIPTEN_KEEPALIVE double keel_web_stat(keel_web_client* web, int id) {
  if (web == nullptr) return -1;
  const keel::client::ClientStats& s = web->client->stats();
  const keel::client::TransportStats& t = web->transport->stats();
  switch (static_cast<keel_web_stat_id>(id)) {
    case KEEL_WEB_CONFIRMED_TICKS: return static_cast<double>(s.prediction.confirmed_ticks);
    case KEEL_WEB_HASH_CHECKS: return static_cast<double>(s.prediction.hash_checks);
    case KEEL_WEB_HASH_MISMATCHES: return static_cast<double>(s.prediction.hash_mismatches);
    case KEEL_WEB_PREDICTED_TICKS: return static_cast<double>(s.prediction.predicted_ticks);
    case KEEL_WEB_ROLLBACKS: return static_cast<double>(s.prediction.rollbacks);
    case KEEL_WEB_SNAPSHOTS_RECEIVED: return static_cast<double>(s.snapshots_received);
    case KEEL_WEB_BODIES: return static_cast<double>(web->client->world().bodies().size());
    case KEEL_WEB_FIRST_MISMATCH_TICK: return static_cast<double>(s.prediction.first_mismatch_tick);
    case KEEL_WEB_SERVER_DESYNCS: return static_cast<double>(s.server_desyncs);
    case KEEL_WEB_CONNECTS: return static_cast<double>(s.connects);
    case KEEL_WEB_CHECKPOINT_TICK: return static_cast<double>(s.checkpoint_tick);
    case KEEL_WEB_DATAGRAMS_RECEIVED: return static_cast<double>(t.datagrams_received);
    case KEEL_WEB_DATAGRAMS_SENT: return static_cast<double>(t.datagrams_sent);
    case KEEL_WEB_INPUTS_SENT: return static_cast<double>(s.inputs_sent);
    case KEEL_WEB_OVERSIZED_DATAGRAMS: return static_cast<double>(t.oversized_datagrams);
    case KEEL_WEB_STAT_COUNT: break;
  }
  return -1;
}

/// Datagrams and messages dropped for `reason` (keel::protocol::DropReason as a number; its
/// to_string names it), by the client's state machine and its connection; -1 past the last.
EMSCRIPTEN_KEEPALIVE double keel_web_drops(keel_web_client* web, int reason) {
  if (web == nullptr || reason < 0 || reason >= static_cast<int>(keel::protocol::DropReason::kCount)) return -1;
  return static_cast<double>(web->client->drops()[static_cast<keel::protocol::DropReason>(reason)]);
}

/// The short name of a drop reason ("auth_failed"), for a page's display; "" past the last.
EMSCRIPTEN_KEEPALIVE const char* keel_web_drop_name(int reason) {
  if (reason < 0 || reason >= static_cast<int>(keel::protocol::DropReason::kCount)) return "";
  return keel::protocol::to_string(static_cast<keel::protocol::DropReason>(reason));
}

/// The id of the index-th body the client knows of (world description order, index below
/// keel_web_stat(KEEL_WEB_BODIES)); 0 past the end.
EMSCRIPTEN_KEEPALIVE uint32_t keel_web_body_id(keel_web_client* web, uint32_t index) {
  if (web == nullptr) return 0;
  const auto& bodies = web->client->world().bodies();
  return index < bodies.size() ? bodies[index].id : 0;
}

/// The pose to draw of `body` at `now` into out[0..7): position x y z, rotation x y z w.
/// 1, or 0 when the body is unknown.
EMSCRIPTEN_KEEPALIVE int keel_web_pose(keel_web_client* web, uint32_t body, double now, float* out) {
  if (web == nullptr || out == nullptr) return 0;
  auto pose = web->client->pose(body, now);
  if (!pose) return 0;
  const float values[7] = {pose->position.x, pose->position.y, pose->position.z, pose->rotation.x,
                           pose->rotation.y, pose->rotation.z, pose->rotation.w};
  std::copy(std::begin(values), std::end(values), out);
  return 1;
}

}  // extern "C"
