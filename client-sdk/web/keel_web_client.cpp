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
#include <keel/client/prediction.h>
#include <keel/games/sandbox.h>
#include <keel/protocol/drop.h>
#include <keel/protocol/packet.h>
#include <keel/protocol/token.h>

#include <emscripten/emscripten.h>

#include <algorithm>
#include <cmath>
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

namespace {

using keel::games::SandboxRules;

// A gravity switch is sent until the confirmed match (the server's steps) has the mode, at
// least kGravityMinTicks frames and at most kGravityMaxTicks, then set back to "keep" so
// that a later switch from another page stands. Frames a late page sends for ticks the
// server already stepped are not applied, so a fixed count of frames could all be lost;
// setting the mode the match already has does nothing, so holding it costs nothing.
constexpr uint32_t kGravityMinTicks = 30;
constexpr uint32_t kGravityMaxTicks = 600;

/// Whether `match`'s world falls with the gravity of switch `value` (1 normal .. 4 high):
/// the scene's times the mode's scale, as the sandbox sets it.
bool has_gravity(const keel::game::Match& match, uint32_t value) {
  const keel::sim::Vec3 want = match.scene().settings.gravity * SandboxRules::gravity_scale(value - 1);
  const keel::sim::Vec3 g = match.world().settings().gravity;
  return std::fabs(g.x - want.x) + std::fabs(g.y - want.y) + std::fabs(g.z - want.z) < 1e-4f;
}

/// The visitor's actions (game-rules.md section 12), turned into the sandbox's input frame
/// for each tick the client produces input for. The walking fields stay neutral: the page
/// plays with the world, it does not walk in it.
struct PageVisit {
  // Drag and gravity as last set; the last click's shape and point, held, with its
  // counter: the sandbox spawns when spawn_seq changes, so holding the click's frame (or
  // the server repeating it for a late page) spawns nothing more (game-rules.md section 12).
  keel::games::SandboxVisit held;
  uint32_t gravity_ticks = 0;  // frames the switch has been sent; kGravityMaxTicks: done
  uint64_t spawn_clicks = 0;

  /// `confirmed`: the confirmed match, null before the prediction runs.
  keel::game::InputFrame frame_for_next_tick(const keel::game::Match* confirmed) {
    keel::games::SandboxVisit v = held;
    if (gravity_ticks < kGravityMaxTicks && held.gravity != 0) {
      ++gravity_ticks;
      if (gravity_ticks >= kGravityMinTicks && confirmed != nullptr && has_gravity(*confirmed, held.gravity))
        gravity_ticks = kGravityMaxTicks;
    } else {
      v.gravity = 0;
    }
    keel::game::InputFrame frame = keel::games::sandbox_input(0.0f, 0.0f, 0.0f, false, false);
    keel::games::set_sandbox_visit(frame, v);
    return frame;
  }
};

bool finite3(float x, float y, float z) { return std::isfinite(x) && std::isfinite(y) && std::isfinite(z); }

}  // namespace

struct keel_web_client {
  PageTransport* transport = nullptr;  // owned by client
  PageVisit visit;
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
  KEEL_WEB_SPAWN_CLICKS = 15,   ///< keel_web_spawn calls accepted
  KEEL_WEB_WORLD_VERSION = 16,  ///< grows whenever the body list (keel_web_body_info) changes
  KEEL_WEB_INPUTS_SKIPPED = 17,  ///< ticks the client produced no input for (a starved page)
  KEEL_WEB_INPUTS_LATE = 18,     ///< ticks the server applied something else than the client's input
  KEEL_WEB_STAT_COUNT = 19,
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
  // Called once for each tick the client produces input for; the web object outlives the
  // client it owns.
  config.input_source = [web](uint64_t) {
    const auto* predictor = web->client ? web->client->predictor() : nullptr;
    return web->visit.frame_for_next_tick(predictor != nullptr ? &predictor->confirmed() : nullptr);
  };
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
    case KEEL_WEB_SPAWN_CLICKS: return static_cast<double>(web->visit.spawn_clicks);
    case KEEL_WEB_WORLD_VERSION: return static_cast<double>(web->client->world_version());
    case KEEL_WEB_INPUTS_SKIPPED: return static_cast<double>(s.inputs_skipped);
    case KEEL_WEB_INPUTS_LATE: return static_cast<double>(s.inputs_late);
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

// ---- The visitor's input (game-rules.md section 12) ------------------------------------
// Each call changes the sandbox input frames the client produces from its next tick on;
// the frames are sent, predicted and applied by the server like every input. The numbers
// come from the page, so they are checked here and then rounded and clamped into the
// fields' ranges by set_sandbox_visit and the layout's sanitising.

/// Spawns `shape` (1 box, 2 sphere, 3 capsule) with its lowest point at (x, y, z): the next
/// spawn counter with the shape and point, held in every frame from now on (one click is
/// one change of the counter, so one body however often the frame is repeated). 0, or -1
/// for an unknown shape or a point that is not finite.
EMSCRIPTEN_KEEPALIVE int keel_web_spawn(keel_web_client* web, uint32_t shape, float x, float y, float z) {
  if (web == nullptr || shape < SandboxRules::kSpawnBox || shape > SandboxRules::kSpawnCapsule || !finite3(x, y, z)) {
    return -1;
  }
  web->visit.held.spawn = shape;
  web->visit.held.spawn_at = {x, y, z};
  web->visit.held.spawn_seq = (web->visit.held.spawn_seq + 1) & SandboxRules::kSpawnSeqMax;
  ++web->visit.spawn_clicks;
  return 0;
}

/// Holds `body` and pulls it toward (x, y, z) in every frame from now on; body 0 lets go.
/// 0, or -1 for a point that is not finite or an id past the field's range.
EMSCRIPTEN_KEEPALIVE int keel_web_drag(keel_web_client* web, uint32_t body, float x, float y, float z) {
  if (web == nullptr || !finite3(x, y, z) || body >= (1u << 24)) return -1;
  web->visit.held.drag_body = body;
  web->visit.held.drag_to = body != 0 ? keel::sim::Vec3{x, y, z} : keel::sim::Vec3{0.0f};
  return 0;
}

/// Sets the match's gravity: 1 normal, 2 off, 3 low, 4 high (the gravity field's values),
/// sent until the confirmed match has it (at least kGravityMinTicks frames, at most
/// kGravityMaxTicks) and then back to "keep", so that a later switch from another page
/// stands. 0, or -1 for another value.
EMSCRIPTEN_KEEPALIVE int keel_web_gravity(keel_web_client* web, uint32_t value) {
  if (web == nullptr || value < 1 || value > 4) return -1;
  web->visit.held.gravity = value;
  web->visit.gravity_ticks = 0;
  return 0;
}

// ---- What the page draws ----------------------------------------------------------------

/// The index-th body of the world description (keel_web_body_id's order; its id comes from
/// there, exact) into out[0..10): motion (0 static, 1 kinematic, 2 dynamic), the game's kind
/// (a small label), its collider count, and
/// the pose it was described at (position x y z, rotation x y z w; where a static body
/// stays). 1, or 0 past the end.
EMSCRIPTEN_KEEPALIVE int keel_web_body_info(keel_web_client* web, uint32_t index, float* out) {
  if (web == nullptr || out == nullptr) return 0;
  const auto& bodies = web->client->world().bodies();
  if (index >= bodies.size()) return 0;
  const keel::protocol::BodyDescription& b = bodies[index];
  const float values[10] = {static_cast<float>(b.motion), static_cast<float>(b.kind),
                            static_cast<float>(b.colliders.size()), b.position.x, b.position.y, b.position.z,
                            b.rotation.x, b.rotation.y, b.rotation.z, b.rotation.w};
  std::copy(std::begin(values), std::end(values), out);
  return 1;
}

/// Collider `c` of the index-th body into out[0..20): shape (0 sphere, 1 box, 2 capsule,
/// 3 hull, 4 mesh, 5 heightfield), centre x y z, rotation x y z w, radius, half height,
/// half extents x y z, trigger (0/1), then the bounds of its points in its own frame (min
/// x y z, max x y z; a hull's or mesh's points, a heightfield's grid; zeros for the three
/// primitives), which a page draws where it has no geometry of its own. 1, or 0 when
/// there is no such collider.
EMSCRIPTEN_KEEPALIVE int keel_web_collider(keel_web_client* web, uint32_t index, uint32_t c, float* out) {
  if (web == nullptr || out == nullptr) return 0;
  const auto& bodies = web->client->world().bodies();
  if (index >= bodies.size() || c >= bodies[index].colliders.size()) return 0;
  const keel::sim::ColliderDef& d = bodies[index].colliders[c];
  keel::sim::Vec3 lo{0.0f}, hi{0.0f};
  if (!d.points.empty()) {
    lo = hi = d.points.front();
    for (const keel::sim::Vec3& p : d.points) {
      lo = glm::min(lo, p);
      hi = glm::max(hi, p);
    }
  } else if (d.shape == keel::sim::ShapeType::Heightfield && !d.heights.empty()) {
    const auto [h_lo, h_hi] = std::minmax_element(d.heights.begin(), d.heights.end());
    lo = {0.0f, *h_lo, 0.0f};
    hi = {float(d.columns > 0 ? d.columns - 1 : 0) * d.cell_size, *h_hi, float(d.rows > 0 ? d.rows - 1 : 0) * d.cell_size};
  }
  const float values[20] = {static_cast<float>(d.shape), d.center.x, d.center.y, d.center.z, d.rotation.x,
                            d.rotation.y, d.rotation.z, d.rotation.w, d.radius, d.half_height, d.half_extents.x,
                            d.half_extents.y, d.half_extents.z, d.is_trigger ? 1.0f : 0.0f, lo.x, lo.y, lo.z,
                            hi.x, hi.y, hi.z};
  std::copy(std::begin(values), std::end(values), out);
  return 1;
}

/// The contact points of the predicted world (the prediction's last step; triggers left
/// out) into out, six floats each (point x y z, normal x y z), at most max_points of them.
/// Their number; 0 before the prediction runs.
EMSCRIPTEN_KEEPALIVE uint32_t keel_web_contacts(keel_web_client* web, float* out, uint32_t max_points) {
  if (web == nullptr || out == nullptr || web->client->predictor() == nullptr) return 0;
  uint32_t n = 0;
  for (const keel::sim::ContactView& c : web->client->predictor()->predicted().world().contacts()) {
    if (c.sensor) continue;
    for (int i = 0; i < c.count && n < max_points; ++i, ++n) {
      const keel::sim::Vec3& p = c.points[i].point;
      const float values[6] = {p.x, p.y, p.z, c.normal.x, c.normal.y, c.normal.z};
      std::copy(std::begin(values), std::end(values), out + 6 * n);
    }
  }
  return n;
}

/// The predicted world's gravity and the scene's into out[0..6) (x y z each), from which a
/// page tells which switch is on whoever set it; 0 before the prediction runs.
EMSCRIPTEN_KEEPALIVE int keel_web_gravity_now(keel_web_client* web, float* out) {
  if (web == nullptr || out == nullptr || web->client->predictor() == nullptr) return 0;
  const keel::game::Match& m = web->client->predictor()->predicted();
  const keel::sim::Vec3 g = m.world().settings().gravity, scene = m.scene().settings.gravity;
  const float values[6] = {g.x, g.y, g.z, scene.x, scene.y, scene.z};
  std::copy(std::begin(values), std::end(values), out);
  return 1;
}

}  // extern "C"
