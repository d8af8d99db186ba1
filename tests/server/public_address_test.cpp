// --public-address: the address connect tokens name when it is not the one the server is
// bound to (behind NAT, a load balancer, or bound to 0.0.0.0). A token naming it is
// admitted; a token naming anything else, the bind address included, is refused.
#include "server_fixture.h"

#include <keel/protocol/token.h>

#include <gtest/gtest.h>

#include <cstdlib>

namespace keel::server {
namespace {

std::unique_ptr<test::TestClient> client_naming(test::RunningServer& rs, const std::string& send_to,
                                                uint64_t id, const std::string& named,
                                                const protocol::TokenKey& key) {
  test::TestClientOptions o;
  o.server = send_to;
  o.client_id = id;
  o.key = key;
  o.token_addresses = {named};
  auto c = std::make_unique<test::TestClient>(rs.io, o);
  c->start(test::seconds_now());
  return c;
}

/// Admits a client whose token names `public_address`, refuses one naming `other`.
void expect_only_public_address_admitted(test::RunningServer& rs, const std::string& send_to,
                                         const std::string& public_address,
                                         const std::string& other, const protocol::TokenKey& key) {
  auto before = rs.server->counters();
  auto good = client_naming(rs, send_to, 1, public_address, key);
  ASSERT_TRUE(test::drive({good.get()}, 5.0, [&] { return good->playing(); }));
  auto bad = client_naming(rs, send_to, 2, other, key);
  test::drive({good.get(), bad.get()}, 1.0);
  EXPECT_FALSE(bad->accepted());
  EXPECT_GE(rs.server->counters().drop("token_wrong_address") - before.drop("token_wrong_address"), 1u);
  EXPECT_EQ(rs.server->counters().players, 1u);
}

TEST(ServerPublicAddress, TokensNameTheAdvertisedAddressNotTheBoundOne) {
  auto options = test::test_options("public-address-loopback");
  options.public_address = {"203.0.113.7:7777"};
  test::RunningServer rs(options);
  EXPECT_EQ(rs.server->token_addresses(), std::vector<std::string>{"203.0.113.7:7777"});
  // rs.address is the bound 127.0.0.1:port: with --public-address it is not accepted.
  expect_only_public_address_admitted(rs, rs.address, "203.0.113.7:7777", rs.address,
                                      protocol::development_token_key());
  auto other = client_naming(rs, rs.address, 3, "203.0.113.8:7777", protocol::development_token_key());
  test::drive({other.get()}, 0.5);
  EXPECT_FALSE(other->accepted());
}

TEST(ServerPublicAddress, BoundToTheUnspecifiedAddress) {
  auto options = test::test_options("public-address-any");
  options.bind = {"0.0.0.0:0"};
  options.public_address = {"198.51.100.7:7777"};
  options.token_key_path = options.record_dir + "/token.key";
  auto key = protocol::generate_token_key();
  ASSERT_TRUE(protocol::save_token_key(options.token_key_path, key));
  test::RunningServer rs(options);
  std::string loopback = "127.0.0.1" + rs.address.substr(rs.address.rfind(':'));
  expect_only_public_address_admitted(rs, loopback, "198.51.100.7:7777", rs.address, key);
}

TEST(ServerPublicAddress, UnspecifiedBindWithoutAPublicAddressIsRefused) {
  unsetenv("AGONES_SDK_HTTP_PORT");
  auto options = test::test_options("public-address-missing");
  options.bind = {"0.0.0.0:0"};
  options.token_key_path = options.record_dir + "/token.key";
  ASSERT_TRUE(protocol::save_token_key(options.token_key_path, protocol::generate_token_key()));
  auto s = Server::create(options);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--public-address"), std::string::npos) << s.error().message;
  options.agones = true;  // under Agones the GameServer's address is learned later
  EXPECT_TRUE(Server::create(options));
}

}  // namespace
}  // namespace keel::server
