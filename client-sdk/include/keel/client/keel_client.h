/* keel_client.h — the Keel client SDK as a plain C API, for game engine plugins (Unity,
 * Unreal, Godot) and any language with a C FFI.
 *
 * Handles are opaque; every function returns a keel_result (0 = KEEL_OK) or a value, and
 * never lets a C++ exception cross this boundary: a failure is reported as an error
 * code, with a message from keel_client_last_error(). The client owns no threads: call
 * keel_client_update() every frame with the current time in seconds (any monotonic
 * clock; the same clock for every call). A handle must not be used from two threads at
 * once. docs/client-sdk.md has a complete render loop.
 *
 * Predicted mode here steps Keel's built-in sandbox rules (what keel-server runs): rules
 * are C++ objects, so a server with its own rules is predicted from C++ with
 * keel::client::ClientConfig::prediction.rules (docs/client-sdk.md, "Your own rules");
 * interpolation mode works with any rules. */
#ifndef KEEL_CLIENT_H
#define KEEL_CLIENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct keel_client keel_client;

typedef enum keel_result {
  KEEL_OK = 0,
  KEEL_ERROR_ARGUMENT = 1,  /* a null pointer or an out-of-range value */
  KEEL_ERROR_ADDRESS = 2,   /* the server address does not resolve or the socket fails */
  KEEL_ERROR_TOKEN = 3,     /* a token that does not parse, or a key file that does not load */
  KEEL_ERROR_STATE = 4,     /* not possible in the current state */
  KEEL_ERROR_NOT_FOUND = 5, /* no such body (yet) */
  KEEL_ERROR_INTERNAL = 6   /* anything else; see keel_client_last_error() */
} keel_result;

typedef enum keel_mode { KEEL_MODE_INTERPOLATE = 0, KEEL_MODE_PREDICT = 1 } keel_mode;

typedef enum keel_state {
  KEEL_STATE_DISCONNECTED = 0,
  KEEL_STATE_CONNECTING = 1,
  KEEL_STATE_ACCEPTED = 2,
  KEEL_STATE_PLAYING = 3,
  KEEL_STATE_RECONNECTING = 4
} keel_state;

/* A link conditioner for tests and for reproducing bad networks. Latency is
 * latency_ms +/- jitter_ms each way; probabilities are in [0, 1]. */
typedef struct keel_link_config {
  double latency_ms;
  double jitter_ms;
  double loss;
  double duplicate;
  double reorder;
  uint64_t seed;
} keel_link_config;

typedef struct keel_client_config {
  keel_mode mode;
  const char* server_address;   /* "host:port" (required) */
  const keel_link_config* link; /* NULL: no conditioner */
  double interpolation_delay_intervals; /* <= 0: default (3 snapshot intervals) */
  uint32_t max_rollback_ticks;  /* 0: default (32) */
  const char* desync_dump_dir;  /* NULL: no dump files */
  int auto_reconnect;           /* non-zero: reconnect after a time-out (default on) */
} keel_client_config;

typedef struct keel_pose {
  float position[3];    /* x, y, z (metres) */
  float rotation[4];    /* x, y, z, w */
  int extrapolated;     /* non-zero: past the newest snapshot */
} keel_pose;

typedef struct keel_client_stats {
  uint32_t state;       /* keel_state */
  uint32_t player_id;
  uint64_t snapshots_received;
  uint64_t confirmed_ticks;
  uint64_t hash_checks;
  uint64_t hash_mismatches;
  uint64_t rollbacks;
  uint32_t max_rollback_ticks;
  uint32_t last_rollback_ticks;
  uint64_t inputs_sent;
  uint64_t inputs_late;
  uint64_t bytes_sent;
  uint64_t bytes_received;
  uint64_t reconnects;
  uint64_t dropped;     /* messages and packets dropped, all reasons */
  double rtt_ms;
  double server_tick;   /* the estimate at the last update */
  double input_lead_ticks;
} keel_client_stats;

/* Fills `config` with the defaults (interpolate mode, auto reconnect on). */
void keel_client_config_init(keel_client_config* config);

/* Creates a client; *out is NULL on failure. */
keel_result keel_client_create(const keel_client_config* config, keel_client** out);
void keel_client_destroy(keel_client* client);

/* Connects with a connect token in its base64 text form (what keel-token mint prints
 * and a matchmaking backend hands out). */
keel_result keel_client_connect(keel_client* client, const char* token_base64, double now);
/* Development mode: mints a token with the well-known development key (a server without
 * --token-key accepts it on loopback only). */
keel_result keel_client_connect_dev(keel_client* client, uint64_t client_id, uint64_t match_id,
                                    double now);
keel_result keel_client_disconnect(keel_client* client, double now);
keel_result keel_client_update(keel_client* client, double now);

/* The input used for the ticks produced from now on. */
keel_result keel_client_set_input(keel_client* client, float move_x, float move_z, float look_yaw,
                                  uint32_t buttons);
/* The pose of body `id` to draw at time `now`. KEEL_ERROR_NOT_FOUND when unknown. */
keel_result keel_client_pose(keel_client* client, uint32_t id, double now, keel_pose* out);
keel_state keel_client_state(const keel_client* client);
keel_result keel_client_get_stats(const keel_client* client, keel_client_stats* out);
/* The last error's message for this handle (valid until the next call on it); "" if none. */
const char* keel_client_last_error(const keel_client* client);

#ifdef __cplusplus
}
#endif

#endif /* KEEL_CLIENT_H */
