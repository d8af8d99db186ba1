// The C API over keel::client::Client. Every entry point catches everything: a C caller
// (or an engine's managed runtime) cannot unwind a C++ exception.
#include <keel/client/client.h>
#include <keel/games/sandbox.h>
#include <keel/client/keel_client.h>
#include <keel/client/link_conditioner.h>

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <type_traits>

struct keel_client {
  std::unique_ptr<keel::client::Client> client;
  std::string server_address;
  std::string error;
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

}  // namespace

extern "C" {

void keel_client_config_init(keel_client_config* config) {
  if (config == nullptr) return;
  *config = keel_client_config{};
  config->mode = KEEL_MODE_INTERPOLATE;
  config->auto_reconnect = 1;
}

keel_result keel_client_create(const keel_client_config* config, keel_client** out) {
  if (out == nullptr) return KEEL_ERROR_ARGUMENT;
  *out = nullptr;
  if (config == nullptr || config->server_address == nullptr || !known_mode(*config)) {
    return KEEL_ERROR_ARGUMENT;
  }
  try {
    std::string error;
    auto transport = keel::client::open_udp_transport(config->server_address, error);
    if (!transport) return KEEL_ERROR_ADDRESS;
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
    auto* c = new keel_client;
    c->client = std::make_unique<Client>(std::move(transport), std::move(cc));
    c->server_address = config->server_address;
    *out = c;
    return KEEL_OK;
  } catch (...) {
    return KEEL_ERROR_INTERNAL;
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
    return KEEL_OK;
  });
}

keel_result keel_client_set_input(keel_client* client, float move_x, float move_z, float look_yaw,
                                  uint32_t buttons) {
  return guarded(client, [&] {
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
    return KEEL_OK;
  } catch (...) {
    return KEEL_ERROR_INTERNAL;
  }
}

const char* keel_client_last_error(const keel_client* client) {
  return client == nullptr ? "" : client->error.c_str();
}

}  // extern "C"
