// Handshakes against a real server: a challenge admits once (a replayed response after
// the client left admits no ghost), a session that has not proven itself gets no more
// bytes than it sent, and a client reconnecting from its own address is accepted at once,
// replacing its old session.
#include "server_fixture.h"

#include <keel/protocol/handshake.h>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

asio::ip::udp::endpoint endpoint_of(const std::string& address) {
  size_t colon = address.rfind(':');
  return {asio::ip::make_address(address.substr(0, colon)),
          static_cast<uint16_t>(std::stoi(address.substr(colon + 1)))};
}

std::vector<uint8_t> response_sent_by(const TestClient& c) {
  for (const auto& d : c.sent()) {
    if (d[0] == static_cast<uint8_t>(kp::PacketType::ConnectionResponse)) return d;
  }
  return {};
}

// A non-blocking UDP socket on 127.0.0.1 for playing the client's side by hand.
asio::ip::udp::socket loopback_socket(asio::io_context& io) {
  asio::ip::udp::socket s(io);
  s.open(asio::ip::udp::v4());
  s.bind({asio::ip::make_address("127.0.0.1"), 0});
  s.non_blocking(true);
  return s;
}

// Bytes waiting on a socket, read for `seconds`.
uint64_t drain(asio::ip::udp::socket& s, double seconds, uint64_t* datagrams = nullptr) {
  std::vector<uint8_t> buf(65536);
  uint64_t total = 0;
  double end = seconds_now() + seconds;
  while (seconds_now() < end) {
    asio::ip::udp::endpoint from;
    asio::error_code ec;
    size_t n = s.receive_from(asio::buffer(buf), from, 0, ec);
    if (ec) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    total += n;
    if (datagrams) ++*datagrams;
  }
  return total;
}

TEST(ServerReconnect, AReplayedResponseAfterTheClientLeftAdmitsNoGhost) {
  RunningServer rs(test_options("replayed_response"));
  auto c = rs.client(21);
  ASSERT_TRUE(drive({c.get()}, 5.0, [&] { return c->playing(); }));
  auto response = response_sent_by(*c);
  ASSERT_EQ(response.size(), kp::connection_response_bytes());
  c->disconnect(seconds_now());
  ASSERT_TRUE(drive({}, 2.0, [&] { return rs.server->counters().players == 0; }));
  auto before = rs.server->counters();
  const std::string joins_before = rs.server->metrics_text();

  // The same 511-byte response, from the client's own address, three times.
  for (int i = 0; i < 3; ++i) c->send_raw(response);
  uint64_t datagrams = 0;
  uint64_t answered = drain(c->socket(), 1.0, &datagrams);
  auto after = rs.server->counters();
  EXPECT_EQ(after.players, 0u);
  EXPECT_EQ(answered, 0u) << datagrams << " datagrams in answer to a replay";
  EXPECT_EQ(after.drop("challenge_reused") - before.drop("challenge_reused"), 3u);
  EXPECT_EQ(rs.server->metrics_text().find("keel_connections_total 2"), std::string::npos);
  rs.server->request_stop();
  rs.server->wait();
  // The recording has the one real session's join and leave, nothing after.
  auto result = verify_recording(rs.server->recordings().at(0));
  EXPECT_TRUE(result.error.empty() && !result.diverged_at);
}

TEST(ServerReconnect, AnUnprovenSessionIsSentNoMoreBytesThanItSent) {
  RunningServer rs(test_options("unproven"));
  asio::ip::udp::socket s = loopback_socket(rs.io);
  TestClientOptions o;
  o.server = rs.address;
  o.client_id = 31;
  auto token = mint_test_token(o);
  auto request = kp::build_connection_request(token);
  auto server = endpoint_of(rs.address);
  s.send_to(asio::buffer(request), server);
  // The challenge, then one response; after that the "client" (a spoofer who replayed
  // a response would look the same) never sends an authenticated packet.
  std::vector<uint8_t> buf(2048), response;
  double end = seconds_now() + 2.0;
  while (response.empty() && seconds_now() < end) {
    asio::ip::udp::endpoint from;
    asio::error_code ec;
    size_t n = s.receive_from(asio::buffer(buf), from, 0, ec);
    if (ec) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    EXPECT_LE(n, request.size());
    ASSERT_EQ(kp::answer_challenge({buf.data(), n}, kp::client_keys(token), response), kp::DropReason::None);
  }
  ASSERT_FALSE(response.empty());
  auto before = rs.server->counters();
  s.send_to(asio::buffer(response), server);
  // The session exists (a player) and would resend its ConnectionAccept and keep-alives
  // for the whole 10 s time-out; 2 s of it is ~30 datagrams, ~2.5 KB, when unbounded.
  uint64_t datagrams = 0;
  uint64_t got = drain(s, 2.0, &datagrams);
  EXPECT_EQ(rs.server->counters().players, 1u);
  EXPECT_GT(got, 0u) << "the ConnectionAccept should go out";
  EXPECT_LE(got, response.size()) << datagrams << " datagrams";
  uint64_t withheld = rs.server->counters().drop("send_withheld") - before.drop("send_withheld");
  EXPECT_GT(withheld, 5u);
  std::printf("unproven session: request %zu B -> challenge; response %zu B -> %llu B in %llu datagrams "
              "over 2 s, %llu withheld\n",
              request.size(), response.size(), static_cast<unsigned long long>(got),
              static_cast<unsigned long long>(datagrams), static_cast<unsigned long long>(withheld));
}

// How a playing client goes away before it comes back from the same port.
enum class Departure { CleanDisconnect, CrashKeepingItsToken, CrashWithANewToken };

// Player `id` plays, leaves as `how` says, and a new client starts on its port. The new
// one must be playing within 2 s (well inside the 10 s time-out the old session would
// otherwise hold the address for), be the match's only player, and stay connected.
std::unique_ptr<TestClient> rejoin_from_the_same_port(RunningServer& rs, uint64_t id, Departure how) {
  auto first = rs.client(id);
  EXPECT_TRUE(drive({first.get()}, 5.0, [&] { return first->playing(); }));
  if (how == Departure::CleanDisconnect) first->disconnect(seconds_now());
  TestClientOptions o;
  o.server = rs.address;
  o.client_id = id;
  o.local_port = first->local_port();
  if (how != Departure::CrashWithANewToken) o.token = first->token();
  first.reset();  // frees the port
  auto again = std::make_unique<TestClient>(rs.io, o);
  const double t0 = seconds_now();
  again->start(t0);
  EXPECT_TRUE(drive({again.get()}, 5.0, [&] { return again->playing(); }));
  EXPECT_LT(seconds_now() - t0, 2.0);
  EXPECT_TRUE(drive({again.get()}, 2.0, [&] { return again->snapshots() > 10; }));
  EXPECT_EQ(rs.server->counters().players, 1u);
  EXPECT_FALSE(again->disconnected()) << "told " << protocol::fb::EnumNameDenyReason(again->disconnect_reason());
  return again;
}

TEST(ServerReconnect, SameTokenAfterACleanDisconnectIsAcceptedFromTheSameAddress) {
  RunningServer rs(test_options("reconnect_same_token"));
  rejoin_from_the_same_port(rs, 41, Departure::CleanDisconnect);
}

TEST(ServerReconnect, ARestartedClientWithANewTokenReplacesItsOldSessionAtOnce) {
  RunningServer rs(test_options("reconnect_restart"));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    auto again = rejoin_from_the_same_port(rs, 51, Departure::CrashWithANewToken);
    again->disconnect(seconds_now());
    ASSERT_TRUE(drive({}, 2.0, [&] { return rs.server->counters().players == 0; }));
  }
}

TEST(ServerReconnect, ARestartedClientWithTheSameTokenReplacesItsOldSessionAtOnce) {
  // The client dies without a goodbye and starts over on the same port with the token it
  // still holds: its new request gets a challenge issued after the old session was
  // accepted, so the answer replaces that session instead of being taken for a resend.
  RunningServer rs(test_options("reconnect_same_token_restart"));
  rejoin_from_the_same_port(rs, 71, Departure::CrashKeepingItsToken);
}

TEST(ServerReconnect, TwoChallengesAnsweredForOneTokenAdmitOneSession) {
  // A client on a slow link resends its request before the challenge comes back, gets
  // two challenges and answers both: one session, one join.
  RunningServer rs(test_options("two_challenges"));
  asio::ip::udp::socket s = loopback_socket(rs.io);
  TestClientOptions o;
  o.server = rs.address;
  o.client_id = 61;
  auto token = mint_test_token(o);
  auto request = kp::build_connection_request(token);
  auto server = endpoint_of(rs.address);
  s.send_to(asio::buffer(request), server);
  s.send_to(asio::buffer(request), server);
  std::vector<std::vector<uint8_t>> responses;
  std::vector<uint8_t> buf(2048);
  double end = seconds_now() + 2.0;
  while (responses.size() < 2 && seconds_now() < end) {
    asio::ip::udp::endpoint from;
    asio::error_code ec;
    size_t n = s.receive_from(asio::buffer(buf), from, 0, ec);
    if (ec) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    std::vector<uint8_t> r;
    if (kp::answer_challenge({buf.data(), n}, kp::client_keys(token), r) == kp::DropReason::None) responses.push_back(r);
  }
  ASSERT_EQ(responses.size(), 2u);
  ASSERT_NE(responses[0], responses[1]);  // two challenges, each accepted once
  for (const auto& r : responses) s.send_to(asio::buffer(r), server);
  drive({}, 0.5);
  EXPECT_EQ(rs.server->counters().players, 1u);
  EXPECT_NE(rs.server->metrics_text().find("\nkeel_connections_total 1\n"), std::string::npos);
}

}  // namespace
}  // namespace keel::test
