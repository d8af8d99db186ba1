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
 * The client's game is the sandbox (what keel-server runs by default) unless the config
 * names a game module (game_module: the .so the server was started with --game); its
 * input layout is what the keel_client_set_input_* calls fill, field by field, and its
 * events are what keel_client_poll_game_event returns. A module carries its own Keel
 * (keel/game/module.h), so any program may load one, one that links only
 * libkeel_client.so included; it must be built from the same Keel version.
 *
 * The shared library libkeel_client.so exports these functions and nothing else; see
 * "ABI version" below for the rule that keeps programs and libraries compatible. */
#ifndef KEEL_CLIENT_H
#define KEEL_CLIENT_H

#include <stdint.h>

/* ---- ABI version ---------------------------------------------------------------
 * The C ABI's version: MAJOR changes when a function, struct or constant already here
 * changes or goes away (libkeel_client.so.MAJOR is the library's SONAME, so the loader
 * never mixes majors); MINOR grows when something is appended (a function, a field at
 * the end of a struct that carries its own size). A program built against MAJOR.MINOR
 * runs on a library of the same MAJOR and a MINOR at least as large:
 * KEEL_CLIENT_ABI_COMPATIBLE(keel_client_abi_version()) tells, at run time. */
#define KEEL_CLIENT_ABI_VERSION_MAJOR 1
#define KEEL_CLIENT_ABI_VERSION_MINOR 3
#define KEEL_CLIENT_ABI_VERSION ((KEEL_CLIENT_ABI_VERSION_MAJOR << 16) | KEEL_CLIENT_ABI_VERSION_MINOR)
#define KEEL_CLIENT_ABI_COMPATIBLE(library_version)                       \
  (((library_version) >> 16) == KEEL_CLIENT_ABI_VERSION_MAJOR &&          \
   ((library_version) & 0xffffu) >= KEEL_CLIENT_ABI_VERSION_MINOR)

/* Every declaration below is the library's interface: default visibility, whatever
 * visibility the including code is compiled with. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

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
  KEEL_ERROR_INTERNAL = 6,  /* anything else; see keel_client_last_error() */
  KEEL_ERROR_GAME = 7,      /* the game module does not load (keel_client_create_error() says why) */
  KEEL_ERROR_KIND = 8       /* an input setter of another kind than the field's */
} keel_result;

/* The kinds of input and event payload fields (keel/game/layout.h). */
typedef enum keel_field_kind {
  KEEL_FIELD_BOOL = 0,       /* a switch */
  KEEL_FIELD_BUTTONS = 1,    /* up to 16 named buttons, a bit each */
  KEEL_FIELD_INT = 2,        /* an integer in [min, max] */
  KEEL_FIELD_ENUM = 3,       /* one of label_count named values (an index) */
  KEEL_FIELD_FIXED = 4,      /* a number in [min, max] in steps of `step` */
  KEEL_FIELD_STICK = 5,      /* (x, y) in the unit disc */
  KEEL_FIELD_ANGLE = 6,      /* radians in [-pi, pi) */
  KEEL_FIELD_DIRECTION3 = 7, /* a 3-D unit vector */
  KEEL_FIELD_POINT3 = 8      /* a point in the box [min, max] in steps of `step` */
} keel_field_kind;

/* One field of the game's input layout or of an event type's payload. */
typedef struct keel_input_field {
  const char* name;        /* valid while the client lives */
  uint32_t kind;           /* keel_field_kind */
  uint32_t components;     /* numbers the field takes: 1, 2 (stick), 3 (direction3, point3) */
  double min[3], max[3];   /* per component: the range of the values the field holds */
  double step;             /* fixed and point3: the quantisation step; else 0 */
  uint32_t label_count;    /* enum values, button names (keel_client_input_label) */
} keel_input_field;

#define KEEL_MAX_EVENT_VALUES 32

/* One game event: its type, when, and its payload as numbers, one per component in
 * field order (bool 0/1, buttons the bit mask, int the value, enum the index, fixed the
 * number, stick x then y, angle radians, direction3 and point3 x, y, z). */
typedef struct keel_game_event {
  uint32_t type;            /* index into the game's event types */
  const char* type_name;    /* valid while the client lives */
  uint64_t tick;            /* the match tick after the step that emitted it */
  int predicted;            /* non-zero: from a predicted step; 0: confirmed by the server */
  uint32_t value_count;
  double values[KEEL_MAX_EVENT_VALUES];
} keel_game_event;

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
  const char* server_address;   /* "host:port" (UDP), or "ws://host:port/path" (WebSocket); required */
  const keel_link_config* link; /* NULL: no conditioner */
  double interpolation_delay_intervals; /* <= 0: default (3 snapshot intervals) */
  uint32_t max_rollback_ticks;  /* 0: default (32) */
  const char* desync_dump_dir;  /* NULL: no dump files */
  int auto_reconnect;           /* non-zero: reconnect after a time-out (default on) */
  const char* game_module;      /* NULL: the sandbox; else the game module's path (.so) */
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
  uint64_t rollbacks_across_state_changes;
  uint64_t game_events_dropped;  /* GameEvents refused, plus records past the queue's bound */
} keel_client_stats;

/* Fills `config` with the defaults (interpolate mode, auto reconnect on). */
void keel_client_config_init(keel_client_config* config);

/* Creates a client; *out is NULL on failure. */
keel_result keel_client_create(const keel_client_config* config, keel_client** out);
/* Why the last keel_client_create on this thread failed ("" after a success). */
const char* keel_client_create_error(void);
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

/* The sandbox's input for the ticks produced from now on (move x and forward, look yaw,
 * buttons jump = 1 and fire = 2). KEEL_ERROR_KIND when the client's game is not the
 * sandbox: use the field setters below. */
keel_result keel_client_set_input(keel_client* client, float move_x, float move_z, float look_yaw,
                                  uint32_t buttons);

/* The game's input layout: fields 0 .. count - 1. */
uint32_t keel_client_input_field_count(const keel_client* client);
keel_result keel_client_input_field(const keel_client* client, uint32_t index, keel_input_field* out);
/* The field's index, or keel_client_input_field_count() when there is none. */
uint32_t keel_client_find_input_field(const keel_client* client, const char* name);
/* An enum value's or a button's name; NULL out of range. */
const char* keel_client_input_label(const keel_client* client, uint32_t field, uint32_t label);

/* Field setters: each changes one field of the input used from now on (the others keep
 * their values; all start at zero), rounds to the field's step and clamps into its range.
 * KEEL_ERROR_ARGUMENT for an index out of range or a non-finite number, KEEL_ERROR_KIND
 * for a field of another kind:
 *   _bool: bool;  _buttons: buttons (bit i = label i);  _int: int and enum (the index);
 *   _number: fixed and angle (radians);  _vector: stick (x, y; z ignored), direction3
 *   and point3. */
keel_result keel_client_set_input_bool(keel_client* client, uint32_t field, int on);
keel_result keel_client_set_input_buttons(keel_client* client, uint32_t field, uint32_t mask);
keel_result keel_client_set_input_int(keel_client* client, uint32_t field, int32_t value);
keel_result keel_client_set_input_number(keel_client* client, uint32_t field, double value);
keel_result keel_client_set_input_vector(keel_client* client, uint32_t field, double x, double y, double z);

/* The game's event types and their payload fields. */
uint32_t keel_client_event_type_count(const keel_client* client);
const char* keel_client_event_type_name(const keel_client* client, uint32_t type); /* NULL out of range */
uint32_t keel_client_event_field_count(const keel_client* client, uint32_t type);
keel_result keel_client_event_field(const keel_client* client, uint32_t type, uint32_t index,
                                    keel_input_field* out);
/* The oldest game event not yet polled: KEEL_OK and *out filled, or KEEL_ERROR_NOT_FOUND
 * when there is none. Interpolating clients get the server's events (confirmed, each tick
 * once, in tick order); predicting clients get predicted events ahead and the confirmed
 * ones as the server's steps arrive (docs/client-sdk.md, "Game events"). */
keel_result keel_client_poll_game_event(keel_client* client, keel_game_event* out);
/* The pose of body `id` to draw at time `now`. KEEL_ERROR_NOT_FOUND when unknown. */
keel_result keel_client_pose(keel_client* client, uint32_t id, double now, keel_pose* out);
keel_state keel_client_state(const keel_client* client);
keel_result keel_client_get_stats(const keel_client* client, keel_client_stats* out);
/* The last error's message for this handle (valid until the next call on it); "" if none. */
const char* keel_client_last_error(const keel_client* client);

/* ---- Library version, connection statistics, player events ------------------------ */

/* The ABI version of the library loaded at run time (KEEL_CLIENT_ABI_VERSION of the
 * header it was built from): refuse a library for which
 * KEEL_CLIENT_ABI_COMPATIBLE(keel_client_abi_version()) is false. */
uint32_t keel_client_abi_version(void);
/* The Keel release the library comes from ("0.1.0"); static storage. */
const char* keel_client_version_string(void);

/* The connection as the client measures it. The struct carries its own size, so fields
 * are only ever appended: set struct_size = sizeof(keel_client_link_stats) (what
 * keel_client_link_stats_init below does) before keel_client_get_link_stats; the
 * library fills the fields both it and the caller know and sets struct_size to their
 * common size. */
typedef struct keel_client_link_stats {
  uint32_t struct_size;
  uint32_t state;              /* keel_state */
  double rtt_ms;               /* smoothed round trip from the packet layer's acks; 0 before one */
  double jitter_ms;            /* smoothed |sample - rtt| */
  double loss_out;             /* smoothed fraction of our packets the server never acked */
  double loss_in;              /* smoothed fraction of the server's packets that never came
                                  (gaps in its packet sequence) */
  double kbps_out;             /* UDP payload kbit/s sent over about the last second */
  double kbps_in;              /* UDP payload kbit/s received over about the last second */
  uint64_t packets_sent;       /* this connection's (a reconnect starts again at 0) */
  uint64_t packets_received;
  uint64_t bytes_sent;         /* every connection's, as keel_client_stats */
  uint64_t bytes_received;
  uint64_t rollbacks;          /* predicted mode, as keel_client_stats */
  uint64_t hash_checks;
  uint64_t hash_mismatches;
  uint64_t player_events_dropped; /* joins and leaves past the queue's bound (1024) */
  /* ABI 1.3 */
  uint64_t snapshots_received; /* decoded, whole-world and partial, every session's */
  uint64_t interest_left;      /* bodies the server said left this client's interest */
  uint32_t max_kbps;           /* the snapshot cap this client asks for (0: the server's) */
  uint32_t reserved;           /* 0 */
} keel_client_link_stats;

/* Zeroes the struct and sets struct_size. Inline, so the size is the caller's own (a
 * library function would write its own, possibly larger, size). */
static inline void keel_client_link_stats_init(keel_client_link_stats* stats) {
  unsigned char* bytes = (unsigned char*)stats;
  unsigned long i;
  for (i = 0; i < sizeof *stats; ++i) bytes[i] = 0;
  stats->struct_size = (uint32_t)sizeof(keel_client_link_stats);
}
/* KEEL_ERROR_ARGUMENT for a null pointer or a struct_size smaller than the first
 * version of the struct (up to hash_mismatches). */
keel_result keel_client_get_link_stats(keel_client* client, keel_client_link_stats* out);

/* ---- Interest and view (ABI 1.3) -------------------------------------------------------- */

/* Caps the snapshot budget the server gives this client, in kbit/s (packet headers
 * counted): 0 asks for the server's own budget (--client-kbps), which the server never
 * exceeds whatever is asked. The cap travels in the connect handshake, so it takes effect
 * from the next keel_client_connect (or reconnect). KEEL_ERROR_ARGUMENT below 16 (a
 * snapshot of a few bodies) unless 0. */
keel_result keel_client_set_max_kbps(keel_client* client, uint32_t kbps);
/* The server tick an interpolating client shows at `now` (fractional): the estimate of
 * the server's tick less half the round trip and the interpolation delay. It is the view
 * the client sends with each input, which a game's lag-compensated queries use. 0 before
 * the server has accepted the client, and for a null client. */
double keel_client_render_tick(const keel_client* client, double now);

typedef enum keel_player_event_kind {
  KEEL_PLAYER_JOINED = 0,
  KEEL_PLAYER_LEFT = 1
} keel_player_event_kind;

/* Another player joining or leaving the match (the server's MatchEvent messages): the
 * server announces them to the clients already playing, so a client hears of the joins and
 * leaves from its own start on, never of its own, nor of players there before it. */
typedef struct keel_player_event {
  uint32_t kind;       /* keel_player_event_kind */
  uint32_t player_id;
  uint64_t tick;       /* the server's tick when it happened */
} keel_player_event;

/* The oldest join or leave not yet polled: KEEL_OK and *out filled, or
 * KEEL_ERROR_NOT_FOUND when there is none. Events arrive with keel_client_update; at most
 * 1024 wait, past that the newest are dropped and counted (player_events_dropped). */
keel_result keel_client_poll_player_event(keel_client* client, keel_player_event* out);

/* ---- World description (ABI 1.2)  ------------------------------------------------------------
 * What every body of the match is, so an engine can draw it: the scene's bodies (from
 * the scene the server sent) and every body added or removed since (the server
 * announces each one). Bodies are listed by ascending id; index i is valid while
 * keel_client_world_version() stays the same. Poll the version each frame: when it has
 * changed, bodies were added or removed (or a new session's scene replaced them), so
 * walk the list again. The same in both modes (a predicting client's is the server's
 * confirmed world). A body may have a pose a moment before its description arrives:
 * draw the bodies listed here.
 *
 * Lifetime: the pointers in a keel_collider_desc (points, indices, heights) belong to
 * the client and stay valid until the next call on the handle that is not one of these
 * const getters (keel_client_update, _connect, _disconnect, _destroy, ...). Thread
 * rules are the handle's: never from two threads at once. docs/client-sdk.md, "World
 * description", has the pattern an engine plugin follows. */

typedef enum keel_shape {
  KEEL_SHAPE_SPHERE = 0,     /* radius */
  KEEL_SHAPE_BOX = 1,        /* half_extents */
  KEEL_SHAPE_CAPSULE = 2,    /* radius, half_height: the segment along local +Y */
  KEEL_SHAPE_HULL = 3,       /* the convex hull of points */
  KEEL_SHAPE_MESH = 4,       /* triangles: indices into points, three each, counter-clockwise from outside */
  KEEL_SHAPE_HEIGHTFIELD = 5 /* rows x columns heights at (c * cell_size, h, r * cell_size) */
} keel_shape;

typedef enum keel_motion {
  KEEL_MOTION_STATIC = 0,
  KEEL_MOTION_KINEMATIC = 1,
  KEEL_MOTION_DYNAMIC = 2
} keel_motion;

typedef struct keel_body_desc {
  uint32_t id;              /* what keel_client_pose takes */
  uint32_t motion;          /* keel_motion */
  uint32_t kind;            /* the game's label for the body (0 = none) */
  uint32_t collider_count;
  int complete;             /* 0: the server left out some geometry (too large to announce) */
  float position[3];        /* the pose when described: where a static body stays (static */
  float rotation[4];        /* bodies have no pose in snapshots); x, y, z, w */
} keel_body_desc;

typedef struct keel_collider_desc {
  uint32_t shape;           /* keel_shape */
  float position[3];        /* in the body's frame */
  float rotation[4];        /* x, y, z, w; in the body's frame */
  float radius;
  float half_height;
  float half_extents[3];
  uint32_t point_count;     /* hull points, mesh vertices */
  const float* points;      /* point_count x (x, y, z); NULL when none */
  uint32_t index_count;     /* mesh: three per triangle */
  const uint32_t* indices;  /* NULL when none */
  uint32_t rows, columns;   /* heightfield grid */
  float cell_size;
  const float* heights;     /* rows x columns, row-major; NULL when none */
  int is_trigger;           /* non-zero: a sensor, nothing collides with it */
} keel_collider_desc;

/* Grows whenever the body list changes; 0 before the first scene. */
uint64_t keel_client_world_version(const keel_client* client);
uint32_t keel_client_body_count(const keel_client* client);
/* Body `index` (0 .. count - 1, ascending id). KEEL_ERROR_NOT_FOUND past the end. */
keel_result keel_client_body_at(const keel_client* client, uint32_t index, keel_body_desc* out);
/* The body with this id. KEEL_ERROR_NOT_FOUND when it is not (or not yet) described. */
keel_result keel_client_find_body(const keel_client* client, uint32_t id, keel_body_desc* out);
/* Collider `index` of body `id`. KEEL_ERROR_NOT_FOUND for an unknown body or index. */
keel_result keel_client_body_collider(const keel_client* client, uint32_t id, uint32_t index,
                                      keel_collider_desc* out);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* KEEL_CLIENT_H */
