// The C API over keel::client::Client. Every entry point catches everything: a C caller
// (or an engine's managed runtime) cannot unwind a C++ exception.
#include <keel/client/client.h>
#include <keel/games/sandbox.h>
#include <keel/client/keel_client.h>
#include <keel/client/link_conditioner.h>
#include <keel/game/registry.h>

#include "c_api_rates.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <type_traits>

struct keel_client {
  std::unique_ptr<keel::client::Client> client;
  std::string server_address;
  std::string error;
  keel::game::InputFrame input;  // what the field setters build, field by field
  bool sandbox = true;           // the client's input layout is the sandbox's
  std::deque<keel::client::GameEventRecord> events;  // taken from the client, not yet polled
  // Connection statistics and player events (keel_client_get_link_stats,
  // keel_client_poll_player_event), fed after every update.
  keel::client::ByteRateWindow rates;
  std::deque<keel_player_event> player_events;
  uint64_t player_events_dropped = 0;
  uint32_t max_kbps = 0;  // what keel_client_set_max_kbps asked for
};

namespace {

using keel::client::Client;

keel_result fail(keel_client* c, keel_result code, std::string message) {
  if (c != nullptr) c->error = std::move(message);
  return code;
}

template <class F>
keel_result guarded(keel_client* c, F&& f) {
  if (c == nullptr) return KEEL_ERROR_ARGUMENT;
  try {
    c->error.clear();
    return f();
  } catch (const std::exception& e) {
    return fail(c, KEEL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(c, KEEL_ERROR_INTERNAL, "unknown error");
  }
}

keel::client::LinkImpairment impairment(const keel_link_config& l) {
  return {l.latency_ms, l.jitter_ms, l.loss, l.duplicate, l.reorder};
}

// A C caller may store any integer in the mode field; in C++ loading a value outside the
// enum's range is undefined, so the field is read as its underlying integer first.
bool known_mode(const keel_client_config& config) {
  std::underlying_type_t<keel_mode> mode;
  static_assert(sizeof mode == sizeof config.mode);
  std::memcpy(&mode, &config.mode, sizeof mode);
  return mode == KEEL_MODE_INTERPOLATE || mode == KEEL_MODE_PREDICT;
}

using keel::game::Field;
using keel::game::FieldKind;

// A field described for C: the range of each number the field's value holds.
void describe(const Field& f, keel_input_field& out) {
  out = keel_input_field{};
  out.name = f.name.c_str();
  out.kind = static_cast<uint32_t>(f.kind);
  out.label_count = static_cast<uint32_t>(f.labels.size());
  auto range = [&](uint32_t n, double lo, double hi) {
    out.components = n;
    for (uint32_t i = 0; i < n; ++i) {
      out.min[i] = lo;
      out.max[i] = hi;
    }
  };
  const double pi = 3.14159265358979323846;
  switch (f.kind) {
    case FieldKind::Bool: range(1, 0, 1); break;
    case FieldKind::Buttons: range(1, 0, double((1u << f.labels.size()) - 1)); break;
    case FieldKind::Int: range(1, f.min, f.max); break;
    case FieldKind::Enum: range(1, 0, f.labels.empty() ? 0.0 : double(f.labels.size() - 1)); break;
    case FieldKind::Fixed:
      range(1, f.lo.x, f.hi.x);
      out.step = f.step;
      break;
    case FieldKind::Stick: range(2, -1, 1); break;
    case FieldKind::Angle: range(1, -pi, pi); break;
    case FieldKind::Direction3: range(3, -1, 1); break;
    case FieldKind::Point3:
      range(3, 0, 0);
      for (int a = 0; a < 3; ++a) {
        out.min[a] = f.lo[a];
        out.max[a] = f.hi[a];
      }
      out.step = f.step;
      break;
  }
}

// An event's payload as numbers, field by field (keel_game_event's order), at most `max`.
uint32_t payload_numbers(const keel::game::Layout& l, const keel::game::Values& v, double* out, uint32_t max) {
  uint32_t n = 0;
  auto put = [&](double x) {
    if (n < max) out[n++] = x;
  };
  for (uint32_t i = 0; i < l.size(); ++i) {
    switch (l.field(i).kind) {
      case FieldKind::Bool: put(l.boolean(v, i) ? 1 : 0); break;
      case FieldKind::Buttons: put(l.buttons(v, i)); break;
      case FieldKind::Int:
      case FieldKind::Enum: put(l.integer(v, i)); break;
      case FieldKind::Fixed: put(l.number(v, i)); break;
      case FieldKind::Angle: put(l.angle(v, i)); break;
      case FieldKind::Stick: {
        keel::sim::Vec3 s = l.stick(v, i);
        put(s.x);
        put(s.y);
        break;
      }
      case FieldKind::Direction3:
      case FieldKind::Point3: {
        keel::sim::Vec3 p = l.field(i).kind == FieldKind::Point3 ? l.point3(v, i) : l.direction3(v, i);
        put(p.x);
        put(p.y);
        put(p.z);
        break;
      }
    }
  }
  return n;
}

// Runs `set` on input field `field` when its kind is one of `kinds`, then hands the
// whole frame to the client.
template <class F>
keel_result set_field(keel_client* c, uint32_t field, std::initializer_list<FieldKind> kinds, F&& set) {
  return guarded(c, [&] {
    const keel::game::Layout& layout = c->client->game_spec().input;
    if (field >= layout.size()) return fail(c, KEEL_ERROR_ARGUMENT, "no input field " + std::to_string(field));
    const FieldKind kind = layout.field(field).kind;
    bool ok = false;
    for (FieldKind k : kinds) ok |= k == kind;
    if (!ok) return fail(c, KEEL_ERROR_KIND, "input field " + layout.field(field).name + " is of another kind");
    set(layout);
    c->client->set_input(c->input);
    return KEEL_OK;
  });
}

// keel_client_create has no handle to keep its message in when it fails.
thread_local std::string t_create_error;

keel_result create_failed(keel_result code, std::string message) {
  t_create_error = std::move(message);
  return code;
}

bool is_finite_number(double x) { return std::isfinite(x); }

constexpr size_t kMaxQueuedPlayerEvents = 1024;

// After each update: the byte counters for the rate window, and the joins and leaves
// among the client's events into their queue (the other kinds have no C counterpart).
void after_update(keel_client& c, double now) {
  const auto& s = c.client->stats();
  c.rates.sample(now, s.bytes_sent, s.bytes_received);
  using Kind = keel::client::ClientEvent::Kind;
  for (const keel::client::ClientEvent& e : c.client->take_events()) {
    if (e.kind != Kind::PlayerJoined && e.kind != Kind::PlayerLeft) continue;
    if (c.player_events.size() >= kMaxQueuedPlayerEvents) {
      ++c.player_events_dropped;
      continue;
    }
    keel_player_event out{};
    out.kind = e.kind == Kind::PlayerJoined ? KEEL_PLAYER_JOINED : KEEL_PLAYER_LEFT;
    out.player_id = static_cast<uint32_t>(e.a);
    out.tick = e.tick;
    c.player_events.push_back(out);
  }
}

// A finite double as a float: converting one past float's range is undefined, and every
// field clamps far inside this anyway.
float to_float(double x) { return static_cast<float>(std::clamp(x, -1e30, 1e30)); }

}  // namespace

extern "C" {

void keel_client_config_init(keel_client_config* config) {
  if (config == nullptr) return;
  *config = keel_client_config{};
  config->mode = KEEL_MODE_INTERPOLATE;
  config->auto_reconnect = 1;
}

keel_result keel_client_create(const keel_client_config* config, keel_client** out) {
  t_create_error.clear();
  if (out == nullptr) return create_failed(KEEL_ERROR_ARGUMENT, "no place for the handle");
  *out = nullptr;
  if (config == nullptr || config->server_address == nullptr || !known_mode(*config)) {
    return create_failed(KEEL_ERROR_ARGUMENT, "no config, no server address, or an unknown mode");
  }
  try {
    std::string error;
    // "ws://host:port/path" reaches keel-server's --websocket listener; a development
    // token then names its host:port, as tokens name any server address.
    const std::string address = config->server_address;
    const bool websocket = address.rfind("ws://", 0) == 0;
    auto transport = websocket ? keel::client::open_websocket_transport(address, error)
                               : keel::client::open_udp_transport(address, error);
    if (!transport) return create_failed(KEEL_ERROR_ADDRESS, error);
    if (config->link != nullptr) {
      auto link = keel::client::LinkConditionerConfig::symmetric(impairment(*config->link), config->link->seed);
      transport = std::make_unique<keel::client::ConditionedTransport>(std::move(transport), link);
    }
    keel::client::ClientConfig cc;
    cc.mode = config->mode == KEEL_MODE_PREDICT ? keel::client::Mode::Predict : keel::client::Mode::Interpolate;
    if (config->interpolation_delay_intervals > 0) {
      cc.interpolation.delay_intervals = config->interpolation_delay_intervals;
    }
    if (config->max_rollback_ticks > 0) cc.prediction.max_rollback_ticks = config->max_rollback_ticks;
    if (config->desync_dump_dir != nullptr) cc.prediction.dump_dir = config->desync_dump_dir;
    cc.auto_reconnect = config->auto_reconnect != 0;
    if (config->game_module != nullptr) {
      // The module is never unloaded (its Rules may outlive every factory copy), so the
      // registry that loaded it need not live on.
      keel::game::RulesRegistry registry;
      if (keel::Status st = registry.add_module(config->game_module); !st) {
        return create_failed(KEEL_ERROR_GAME, st.error().message);
      }
      cc.prediction.rules = *registry.factory(registry.module_game());
    }
    const bool sandbox = config->game_module == nullptr;
    auto* c = new keel_client;
    c->sandbox = sandbox;
    c->client = std::make_unique<Client>(std::move(transport), std::move(cc));
    c->server_address = websocket ? address.substr(5, address.find('/', 5) - 5) : address;
    *out = c;
    return KEEL_OK;
  } catch (const std::exception& e) {
    return create_failed(KEEL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return create_failed(KEEL_ERROR_INTERNAL, "unknown error");
  }
}

void keel_client_destroy(keel_client* client) { delete client; }

keel_result keel_client_connect(keel_client* client, const char* token_base64, double now) {
  return guarded(client, [&] {
    if (token_base64 == nullptr) return KEEL_ERROR_ARGUMENT;
    auto token = keel::protocol::token_from_base64(token_base64);
    if (!token) return fail(client, KEEL_ERROR_TOKEN, token.error().message);
    client->client->connect(*token, now);
    return KEEL_OK;
  });
}

keel_result keel_client_connect_dev(keel_client* client, uint64_t client_id, uint64_t match_id, double now) {
  return guarded(client, [&] {
    auto token = keel::client::mint_token_for(keel::protocol::development_token_key(), client_id, match_id,
                                              client->server_address);
    if (!token) return fail(client, KEEL_ERROR_TOKEN, token.error().message);
    client->client->connect(*token, now);
    return KEEL_OK;
  });
}

keel_result keel_client_disconnect(keel_client* client, double now) {
  return guarded(client, [&] {
    client->client->disconnect(now);
    return KEEL_OK;
  });
}

keel_result keel_client_update(keel_client* client, double now) {
  return guarded(client, [&] {
    client->client->update(now);
    after_update(*client, now);
    return KEEL_OK;
  });
}

keel_result keel_client_set_input(keel_client* client, float move_x, float move_z, float look_yaw,
                                  uint32_t buttons) {
  return guarded(client, [&] {
    if (!client->sandbox) return fail(client, KEEL_ERROR_KIND, "the client's game is not the sandbox");
    // The sandbox's fields (move, look_yaw, buttons jump = 1 and fire = 2), quantised and
    // sanitised here; any float is safe.
    client->client->set_input(keel::games::sandbox_input(move_x, move_z, look_yaw, (buttons & 1u) != 0, (buttons & 2u) != 0));
    return KEEL_OK;
  });
}

keel_result keel_client_pose(keel_client* client, uint32_t id, double now, keel_pose* out) {
  return guarded(client, [&] {
    if (out == nullptr) return KEEL_ERROR_ARGUMENT;
    auto p = client->client->pose(id, now);
    if (!p) return KEEL_ERROR_NOT_FOUND;
    out->position[0] = p->position.x;
    out->position[1] = p->position.y;
    out->position[2] = p->position.z;
    out->rotation[0] = p->rotation.x;
    out->rotation[1] = p->rotation.y;
    out->rotation[2] = p->rotation.z;
    out->rotation[3] = p->rotation.w;
    out->extrapolated = p->extrapolated ? 1 : 0;
    return KEEL_OK;
  });
}

keel_state keel_client_state(const keel_client* client) {
  if (client == nullptr) return KEEL_STATE_DISCONNECTED;
  return static_cast<keel_state>(client->client->state());
}

keel_result keel_client_get_stats(const keel_client* client, keel_client_stats* out) {
  if (client == nullptr || out == nullptr) return KEEL_ERROR_ARGUMENT;
  try {
    const Client& c = *client->client;
    const auto& s = c.stats();
    *out = keel_client_stats{};
    out->state = static_cast<uint32_t>(c.state());
    out->player_id = c.player_id();
    out->snapshots_received = s.snapshots_received;
    out->confirmed_ticks = s.prediction.confirmed_ticks;
    out->hash_checks = s.prediction.hash_checks;
    out->hash_mismatches = s.prediction.hash_mismatches;
    out->rollbacks = s.prediction.rollbacks;
    out->max_rollback_ticks = s.prediction.max_rollback_ticks;
    out->last_rollback_ticks = s.prediction.last_rollback_ticks;
    out->inputs_sent = s.inputs_sent;
    out->inputs_late = s.inputs_late;
    out->bytes_sent = s.bytes_sent;
    out->bytes_received = s.bytes_received;
    out->reconnects = s.reconnects;
    out->dropped = c.drops().total();
    out->rtt_ms = c.clock().rtt() * 1000.0;
    out->server_tick = c.server_tick_estimate();
    out->input_lead_ticks = c.clock().lead_ticks();
    out->rollbacks_across_state_changes = s.prediction.rollbacks_across_state_changes;
    out->game_events_dropped = s.game_events_dropped + s.game_event_queue_drops;
    return KEEL_OK;
  } catch (...) {
    return KEEL_ERROR_INTERNAL;
  }
}

uint32_t keel_client_input_field_count(const keel_client* client) {
  return client == nullptr ? 0 : client->client->game_spec().input.size();
}

keel_result keel_client_input_field(const keel_client* client, uint32_t index, keel_input_field* out) {
  if (client == nullptr || out == nullptr) return KEEL_ERROR_ARGUMENT;
  const keel::game::Layout& layout = client->client->game_spec().input;
  if (index >= layout.size()) return KEEL_ERROR_NOT_FOUND;
  describe(layout.field(index), *out);
  return KEEL_OK;
}

uint32_t keel_client_find_input_field(const keel_client* client, const char* name) {
  if (client == nullptr) return 0;
  const keel::game::Layout& layout = client->client->game_spec().input;
  return name == nullptr ? layout.size() : layout.find(name);
}

const char* keel_client_input_label(const keel_client* client, uint32_t field, uint32_t label) {
  if (client == nullptr) return nullptr;
  const keel::game::Layout& layout = client->client->game_spec().input;
  if (field >= layout.size() || label >= layout.field(field).labels.size()) return nullptr;
  return layout.field(field).labels[label].c_str();
}

keel_result keel_client_set_input_bool(keel_client* client, uint32_t field, int on) {
  return set_field(client, field, {FieldKind::Bool},
                   [&](const keel::game::Layout& l) { l.set_bool(client->input, field, on != 0); });
}

keel_result keel_client_set_input_buttons(keel_client* client, uint32_t field, uint32_t mask) {
  return set_field(client, field, {FieldKind::Buttons},
                   [&](const keel::game::Layout& l) { l.set_buttons(client->input, field, mask); });
}

keel_result keel_client_set_input_int(keel_client* client, uint32_t field, int32_t value) {
  return set_field(client, field, {FieldKind::Int, FieldKind::Enum},
                   [&](const keel::game::Layout& l) { l.set_integer(client->input, field, value); });
}

keel_result keel_client_set_input_number(keel_client* client, uint32_t field, double value) {
  if (client != nullptr && !is_finite_number(value)) return fail(client, KEEL_ERROR_ARGUMENT, "not a finite number");
  return set_field(client, field, {FieldKind::Fixed, FieldKind::Angle}, [&](const keel::game::Layout& l) {
    if (l.field(field).kind == FieldKind::Angle) {
      l.set_angle(client->input, field, to_float(value));
    } else {
      l.set_number(client->input, field, to_float(value));
    }
  });
}

keel_result keel_client_set_input_vector(keel_client* client, uint32_t field, double x, double y, double z) {
  if (client != nullptr && !(is_finite_number(x) && is_finite_number(y) && is_finite_number(z))) {
    return fail(client, KEEL_ERROR_ARGUMENT, "not a finite vector");
  }
  return set_field(client, field, {FieldKind::Stick, FieldKind::Direction3, FieldKind::Point3},
                   [&](const keel::game::Layout& l) {
                     const keel::sim::Vec3 v{to_float(x), to_float(y), to_float(z)};
                     switch (l.field(field).kind) {
                       case FieldKind::Stick: l.set_stick(client->input, field, v.x, v.y); break;
                       case FieldKind::Direction3: l.set_direction3(client->input, field, v); break;
                       default: l.set_point3(client->input, field, v); break;
                     }
                   });
}

uint32_t keel_client_event_type_count(const keel_client* client) {
  return client == nullptr ? 0 : static_cast<uint32_t>(client->client->game_spec().events.size());
}

const char* keel_client_event_type_name(const keel_client* client, uint32_t type) {
  if (client == nullptr || type >= keel_client_event_type_count(client)) return nullptr;
  return client->client->game_spec().events[type].name.c_str();
}

uint32_t keel_client_event_field_count(const keel_client* client, uint32_t type) {
  if (client == nullptr || type >= keel_client_event_type_count(client)) return 0;
  return client->client->game_spec().events[type].payload.size();
}

keel_result keel_client_event_field(const keel_client* client, uint32_t type, uint32_t index,
                                    keel_input_field* out) {
  if (client == nullptr || out == nullptr) return KEEL_ERROR_ARGUMENT;
  if (index >= keel_client_event_field_count(client, type)) return KEEL_ERROR_NOT_FOUND;
  describe(client->client->game_spec().events[type].payload.field(index), *out);
  return KEEL_OK;
}

keel_result keel_client_poll_game_event(keel_client* client, keel_game_event* out) {
  return guarded(client, [&] {
    if (out == nullptr) return KEEL_ERROR_ARGUMENT;
    if (client->events.empty()) {
      for (auto& r : client->client->take_game_events()) client->events.push_back(std::move(r));
    }
    if (client->events.empty()) return KEEL_ERROR_NOT_FOUND;
    const keel::client::GameEventRecord r = std::move(client->events.front());
    client->events.pop_front();
    const keel::game::GameSpec& spec = client->client->game_spec();
    *out = keel_game_event{};
    out->type = r.event.type;
    out->type_name = spec.events[r.event.type].name.c_str();  // the client only reports its game's types
    out->tick = r.tick;
    out->predicted = r.predicted ? 1 : 0;
    out->value_count = payload_numbers(spec.events[r.event.type].payload, r.event.payload, out->values,
                                       KEEL_MAX_EVENT_VALUES);
    return KEEL_OK;
  });
}

// ---- Library version, connection statistics, player events ----------------------------

uint32_t keel_client_abi_version(void) { return KEEL_CLIENT_ABI_VERSION; }

const char* keel_client_version_string(void) { return KEEL_CLIENT_RELEASE; }

keel_result keel_client_get_link_stats(keel_client* client, keel_client_link_stats* out) {
  return guarded(client, [&] {
    // The first version of the struct ends with hash_mismatches; fields after it are
    // filled only for a caller whose struct has them.
    constexpr size_t kFirstVersionSize = offsetof(keel_client_link_stats, hash_mismatches) + sizeof(uint64_t);
    if (out == nullptr) return fail(client, KEEL_ERROR_ARGUMENT, "no stats struct");
    if (out->struct_size < kFirstVersionSize) {
      return fail(client, KEEL_ERROR_ARGUMENT,
                  "keel_client_link_stats.struct_size is " + std::to_string(out->struct_size) +
                      "; set it with keel_client_link_stats_init");
    }
    const Client& c = *client->client;
    const auto& s = c.stats();
    keel_client_link_stats full{};
    full.state = static_cast<uint32_t>(c.state());
    if (auto conn = c.connection_stats()) {
      full.rtt_ms = conn->rtt_ms;
      full.jitter_ms = conn->jitter_ms;
      full.loss_out = conn->loss;
      full.loss_in = conn->loss_in;
      full.packets_sent = conn->packets_sent;
      full.packets_received = conn->packets_received;
    }
    full.kbps_out = client->rates.kbps_sent();
    full.kbps_in = client->rates.kbps_received();
    full.bytes_sent = s.bytes_sent;
    full.bytes_received = s.bytes_received;
    full.rollbacks = s.prediction.rollbacks;
    full.hash_checks = s.prediction.hash_checks;
    full.hash_mismatches = s.prediction.hash_mismatches;
    full.player_events_dropped = client->player_events_dropped;
    full.snapshots_received = s.snapshots_received;
    full.interest_left = s.interest_left;
    full.max_kbps = client->max_kbps;
    const uint32_t common = std::min<uint32_t>(out->struct_size, sizeof full);
    full.struct_size = common;
    std::memcpy(out, &full, common);
    return KEEL_OK;
  });
}

keel_result keel_client_set_max_kbps(keel_client* client, uint32_t kbps) {
  return guarded(client, [&] {
    if (kbps != 0 && kbps < 16) {
      return fail(client, KEEL_ERROR_ARGUMENT, "max_kbps " + std::to_string(kbps) + ": 0 or at least 16");
    }
    client->client->set_max_kbps(kbps);
    client->max_kbps = kbps;
    return KEEL_OK;
  });
}

double keel_client_render_tick(const keel_client* client, double now) {
  if (client == nullptr) return 0.0;
  const keel_state state = keel_client_state(client);
  if (state != KEEL_STATE_ACCEPTED && state != KEEL_STATE_PLAYING) return 0.0;
  return std::max(0.0, client->client->render_tick(now));
}

keel_result keel_client_poll_player_event(keel_client* client, keel_player_event* out) {
  return guarded(client, [&] {
    if (out == nullptr) return fail(client, KEEL_ERROR_ARGUMENT, "no player event struct");
    if (client->player_events.empty()) return KEEL_ERROR_NOT_FOUND;
    *out = client->player_events.front();
    client->player_events.pop_front();
    return KEEL_OK;
  });
}

const char* keel_client_create_error(void) { return t_create_error.c_str(); }

const char* keel_client_last_error(const keel_client* client) {
  return client == nullptr ? "" : client->error.c_str();
}

}  // extern "C"

// The handle's client, for the C API's other files (c_api_world.cpp).
const keel::client::Client* keel_client_cpp(const keel_client* client) {
  return client == nullptr ? nullptr : client->client.get();
}
