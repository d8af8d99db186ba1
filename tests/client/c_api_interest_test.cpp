// The C API's interest and view calls against a real keel-server over loopback UDP: a
// client that caps its snapshot budget with keel_client_set_max_kbps receives about that
// much while an uncapped one receives the server's budget; bodies flying out of the
// server's --interest-radius are counted as having left the client's interest; and
// keel_client_render_tick runs a little behind the server's tick at the tick rate.
#include <keel/client/keel_client.h>

#include "server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace keel::client {
namespace {

using test::now_s;

// No gravity, a ground slab for the character, spawn point at the origin. 196 spheres
// spin in place 3 m up (a 14 x 14 grid 0.5 m apart, all within 5.5 m of the origin):
// always moving, more than a 256 kbit/s budget can carry at 30 snapshots a second. Four
// more fly off along x at 6 m/s from 6.1 m away, so they leave an 8 m interest radius
// within about a second and a half.
std::string scene_json() {
  std::ostringstream s;
  s << R"({"name": "interest_c_api", "tick_rate": 60, "gravity": {"x": 0, "y": 0, "z": 0}, "bodies": [)"
    << R"({"id": 1, "motion": "Static", "position": {"x": 0, "y": -0.5, "z": 0}, "colliders": [{"shape": "Box", )"
    << R"("half_extents": {"x": 50, "y": 0.5, "z": 50}}]})";
  uint32_t id = 2;
  auto sphere = [&](double x, double y, double z, double vx, double wy) {
    s << R"(, {"id": )" << id++ << R"(, "motion": "Dynamic", "can_sleep": false, "position": {"x": )" << x
      << R"(, "y": )" << y << R"(, "z": )" << z << R"(}, "linear_velocity": {"x": )" << vx
      << R"(, "y": 0, "z": 0}, "angular_velocity": {"x": 0, "y": )" << wy
      << R"(, "z": 0}, "colliders": [{"shape": "Sphere", "radius": 0.2, "density": 1000}]})";
  };
  for (int i = 0; i < 14; ++i) {
    for (int k = 0; k < 14; ++k) sphere(-3.25 + 0.5 * i, 3.0, -3.25 + 0.5 * k, 0.0, 2.0 + 0.1 * k);
  }
  for (double z : {-1.5, 1.5}) {
    sphere(1.0, 6.0, z, 6.0, 0.0);
    sphere(-1.0, 6.0, z, -6.0, 0.0);
  }
  s << R"(], "spawn_points": [{"position": {"x": 0, "y": 0, "z": 0}, "rotation": {"x": 0, "y": 0, "z": 0, "w": 1}}]})";
  return s.str();
}

keel_client* udp_client(const std::string& address) {
  keel_client_config config;
  keel_client_config_init(&config);
  config.server_address = address.c_str();
  config.auto_reconnect = 0;
  keel_client* c = nullptr;
  EXPECT_EQ(keel_client_create(&config, &c), KEEL_OK) << keel_client_create_error();
  return c;
}

keel_client_link_stats link_stats(keel_client* c) {
  keel_client_link_stats st;
  keel_client_link_stats_init(&st);
  EXPECT_EQ(keel_client_get_link_stats(c, &st), KEEL_OK);
  return st;
}

void update_for(const std::vector<keel_client*>& clients, double seconds) {
  const double end = now_s() + seconds;
  while (now_s() < end) {
    for (keel_client* c : clients) keel_client_update(c, now_s());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(CApiInterest, TheKbpsCapTheLeavingBodiesAndTheRenderTick) {
  const std::string dir = std::string(KEEL_BINARY_DIR) + "/test-client-output/c_api_interest";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/scene.json") << scene_json();
  test::ServerProcess server({"--scene", dir + "/scene.json", "--interest-radius", "8", "--client-kbps", "256"},
                             dir + "/server.log");
  ASSERT_GT(server.pid, 0);

  keel_client* full = udp_client(server.udp);
  keel_client* capped = udp_client(server.udp);
  ASSERT_TRUE(full && capped);
  EXPECT_EQ(keel_client_set_max_kbps(capped, 8), KEEL_ERROR_ARGUMENT);  // below a few bodies
  EXPECT_EQ(keel_client_set_max_kbps(nullptr, 32), KEEL_ERROR_ARGUMENT);
  ASSERT_EQ(keel_client_set_max_kbps(capped, 32), KEEL_OK);
  EXPECT_EQ(link_stats(capped).max_kbps, 32u);
  EXPECT_EQ(keel_client_render_tick(full, now_s()), 0.0);  // not accepted yet
  EXPECT_EQ(keel_client_render_tick(nullptr, now_s()), 0.0);
  ASSERT_EQ(keel_client_connect_dev(full, 11, 0, now_s()), KEEL_OK);
  ASSERT_EQ(keel_client_connect_dev(capped, 12, 0, now_s()), KEEL_OK);
  const double deadline = now_s() + 8.0;
  while (now_s() < deadline &&
         (keel_client_state(full) != KEEL_STATE_PLAYING || keel_client_state(capped) != KEEL_STATE_PLAYING)) {
    update_for({full, capped}, 0.01);
  }
  ASSERT_EQ(keel_client_state(full), KEEL_STATE_PLAYING) << test::read_log(server.log);
  ASSERT_EQ(keel_client_state(capped), KEEL_STATE_PLAYING);

  // The render tick: behind the server's tick by the interpolation delay (3 snapshot
  // intervals = 6 ticks) and half the round trip, never ahead of it, moving at 60 ticks/s.
  update_for({full, capped}, 1.0);
  const double t0 = now_s();
  const double view0 = keel_client_render_tick(full, t0);
  keel_client_stats st{};
  ASSERT_EQ(keel_client_get_stats(full, &st), KEEL_OK);
  EXPECT_LT(view0, st.server_tick);
  EXPECT_GT(view0, st.server_tick - 20.0) << "server tick " << st.server_tick;
  update_for({full, capped}, 2.0);
  const double t1 = now_s();
  const double view1 = keel_client_render_tick(full, t1);
  EXPECT_NEAR((view1 - view0) / (t1 - t0), 60.0, 6.0);

  // Both have played 3 s: the fliers (6.1 m out at 6 m/s) are past 8 m since ~1.5 s.
  const keel_client_link_stats a = link_stats(full), b = link_stats(capped);
  std::printf("kbit/s in: uncapped %.1f, capped at 32: %.1f; interest left %llu and %llu; snapshots %llu and %llu\n",
              a.kbps_in, b.kbps_in, (unsigned long long)a.interest_left, (unsigned long long)b.interest_left,
              (unsigned long long)a.snapshots_received, (unsigned long long)b.snapshots_received);
  EXPECT_EQ(a.max_kbps, 0u);
  // The budget counts IPv4/UDP headers, which kbps_in (payload) does not: at most the cap.
  EXPECT_LE(b.kbps_in, 32.0 * 1.1);
  EXPECT_GT(b.kbps_in, 32.0 * 0.5);
  EXPECT_LE(a.kbps_in, 256.0 * 1.1);
  EXPECT_GT(a.kbps_in, 256.0 * 0.5);
  EXPECT_GT(a.kbps_in, 4.0 * b.kbps_in);
  // Only the four fliers leave; the capped client may never have been sent some of them
  // before they left (a body never sent cannot leave), the uncapped one was sent all.
  EXPECT_EQ(a.interest_left, 4u);
  EXPECT_LE(b.interest_left, 4u);
  EXPECT_GT(a.snapshots_received, 60u);
  EXPECT_GT(b.snapshots_received, 0u);
  keel_client_destroy(full);
  keel_client_destroy(capped);
}

}  // namespace
}  // namespace keel::client
