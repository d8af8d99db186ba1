// Players join while the server's port is flooded with handshake garbage from loopback:
// tiny datagrams with a valid header, full-size random bytes, and full-size datagrams
// with a valid header and a body that is not a handshake. All of it must be dropped
// before it spends the handshake rate allowance (loopback shares only the server-wide
// bucket, 2000/s, so a few thousand of these would otherwise lock every player out).
#include "server_fixture.h"

#include <keel/protocol/handshake.h>
#include <keel/protocol/packet.h>

#include <atomic>
#include <random>

namespace keel::test {
namespace {

namespace kp = keel::protocol;

std::vector<uint8_t> with_header(kp::PacketType type, size_t size, std::mt19937_64& rng) {
  std::vector<uint8_t> d(size);
  for (auto& b : d) b = static_cast<uint8_t>(rng());
  if (size >= kp::kPacketHeaderBytes) {
    kp::PacketHeader h;
    h.type = type;
    kp::write_header(h, std::span<uint8_t, kp::kPacketHeaderBytes>(d.data(), kp::kPacketHeaderBytes));
  }
  return d;
}

// Sends the mix from its own sockets (different ports) at about `per_second` datagrams
// a second until told to stop; counts what it sent.
struct Flood {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sent{0};
  std::thread thread;

  Flood(const std::string& server, double per_second) {
    thread = std::thread([this, server, per_second] {
      asio::io_context io;
      size_t colon = server.rfind(':');
      asio::ip::udp::endpoint to{asio::ip::make_address(server.substr(0, colon)),
                                 static_cast<uint16_t>(std::stoi(server.substr(colon + 1)))};
      std::vector<asio::ip::udp::socket> sockets;
      for (int i = 0; i < 8; ++i) {
        sockets.emplace_back(io, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        sockets.back().non_blocking(true);
      }
      std::mt19937_64 rng(7);
      std::vector<std::vector<uint8_t>> mix = {
          with_header(kp::PacketType::ConnectionRequest, kp::kPacketHeaderBytes, rng),
          with_header(kp::PacketType::ConnectionResponse, kp::kPacketHeaderBytes, rng),
          with_header(kp::PacketType::ConnectionRequest, 1200, rng),
          with_header(kp::PacketType::ConnectionResponse, kp::connection_response_bytes(), rng),
          with_header(kp::PacketType::ConnectionChallenge, 600, rng),
          with_header(kp::PacketType::kCount, 1200, rng),  // random bytes, full size
      };
      for (int i = 0; i < 5; ++i) mix.back()[i] = static_cast<uint8_t>(rng());
      double start = seconds_now();
      uint64_t n = 0;
      while (!stop.load()) {
        // Paced: in bursts of 100, each burst when the clock says it is due.
        if (double(n) > (seconds_now() - start) * per_second) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          continue;
        }
        for (int i = 0; i < 100; ++i, ++n) {
          asio::error_code ec;
          sockets[n % sockets.size()].send_to(asio::buffer(mix[n % mix.size()]), to, 0, ec);
        }
        sent.store(n);
      }
    });
  }
  ~Flood() {
    stop.store(true);
    thread.join();
  }
};

TEST(ServerHandshakeFlood, PlayersJoinWithinASecondWhileLoopbackIsFloodedWithGarbage) {
  RunningServer rs(test_options("handshake_flood"));
  auto before = rs.server->counters();
  std::vector<double> join_seconds;
  uint64_t flood_sent = 0;
  {
    Flood flood(rs.address, 40000);
    drive({}, 0.5);  // the flood is under way: far past the 4000 burst of the whole server
    ASSERT_GT(flood.sent.load(), 5000u);
    for (uint64_t id = 1; id <= 4; ++id) {
      auto c = rs.client(100 + id);
      double t0 = seconds_now();
      bool ok = drive({c.get()}, 3.0, [&] { return c->accepted(); });
      join_seconds.push_back(ok ? seconds_now() - t0 : 99.0);
    }
    flood_sent = flood.sent.load();
  }
  drive({}, 0.2);  // the last of the flood is read
  auto after = rs.server->counters();
  for (size_t i = 0; i < join_seconds.size(); ++i) EXPECT_LT(join_seconds[i], 1.0) << "client " << i;
  auto grew = [&](const char* reason) { return after.drop(reason) - before.drop(reason); };
  EXPECT_EQ(grew("handshake_rate_limited"), 0u);
  // Every kind was dropped and counted as what it is (the kernel may drop some when the
  // socket buffer is full; most arrive).
  uint64_t counted = grew("too_small") + grew("too_large") + grew("type_not_allowed") + grew("malformed_payload") +
                     grew("verifier_failed") + grew("wrong_protocol_id") + grew("unknown_packet_type");
  EXPECT_GT(counted, flood_sent / 2) << "of " << flood_sent << " sent";
  EXPECT_GT(grew("too_small"), flood_sent / 6);
  EXPECT_GT(grew("type_not_allowed"), flood_sent / 12);
  std::printf("flood: %llu datagrams sent, %llu counted as dropped; joins took %.3f %.3f %.3f %.3f s\n",
              static_cast<unsigned long long>(flood_sent), static_cast<unsigned long long>(counted),
              join_seconds[0], join_seconds[1], join_seconds[2], join_seconds[3]);
}

}  // namespace
}  // namespace keel::test
