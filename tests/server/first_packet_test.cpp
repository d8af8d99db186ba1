// The server's first packet to a client carries ConnectionAccept. If it is lost, the
// client's packets (sent before it has received anything: ack 0, no ack bits) must not
// count as acknowledging it, or the accept is never resent and the client never joins.
#include <keel/protocol/connection.h>

#include <gtest/gtest.h>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

TEST(ServerFirstPacket, LostFirstPacketIsResentDespiteAnEmptyAck) {
  kp::Connection server, client;
  kp::ConnectionKeys ks, kc;
  for (int i = 0; i < 32; ++i) {
    ks.send[i] = kc.receive[i] = uint8_t(i + 1);
    ks.receive[i] = kc.send[i] = uint8_t(2 * i + 3);
  }
  server.set_keys(ks);
  client.set_keys(kc);
  std::vector<uint8_t> accept = {1, 2, 3};
  ASSERT_TRUE(server.send(kp::Channel::Control, accept));
  auto lost = server.update(0.0);  // never delivered
  ASSERT_FALSE(lost.empty());
  // The client, having received nothing, sends its keep-alive.
  for (auto& d : client.update(0.05)) EXPECT_EQ(server.receive(d, 0.06), kp::DropReason::None);
  // The server must resend the message after its resend interval.
  std::optional<std::vector<uint8_t>> got;
  for (double t = 0.1; t < 1.0 && !got; t += 0.05) {
    for (auto& d : server.update(t)) client.receive(d, t);
    got = client.take(kp::Channel::Control);
    for (auto& d : client.update(t)) server.receive(d, t);
  }
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, accept);
}

}  // namespace
}  // namespace keel::test
