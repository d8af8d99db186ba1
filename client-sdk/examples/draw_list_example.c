/* The pattern an engine plugin follows to draw a Keel match (docs/client-sdk.md, "World
 * description"): keep a table of the bodies the client describes, adding and removing
 * entries when keel_client_world_version() changes, and each frame draw every entry at
 * its pose (a moving body's from keel_client_pose, a static body's from its
 * description) composed with each collider's local pose.
 *
 *   keel-client-draw-list-example HOST:PORT [SECONDS] [EVERY_N_FRAMES] [predict] [fire]
 *
 * Plays the sandbox in development mode (with "fire" it throws balls, so bodies are
 * added and, past eight, removed) and prints each change of the table ("added ...",
 * "removed ...") and, every N frames, one frame's draw list:
 *
 *   frame 120 t=1.23 bodies=17
 *   draw id=2 kind=0 motion=dynamic shape=box half=(0.500,0.500,0.500) pos=(...) rot=(...)
 *
 * Exit status 0 when it drew a non-empty list while playing, 1 otherwise. Plain C99. */
#define _POSIX_C_SOURCE 199309L
#include <keel/client/keel_client.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* The engine's side: one entry per body it has made a render object for. */
typedef struct body_entry {
  keel_body_desc desc;
} body_entry;

typedef struct body_table {
  body_entry* entries;
  uint32_t count;
  uint32_t capacity;
  uint64_t version; /* keel_client_world_version() the table was last synced with */
} body_table;

static const char* shape_name(uint32_t shape) {
  static const char* names[] = {"sphere", "box", "capsule", "hull", "mesh", "heightfield"};
  return shape < 6 ? names[shape] : "unknown";
}

static const char* motion_name(uint32_t motion) {
  static const char* names[] = {"static", "kinematic", "dynamic"};
  return motion < 3 ? names[motion] : "unknown";
}

static int table_find(const body_table* t, uint32_t id) {
  uint32_t i;
  for (i = 0; i < t->count; ++i) {
    if (t->entries[i].desc.id == id) return (int)i;
  }
  return -1;
}

/* Brings the table in line with the client's list: entries whose body is gone are
 * removed, bodies not in the table yet are added. Runs only when the version moved. */
static int table_sync(body_table* t, const keel_client* client) {
  uint32_t i, n;
  uint64_t version = keel_client_world_version(client);
  keel_body_desc d;
  if (version == t->version) return 0;
  t->version = version;
  for (i = 0; i < t->count;) {
    if (keel_client_find_body(client, t->entries[i].desc.id, &d) != KEEL_OK) {
      printf("removed id=%u\n", t->entries[i].desc.id);
      t->entries[i] = t->entries[--t->count];
    } else {
      ++i;
    }
  }
  n = keel_client_body_count(client);
  for (i = 0; i < n; ++i) {
    if (keel_client_body_at(client, i, &d) != KEEL_OK || table_find(t, d.id) >= 0) continue;
    if (t->count == t->capacity) {
      uint32_t grown = t->capacity ? t->capacity * 2 : 64;
      body_entry* e = (body_entry*)realloc(t->entries, grown * sizeof *e);
      if (e == NULL) return -1;
      t->entries = e;
      t->capacity = grown;
    }
    t->entries[t->count++].desc = d;
    printf("added id=%u kind=%u motion=%s colliders=%u%s\n", d.id, d.kind, motion_name(d.motion), d.collider_count,
           d.complete ? "" : " (incomplete)");
  }
  return 0;
}

/* q * v for a unit quaternion (x, y, z, w). */
static void rotate(const float q[4], const float v[3], float out[3]) {
  float tx = 2.0f * (q[1] * v[2] - q[2] * v[1]);
  float ty = 2.0f * (q[2] * v[0] - q[0] * v[2]);
  float tz = 2.0f * (q[0] * v[1] - q[1] * v[0]);
  out[0] = v[0] + q[3] * tx + (q[1] * tz - q[2] * ty);
  out[1] = v[1] + q[3] * ty + (q[2] * tx - q[0] * tz);
  out[2] = v[2] + q[3] * tz + (q[0] * ty - q[1] * tx);
}

static void multiply(const float a[4], const float b[4], float out[4]) {
  out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
  out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
  out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
  out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

static void print_dims(const keel_collider_desc* c) {
  switch (c->shape) {
    case KEEL_SHAPE_SPHERE: printf("r=%.3f", c->radius); break;
    case KEEL_SHAPE_BOX: printf("half=(%.3f,%.3f,%.3f)", c->half_extents[0], c->half_extents[1], c->half_extents[2]); break;
    case KEEL_SHAPE_CAPSULE: printf("r=%.3f h=%.3f", c->radius, c->half_height); break;
    case KEEL_SHAPE_HULL: printf("points=%u", c->point_count); break;
    case KEEL_SHAPE_MESH: printf("vertices=%u triangles=%u", c->point_count, c->index_count / 3); break;
    case KEEL_SHAPE_HEIGHTFIELD: printf("grid=%ux%u cell=%.3f", c->rows, c->columns, c->cell_size); break;
    default: printf("?"); break;
  }
}

/* One frame's draw list: every collider of every entry at its world pose. */
static uint32_t draw(const body_table* t, keel_client* client, double now) {
  uint32_t i, k, drawn = 0;
  for (i = 0; i < t->count; ++i) {
    const keel_body_desc* d = &t->entries[i].desc;
    float pos[3], rot[4];
    keel_pose pose;
    if (d->motion == KEEL_MOTION_STATIC) {
      memcpy(pos, d->position, sizeof pos);
      memcpy(rot, d->rotation, sizeof rot);
    } else if (keel_client_pose(client, d->id, now, &pose) == KEEL_OK) {
      memcpy(pos, pose.position, sizeof pos);
      memcpy(rot, pose.rotation, sizeof rot);
    } else {
      continue; /* described, no pose yet: drawn from the next snapshot on */
    }
    for (k = 0; k < d->collider_count; ++k) {
      keel_collider_desc c;
      float offset[3], world_pos[3], world_rot[4];
      if (keel_client_body_collider(client, d->id, k, &c) != KEEL_OK) continue;
      rotate(rot, c.position, offset);
      world_pos[0] = pos[0] + offset[0];
      world_pos[1] = pos[1] + offset[1];
      world_pos[2] = pos[2] + offset[2];
      multiply(rot, c.rotation, world_rot);
      printf("draw id=%u kind=%u motion=%s shape=%s ", d->id, d->kind, motion_name(d->motion), shape_name(c.shape));
      print_dims(&c);
      printf(" pos=(%.3f,%.3f,%.3f) rot=(%.3f,%.3f,%.3f,%.3f)\n", world_pos[0], world_pos[1], world_pos[2],
             world_rot[0], world_rot[1], world_rot[2], world_rot[3]);
      ++drawn;
    }
  }
  return drawn;
}

int main(int argc, char** argv) {
  const char* address = argc > 1 ? argv[1] : "127.0.0.1:9";
  double seconds = argc > 2 ? atof(argv[2]) : 3.0;
  long every = argc > 3 ? atol(argv[3]) : 60;
  int predict = 0, fire = 0, i;
  keel_client_config config;
  keel_client* client = NULL;
  body_table table = {NULL, 0, 0, 0};
  double start, t;
  long frame = 0;
  int drew = 0;

  for (i = 4; i < argc; ++i) {
    if (strcmp(argv[i], "predict") == 0) predict = 1;
    if (strcmp(argv[i], "fire") == 0) fire = 1;
  }
  if (every < 1) every = 1;
  keel_client_config_init(&config);
  config.server_address = address;
  config.mode = predict ? KEEL_MODE_PREDICT : KEEL_MODE_INTERPOLATE;
  if (keel_client_create(&config, &client) != KEEL_OK) {
    fprintf(stderr, "cannot create a client for %s: %s\n", address, keel_client_create_error());
    return 1;
  }
  start = now_seconds();
  if (keel_client_connect_dev(client, 5151, 1, 0.0) != KEEL_OK) return 1;
  for (t = 0.0; t < seconds; t = now_seconds() - start) {
    keel_client_set_input(client, 0.0f, 0.0f, (float)(frame % 628) * 0.01f - 3.14f, fire ? 2u : 0u);
    keel_client_update(client, t);
    if (table_sync(&table, client) != 0) return 1;
    if (keel_client_state(client) == KEEL_STATE_PLAYING && frame % every == 0) {
      printf("frame %ld t=%.2f bodies=%u\n", frame, t, table.count);
      if (draw(&table, client, t) > 0) drew = 1;
    }
    ++frame;
    sleep_ms(5);
  }
  printf("end bodies=%u\n", table.count);
  keel_client_disconnect(client, now_seconds() - start);
  keel_client_destroy(client);
  free(table.entries);
  return drew ? 0 : 1;
}
