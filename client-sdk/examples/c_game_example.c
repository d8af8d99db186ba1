/* A game module's game over the C API: the input layout read at run time and driven field
 * by field, and the game's events polled as they are predicted and confirmed.
 *
 *   keel-client-c-game-example MODULE.so HOST:PORT SECONDS MATCH
 *
 * Plays match MATCH in predicted mode in development mode, prints the layout and every
 * event, and exits 0 when it played with no hash mismatch and saw at least one confirmed
 * event; 1 otherwise. Plain C99 + POSIX clocks, linked with libkeel_client.so alone: the
 * module carries its own Keel. */
#define _POSIX_C_SOURCE 199309L
#include <keel/client/keel_client.h>

#include <stdio.h>
#include <stdlib.h>
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

static const char* kind_name(uint32_t kind) {
  static const char* names[] = {"bool", "buttons", "int", "enum", "fixed", "stick", "angle", "direction3", "point3"};
  return kind < 9 ? names[kind] : "?";
}

/* Prints the layout; returns 0 when every setter refuses a field of another kind. */
static int print_layout(keel_client* c) {
  uint32_t i, n = keel_client_input_field_count(c);
  keel_input_field f;
  for (i = 0; i < n; ++i) {
    if (keel_client_input_field(c, i, &f) != KEEL_OK) return 1;
    printf("input %u: %s %s [%g, %g] labels %u\n", i, f.name, kind_name(f.kind), f.min[0], f.max[0], f.label_count);
    if (keel_client_find_input_field(c, f.name) != i) return 1;
    if (f.kind != KEEL_FIELD_BOOL && keel_client_set_input_bool(c, i, 1) != KEEL_ERROR_KIND) return 1;
    if (f.kind == KEEL_FIELD_BOOL && keel_client_set_input_vector(c, i, 0, 1, 0) != KEEL_ERROR_KIND) return 1;
  }
  for (i = 0; i < keel_client_event_type_count(c); ++i) {
    printf("event type %u: %s (%u fields)\n", i, keel_client_event_type_name(c, i), keel_client_event_field_count(c, i));
  }
  return keel_client_find_input_field(c, "no_such_field") == n ? 0 : 1;
}

/* Full ahead on every stick, the aim turning a full turn every 8 s, buttons pressed for a
 * quarter of every second (a release pushes in pushball), bools off. */
static void drive(keel_client* c, double t) {
  uint32_t i, n = keel_client_input_field_count(c);
  keel_input_field f;
  for (i = 0; i < n; ++i) {
    keel_client_input_field(c, i, &f);
    switch (f.kind) {
      case KEEL_FIELD_STICK: keel_client_set_input_vector(c, i, 0.0, 1.0, 0.0); break;
      case KEEL_FIELD_ANGLE: keel_client_set_input_number(c, i, (t / 8.0 - (long)(t / 8.0)) * 6.283 - 3.1415); break;
      case KEEL_FIELD_BUTTONS: keel_client_set_input_buttons(c, i, (t - (long)t) < 0.75 ? 1u : 0u); break;
      default: break;
    }
  }
}

int main(int argc, char** argv) {
  keel_client_config config;
  keel_client* client = NULL;
  keel_client_stats stats;
  keel_game_event e;
  double start, t, seconds;
  unsigned long confirmed = 0, predicted = 0;
  int played = 0;
  uint32_t k;

  if (argc < 5) {
    fprintf(stderr, "usage: %s MODULE.so HOST:PORT SECONDS MATCH\n", argv[0]);
    return 1;
  }
  seconds = atof(argv[3]);
  keel_client_config_init(&config);
  config.server_address = argv[2];
  config.mode = KEEL_MODE_PREDICT;
  config.game_module = argv[1];
  if (keel_client_create(&config, &client) != KEEL_OK) {
    fprintf(stderr, "cannot create a client of %s for %s: %s\n", argv[1], argv[2], keel_client_create_error());
    return 1;
  }
  if (print_layout(client) != 0) return 1;
  if (keel_client_set_input(client, 0.0f, 1.0f, 0.0f, 0u) != KEEL_ERROR_KIND) return 1; /* not the sandbox */

  start = now_seconds();
  if (keel_client_connect_dev(client, 5151, strtoull(argv[4], NULL, 10), 0.0) != KEEL_OK) return 1;
  for (t = 0.0; t < seconds; t = now_seconds() - start) {
    drive(client, t);
    keel_client_update(client, t);
    if (keel_client_state(client) == KEEL_STATE_PLAYING) played = 1;
    while (keel_client_poll_game_event(client, &e) == KEEL_OK) {
      if (e.predicted) ++predicted; else ++confirmed;
      printf("event %s tick %llu %s:", e.type_name, (unsigned long long)e.tick, e.predicted ? "predicted" : "confirmed");
      for (k = 0; k < e.value_count; ++k) printf(" %g", e.values[k]);
      printf("\n");
    }
    sleep_ms(5);
  }
  keel_client_get_stats(client, &stats);
  printf("played=%d confirmed_ticks=%llu mismatches=%llu events confirmed=%lu predicted=%lu rollbacks=%llu across_state_changes=%llu\n",
         played, (unsigned long long)stats.confirmed_ticks, (unsigned long long)stats.hash_mismatches, confirmed,
         predicted, (unsigned long long)stats.rollbacks, (unsigned long long)stats.rollbacks_across_state_changes);
  keel_client_disconnect(client, now_seconds() - start);
  keel_client_destroy(client);
  return played && stats.hash_mismatches == 0 && stats.confirmed_ticks > 0 && confirmed > 0 ? 0 : 1;
}
