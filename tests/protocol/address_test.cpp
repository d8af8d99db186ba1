// The one host:port parser (keel/protocol/address.h): what keel-server binds, what tokens
// name and what the client dials are read by the same rules.
#include <keel/protocol/address.h>
#include <keel/protocol/token.h>

#include <gtest/gtest.h>

namespace kp = keel::protocol;

TEST(Address, AcceptsHostPortAndBracketedIpv6) {
  auto a = kp::parse_host_port("127.0.0.1:7777");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 7777);
  EXPECT_FALSE(a->bracketed);
  auto b = kp::parse_host_port("[::1]:0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 0);
  EXPECT_TRUE(b->bracketed);
  auto c = kp::parse_host_port("game.example:65535");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "game.example");
  EXPECT_EQ(c->port, 65535);
}

TEST(Address, RefusesAmbiguousAndMalformedTexts) {
  for (const char* bad : {"", ":7777", "host:", "host", "::1:7777", "[::1]7777", "[::1]:", "[::1:7777",
                          "host:77a", "host:65536", "host:+80", "host:-1", "host: 80", "host:0000080",
                          "[]:80", "a[b]:80", "[a]b]:80", "host:80:81"}) {
    EXPECT_FALSE(kp::parse_host_port(bad)) << bad;
  }
}

TEST(Address, FormatsWhatItParses) {
  EXPECT_EQ(kp::format_host_port("::1", 9), "[::1]:9");
  EXPECT_EQ(kp::format_host_port("10.0.0.1", 7777), "10.0.0.1:7777");
  for (const char* text : {"[::1]:9", "10.0.0.1:7777", "[fe80::1]:65535"}) {
    auto hp = kp::parse_host_port(text);
    ASSERT_TRUE(hp) << text;
    EXPECT_EQ(kp::format_host_port(hp->host, hp->port), text);
  }
}

TEST(Address, TokensNameOnlyAddressesTheParserReads) {
  const kp::TokenKey key = kp::development_token_key();
  kp::MintParams p;
  p.client_id = 1;
  p.match_id = 1;
  p.server_addresses = {"::1:7777"};  // unbracketed IPv6: no server answers to it
  EXPECT_FALSE(kp::mint_token(key, p, 1000));
  p.server_addresses = {"127.0.0.1:0"};  // no one can be reached at port 0
  EXPECT_FALSE(kp::mint_token(key, p, 1000));
  p.server_addresses = {"[::1]:7777", "127.0.0.1:7777"};
  EXPECT_TRUE(kp::mint_token(key, p, 1000));
}
