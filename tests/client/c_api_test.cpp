// The C API: argument checks, no exception across the boundary, and the C example
// (compiled as C99 with -pedantic) running.
#include <keel/client/keel_client.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
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

keel_client* create(const char* module, keel_result* rc = nullptr) {
  keel_client_config cfg;
  keel_client_config_init(&cfg);
  cfg.server_address = "127.0.0.1:9";
  cfg.mode = KEEL_MODE_PREDICT;
  cfg.game_module = module;
  keel_client* c = nullptr;
  keel_result r = keel_client_create(&cfg, &c);
  if (rc != nullptr) *rc = r;
  return c;
}

std::string pushball_module() { return std::string(KEEL_GAME_MODULE_DIR) + "/pushball.so"; }

TEST(CApi, AGameModuleThatDoesNotLoadIsRefused) {
  keel_result rc = KEEL_OK;
  EXPECT_EQ(create("/no/such/module.so", &rc), nullptr);
  EXPECT_EQ(rc, KEEL_ERROR_GAME);
  EXPECT_NE(std::string(keel_client_create_error()).find("/no/such/module.so"), std::string::npos)
      << keel_client_create_error();
  keel_client* ok = create(nullptr);
  ASSERT_NE(ok, nullptr);
  EXPECT_STREQ(keel_client_create_error(), "");  // a success clears it
  keel_client_destroy(ok);
}

TEST(CApi, TheSandboxLayoutAndItsSetters) {
  keel_client* c = create(nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(keel_client_input_field_count(c), 9u);  // walking 3, visiting 6
  keel_input_field f;
  ASSERT_EQ(keel_client_input_field(c, 0, &f), KEEL_OK);
  EXPECT_STREQ(f.name, "move");
  EXPECT_EQ(f.kind, static_cast<uint32_t>(KEEL_FIELD_STICK));
  EXPECT_EQ(f.components, 2u);
  EXPECT_EQ(f.min[1], -1.0);
  EXPECT_EQ(f.max[1], 1.0);
  ASSERT_EQ(keel_client_input_field(c, 2, &f), KEEL_OK);
  EXPECT_EQ(f.kind, static_cast<uint32_t>(KEEL_FIELD_BUTTONS));
  EXPECT_EQ(f.label_count, 2u);
  EXPECT_EQ(f.max[0], 3.0);
  EXPECT_STREQ(keel_client_input_label(c, 2, 1), "fire");
  EXPECT_EQ(keel_client_input_label(c, 2, 2), nullptr);
  ASSERT_EQ(keel_client_input_field(c, 3, &f), KEEL_OK);
  EXPECT_STREQ(f.name, "spawn");
  EXPECT_EQ(f.kind, static_cast<uint32_t>(KEEL_FIELD_ENUM));
  EXPECT_EQ(f.label_count, 4u);
  ASSERT_EQ(keel_client_input_field(c, 8, &f), KEEL_OK);
  EXPECT_STREQ(f.name, "spawn_seq");
  EXPECT_EQ(f.kind, static_cast<uint32_t>(KEEL_FIELD_INT));
  EXPECT_EQ(f.max[0], 255.0);
  EXPECT_EQ(keel_client_input_field(c, 9, &f), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_find_input_field(c, "look_yaw"), 1u);
  EXPECT_EQ(keel_client_find_input_field(c, "gravity"), 7u);
  EXPECT_EQ(keel_client_find_input_field(c, "nope"), 9u);
  EXPECT_EQ(keel_client_set_input(c, 0.0f, 1.0f, 0.5f, 1u), KEEL_OK);  // still the sandbox's
  EXPECT_EQ(keel_client_set_input_vector(c, 0, 0.0, 1.0, 0.0), KEEL_OK);
  EXPECT_EQ(keel_client_set_input_number(c, 1, 1.5), KEEL_OK);
  EXPECT_EQ(keel_client_set_input_buttons(c, 2, 2u), KEEL_OK);
  EXPECT_EQ(keel_client_event_type_count(c), 0u);
  EXPECT_EQ(keel_client_event_type_name(c, 0), nullptr);
  keel_game_event e;
  EXPECT_EQ(keel_client_poll_game_event(c, &e), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_poll_game_event(c, nullptr), KEEL_ERROR_ARGUMENT);
  keel_client_destroy(c);
}

TEST(CApi, AModulesLayoutItsEventsAndSettersThatRefuseAnotherKind) {
  keel_result rc = KEEL_OK;
  keel_client* c = create(pushball_module().c_str(), &rc);
  ASSERT_NE(c, nullptr) << rc;
  ASSERT_EQ(keel_client_input_field_count(c), 4u);
  const char* names[] = {"drive", "aim", "boost", "push"};
  const keel_field_kind kinds[] = {KEEL_FIELD_STICK, KEEL_FIELD_ANGLE, KEEL_FIELD_BOOL, KEEL_FIELD_BUTTONS};
  for (uint32_t i = 0; i < 4; ++i) {
    keel_input_field f;
    ASSERT_EQ(keel_client_input_field(c, i, &f), KEEL_OK);
    EXPECT_STREQ(f.name, names[i]);
    EXPECT_EQ(f.kind, static_cast<uint32_t>(kinds[i]));
    EXPECT_EQ(keel_client_find_input_field(c, names[i]), i);
  }
  EXPECT_STREQ(keel_client_input_label(c, 3, 0), "charge");
  // Each setter takes its kinds only; indices past the layout and non-finite numbers are refused.
  EXPECT_EQ(keel_client_set_input_vector(c, 0, 0.0, 1.0, 0.0), KEEL_OK);
  EXPECT_EQ(keel_client_set_input_number(c, 1, 0.25), KEEL_OK);
  EXPECT_EQ(keel_client_set_input_bool(c, 2, 1), KEEL_OK);
  EXPECT_EQ(keel_client_set_input_buttons(c, 3, 1u), KEEL_OK);
  EXPECT_EQ(keel_client_set_input_bool(c, 0, 1), KEEL_ERROR_KIND);
  EXPECT_EQ(keel_client_set_input_int(c, 1, 3), KEEL_ERROR_KIND);
  EXPECT_EQ(keel_client_set_input_number(c, 2, 1.0), KEEL_ERROR_KIND);
  EXPECT_EQ(keel_client_set_input_vector(c, 3, 1, 1, 1), KEEL_ERROR_KIND);
  EXPECT_EQ(keel_client_set_input_buttons(c, 0, 1u), KEEL_ERROR_KIND);
  EXPECT_NE(std::string(keel_client_last_error(c)).find("drive"), std::string::npos);
  EXPECT_EQ(keel_client_set_input_bool(c, 4, 1), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_set_input_number(c, 1, 0.0 / 0.0), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_set_input_vector(c, 0, 1e300, 0, 0), KEEL_OK);  // clamped into the disc
  EXPECT_EQ(keel_client_set_input(c, 0.0f, 1.0f, 0.0f, 0u), KEEL_ERROR_KIND);  // not the sandbox
  // Event types and their payloads.
  ASSERT_EQ(keel_client_event_type_count(c), 3u);
  EXPECT_STREQ(keel_client_event_type_name(c, 0), "goal");
  EXPECT_STREQ(keel_client_event_type_name(c, 1), "kickoff");
  EXPECT_STREQ(keel_client_event_type_name(c, 2), "round_over");
  ASSERT_EQ(keel_client_event_field_count(c, 0), 3u);
  keel_input_field f;
  ASSERT_EQ(keel_client_event_field(c, 0, 0, &f), KEEL_OK);
  EXPECT_STREQ(f.name, "team");
  EXPECT_EQ(f.kind, static_cast<uint32_t>(KEEL_FIELD_INT));
  EXPECT_EQ(f.min[0], 0.0);
  EXPECT_EQ(f.max[0], 1.0);
  EXPECT_EQ(keel_client_event_field(c, 0, 3, &f), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_event_field_count(c, 9), 0u);
  keel_client_destroy(c);
}

TEST(CApi, TheAbiVersionAndTheRelease) {
  EXPECT_EQ(keel_client_abi_version(), static_cast<uint32_t>(KEEL_CLIENT_ABI_VERSION));
  EXPECT_TRUE(KEEL_CLIENT_ABI_COMPATIBLE(keel_client_abi_version()));
  // Another major never is; a later minor is, an earlier one is not.
  EXPECT_FALSE(KEEL_CLIENT_ABI_COMPATIBLE((KEEL_CLIENT_ABI_VERSION_MAJOR + 1u) << 16));
  EXPECT_TRUE(KEEL_CLIENT_ABI_COMPATIBLE(static_cast<uint32_t>(KEEL_CLIENT_ABI_VERSION) + 1u));
  EXPECT_FALSE(KEEL_CLIENT_ABI_COMPATIBLE(static_cast<uint32_t>(KEEL_CLIENT_ABI_VERSION) - 1u));
  const std::string release = keel_client_version_string();
  EXPECT_EQ(std::count(release.begin(), release.end(), '.'), 2) << release;
}

TEST(CApi, LinkStatsFillWhatTheCallersStructHas) {
  keel_client* c = create(nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(keel_client_get_link_stats(nullptr, nullptr), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_get_link_stats(c, nullptr), KEEL_ERROR_ARGUMENT);
  EXPECT_NE(std::string(keel_client_last_error(c)), "");
  keel_client_link_stats st;
  keel_client_link_stats_init(&st);
  EXPECT_EQ(st.struct_size, sizeof st);
  st.struct_size = 4;  // smaller than the first version of the struct
  EXPECT_EQ(keel_client_get_link_stats(c, &st), KEEL_ERROR_ARGUMENT);
  EXPECT_NE(std::string(keel_client_last_error(c)).find("struct_size is 4"), std::string::npos)
      << keel_client_last_error(c);

  ASSERT_EQ(keel_client_connect_dev(c, 9, 1, 0.0), KEEL_OK);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(keel_client_update(c, i * 0.02), KEEL_OK);
  keel_client_link_stats_init(&st);
  ASSERT_EQ(keel_client_get_link_stats(c, &st), KEEL_OK);
  EXPECT_EQ(st.struct_size, sizeof st);
  EXPECT_EQ(st.state, static_cast<uint32_t>(KEEL_STATE_CONNECTING));
  keel_client_stats old_stats;
  ASSERT_EQ(keel_client_get_stats(c, &old_stats), KEEL_OK);
  EXPECT_EQ(st.bytes_sent, old_stats.bytes_sent);
  EXPECT_GT(st.bytes_sent, 0u);
  // Handshake packets went out for 0.6 s: a rate, and none received.
  EXPECT_GT(st.kbps_out, 0.0);
  EXPECT_EQ(st.kbps_in, 0.0);

  // A caller built against the first version of the struct: the library writes its
  // fields and not one byte past them.
  constexpr size_t kFirst = offsetof(keel_client_link_stats, hash_mismatches) + sizeof(uint64_t);
  unsigned char buffer[sizeof(keel_client_link_stats) + 16];
  std::memset(buffer, 0xab, sizeof buffer);
  auto* older = reinterpret_cast<keel_client_link_stats*>(buffer);
  older->struct_size = kFirst;
  ASSERT_EQ(keel_client_get_link_stats(c, older), KEEL_OK);
  EXPECT_EQ(older->struct_size, kFirst);
  EXPECT_EQ(older->bytes_sent, st.bytes_sent);
  for (size_t i = kFirst; i < sizeof buffer; ++i) ASSERT_EQ(buffer[i], 0xab) << "byte " << i;
  // A caller whose struct is larger than the library's gets the library's size back.
  std::memset(buffer, 0, sizeof buffer);
  older->struct_size = sizeof buffer;
  ASSERT_EQ(keel_client_get_link_stats(c, older), KEEL_OK);
  EXPECT_EQ(older->struct_size, sizeof(keel_client_link_stats));
  keel_client_destroy(c);
}

TEST(CApi, PlayerEventsArePolledWithCodes) {
  keel_client* c = create(nullptr);
  ASSERT_NE(c, nullptr);
  keel_player_event e;
  EXPECT_EQ(keel_client_poll_player_event(nullptr, &e), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_poll_player_event(c, nullptr), KEEL_ERROR_ARGUMENT);
  EXPECT_NE(std::string(keel_client_last_error(c)), "");
  EXPECT_EQ(keel_client_poll_player_event(c, &e), KEEL_ERROR_NOT_FOUND);  // none yet
  EXPECT_STREQ(keel_client_last_error(c), "");  // not an error: nothing to report
  keel_client_destroy(c);
}

TEST(CApi, TheCExampleRuns) {
  std::string exe = std::string(KEEL_BINARY_DIR) + "/bin/keel-client-c-example";
  ASSERT_TRUE(std::filesystem::exists(exe)) << exe;
  EXPECT_EQ(std::system((exe + " > /dev/null").c_str()), 0);
}

}  // namespace
