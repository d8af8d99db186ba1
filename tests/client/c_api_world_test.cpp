// The C API's world description section before any scene: empty, version 0, every
// lookup NOT_FOUND, null handles and outputs refused with ARGUMENT (never a crash). Its
// behaviour with a live server is tested by running the draw-list example
// (world_description_e2e_test.cpp).
#include <keel/client/keel_client.h>

#include <gtest/gtest.h>

namespace {

TEST(CApiWorld, EmptyBeforeTheSceneAndNullsRefused) {
  keel_client_config config;
  keel_client_config_init(&config);
  config.server_address = "127.0.0.1:9";
  keel_client* c = nullptr;
  ASSERT_EQ(keel_client_create(&config, &c), KEEL_OK);
  EXPECT_EQ(keel_client_world_version(c), 0u);
  EXPECT_EQ(keel_client_body_count(c), 0u);
  keel_body_desc d{};
  keel_collider_desc col{};
  EXPECT_EQ(keel_client_body_at(c, 0, &d), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_find_body(c, 1, &d), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_body_collider(c, 1, 0, &col), KEEL_ERROR_NOT_FOUND);
  EXPECT_EQ(keel_client_body_at(c, 0, nullptr), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_find_body(c, 1, nullptr), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_body_collider(c, 1, 0, nullptr), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_world_version(nullptr), 0u);
  EXPECT_EQ(keel_client_body_count(nullptr), 0u);
  EXPECT_EQ(keel_client_body_at(nullptr, 0, &d), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_find_body(nullptr, 1, &d), KEEL_ERROR_ARGUMENT);
  EXPECT_EQ(keel_client_body_collider(nullptr, 1, 0, &col), KEEL_ERROR_ARGUMENT);
  // Connecting to nothing changes nothing: no scene, no bodies.
  ASSERT_EQ(keel_client_connect_dev(c, 7, 0, 0.0), KEEL_OK);
  for (int i = 0; i < 20; ++i) keel_client_update(c, 0.01 * i);
  EXPECT_EQ(keel_client_body_count(c), 0u);
  keel_client_destroy(c);
}

}  // namespace
