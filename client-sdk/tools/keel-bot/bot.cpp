#include "bot.h"

#include <keel/client/client.h>
#include <keel/game/scripted_input.h>
#include <keel/games/sandbox.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/token.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

namespace keel::bot {
namespace {

uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double unit(uint64_t z) { return static_cast<double>(mix(z) >> 11) * (1.0 / 9007199254740992.0); }

constexpr double kTurn = 6.283185307179586;

// Inputs are a pure function of (seed, bot, tick), so a frame resent for the same tick
// is the same frame and a run is reproducible.
//
// The sandbox's bots walk: a new direction every half second, now and then standing,
// jumping or throwing a ball.
game::InputFrame sandbox_random_walk(uint64_t seed, uint32_t bot, uint64_t tick) {
  uint64_t leg = tick / 30;  // a new direction every half second at 60 Hz
  uint64_t key = mix(seed ^ (uint64_t{bot} << 40) ^ leg);
  const double angle = unit(key) * kTurn - kTurn / 2;
  const bool stand = unit(key + 1) < 0.2;
  const bool jump = unit(key + 2) < 0.1 && tick % 30 == 0;
  const bool fire = unit(key + 3) < 0.05 && tick % 30 == 1;
  return games::sandbox_input(0.0f, stand ? 0.0f : 1.0f, static_cast<float>(angle), jump, fire);
}

// Any other game's bots pick a fresh frame of values within the layout's ranges every
// half second (keel/game/scripted_input.h).
game::InputFrame random_values(const game::Layout& layout, uint64_t seed, uint32_t bot, uint64_t tick) {
  return game::scripted_values(layout, bot, uint32_t(mix(seed ^ (tick / 30)) & 0xffffffffu));
}

// Scripted: every field sweeps its range smoothly, each bot at its own phase, and each
// bool or button is pressed for a tick on its own period. The values differ from tick to
// tick, so in a recording an input the server applied is told apart from a repeated one.
// For the sandbox this walks a circle, turning a full turn every 8 s, jumping every 1.5 s
// and throwing a ball every 2 s.
game::InputFrame scripted_sweep(const game::Layout& layout, uint32_t bot, uint64_t tick) {
  game::InputFrame f;
  const double phase = std::fmod(static_cast<double>(tick % 480) / 480.0 + bot * 0.25, 1.0);
  const double wave = phase < 0.5 ? 2 * phase : 2 - 2 * phase;  // 0 .. 1 .. 0
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const game::Field& field = layout.field(i);
    const uint64_t period = 90 + 30 * i;
    const bool pulse = (tick + bot * 7 + i * 11) % period == 0;
    switch (field.kind) {
      case game::FieldKind::Bool: layout.set_bool(f, i, pulse); break;
      case game::FieldKind::Buttons:
        for (uint32_t b = 0; b < field.labels.size(); ++b) {
          layout.set_button(f, i, b, (tick + bot * 7 + b * 30) % (90 + 30 * b) == 0);
        }
        break;
      case game::FieldKind::Enum:
      case game::FieldKind::Int:
        layout.set_code(f, layout.first_component(i), uint32_t(wave * field.max_code(0) + 0.5));
        break;
      case game::FieldKind::Fixed: layout.set_number(f, i, float(field.lo.x + wave * (field.hi.x - field.lo.x))); break;
      case game::FieldKind::Stick: layout.set_stick(f, i, 0.0f, 1.0f); break;  // full ahead
      case game::FieldKind::Angle: layout.set_angle(f, i, float(phase * kTurn - kTurn / 2)); break;
      case game::FieldKind::Direction3:
        layout.set_direction3(f, i, sim::Vec3(float(std::cos(phase * kTurn)), 0.3f, float(std::sin(phase * kTurn))));
        break;
      case game::FieldKind::Point3:
        layout.set_point3(f, i, field.lo + (field.hi - field.lo) * float(wave));
        break;
    }
  }
  return f;
}

// What a seeking bot remembers between inputs: where the ball was when it last moved, and
// since which tick it has not. A ball that stays put for kStallTicks (bots parked at its
// side, each aiming a kick that misses) sends every bot at the ball itself for kRamTicks,
// which breaks the stand-off and lets the usual approach start again.
struct SeekMemory {
  static constexpr uint64_t kStallTicks = 240;  // 4 s at 60 Hz
  static constexpr uint64_t kRamTicks = 90;
  sim::Vec3 ball_at{0.0f};
  uint64_t still_since = 0;
  uint64_t ram_until = 0;
  bool seen = false;
};

struct Bot {
  uint32_t index = 0;
  SeekMemory seek;
  std::unique_ptr<client::Client> client;
  std::map<std::string, uint64_t> confirmed_events;  // by event type name
  uint64_t predicted_events = 0;
  client::ConditionedTransport* link = nullptr;
  bool perturbed = false;
  uint64_t perturbed_tick = 0;
  bool played = false;
  std::optional<protocol::fb::DenyReason> server_closed;  // the server's Disconnect reason
};

// Seek: drive at the nearest dynamic body no player controls (pushball's ball), read
// from the bot's own predicted match, to a spot a metre behind it as seen from the goal
// mouth it attacks, charging on the way; once close, stop, aim at the goal and let go
// when the charge is full (the per-player state field `charge` when the game has one,
// else every 40 ticks). Every bot attacks the mouth at x = +14.25, z = 0, or at -14.25
// in odd rounds when the game counts kick-offs in a global `round` (pushball), so goals
// happen and alternate between the teams. A bot to make goals happen, not to play well.
// The first stick drives, the first angle aims (0 = +x, pi/2 = +z), the first buttons
// charge, the first bool boosts while far.
// The first element of a declared state field by name, or -1 when the game has none.
int64_t state_element(const game::StateScope& scope, const game::StateValues& values, const std::string& name) {
  uint32_t offset = 0;
  for (const game::StateField& f : scope.fields()) {
    if (f.name == name) return int64_t(values.raw()[offset]);
    offset += f.count;
  }
  return -1;
}

std::optional<sim::Vec3> body_position(const game::Match& m, uint32_t id) {
  sim::BodyId b = m.world().find_body(id);
  if (id == 0 || !m.world().is_valid(b)) return std::nullopt;
  return m.world().body_state(b).position;
}

std::optional<sim::Vec3> nearest_free_body(const game::Match& m, sim::Vec3 from) {
  std::optional<sim::Vec3> best;
  float best_d = 1e30f;
  for (sim::BodyId id : m.world().bodies()) {
    sim::BodyState b = m.world().body_state(id);
    if (b.motion != sim::MotionType::Dynamic) continue;
    bool controlled = false;
    for (const game::PlayerSlot& s : m.players()) controlled |= s.character == b.id;
    if (controlled) continue;
    const float d = glm::length(b.position - from);
    if (d < best_d) {
      best_d = d;
      best = b.position;
    }
  }
  return best;
}

// A ball against a side wall or in a corner, away from the goal mouths (pushball's field
// is |x| < 15, |z| < 10, the mouths |z| < 3 at the ends): the spot behind it is inside the
// wall, so bots driving there pin it for good. Then the bot nearest the ball pushes it
// back toward the middle and the others wait in the middle, out of its way.
bool pinned_at_wall(const sim::Vec3& ball) {
  return std::fabs(ball.z) > 8.8f || (std::fabs(ball.x) > 13.8f && std::fabs(ball.z) > 3.0f);
}

bool nearest_player_to(const game::Match& m, uint32_t character, const sim::Vec3& ball) {
  auto mine = body_position(m, character);
  if (!mine) return false;
  const float my_d = glm::length(*mine - ball);
  for (const game::PlayerSlot& s : m.players()) {
    if (s.character == character) continue;
    auto other = body_position(m, s.character);
    if (other && glm::length(*other - ball) < my_d) return false;
  }
  return true;
}

// True while the bot should ram the ball to break a stand-off (SeekMemory).
bool ramming(SeekMemory& memory, const sim::Vec3& ball, uint64_t tick) {
  if (!memory.seen || glm::length(ball - memory.ball_at) > 0.5f || tick < memory.still_since) {
    memory.seen = true;
    memory.ball_at = ball;
    memory.still_since = tick;
  } else if (tick - memory.still_since >= SeekMemory::kStallTicks) {
    memory.ram_until = tick + SeekMemory::kRamTicks;
    memory.still_since = tick;
  }
  return tick < memory.ram_until;
}

game::InputFrame seek_input(const client::Client& c, SeekMemory& memory, uint64_t tick) {
  const game::Layout& layout = c.game_spec().input;
  game::InputFrame f;
  const client::Predictor* p = c.predictor();
  if (p == nullptr) return f;
  const game::Match& m = p->predicted();
  const game::PlayerSlot* me = m.find_player(c.player_id());
  if (me == nullptr) return f;
  auto at = body_position(m, me->character);
  if (!at) return f;
  auto ball = nearest_free_body(m, *at);
  if (!ball) return f;
  sim::Vec3 to_ball = *ball - *at;
  to_ball.y = 0;
  const float dist = glm::length(to_ball);
  bool close = dist < 1.4f;
  // Odd rounds (a global `round` counts kick-offs) attack the other way, so the goals
  // alternate between the teams and a match lasts longer than three quick goals.
  const int64_t round = state_element(m.spec().state.global, m.state(), "round");
  const float goal_x = round > 0 && round % 2 == 1 ? -14.25f : 14.25f;
  // Where the ball should go: the goal mouth, or the middle when it is pinned at a wall.
  const bool pinned = pinned_at_wall(*ball);
  sim::Vec3 to_goal = (pinned ? sim::Vec3(0.0f) : sim::Vec3(goal_x, 0.0f, 0.0f)) - *ball;
  to_goal.y = 0;
  to_goal /= std::max(glm::length(to_goal), 1e-3f);
  // Come to a stop a metre behind the ball (on the far side from the goal), slowing on
  // the last two metres, rather than ram it somewhere else. At a wall: the nearest bot
  // drives at the ball itself, the others to the middle.
  sim::Vec3 spot_at = *ball - to_goal * 1.0f;
  if (pinned) {
    const bool mine = nearest_player_to(m, me->character, *ball);
    spot_at = mine ? *ball : sim::Vec3(0.0f);
    close = mine && close;
  }
  if (ramming(memory, *ball, tick)) {
    spot_at = *ball + (*ball - *at) * 0.5f;  // through the ball, not to a stop at it
    close = false;
  }
  sim::Vec3 to_spot = spot_at - *at;
  to_spot.y = 0;
  const float spot = glm::length(to_spot);
  const float speed = tick < memory.ram_until ? 1.0f : std::min(1.0f, spot / 2.0f);
  const float heading = close ? std::atan2(to_goal.z, to_goal.x) : std::atan2(to_spot.z, to_spot.x);
  const int64_t charge = state_element(m.spec().state.player, me->state, "charge");
  const bool full = charge >= 0 ? charge >= 60 : tick % 40 == 0;
  const bool release = close && full;
  bool stick = false, angle = false, buttons = false, boost = false;
  for (uint32_t i = 0; i < layout.size(); ++i) {
    switch (layout.field(i).kind) {
      case game::FieldKind::Stick:
        if (!stick) layout.set_stick(f, i, 0.0f, close ? 0.0f : speed);
        stick = true;
        break;
      case game::FieldKind::Angle:
        if (!angle) layout.set_angle(f, i, heading);
        angle = true;
        break;
      case game::FieldKind::Buttons:
        if (!buttons) layout.set_buttons(f, i, release ? 0u : 1u);
        buttons = true;
        break;
      case game::FieldKind::Bool:
        if (!boost) layout.set_bool(f, i, spot > 6.0f);
        boost = true;
        break;
      default: break;
    }
  }
  return f;
}

// Playing and Closed events, for the end of the run and the summary; game events counted.
void note_events(Bot& b) {
  const game::GameSpec& spec = b.client->game_spec();
  for (const client::GameEventRecord& r : b.client->take_game_events()) {
    if (r.predicted) {
      ++b.predicted_events;
    } else if (r.event.type < spec.events.size()) {
      ++b.confirmed_events[spec.events[r.event.type].name];
    }
  }
  for (const client::ClientEvent& e : b.client->take_events()) {
    if (e.kind == client::ClientEvent::Kind::Playing) b.played = true;
    if (e.kind == client::ClientEvent::Kind::Closed &&
        e.a == static_cast<uint64_t>(client::CloseReason::ServerDisconnected)) {
      b.server_closed = static_cast<protocol::fb::DenyReason>(e.b);
    }
  }
}

// A bot the server disconnected never reconnects (only a time-out does that).
bool all_closed_by_server(const std::vector<std::unique_ptr<Bot>>& bots) {
  for (const auto& b : bots) {
    if (!b->server_closed || b->client->state() != client::State::Disconnected) return false;
  }
  return !bots.empty();
}

// Playing at the end, or played until the server ended the session normally (it shut
// down, or the match was over): the bot did all a bot can.
bool counts_as_connected(const Bot& b) {
  if (b.client->state() == client::State::Playing) return true;
  using protocol::fb::DenyReason;
  return b.played && b.server_closed &&
         (*b.server_closed == DenyReason::ServerShuttingDown || *b.server_closed == DenyReason::MatchOver);
}

protocol::TokenKey load_key(const std::string& path) {
  if (path.empty()) return protocol::development_token_key();
  auto key = protocol::load_token_key(path);
  if (!key) throw std::runtime_error(key.error().message);
  return *key;
}

std::unique_ptr<Bot> make_bot(const BotOptions& o, uint32_t i, const protocol::TokenKey& key, double now) {
  std::string error;
  // Over WebSocket the same datagrams travel one per binary message, to the listener's
  // HOST:PORT, which the minted token names as it would a UDP address.
  auto transport = o.websocket ? client::open_websocket_transport(o.server, error)
                               : client::open_udp_transport(o.server, error);
  if (!transport) throw std::runtime_error(error);
  auto bot = std::make_unique<Bot>();
  bot->index = i;
  bool conditioned = o.link.any() || o.outage_at.has_value();
  if (conditioned) {
    auto cfg = client::LinkConditionerConfig::symmetric(o.link, o.seed * 1000003 + i);
    auto ct = std::make_unique<client::ConditionedTransport>(std::move(transport), cfg);
    bot->link = ct.get();
    if (o.outage_at) ct->set_outage(*o.outage_at, *o.outage_at + o.outage_seconds);
    transport = std::move(ct);
  }
  uint64_t client_id = o.first_client_id + i;
  auto mint = [key, client_id, &o]() -> std::optional<protocol::ConnectToken> {
    auto t = client::mint_token_for(key, client_id, o.match_id, o.server, 3600, o.token_timeout);
    if (!t) return std::nullopt;
    return *t;
  };
  client::ClientConfig cc;
  cc.mode = o.predict ? client::Mode::Predict : client::Mode::Interpolate;
  if (o.interpolation_delay > 0) cc.interpolation.delay_intervals = o.interpolation_delay;
  if (o.max_rollback > 0) cc.prediction.max_rollback_ticks = o.max_rollback;
  cc.prediction.dump_dir = o.dump_dir;
  cc.token_source = mint;
  if (o.rules) cc.prediction.rules = o.rules;
  const game::GameSpec spec = o.rules ? o.rules()->spec() : games::SandboxRules::make_spec();
  const bool sandbox = spec.name == "sandbox" && !o.rules;
  uint64_t seed = o.seed;
  switch (o.inputs) {
    case InputKind::RandomWalk:
      if (sandbox) {
        cc.input_source = [seed, i](uint64_t tick) { return sandbox_random_walk(seed, i, tick); };
      } else {
        cc.input_source = [layout = spec.input, seed, i](uint64_t tick) { return random_values(layout, seed, i, tick); };
      }
      break;
    case InputKind::Script:
      // The sandbox's bots walk as they always have: its visitor fields (spawning,
      // dragging, gravity) stay neutral, so a scripted load stays the load it was.
      cc.input_source = [layout = spec.input, i, sandbox](uint64_t tick) {
        game::InputFrame f = scripted_sweep(layout, i, tick);
        if (sandbox) games::set_sandbox_visit(f, games::SandboxVisit{});
        return f;
      };
      break;
    case InputKind::Idle:
      break;
    case InputKind::Seek:
      // Reads the bot's own client, which outlives every call (the client calls it).
      cc.input_source = [b = bot.get()](uint64_t tick) { return seek_input(*b->client, b->seek, tick); };
      break;
  }
  bot->client = std::make_unique<client::Client>(std::move(transport), std::move(cc));
  auto token = mint();
  if (!token) throw std::runtime_error("cannot mint a token for " + o.server);
  bot->client->connect(*token, now);
  return bot;
}

// PredictionStats::rollbacks_across_event by the game's event names (types with none left out).
nlohmann::json across_by_name(const Bot& b, const client::PredictionStats& p) {
  nlohmann::json out = nlohmann::json::object();
  const game::GameSpec& spec = b.client->game_spec();
  for (size_t t = 0; t < spec.events.size() && t < p.rollbacks_across_event.size(); ++t) {
    if (p.rollbacks_across_event[t] != 0) out[spec.events[t].name] = p.rollbacks_across_event[t];
  }
  return out;
}

nlohmann::json bot_json(const Bot& b, double seconds) {
  const client::ClientStats& s = b.client->stats();
  const client::PredictionStats& p = s.prediction;
  nlohmann::json j;
  j["bot"] = b.index;
  j["player_id"] = b.client->player_id();
  j["state"] = client::to_string(b.client->state());
  j["snapshots_received"] = s.snapshots_received;
  j["frames_received"] = s.frames_received;
  j["kbps_down"] = s.bytes_received * 8.0 / 1000.0 / seconds;
  j["kbps_up"] = s.bytes_sent * 8.0 / 1000.0 / seconds;
  j["confirmed_ticks"] = p.confirmed_ticks;
  j["hash_checks"] = p.hash_checks;
  j["hash_mismatches"] = p.hash_mismatches;
  j["first_mismatch_tick"] = p.first_mismatch_tick;
  j["rollbacks"] = p.rollbacks;
  j["max_rollback_ticks"] = p.max_rollback_ticks;
  j["mean_rollback_ticks"] = p.rollbacks ? static_cast<double>(p.rollback_ticks) / p.rollbacks : 0.0;
  j["stalls"] = p.stalls;
  j["inputs_sent"] = s.inputs_sent;
  j["inputs_late"] = s.inputs_late;
  j["inputs_applied"] = p.local_inputs_applied;
  j["inputs_skipped"] = s.inputs_skipped;
  j["hash_reports_sent"] = s.hash_reports_sent;
  j["server_desyncs"] = s.server_desyncs;
  j["resyncs"] = s.resyncs;
  j["reconnects"] = s.reconnects;
  j["timeouts"] = s.timeouts;
  j["extrapolated_poses"] = s.extrapolated_poses;
  j["drops"] = b.client->drops().total();
  j["rtt_ms"] = b.client->clock().rtt() * 1000.0;
  j["input_lead_ticks"] = b.client->clock().lead_ticks();
  j["dump"] = p.last_dump_path;
  j["rollbacks_across_state_changes"] = p.rollbacks_across_state_changes;
  j["rollbacks_across_event"] = across_by_name(b, p);
  j["game_events_predicted"] = b.predicted_events;
  j["game_events_confirmed"] = b.confirmed_events;
  j["game_events_dropped"] = s.game_events_dropped + s.game_event_queue_drops;
  j["server_game"] = b.client->server_game();
  if (b.client->close_reason() == client::CloseReason::GameMismatch) j["game_mismatch"] = true;
  if (b.server_closed) j["server_disconnect"] = protocol::fb::EnumNameDenyReason(*b.server_closed);
  // Ticks, for checking the counts above against the server's recording.
  j["checkpoint_tick"] = s.checkpoint_tick;
  j["confirmed_tick"] = b.client->predictor() ? b.client->predictor()->confirmed_tick() : 0;
  j["first_input_tick"] = s.first_input_tick;
  j["last_input_tick"] = b.client->last_input_tick();
  if (b.perturbed) j["perturbed_tick"] = b.perturbed_tick;
  return j;
}

nlohmann::json summarise(const std::vector<std::unique_ptr<Bot>>& bots, uint32_t connected, double seconds) {
  nlohmann::json out;
  out["bots"] = bots.size();
  out["connected"] = connected;
  out["seconds"] = seconds;
  uint64_t sums[9] = {};
  uint32_t max_rollback = 0;
  uint64_t across = 0;
  std::map<std::string, uint64_t> across_by_event;
  std::map<std::string, uint64_t> events;  // per type, the most any bot saw confirmed
  double down = 0, up = 0;
  nlohmann::json per = nlohmann::json::array();
  for (const auto& b : bots) {
    const client::ClientStats& s = b->client->stats();
    const client::PredictionStats& p = s.prediction;
    uint64_t v[9] = {s.snapshots_received, p.confirmed_ticks, p.hash_checks, p.hash_mismatches, p.rollbacks,
                     s.inputs_sent, s.inputs_late, s.reconnects, s.resyncs};
    for (int k = 0; k < 9; ++k) sums[k] += v[k];
    max_rollback = std::max(max_rollback, p.max_rollback_ticks);
    across += p.rollbacks_across_state_changes;
    const nlohmann::json by_event = across_by_name(*b, p);
    for (const auto& [name, n] : by_event.items()) across_by_event[name] += n.get<uint64_t>();
    for (const auto& [name, n] : b->confirmed_events) events[name] = std::max(events[name], n);
    down += s.bytes_received * 8.0 / 1000.0 / seconds;
    up += s.bytes_sent * 8.0 / 1000.0 / seconds;
    per.push_back(bot_json(*b, seconds));
  }
  double n = bots.empty() ? 1.0 : static_cast<double>(bots.size());
  out["snapshots_received"] = sums[0];
  out["kbps_down"] = down / n;  // per bot, mean
  out["kbps_up"] = up / n;
  out["confirmed_ticks"] = sums[1];
  out["hash_checks"] = sums[2];
  out["hash_mismatches"] = sums[3];
  out["rollbacks"] = sums[4];
  out["max_rollback_ticks"] = max_rollback;
  out["inputs_sent"] = sums[5];
  out["inputs_late"] = sums[6];
  out["reconnects"] = sums[7];
  out["resyncs"] = sums[8];
  out["rollbacks_across_state_changes"] = across;
  out["rollbacks_across_event"] = across_by_event;
  out["game_events"] = events;
  out["per_bot"] = per;
  return out;
}

bool event_confirmed(const std::vector<std::unique_ptr<Bot>>& bots, const std::string& name) {
  return std::any_of(bots.begin(), bots.end(), [&](const auto& b) { return b->confirmed_events.contains(name); });
}

// The run ends at `seconds`, or, with an until_event not yet confirmed, when it is (at
// max_seconds at the latest).
bool run_over(const BotOptions& o, const std::vector<std::unique_ptr<Bot>>& bots, double now) {
  if (now < o.seconds) return false;
  if (o.until_event.empty() || now >= o.max_seconds) return true;
  return event_confirmed(bots, o.until_event);
}

}  // namespace

nlohmann::json run_bots(const BotOptions& o) {
  protocol::TokenKey key = load_key(o.token_key_file);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<std::unique_ptr<Bot>> bots;
  for (uint32_t i = 0; i < o.bots; ++i) bots.push_back(make_bot(o, i, key, elapsed()));
  const auto period = std::chrono::duration<double>(1.0 / o.update_hz);
  auto next = Clock::now();
  double last_progress = 0;
  std::string stopped = "seconds";
  for (double now = elapsed(); !run_over(o, bots, now); now = elapsed()) {
    if (o.stop && o.stop->load()) {
      stopped = "signal";
      break;
    }
    if (all_closed_by_server(bots)) {
      stopped = "server";
      break;
    }
    for (auto& b : bots) {
      b->client->update(now);
      note_events(*b);
      if (b->index == 0 && o.perturb_at && !b->perturbed && now >= *o.perturb_at) {
        if (const client::Predictor* p = b->client->predictor()) {
          uint64_t tick = p->confirmed_tick();
          if (b->client->perturb_for_test()) {
            b->perturbed = true;
            b->perturbed_tick = tick;
          }
        }
      }
    }
    if (!o.quiet && now - last_progress >= 1.0) {
      last_progress = now;
      uint32_t playing = 0;
      for (auto& b : bots) playing += b->client->state() == client::State::Playing;
      std::cerr << "keel-bot: " << static_cast<int>(now) << " s, " << playing << "/" << bots.size()
                << " playing\n";
    }
    next += std::chrono::duration_cast<Clock::duration>(period);
    if (next < Clock::now()) next = Clock::now();  // behind: do not try to catch up
    std::this_thread::sleep_until(next);
  }
  double seconds = std::max(elapsed(), 1e-3);
  uint32_t connected = 0;
  for (auto& b : bots) connected += counts_as_connected(*b);
  nlohmann::json summary = summarise(bots, connected, seconds);
  summary["stopped"] = stopped;
  for (auto& b : bots) b->client->disconnect(elapsed());
  return summary;
}

}  // namespace keel::bot
