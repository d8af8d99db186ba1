// The handshake's cheap checks and its accept-once rule: the shape check a server runs
// before any rate allowance or cryptography, the fixed size of a ConnectionResponse, and
// a challenge that admits once however often its response is echoed.
#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>

#include <gtest/gtest.h>

namespace kp = keel::protocol;

namespace {

constexpr uint64_t kNow = 1'800'000'000;
const std::string kServer = "10.0.0.5:7777";
const std::string kClient = "192.0.2.7:40000";

struct Fixture {
  kp::TokenKey key = kp::generate_token_key();
  kp::ServerHandshake server{key, kServer};
  kp::ConnectToken mint(uint64_t client_id = 42) {
    kp::MintParams p;
    p.client_id = client_id;
    p.server_addresses = {kServer};
    p.ttl_seconds = 30;
    return *kp::mint_token(key, p, kNow);
  }
  // Request -> challenge -> response, as a client builds it.
  std::vector<uint8_t> response_for(const kp::ConnectToken& token) {
    std::vector<uint8_t> challenge, response;
    EXPECT_EQ(server.on_request(kp::build_connection_request(token), kClient, kNow, challenge), kp::DropReason::None);
    EXPECT_EQ(kp::answer_challenge(challenge, kp::client_keys(token), response), kp::DropReason::None);
    return response;
  }
};

}  // namespace

TEST(HandshakeOnce, EveryResponseHasTheFixedSizeFromTheFirstChallengeOn) {
  Fixture f;
  for (uint64_t id = 1; id <= 5; ++id) {
    auto response = f.response_for(f.mint(id));
    EXPECT_EQ(response.size(), kp::connection_response_bytes()) << "challenge " << id;
  }
  EXPECT_EQ(kp::connection_response_bytes(), 511u);
}

TEST(HandshakeOnce, TheShapeCheckRefusesWhatNeedsNoCryptographyToRefuse) {
  Fixture f;
  auto token = f.mint();
  auto request = kp::build_connection_request(token);
  auto response = f.response_for(token);
  EXPECT_EQ(kp::check_handshake_shape(request), kp::DropReason::None);
  EXPECT_EQ(kp::check_handshake_shape(response), kp::DropReason::None);
  // Short, long, wrong type, header only, garbage body.
  auto shorter = request;
  shorter.resize(kp::kMinRequestBytes - 1);
  EXPECT_EQ(kp::check_handshake_shape(shorter), kp::DropReason::TooSmall);
  auto header_only = request;
  header_only.resize(kp::kPacketHeaderBytes);
  EXPECT_EQ(kp::check_handshake_shape(header_only), kp::DropReason::TooSmall);
  auto longer = response;
  longer.push_back(0);
  EXPECT_EQ(kp::check_handshake_shape(longer), kp::DropReason::TooLarge);
  auto shorter_response = response;
  shorter_response.pop_back();
  EXPECT_EQ(kp::check_handshake_shape(shorter_response), kp::DropReason::TooSmall);
  std::vector<uint8_t> challenge;
  f.server.on_request(request, kClient, kNow, challenge);
  EXPECT_EQ(kp::check_handshake_shape(challenge), kp::DropReason::TypeNotAllowed);
  EXPECT_EQ(kp::check_handshake_shape(kp::build_deny(kp::fb::DenyReason::ServerFull, token.server_to_client_key)), kp::DropReason::TypeNotAllowed);
  auto garbage = request;
  for (size_t i = kp::kPacketHeaderBytes; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 7);
  EXPECT_NE(kp::check_handshake_shape(garbage), kp::DropReason::None);
  auto wrong_version = request;
  wrong_version[1] ^= 0xff;
  EXPECT_EQ(kp::check_handshake_shape(wrong_version), kp::DropReason::WrongProtocolId);
}

TEST(HandshakeOnce, AChallengeAdmitsOnceHoweverOftenItsResponseComes) {
  Fixture f;
  auto token = f.mint();
  auto response = f.response_for(token);
  kp::AcceptedClient out;
  EXPECT_EQ(f.server.on_response(response, kClient, kNow, out), kp::DropReason::None);
  EXPECT_EQ(f.server.accepted_challenges(), 1u);
  for (int i = 0; i < 3; ++i) {
    kp::AcceptedClient again;
    EXPECT_EQ(f.server.on_response(response, kClient, kNow + 1, again), kp::DropReason::ChallengeReused);
    EXPECT_EQ(again.client_id, 42u);  // filled in: the caller can tell its own session's resend
  }
  EXPECT_EQ(f.server.drops()[kp::DropReason::ChallengeReused], 3u);
  // The same token, handshaking again from the same address (a reconnect after a
  // goodbye), gets a new challenge, which admits once too.
  auto second = f.response_for(token);
  EXPECT_NE(second, response);
  EXPECT_EQ(f.server.on_response(second, kClient, kNow + 2, out), kp::DropReason::None);
  EXPECT_EQ(f.server.on_response(second, kClient, kNow + 2, out), kp::DropReason::ChallengeReused);
  // From another address the echo is invalid, not merely reused.
  EXPECT_EQ(f.server.on_response(response, "198.51.100.1:1", kNow + 2, out), kp::DropReason::ChallengeInvalid);
}
