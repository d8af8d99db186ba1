// Connect tokens and the handshake: a good token connects; expired, tampered, wrongly
// addressed, foreign-key and replayed-from-elsewhere tokens are refused; replies are
// never larger than requests; the keys that come out drive authenticated connections.
#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>

#include <gtest/gtest.h>

#include <filesystem>

namespace kp = keel::protocol;

namespace {

constexpr uint64_t kNow = 1'800'000'000;
const std::string kServer = "10.0.0.5:7777";

struct Fixture {
  kp::TokenKey key = kp::generate_token_key();
  kp::ServerHandshake server{key, kServer};

  kp::ConnectToken mint(uint64_t ttl = 30, std::vector<std::string> servers = {kServer},
                        kp::ClientRole role = kp::ClientRole::Player) {
    kp::MintParams p;
    p.role = role;
    p.client_id = 42;
    p.match_id = 9;
    p.server_addresses = std::move(servers);
    p.ttl_seconds = ttl;
    p.user_data[0] = 0xab;
    auto t = kp::mint_token(key, p, kNow);
    EXPECT_TRUE(t.has_value());
    return *t;
  }
};

}  // namespace

TEST(Token, Base64RoundTrip) {
  Fixture f;
  auto t = f.mint();
  auto text = kp::token_to_base64(t);
  auto back = kp::token_from_base64(text);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(kp::serialize_token(*back), kp::serialize_token(t));
  EXPECT_FALSE(kp::token_from_base64("not a token!").has_value());
  EXPECT_FALSE(kp::token_from_base64(text.substr(0, text.size() - 10)).has_value());
}

TEST(Token, KeyFileRoundTrip) {
  auto path = std::filesystem::temp_directory_path() / "keel_token_test.key";
  auto key = kp::generate_token_key();
  ASSERT_TRUE(kp::save_token_key(path.string(), key).has_value());
  auto back = kp::load_token_key(path.string());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, key);
  std::filesystem::remove(path);
  EXPECT_FALSE(kp::load_token_key(path.string()).has_value());
}

TEST(Handshake, GoodTokenConnectsAndKeysMatch) {
  Fixture f;
  auto token = f.mint();
  auto request = kp::build_connection_request(token);
  EXPECT_GE(request.size(), kp::kMinRequestBytes);
  std::vector<uint8_t> challenge;
  ASSERT_EQ(f.server.on_request(request, "1.2.3.4:5000", kNow, challenge), kp::DropReason::None);
  EXPECT_LT(challenge.size(), request.size());  // no amplification
  std::vector<uint8_t> response;
  ASSERT_EQ(kp::answer_challenge(challenge, kp::client_keys(token), response), kp::DropReason::None);
  kp::AcceptedClient client;
  ASSERT_EQ(f.server.on_response(response, "1.2.3.4:5000", kNow + 1, client),
            kp::DropReason::None);
  EXPECT_EQ(client.client_id, 42u);
  EXPECT_EQ(client.match_id, 9u);
  EXPECT_EQ(client.user_data[0], 0xab);
  EXPECT_EQ(client.keys.receive, token.client_to_server_key);
  EXPECT_EQ(client.keys.send, token.server_to_client_key);

  // The keys drive authenticated connections both ways.
  kp::Connection server_conn, client_conn;
  server_conn.set_keys(client.keys);
  client_conn.set_keys(kp::client_keys(token));
  std::vector<uint8_t> hello{1, 2, 3};
  client_conn.send(kp::Channel::Control, hello);
  for (auto& d : client_conn.update(0.0)) EXPECT_EQ(server_conn.receive(d, 0.0), kp::DropReason::None);
  EXPECT_EQ(server_conn.take(kp::Channel::Control), hello);
}

TEST(Handshake, ExpiredTokenIsRefused) {
  Fixture f;
  auto request = kp::build_connection_request(f.mint(30));
  std::vector<uint8_t> reply;
  EXPECT_EQ(f.server.on_request(request, "a:1", kNow + 30, reply), kp::DropReason::TokenExpired);
  EXPECT_TRUE(reply.empty());
}

TEST(Handshake, TokenForAnotherServerIsRefused) {
  Fixture f;
  auto request = kp::build_connection_request(f.mint(30, {"10.0.0.6:7777", "10.0.0.5:7778"}));
  std::vector<uint8_t> reply;
  EXPECT_EQ(f.server.on_request(request, "a:1", kNow, reply), kp::DropReason::TokenWrongAddress);
}

TEST(Handshake, AnAddressLearnedLaterIsAcceptedToo) {
  Fixture f;
  auto request = kp::build_connection_request(f.mint(30, {"198.51.100.20:7302"}));
  std::vector<uint8_t> reply;
  EXPECT_EQ(f.server.on_request(request, "a:1", kNow, reply), kp::DropReason::TokenWrongAddress);
  EXPECT_TRUE(f.server.accept_address("198.51.100.20:7302"));
  EXPECT_EQ(f.server.on_request(request, "a:1", kNow, reply), kp::DropReason::None);
  EXPECT_EQ(f.server.addresses(), (std::vector<std::string>{kServer, "198.51.100.20:7302"}));
  // The first address still works, empty ones are refused, and the list is bounded.
  auto first = kp::build_connection_request(f.mint(30, {kServer}));
  EXPECT_EQ(f.server.on_request(first, "b:1", kNow, reply), kp::DropReason::None);
  EXPECT_FALSE(f.server.accept_address(""));
  for (int i = 0; i < 20; ++i) f.server.accept_address("10.9.9." + std::to_string(i) + ":1");
  EXPECT_EQ(f.server.addresses().size(), kp::ServerHandshake::kMaxServerAddresses);
}

TEST(Handshake, AnEmptyAddressAcceptsNoTokenUntilOneIsLearned) {
  kp::TokenKey key = kp::generate_token_key();
  kp::ServerHandshake server(key, "");
  EXPECT_TRUE(server.addresses().empty());
  kp::MintParams p;
  p.server_addresses = {"0.0.0.0:7777"};
  p.ttl_seconds = 30;
  auto request = kp::build_connection_request(*kp::mint_token(key, p, kNow));
  std::vector<uint8_t> reply;
  EXPECT_EQ(server.on_request(request, "a:1", kNow, reply), kp::DropReason::TokenWrongAddress);
}

TEST(Handshake, TamperedOrForeignTokensAreRefused) {
  Fixture f;
  auto token = f.mint();
  std::vector<uint8_t> reply;
  for (size_t i : {0u, 100u, 1023u}) {
    auto t = token;
    t.private_data[i] ^= 1;
    EXPECT_EQ(f.server.on_request(kp::build_connection_request(t), "a:1", kNow, reply),
              kp::DropReason::TokenInvalid);
  }
  auto extended = token;
  extended.expire_time += 3600;  // the expiry is authenticated: cannot be extended
  EXPECT_EQ(f.server.on_request(kp::build_connection_request(extended), "a:1", kNow, reply),
            kp::DropReason::TokenInvalid);
  kp::ServerHandshake other(kp::generate_token_key(), kServer);
  EXPECT_EQ(other.on_request(kp::build_connection_request(token), "a:1", kNow, reply),
            kp::DropReason::TokenInvalid);
  EXPECT_EQ(f.server.drops()[kp::DropReason::TokenInvalid], 4u);
}

TEST(Handshake, TokenReplayedFromAnotherAddressIsRefused) {
  Fixture f;
  auto request = kp::build_connection_request(f.mint());
  std::vector<uint8_t> reply;
  ASSERT_EQ(f.server.on_request(request, "1.1.1.1:1", kNow, reply), kp::DropReason::None);
  // A resend from the same address (the challenge was lost) is answered again.
  EXPECT_EQ(f.server.on_request(request, "1.1.1.1:1", kNow, reply), kp::DropReason::None);
  EXPECT_EQ(f.server.on_request(request, "6.6.6.6:1", kNow, reply), kp::DropReason::TokenInUse);
}

TEST(Handshake, ChallengeMustComeBackFromTheSameAddress) {
  Fixture f;
  auto token = f.mint();
  auto request = kp::build_connection_request(token);
  std::vector<uint8_t> challenge, response;
  ASSERT_EQ(f.server.on_request(request, "1.1.1.1:1", kNow, challenge), kp::DropReason::None);
  ASSERT_EQ(kp::answer_challenge(challenge, kp::client_keys(token), response), kp::DropReason::None);
  kp::AcceptedClient c;
  EXPECT_EQ(f.server.on_response(response, "9.9.9.9:1", kNow, c), kp::DropReason::ChallengeInvalid);
  auto forged = response;
  forged[forged.size() - 3] ^= 0x10;
  EXPECT_EQ(f.server.on_response(forged, "1.1.1.1:1", kNow, c), kp::DropReason::ChallengeInvalid);
  EXPECT_EQ(f.server.on_response(response, "1.1.1.1:1", kNow + 3600, c), kp::DropReason::TokenExpired);
}

// The role the backend minted comes out of the handshake (inside the sealed challenge),
// and a token without one (the zero padding of tokens minted before roles) is a player's.
TEST(Handshake, TheTokensRoleComesThroughTheChallenge) {
  Fixture f;
  for (kp::ClientRole role : {kp::ClientRole::Player, kp::ClientRole::Spectator}) {
    auto token = f.mint(30, {kServer}, role);
    auto request = kp::build_connection_request(token);
    std::vector<uint8_t> challenge, response;
    ASSERT_EQ(f.server.on_request(request, "1.1.1.1:1", kNow, challenge), kp::DropReason::None);
    ASSERT_EQ(kp::answer_challenge(challenge, kp::client_keys(token), response), kp::DropReason::None);
    EXPECT_EQ(response.size(), kp::connection_response_bytes());
    kp::AcceptedClient c;
    ASSERT_EQ(f.server.on_response(response, "1.1.1.1:1", kNow, c), kp::DropReason::None);
    EXPECT_EQ(c.role, role);
    EXPECT_EQ(c.address, "1.1.1.1:1");
    EXPECT_EQ(c.user_data[0], 0xab);
  }
}

TEST(Token, TheRoleIsSealedInThePrivatePart) {
  Fixture f;
  auto t = f.mint(30, {kServer}, kp::ClientRole::Spectator);
  kp::PrivateToken priv;
  ASSERT_EQ(kp::open_private_token(f.key, t.private_data, t.nonce, t.expire_time, priv), kp::DropReason::None);
  EXPECT_EQ(priv.role, kp::ClientRole::Spectator);
  EXPECT_EQ(priv.client_id, 42u);
  auto player = f.mint();
  ASSERT_EQ(kp::open_private_token(f.key, player.private_data, player.nonce, player.expire_time, priv),
            kp::DropReason::None);
  EXPECT_EQ(priv.role, kp::ClientRole::Player);
}

TEST(Handshake, ShortOrGarbageRequestsAreDroppedSilently) {
  Fixture f;
  auto request = kp::build_connection_request(f.mint());
  std::vector<uint8_t> reply;
  EXPECT_EQ(f.server.on_request(std::span(request).first(kp::kMinRequestBytes - 1), "a:1", kNow, reply),
            kp::DropReason::TooSmall);
  auto garbage = request;
  for (size_t i = kp::kPacketHeaderBytes; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 7);
  EXPECT_NE(f.server.on_request(garbage, "a:1", kNow, reply), kp::DropReason::None);
  EXPECT_TRUE(reply.empty());
}

// The server's two handshake datagrams are sealed with the token's server-to-client key:
// the token's holder opens them; a key that is not the token's, a changed bit anywhere
// (header, nonce tail, length, sealed bytes) or a datagram cut short is refused; and a
// deny is small enough to send in reply to any response.
TEST(Handshake, TheServersDatagramsOpenOnlyWithTheTokensKey) {
  Fixture f;
  auto token = f.mint();
  std::vector<uint8_t> challenge;
  ASSERT_EQ(f.server.on_request(kp::build_connection_request(token), "1.1.1.1:1", kNow, challenge),
            kp::DropReason::None);
  auto deny = kp::build_deny(kp::fb::DenyReason::ServerFull, token.server_to_client_key);
  EXPECT_LT(deny.size(), 96u);
  EXPECT_LT(deny.size(), kp::connection_response_bytes());
  kp::ConnectionKeys keys = kp::client_keys(token);
  kp::fb::DenyReason reason{};
  ASSERT_EQ(kp::read_deny(deny, keys, reason), kp::DropReason::None);
  EXPECT_EQ(reason, kp::fb::DenyReason::ServerFull);
  std::vector<uint8_t> response;
  EXPECT_EQ(kp::read_deny(challenge, keys, reason), kp::DropReason::TypeNotAllowed);
  EXPECT_EQ(kp::answer_challenge(deny, keys, response), kp::DropReason::TypeNotAllowed);
  // Not readable as a plain handshake datagram either.
  kp::PacketType type{};
  const kp::fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  EXPECT_EQ(kp::read_handshake(deny, type, m, storage), kp::DropReason::TypeNotAllowed);
  // Another token's key.
  kp::ConnectionKeys other = kp::client_keys(f.mint(43));
  EXPECT_EQ(kp::read_deny(deny, other, reason), kp::DropReason::AuthFailed);
  EXPECT_EQ(kp::answer_challenge(challenge, other, response), kp::DropReason::AuthFailed);
  // Every single-bit change past the packet type, in both datagrams. (The type byte names
  // the nonce's domain: a changed type is refused by its header or its tag.)
  for (const auto* d : {&deny, &challenge}) {
    for (size_t i = 0; i < d->size(); ++i) {
      auto bad = *d;
      bad[i] ^= static_cast<uint8_t>(1u << (i % 8));
      const bool is_deny = d == &deny;
      kp::DropReason r = is_deny ? kp::read_deny(bad, keys, reason) : kp::answer_challenge(bad, keys, response);
      EXPECT_NE(r, kp::DropReason::None) << (is_deny ? "deny" : "challenge") << " byte " << i;
    }
    for (size_t n = 0; n < d->size(); ++n) {
      std::span<const uint8_t> cut(d->data(), n);
      EXPECT_NE(d == &deny ? kp::read_deny(cut, keys, reason) : kp::answer_challenge(cut, keys, response),
                kp::DropReason::None)
          << "cut to " << n;
    }
  }
  // Two denies of the same reason for the same token differ (a fresh nonce tail each).
  EXPECT_NE(deny, kp::build_deny(kp::fb::DenyReason::ServerFull, token.server_to_client_key));
}
