// libFuzzer: the client SDK's receive path (client.cpp: datagrams, the session state
// machine, blocks, snapshots, frames, prediction) with the harness as the server. The
// client connects with a real token through a real ServerHandshake, so the harness holds
// the session keys: fuzzed messages are sealed by a real protocol::Connection and reach
// past authentication into the client's message handling, while the client's own
// packets (acknowledgements, inputs, hash reports) go back to that connection. Raw
// datagrams (unauthenticated, forged handshake packets) and time steps are mixed in.
//
// Input: [mode:u8] then ops, each [op:u8] and its operands:
//   op%6 == 0..2  a message on Control / Snapshot / Frames: [len:u16 LE][message bytes]
//   op%6 == 3     a large block (scene, checkpoint):        [len:u16 LE][block bytes]
//   op%6 == 4     a raw datagram to the client:             [len:u16 LE][datagram bytes]
//   op%6 == 5     a time step:                               [n:u8]: 4 ms x (n + 1)
// Each op is followed by one exchange: the server connection's datagrams to the client,
// the client's update, the client's datagrams back.
#include "fuzz_input.h"
#include <keel/client/client.h>
#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <memory>
#include <vector>

namespace kc = keel::client;
namespace kp = keel::protocol;

namespace {

constexpr char kServer[] = "127.0.0.1:7777";

class FuzzTransport : public kc::Transport {
 public:
  std::deque<std::vector<uint8_t>> to_client;
  std::vector<std::vector<uint8_t>> from_client;

  void send(std::span<const uint8_t> d, double) override { from_client.emplace_back(d.begin(), d.end()); }
  void receive(std::vector<std::vector<uint8_t>>& out, double, size_t max) override {
    while (!to_client.empty() && out.size() < max) {
      out.push_back(std::move(to_client.front()));
      to_client.pop_front();
    }
  }
  const kc::TransportStats& stats() const override { return stats_; }

 private:
  kc::TransportStats stats_;
};

const kp::ConnectToken& token() {
  static const kp::ConnectToken t = [] {
    kp::MintParams p;
    p.client_id = 7;
    p.server_addresses = {kServer};
    p.ttl_seconds = 7 * 24 * 3600;
    auto minted = kp::mint_token(kp::development_token_key(), p, static_cast<uint64_t>(std::time(nullptr)));
    if (!minted) std::abort();
    return *minted;
  }();
  return t;
}

using Reader = keel::fuzz::InputReader;

struct Harness {
  FuzzTransport* transport = nullptr;
  std::unique_ptr<kc::Client> client;
  kp::Connection server;
  double now = 100.0;

  // The real handshake, with the server's side played here: afterwards `server` holds
  // the session keys.
  void connect(kc::Mode mode) {
    auto t = std::make_unique<FuzzTransport>();
    transport = t.get();
    kc::ClientConfig config;
    config.mode = mode;
    config.auto_reconnect = false;
    client = std::make_unique<kc::Client>(std::move(t), config);
    client->connect(token(), now);
    client->update(now);
    const uint64_t unix_now = static_cast<uint64_t>(std::time(nullptr));
    kp::ServerHandshake hs(kp::development_token_key(), kServer);
    std::vector<uint8_t> challenge;
    if (transport->from_client.empty() ||
        hs.on_request(transport->from_client.back(), "127.0.0.1:5000", unix_now, challenge) != kp::DropReason::None) {
      std::abort();
    }
    transport->from_client.clear();
    transport->to_client.push_back(challenge);
    now += 0.01;
    client->update(now);
    kp::AcceptedClient accepted;
    if (transport->from_client.empty() ||
        hs.on_response(transport->from_client.back(), "127.0.0.1:5000", unix_now, accepted) != kp::DropReason::None) {
      std::abort();
    }
    transport->from_client.clear();
    server.set_keys(accepted.keys);
  }

  void exchange() {
    for (auto& d : server.update(now)) transport->to_client.push_back(std::move(d));
    client->update(now);
    for (const auto& d : transport->from_client) server.receive(d, now);
    transport->from_client.clear();
    // A server reads whatever the client sent; none of it matters here.
    for (int ch = 0; ch < static_cast<int>(kp::Channel::kCount); ++ch) {
      while (server.take(static_cast<kp::Channel>(ch))) {
      }
    }
    // What a game reads every frame.
    (void)client->take_events();
    (void)client->render_tick(now);
    for (uint32_t body = 0; body < 4; ++body) (void)client->pose(body, now);
  }

  void run(const uint8_t* data, size_t size) {
    Reader in{data, size};
    connect(in.u8() & 1 ? kc::Mode::Predict : kc::Mode::Interpolate);
    while (in.more()) {
      const uint8_t op = in.u8() % 6;
      if (op <= 2) {
        static constexpr kp::Channel kChannel[] = {kp::Channel::Control, kp::Channel::Snapshot, kp::Channel::Frames};
        server.send(kChannel[op], in.chunk());
      } else if (op == 3) {
        server.send_block(in.chunk());
      } else if (op == 4) {
        transport->to_client.push_back(in.chunk());
      } else {
        now += 0.004 * (1 + in.u8());
      }
      exchange();
    }
    if (std::getenv("KEEL_FUZZ_DEBUG")) {
      std::fprintf(stderr, "client: state %s, snapshots %llu, frames %llu, checkpoint tick %llu, drops %llu\n",
                   kc::to_string(client->state()), static_cast<unsigned long long>(client->stats().snapshots_received),
                   static_cast<unsigned long long>(client->stats().frames_received),
                   static_cast<unsigned long long>(client->stats().checkpoint_tick),
                   static_cast<unsigned long long>(client->drops().total()));
    }
    client->disconnect(now);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;
  Harness h;
  h.run(data, size);
  return 0;
}
