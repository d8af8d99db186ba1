/* A minimal render loop over the C API (docs/client-sdk.md walks through it).
 *
 *   keel-client-c-example                      no server: connects to nothing for 0.3 s
 *   keel-client-c-example HOST:PORT [SECONDS] [predict]
 *                                              plays in development mode, prints poses
 *
 * Exit status 0 when it behaved as expected (played, or stayed connecting without a
 * server), 1 otherwise. Plain C99 + POSIX clocks: what an engine binding would do. */
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

int main(int argc, char** argv) {
  const char* address = argc > 1 ? argv[1] : "127.0.0.1:9";
  double seconds = argc > 2 ? atof(argv[2]) : 0.3;
  int with_server = argc > 1;
  keel_client_config config;
  keel_client* client = NULL;
  keel_client_stats stats;
  keel_pose pose;
  double start, t;
  int played = 0;

  /* The library loaded at run time must speak this header's ABI. */
  if (!KEEL_CLIENT_ABI_COMPATIBLE(keel_client_abi_version())) {
    fprintf(stderr, "libkeel_client has ABI %u.%u; this program needs %u.%u or a later minor\n",
            (unsigned)(keel_client_abi_version() >> 16), (unsigned)(keel_client_abi_version() & 0xffffu),
            (unsigned)KEEL_CLIENT_ABI_VERSION_MAJOR, (unsigned)KEEL_CLIENT_ABI_VERSION_MINOR);
    return 1;
  }
  printf("libkeel_client %s, ABI %u.%u\n", keel_client_version_string(),
         (unsigned)(keel_client_abi_version() >> 16), (unsigned)(keel_client_abi_version() & 0xffffu));

  keel_client_config_init(&config);
  config.server_address = address;
  config.mode = argc > 3 && strcmp(argv[3], "predict") == 0 ? KEEL_MODE_PREDICT : KEEL_MODE_INTERPOLATE;
  if (keel_client_create(&config, &client) != KEEL_OK) {
    fprintf(stderr, "cannot create a client for %s\n", address);
    return 1;
  }
  /* Errors come back as codes, never as crashes. */
  if (keel_client_pose(client, 2, 0.0, NULL) != KEEL_ERROR_ARGUMENT) return 1;
  if (keel_client_connect(client, "not a token", 0.0) != KEEL_ERROR_TOKEN) return 1;
  printf("bad token refused: %s\n", keel_client_last_error(client));

  start = now_seconds();
  if (keel_client_connect_dev(client, 4242, 1, 0.0) != KEEL_OK) return 1;
  for (t = 0.0; t < seconds; t = now_seconds() - start) {
    keel_client_set_input(client, 0.0f, 1.0f, 0.5f, 0u);
    keel_client_update(client, t);
    if (keel_client_state(client) == KEEL_STATE_PLAYING) {
      played = 1;
      if (keel_client_pose(client, 2, t, &pose) == KEEL_OK) {
        printf("t=%.2f body 2 at (%.3f, %.3f, %.3f)%s\n", t, pose.position[0], pose.position[1],
               pose.position[2], pose.extrapolated ? " extrapolated" : "");
      }
    }
    sleep_ms(5);
  }
  keel_client_get_stats(client, &stats);
  printf("state=%u snapshots=%llu confirmed=%llu checks=%llu mismatches=%llu rtt_ms=%.1f\n",
         stats.state, (unsigned long long)stats.snapshots_received,
         (unsigned long long)stats.confirmed_ticks, (unsigned long long)stats.hash_checks,
         (unsigned long long)stats.hash_mismatches, stats.rtt_ms);
  keel_client_disconnect(client, now_seconds() - start);
  keel_client_destroy(client);
  if (with_server) return played && stats.hash_mismatches == 0 ? 0 : 1;
  return stats.state == KEEL_STATE_CONNECTING ? 0 : 1;
}
