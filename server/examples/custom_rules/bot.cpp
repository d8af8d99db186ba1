// keel-hover-bot: predicting clients for keel-hover-server. Each steps the server's match
// with the hover rules (ClientConfig::prediction.rules), checks every confirmed tick's
// hash against the server's, and prints one line per bot:
//   player P confirmed_ticks N hash_checks N hash_mismatches N
// then exits 0 when every bot played and none disagreed with the server, else 1.
//   keel-hover-bot 127.0.0.1:7777 [SECONDS] [BOTS]
// Development-mode tokens: the server must run without --token-key (loopback only).
#include "hover_rules.h"

#include <keel/client/client.h>
#include <keel/protocol/token.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

// A new heading every half second, and a lift now and then: enough to move the balls.
keel::game::InputFrame wander(uint32_t bot, uint64_t tick) {
  static const keel::game::Layout layout = hover::HoverRules::make_spec().input;
  keel::game::InputFrame f;
  uint64_t leg = tick / 30 + bot * 7;
  layout.set_stick(f, hover::HoverRules::kMove, 0.0f, 1.0f);
  layout.set_angle(f, hover::HoverRules::kLookYaw, static_cast<float>(leg % 12) * 0.5f - 3.0f);
  layout.set_bool(f, hover::HoverRules::kLiftOn, leg % 5 == 0);
  return f;
}

std::unique_ptr<keel::client::Client> connect(const std::string& server, uint32_t bot, double now) {
  std::string error;
  auto transport = keel::client::open_udp_transport(server, error);
  if (!transport) {
    std::fprintf(stderr, "keel-hover-bot: %s\n", error.c_str());
    return nullptr;
  }
  keel::client::ClientConfig config;
  config.mode = keel::client::Mode::Predict;
  config.prediction.rules = [] { return std::make_unique<hover::HoverRules>(); };
  config.input_source = [bot](uint64_t tick) { return wander(bot, tick); };
  auto client = std::make_unique<keel::client::Client>(std::move(transport), std::move(config));
  auto token = keel::client::mint_token_for(keel::protocol::development_token_key(), 1000 + bot, 0, server);
  if (!token) {
    std::fprintf(stderr, "keel-hover-bot: %s\n", token.error().message.c_str());
    return nullptr;
  }
  client->connect(*token, now);
  return client;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: keel-hover-bot HOST:PORT [SECONDS] [BOTS]\n");
    return 2;
  }
  const std::string server = argv[1];
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const int bots = argc > 3 ? std::atoi(argv[3]) : 1;
  if (seconds <= 0 || bots < 1 || bots > 64) {
    std::fprintf(stderr, "keel-hover-bot: SECONDS must be > 0 and BOTS 1..64\n");
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<std::unique_ptr<keel::client::Client>> clients;
  for (int i = 0; i < bots; ++i) {
    clients.push_back(connect(server, static_cast<uint32_t>(i), now()));
    if (!clients.back()) return 2;
  }
  while (now() < seconds) {
    for (auto& c : clients) c->update(now());
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  bool ok = true;
  for (auto& c : clients) {
    const keel::client::PredictionStats& p = c->stats().prediction;
    std::printf("player %u confirmed_ticks %llu hash_checks %llu hash_mismatches %llu\n", c->player_id(),
                static_cast<unsigned long long>(p.confirmed_ticks), static_cast<unsigned long long>(p.hash_checks),
                static_cast<unsigned long long>(p.hash_mismatches));
    ok = ok && c->state() == keel::client::State::Playing && p.confirmed_ticks > 0 && p.hash_mismatches == 0;
    c->disconnect(now());
  }
  return ok ? 0 : 1;
}
