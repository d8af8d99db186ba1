// An authenticated player floods a real keel-server process with large-block fragments
// while another player plays: zstd bombs (64 MiB of zeros in two fragments) and single
// fragments that claim a 64 MiB block. The server never takes client blocks: each is
// refused unread and counted, the honest player keeps getting snapshots at the snapshot
// rate, /healthz stays 200, the server's memory does not grow with the claims, and a
// SIGTERM still drains at once.
#include "attack_payloads.h"
#include "process_helpers.h"

#include <keel/protocol/connection.h>

#include <sodium.h>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

using attack::bomb_payloads;
using attack::claim_payload;
using attack::seal;

TEST(ServerBlockFlood, OnePlayersBlockFloodHurtsNoOneElse) {
  std::string dir = fresh_dir("block_flood");
  std::string bin = std::string(KEEL_BINARY_DIR) + "/bin/keel-server";
  uint16_t http = free_port(true);
  std::string address = "127.0.0.1:" + std::to_string(free_port(false));
  pid_t pid = spawn_process({bin, "--scene", demo_scene(), "--bind", address, "--record", dir, "--metrics",
                             "127.0.0.1:" + std::to_string(http), "--status-interval", "0", "--log-level", "warn"},
                            dir + "/server.txt");
  ASSERT_GT(pid, 0);
  struct Killer {
    pid_t pid;
    ~Killer() {
      if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
    }
  } killer{pid};

  asio::io_context io;
  TestClientOptions o;
  o.server = address;
  o.client_id = 1;
  TestClient honest(io, o);
  o.client_id = 666;
  TestClient attacker(io, o);
  honest.start(seconds_now());
  attacker.start(seconds_now());
  ASSERT_TRUE(drive({&honest, &attacker}, 8.0, [&] { return honest.snapshots() > 30 && attacker.playing(); }));
  drive({&honest}, 0.5);
  const double hwm_before = proc_status_kib(pid, "VmHWM");
  ASSERT_GT(hwm_before, 0);
  const std::string metrics_before = http_fetch(http, "/metrics");

  auto bombs = bomb_payloads();
  ASSERT_EQ(bombs.size(), 2u) << "64 MiB of zeros is two fragments of zstd";
  const kp::ConnectionKeys keys = kp::client_keys(attacker.token());
  // The attacker's own Connection has used sequences 1..packets sent; continue past them.
  uint64_t seq = attacker.sent().size() + 100;
  const double seconds = 4.0;
  const double start = seconds_now();
  uint64_t sent = 0, bomb_fragments = 0, claims = 0, health_checks = 0, health_bad = 0;
  uint64_t snaps_start = honest.snapshots();
  double next_health = start;
  while (seconds_now() - start < seconds) {
    // Every millisecond: a whole bomb and a claim (3000 datagrams a second, ten times
    // the per-client packet rate): the attack is bounded by the test, not by the server.
    for (const auto& b : bombs) attacker.send_raw(seal(keys, seq++, b)), ++bomb_fragments;
    attacker.send_raw(seal(keys, seq++, claim_payload(static_cast<uint16_t>(claims)))), ++claims;
    sent += bombs.size() + 1;
    honest.update(seconds_now());
    if (seconds_now() >= next_health) {
      std::string reply = http_fetch(http, "/healthz");
      ++health_checks;
      if (reply.rfind("HTTP/1.1 200", 0) != 0) ++health_bad;
      next_health += 0.1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double took = seconds_now() - start;
  const uint64_t snaps = honest.snapshots() - snaps_start;
  drive({&honest}, 0.3);
  const double hwm_after = proc_status_kib(pid, "VmHWM");
  const std::string m = http_fetch(http, "/metrics");
  auto grew = [&](const std::string& name) { return metric_value(m, name) - metric_value(metrics_before, name); };

  // The honest player: snapshots at 30 a second all through (0.8 of it allows for a
  // loaded machine), and the server healthy at every look.
  EXPECT_GT(double(snaps), 0.8 * 30.0 * took) << snaps << " snapshots in " << took << " s";
  EXPECT_FALSE(honest.disconnected());
  EXPECT_GT(health_checks, 20u);
  EXPECT_EQ(health_bad, 0u) << "of " << health_checks;
  EXPECT_GT(grew("keel_ticks_total"), 55.0 * took * 0.9);
  EXPECT_EQ(grew("keel_ticks_dropped_total"), 0);
  // Memory: what the server held for clients stayed within one client's bound, and the
  // process's peak resident size grew by far less than one claimed block (64 MiB).
  EXPECT_LE(metric_value(m, "keel_client_memory_peak_bytes"), metric_value(m, "keel_client_memory_per_client_limit_bytes"));
  EXPECT_LT(hwm_after - hwm_before, 16.0 * 1024) << "KiB: " << hwm_before << " -> " << hwm_after;
  // Every attacking datagram was dropped and counted: refused unread, or cut off by the
  // per-client packet rate or the attacker's share of the match's inbox before that.
  double refused = grew("keel_drops_total{reason=\"block_refused\"}");
  double limited = grew("keel_drops_total{reason=\"rate_limited\"}") + grew("keel_drops_total{reason=\"inbox_full\"}");
  EXPECT_GT(refused, 0.5 * 300 * took) << "the packets under the 300/s rate reach the connection";
  EXPECT_GT(refused + limited, 0.8 * double(sent)) << refused << " refused, " << limited << " limited, of " << sent;
  EXPECT_EQ(grew("keel_drops_total{reason=\"block_invalid\"}"), 0);
  std::printf("block flood: %llu datagrams (%llu bomb fragments, %llu claims) in %.1f s; honest snapshots "
              "%.1f/s; healthz %llu/%llu ok; VmHWM %.1f -> %.1f MiB; refused %.0f, limited %.0f\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(bomb_fragments),
              static_cast<unsigned long long>(claims), took, snaps / took,
              static_cast<unsigned long long>(health_checks - health_bad),
              static_cast<unsigned long long>(health_checks), hwm_before / 1024, hwm_after / 1024, refused, limited);

  // A SIGTERM drains at once.
  double t0 = seconds_now();
  kill(pid, SIGTERM);
  auto status = wait_for_exit(pid, 5.0);
  killer.pid = 0;
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  EXPECT_LT(seconds_now() - t0, 2.0);
}

}  // namespace
}  // namespace keel::test
