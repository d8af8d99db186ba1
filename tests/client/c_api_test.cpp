// The C API: argument checks, no exception across the boundary, and the C example
// (compiled as C99 with -pedantic) running.
#include <keel/client/keel_client.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

TEST(CApi, RefusesBadArgumentsWithCodes) {
  keel_client* c = reinterpret_cast<keel_client*>(0x1);
  EXPECT_EQ(keel_client_create(nullptr, &c), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  keel_client_config cfg;
  keel_client_config_init(&cfg);
  EXPECT_EQ(keel_client_create(&cfg, &c), KEEL_ERROR_ARGUMENT);  // no address
  cfg.server_address = "no-port";
  EXPECT_EQ(keel_client_create(&cfg, &c), KEEL_ERROR_ADDRESS);
  cfg.server_address = "127.0.0.1:70000";
  EXPECT_EQ(keel_client_create(&cfg, &c), KEEL_ERROR_ADDRESS);
  cfg.server_address = "127.0.0.1:9";
  cfg.mode = static_cast<keel_mode>(7);
  EXPECT_EQ(keel_client_create(&cfg, &c), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_update(nullptr, 0), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_state(nullptr), KEEL_STATE_DISCONNECTED);
  EXPECT_STREQ(keel_client_last_error(nullptr), "");
  keel_client_destroy(nullptr);
}

TEST(CApi, ConnectsToNothingQuietly) {
  keel_client_config cfg;
  keel_client_config_init(&cfg);
  cfg.server_address = "127.0.0.1:9";
  cfg.mode = KEEL_MODE_PREDICT;
  keel_link_config link{10, 5, 0.1, 0, 0, 1};
  cfg.link = &link;
  keel_client* c = nullptr;
  ASSERT_EQ(keel_client_create(&cfg, &c), KEEL_OK);
  EXPECT_EQ(keel_client_connect(c, "@@@", 0), KEEL_ERROR_TOKEN);
  EXPECT_NE(std::string(keel_client_last_error(c)), "");
  EXPECT_EQ(keel_client_connect(c, nullptr, 0), KEEL_ERROR_ARGUMENT);
  ASSERT_EQ(keel_client_connect_dev(c, 7, 1, 0.0), KEEL_OK);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(keel_client_update(c, i * 0.01), KEEL_OK);
  EXPECT_EQ(keel_client_state(c), KEEL_STATE_CONNECTING);
  keel_pose pose;
  EXPECT_EQ(keel_client_pose(c, 2, 0.2, &pose), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_set_input(c, 1e30f, -1e30f, 0.0f / 0.0f, 0xffffffffu), KEEL_OK);
  keel_client_stats st;
  ASSERT_EQ(keel_client_get_stats(c, &st), KEEL_OK);
  EXPECT_EQ(st.state, static_cast<uint32_t>(KEEL_STATE_CONNECTING));
  EXPECT_GT(st.bytes_sent, 0u);  // handshake requests went out
  EXPECT_EQ(keel_client_disconnect(c, 0.3), KEEL_OK);
  EXPECT_EQ(keel_client_state(c), KEEL_STATE_DISCONNECTED);
  keel_client_destroy(c);
}

TEST(CApi, TheCExampleRuns) {
  std::string exe = std::string(KEEL_BINARY_DIR) + "/bin/keel-client-c-example";
  ASSERT_TRUE(std::filesystem::exists(exe)) << exe;
  EXPECT_EQ(std::system((exe + " > /dev/null").c_str()), 0);
}

}  // namespace
