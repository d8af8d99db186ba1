// The session tests' harness: a FakeServer and clients on simulated time, each on its own
// wire (and link conditioner, when given one), walking with testing::walk.
#pragma once

#include "fake_server.h"
#include "test_util.h"

#include <keel/client/client.h>
#include <keel/client/link_conditioner.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace keel::client::testing {

/// A FakeServer of `rules` (the sandbox when null) and the clients added to it, all on
/// simulated time.
struct Harness {
  explicit Harness(std::unique_ptr<game::Rules> rules = nullptr) : server(demo_scene(), std::move(rules)) {}
  FakeServer server;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::shared_ptr<Wire>> wires;
  std::vector<ConditionedTransport*> links;
  std::vector<protocol::ConnectToken> tokens;  // each client's first token
  std::map<uint64_t, std::vector<sim::BodyState>> truth;  // server bodies by match tick
  double now = 0;
  bool keep_truth = false;

  Client& add(ClientConfig cfg, uint64_t id, const std::optional<LinkImpairment>& link = std::nullopt,
              uint32_t timeout = 10) {
    auto wire = std::make_shared<Wire>();
    server.attach(wire);
    std::unique_ptr<Transport> t = std::make_unique<WireTransport>(wire);
    ConditionedTransport* ct = nullptr;
    if (link) {
      auto c = std::make_unique<ConditionedTransport>(std::move(t), LinkConditionerConfig::symmetric(*link, id));
      ct = c.get();
      t = std::move(c);
    }
    auto mint = [id, timeout]() -> std::optional<protocol::ConnectToken> {
      auto tok = mint_token_for(protocol::development_token_key(), id, 1, kFakeServerAddress, 3600, timeout);
      return tok ? std::optional(*tok) : std::nullopt;
    };
    cfg.token_source = mint;
    cfg.input_source = [id](uint64_t tick) { return walk(static_cast<uint32_t>(id), tick, 23); };
    clients.push_back(std::make_unique<Client>(std::move(t), cfg));
    wires.push_back(wire);
    links.push_back(ct);
    tokens.push_back(*mint());
    clients.back()->connect(tokens.back(), now);
    return *clients.back();
  }

  void run(double seconds, const std::function<void()>& each = {}) {
    const double dt = 1.0 / 240;
    for (double end = now + seconds; now < end; now += dt) {
      for (auto& c : clients) c->update(now);
      server.update(now);
      if (keep_truth) truth[server.match().tick()] = protocol::snapshot_bodies(server.match().world());
      if (each) each();
    }
  }
};

inline ClientConfig interpolate() { return ClientConfig{}; }
inline ClientConfig predict() {
  ClientConfig c;
  c.mode = Mode::Predict;
  return c;
}

}  // namespace keel::client::testing
