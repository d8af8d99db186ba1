// keel-attack --server HOST:PORT [--seconds S] [--rate N] [--attackers K] [--summary OUT.json]
//
// A hostile client for soak tests (scripts/hostile-soak.sh), never for production: with the
// development token key it joins the server as K authenticated players and then, for S
// seconds at about N datagrams a second in all, sends a mix of the attacks keel-server
// is built to shrug off (docs/security.md):
//   - large-block fragments from its authenticated sessions: zstd bombs (64 MiB of zeros
//     in two fragments, made by a real Connection) and single fragments claiming 64 MiB;
//   - handshake garbage from other ports: 13-byte requests and responses with a valid
//     header, 1200-byte requests and 511-byte responses with a garbage body, random bytes;
//   - its own ConnectionResponse replayed (from its address and from another), and
//     connected-packet garbage.
// It prints one JSON summary: what it sent, by kind, and how many attackers were admitted.
#define ASIO_STANDALONE 1
#include <asio.hpp>

#include "attack_payloads.h"

#include <keel/protocol/address.h>
#include <keel/protocol/connection.h>
#include <keel/protocol/handshake.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/token.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sodium.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <thread>

namespace kp = keel::protocol;
using keel::attack::bomb_payloads;
using keel::attack::claim_payload;
using keel::attack::seal;
using Udp = asio::ip::udp;

namespace {

double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

uint64_t unix_now() {
  using namespace std::chrono;
  return static_cast<uint64_t>(duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
}

std::optional<Udp::endpoint> parse_endpoint(const std::string& text) {
  auto hp = kp::parse_host_port(text);
  if (!hp || hp->port == 0) return std::nullopt;
  asio::error_code ec;
  auto address = asio::ip::make_address(hp->host, ec);
  if (ec) return std::nullopt;
  return Udp::endpoint(address, hp->port);
}

std::vector<uint8_t> with_header(kp::PacketType type, size_t size, std::mt19937_64& rng) {
  std::vector<uint8_t> d(size);
  for (auto& b : d) b = static_cast<uint8_t>(rng());
  kp::PacketHeader h;
  h.type = type;
  kp::write_header(h, std::span<uint8_t, kp::kPacketHeaderBytes>(d.data(), kp::kPacketHeaderBytes));
  return d;
}

// An attacker that joined: its socket, keys, its captured response, its next sequence.
struct Joined {
  std::unique_ptr<Udp::socket> socket;
  kp::ConnectionKeys keys;
  std::vector<uint8_t> response;
  uint64_t seq = 0;
};

// Handshake and wait for ConnectionAccept, as a real client would, within `timeout` s.
std::optional<Joined> join(asio::io_context& io, const Udp::endpoint& server, const std::string& address,
                           uint64_t client_id, double timeout) {
  kp::MintParams p;
  p.client_id = client_id;
  p.server_addresses = {address};
  p.ttl_seconds = 600;
  auto token = kp::mint_token(kp::development_token_key(), p, unix_now());
  if (!token) return std::nullopt;
  Joined j;
  j.socket = std::make_unique<Udp::socket>(io, Udp::endpoint(server.protocol(), 0));
  j.socket->non_blocking(true);
  auto request = kp::build_connection_request(*token);
  std::optional<kp::Connection> conn;
  std::vector<uint8_t> buf(65536);
  double end = seconds_now() + timeout, last_send = -1;
  while (seconds_now() < end) {
    double now = seconds_now();
    asio::error_code ec;
    if (now - last_send > 0.1) {
      j.socket->send_to(asio::buffer(conn ? j.response : request), server, 0, ec);
      last_send = now;
    }
    Udp::endpoint from;
    size_t n = j.socket->receive_from(asio::buffer(buf), from, 0, ec);
    if (!ec && n > 0 && buf[0] == static_cast<uint8_t>(kp::PacketType::ConnectionChallenge) && !conn) {
      if (kp::answer_challenge({buf.data(), n}, kp::client_keys(*token), j.response) != kp::DropReason::None) continue;
      conn.emplace();
      conn->set_keys(kp::client_keys(*token));
      j.socket->send_to(asio::buffer(j.response), server, 0, ec);
    } else if (!ec && n > 0 && conn && buf[0] == static_cast<uint8_t>(kp::PacketType::Connected)) {
      conn->receive({buf.data(), n}, now);
      if (conn->take(kp::Channel::Control)) {
        j.keys = kp::client_keys(*token);
        j.seq = conn->stats().packets_sent + 1000;  // past every sequence the Connection used
        return j;
      }
    }
    if (conn) {
      for (auto& d : conn->update(now)) j.socket->send_to(asio::buffer(d), server, 0, ec);
    }
    if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server_text, summary_path;
  double seconds = 10, rate = 3000;
  uint32_t attackers = 2;
  uint64_t first_id = 9000;
  CLI::App app{"keel-attack: hostile traffic for soak tests (development token key only)"};
  app.add_option("--server", server_text, "server address HOST:PORT")->required();
  app.add_option("--seconds", seconds, "how long to attack")->check(CLI::Range(0.1, 86400.0));
  app.add_option("--rate", rate, "datagrams a second, all kinds together")->check(CLI::Range(1.0, 1e6));
  app.add_option("--attackers", attackers, "authenticated attacking players")->check(CLI::Range(0u, 64u));
  app.add_option("--first-client-id", first_id, "attacker i uses client id FIRST+i");
  app.add_option("--summary", summary_path, "write the JSON summary here (else stdout)");
  CLI11_PARSE(app, argc, argv);
  auto server = parse_endpoint(server_text);
  if (!server) {
    std::fprintf(stderr, "keel-attack: --server %s: expected HOST:PORT\n", server_text.c_str());
    return 2;
  }
  if (sodium_init() < 0) return 1;
  asio::io_context io;
  std::vector<Joined> joined;
  for (uint32_t i = 0; i < attackers; ++i) {
    if (auto j = join(io, *server, server_text, first_id + i, 5.0)) joined.push_back(std::move(*j));
  }
  std::vector<std::unique_ptr<Udp::socket>> others;
  for (int i = 0; i < 8; ++i) {
    others.push_back(std::make_unique<Udp::socket>(io, Udp::endpoint(server->protocol(), 0)));
    others.back()->non_blocking(true);
  }
  std::mt19937_64 rng(12345);
  const auto bombs = bomb_payloads();
  std::vector<std::vector<uint8_t>> garbage = {
      with_header(kp::PacketType::ConnectionRequest, kp::kPacketHeaderBytes, rng),
      with_header(kp::PacketType::ConnectionResponse, kp::kPacketHeaderBytes, rng),
      with_header(kp::PacketType::ConnectionRequest, kp::kMinRequestBytes, rng),
      with_header(kp::PacketType::ConnectionResponse, kp::connection_response_bytes(), rng),
      with_header(kp::PacketType::Connected, 300, rng),
  };
  std::map<std::string, uint64_t> sent;
  auto send = [&](Udp::socket& s, const std::vector<uint8_t>& d, const char* kind) {
    asio::error_code ec;
    s.send_to(asio::buffer(d), *server, 0, ec);
    ++sent[kind];
  };
  const double start = seconds_now();
  uint64_t n = 0;
  uint16_t claim_id = 0;
  while (seconds_now() - start < seconds) {
    if (double(n) > (seconds_now() - start) * rate) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    // One round: a slot for each kind, the authenticated ones spread over the attackers.
    for (int k = 0; k < 10; ++k, ++n) {
      Udp::socket& other = *others[n % others.size()];
      Joined* j = joined.empty() ? nullptr : &joined[n % joined.size()];
      if (k < 2 && j && !bombs.empty()) {
        send(*j->socket, seal(j->keys, j->seq++, bombs[k % bombs.size()]), "bomb_fragment");
      } else if (k == 2 && j) {
        send(*j->socket, seal(j->keys, j->seq++, claim_payload(claim_id++)), "block_claim");
      } else if (k == 3 && j) {
        send(*j->socket, j->response, "response_replayed");
        send(other, j->response, "response_from_elsewhere");
      } else if (k == 4) {
        std::vector<uint8_t> r(1 + rng() % 1400);
        for (auto& b : r) b = static_cast<uint8_t>(rng());
        send(other, r, "random");
      } else {
        send(other, garbage[n % garbage.size()], "handshake_garbage");
      }
    }
  }
  nlohmann::json out;
  out["attackers"] = attackers;
  out["attackers_joined"] = joined.size();
  out["seconds"] = seconds_now() - start;
  uint64_t total = 0;
  for (const auto& [kind, count] : sent) total += count;
  out["datagrams"] = total;
  out["sent"] = sent;
  std::string text = out.dump(2) + "\n";
  if (summary_path.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::ofstream(summary_path) << text;
  }
  return 0;
}
