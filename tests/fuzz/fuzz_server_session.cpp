// libFuzzer: the server's per-player session logic (MatchHost: match_sessions.cpp) driven
// by fuzzed message sequences from up to three players. Each player is admitted as the
// handshake would admit it, and the harness holds its keys: it plays the client with a
// real protocol::Connection, so the fuzzed messages arrive sealed and reach the session
// state machine (ClientHello, InputBatch, HashReport, Disconnect, anything else), while
// the server's answers (accept, scene and checkpoint blocks, snapshots, frames) come back
// over loopback UDP and are acknowledged, as a client would. Raw datagrams from a player's
// address (forged, replayed, garbage) and time steps (ticks, resends, time-outs) are
// mixed in. The match records to a scratch directory, removed after each input.
//
// Input: [players and modes:u8] then ops, each [op:u8] and its operands:
//   op%5 == 0  control message:  [player:u8][len:u16 LE][message bytes]
//   op%5 == 1  input message:    [player:u8][len:u16 LE][message bytes]
//   op%5 == 2  raw datagram:     [player:u8][len:u16 LE][datagram bytes]
//   op%5 == 3  time step:        [n:u8]: 4 ms x (n + 1); the match runs, datagrams are exchanged
//   op%5 == 4  reconnect:        [player:u8]: admitted again (a fresh token) from its address
#include "fuzz_input.h"
#include "match_host.h"

#include <keel/games/sandbox.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/messages.h>
#include <keel/scene/scene.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace kp = keel::protocol;
namespace ks = keel::server;

namespace {

constexpr int kMaxPlayers = 3;
constexpr char kScene[] =
    R"({"name": "fuzz", "tick_rate": 30, "bodies": [)"
    R"({"id": 1, "motion": "Static", "colliders": [{"shape": "Box", "half_extents": {"x": 5, "y": 0.5, "z": 5}}]},)"
    R"({"id": 2, "position": {"x": 0, "y": 2, "z": 0}, "colliders": [{"shape": "Sphere", "radius": 0.5}]}]})";

// A UDP socket on 127.0.0.1 with an ephemeral port; non-blocking.
int loopback_socket(asio::ip::udp::endpoint& bound) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  bound = asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), ntohs(a.sin_port));
  return fd;
}

// What lives for the whole run: the scene, the server's services, the sockets.
struct World {
  ks::ServerOptions options;
  std::FILE* devnull = std::fopen("/dev/null", "w");
  ks::Logger log{ks::LogLevel::Debug, true, devnull};
  ks::Metrics metrics;
  ks::Router router;
  int server_fd;
  std::unique_ptr<ks::DatagramSender> sender;
  int player_fd[kMaxPlayers];
  asio::ip::udp::endpoint player_at[kMaxPlayers];
  ks::MatchSettings settings;

  World() {
    // A recording per input: in memory (tmpfs) when there is one, it costs no disk.
    const char* scratch = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    options.record_dir = std::string(scratch) + "/keel-fuzz-session-" + std::to_string(::getpid());
    options.idle_timeout = 3.0;
    auto scene = keel::scene::parse_scene_json(kScene, "fuzz.json");
    if (!scene) std::abort();
    settings.scene = std::make_shared<const keel::sim::SceneDef>(std::move(*scene));
    settings.scene_path = "fuzz.json";
    settings.max_players = kMaxPlayers;
    asio::ip::udp::endpoint unused;
    server_fd = loopback_socket(unused);
    sender = std::make_unique<ks::DatagramSender>(std::vector<int>{server_fd}, metrics);
    for (int p = 0; p < kMaxPlayers; ++p) player_fd[p] = loopback_socket(player_at[p]);
  }
  ks::HostServices services() { return ks::HostServices{options, log, metrics, *sender, router, {}, {}}; }
};

World& world() {
  static World* w = new World();  // never destroyed: the fuzzer exits without tearing down
  return *w;
}

kp::ConnectionKeys keys_for(int player, bool server_side) {
  kp::ConnectionKeys k;
  for (size_t i = 0; i < 32; ++i) {
    k.send[i] = static_cast<uint8_t>(player * 31 + i);        // client to server
    k.receive[i] = static_cast<uint8_t>(player * 31 + i + 7);  // server to client
  }
  if (server_side) std::swap(k.send, k.receive);
  return k;
}

using Reader = keel::fuzz::InputReader;

struct Harness {
  World& w = world();
  std::shared_ptr<ks::MatchHost> host;
  std::vector<std::unique_ptr<kp::Connection>> clients;
  int players = 1;
  ks::Now now{1'000'000'000};

  void admit(int p) {
    ks::Admission a;
    a.client.client_id = static_cast<uint64_t>(p + 1);
    a.client.match_id = 1;
    a.client.keys = keys_for(p, true);
    a.client.address = ks::format_endpoint(w.player_at[p]);
    a.socket = 0;
    a.from = w.player_at[p];
    host->admit(std::move(a));
    clients[size_t(p)] = std::make_unique<kp::Connection>();
    clients[size_t(p)]->set_keys(keys_for(p, false));
  }

  void post(int p, std::vector<uint8_t> bytes) {
    ks::Datagram d;
    d.socket = 0;
    d.from = w.player_at[p];
    d.bytes = std::move(bytes);
    host->post(std::move(d));
  }

  void flush_client(int p) {
    for (auto& d : clients[size_t(p)]->update(now.s())) post(p, std::move(d));
  }

  // What the server sent each player: into its client connection, every message taken
  // (a client reads them all), then the client's acknowledgements back.
  void exchange() {
    uint8_t buf[2048];
    for (int p = 0; p < players; ++p) {
      for (;;) {
        ssize_t n = ::recv(w.player_fd[p], buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) break;
        clients[size_t(p)]->receive({buf, size_t(n)}, now.s());
      }
      for (int ch = 0; ch < static_cast<int>(kp::Channel::kCount); ++ch) {
        while (auto m = clients[size_t(p)]->take(static_cast<kp::Channel>(ch))) {
          if (capture && p == 0 && ch != static_cast<int>(kp::Channel::Input)) {
            captured(ch == static_cast<int>(kp::Channel::Frames) ? 2 : ch, *m);
          }
        }
      }
      while (auto b = clients[size_t(p)]->take_block()) {
        if (capture && p == 0) captured(3, *b);
      }
      flush_client(p);
    }
  }

  // Seed writing (KEEL_FUZZ_WRITE_SEEDS): what player 0 received, as fuzz_client_receive
  // input: [op][len:u16 LE][bytes] per message or block, [5][n] per time step.
  std::vector<uint8_t>* capture = nullptr;
  void captured(int op, const std::vector<uint8_t>& bytes) {
    if (bytes.size() > 0xffff) return;
    capture->push_back(static_cast<uint8_t>(op));
    capture->push_back(static_cast<uint8_t>(bytes.size()));
    capture->push_back(static_cast<uint8_t>(bytes.size() >> 8));
    capture->insert(capture->end(), bytes.begin(), bytes.end());
  }

  void drain_sockets() {
    uint8_t buf[2048];
    for (int p = 0; p < kMaxPlayers; ++p) {
      while (::recv(w.player_fd[p], buf, sizeof buf, MSG_DONTWAIT) >= 0) {
      }
    }
  }

  void run(const uint8_t* data, size_t size) {
    drain_sockets();  // nothing from the previous input
    auto created = ks::MatchHost::create(1, w.settings, w.services(), now, true);
    if (!created) std::abort();  // a fixed scene into a scratch directory: must work
    host = *created;
    host->start_clock(now);
    Reader in{data, size};
    players = 1 + in.u8() % kMaxPlayers;
    clients.resize(kMaxPlayers);
    for (int p = 0; p < players; ++p) admit(p);
    host->run(now);
    exchange();
    while (in.more()) {
      const uint8_t op = in.u8() % 5;
      if (op == 3) {
        const uint8_t n = in.u8();
        now.ns += 4'000'000ll * (1 + n);  // 4 ms to ~1 s
        if (capture) capture->insert(capture->end(), {5, n});
        host->run(now);
        exchange();
        continue;
      }
      const int p = in.u8() % players;
      if (op == 0 || op == 1) {
        std::vector<uint8_t> m = in.chunk();
        clients[size_t(p)]->send(op == 0 ? kp::Channel::Control : kp::Channel::Input, m);
        flush_client(p);
      } else if (op == 2) {
        post(p, in.chunk());
      } else {
        admit(p);
      }
    }
    now.ns += 100'000'000;
    host->run(now);
    if (std::getenv("KEEL_FUZZ_DEBUG")) {
      std::fprintf(stderr, "session: tick %llu, players %u, snapshots sent %llu, hash checks %llu, desyncs %llu\n",
                   static_cast<unsigned long long>(host->tick()), host->players(),
                   static_cast<unsigned long long>(w.metrics.snapshots_sent.load()),
                   static_cast<unsigned long long>(w.metrics.hash_checks.load()),
                   static_cast<unsigned long long>(w.metrics.desyncs.load()));
    }
    host->shutdown(now, kp::fb::DenyReason::ServerShuttingDown);
    std::error_code ec;
    std::filesystem::remove_all(w.options.record_dir, ec);
    host.reset();
    clients.clear();
  }
};

// --- seeds ------------------------------------------------------------------------------
// KEEL_FUZZ_WRITE_SEEDS=DIR writes this target's seeds to DIR/server_session/ and, from
// what the server answered, fuzz_client_receive's to DIR/client_receive/, then exits:
// both corpora are real sessions, built with the real message builders.

std::vector<uint8_t> hello(bool predict) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = kp::fb::CreateClientHello(fbb, predict ? kp::fb::ClientMode::Predict : kp::fb::ClientMode::Interpolate, false);
  return kp::finish_message(fbb, kp::fb::Body::ClientHello, body.Union());
}

std::vector<uint8_t> input_batch(uint64_t first, uint64_t count, uint64_t ack) {
  // The server runs the sandbox: frames of its layout, the buttons changing every tick.
  const keel::game::Layout layout = keel::games::SandboxRules::make_spec().input;
  kp::InputSender sender(layout);
  keel::game::InputFrame frame;
  for (uint64_t t = first; t < first + count; ++t) {
    layout.set_buttons(frame, keel::games::SandboxRules::kButtons, static_cast<uint32_t>(t));
    sender.add(t, frame);
  }
  return sender.build_batch(ack, ack);
}

std::vector<uint8_t> hash_report(uint64_t tick, uint64_t hash) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = kp::fb::CreateHashReport(fbb, tick, hash);
  return kp::finish_message(fbb, kp::fb::Body::HashReport, body.Union());
}

std::vector<uint8_t> disconnect() {
  flatbuffers::FlatBufferBuilder fbb(32);
  auto body = kp::fb::CreateDisconnect(fbb, kp::fb::DenyReason::Unknown);
  return kp::finish_message(fbb, kp::fb::Body::Disconnect, body.Union());
}

struct SeedBuilder {
  std::vector<uint8_t> bytes;
  explicit SeedBuilder(uint8_t players) { bytes.push_back(players); }
  void message(uint8_t op, uint8_t player, const std::vector<uint8_t>& m) {
    bytes.insert(bytes.end(), {op, player, static_cast<uint8_t>(m.size()), static_cast<uint8_t>(m.size() >> 8)});
    bytes.insert(bytes.end(), m.begin(), m.end());
  }
  void wait(uint8_t n) { bytes.insert(bytes.end(), {3, n}); }
};

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) std::abort();
}

// A session that plays: hello, the scene (and checkpoint) acknowledged, inputs a tick or
// two ahead, hash reports (one wrong), then a disconnect.
std::vector<uint8_t> playing_session(uint8_t players, bool predict, bool wrong_hash) {
  SeedBuilder b(players);
  for (uint8_t p = 0; p < players % kMaxPlayers + 1; ++p) b.message(0, p, hello(predict && p == 0));
  for (uint64_t step = 0; step < 40; ++step) {
    b.wait(8);  // 36 ms: about a tick at 30 Hz
    b.message(1, 0, input_batch(step + 1, 3, step));
    if (step % 10 == 9) b.message(0, 0, hash_report(step, wrong_hash && step == 19 ? 12345 : 0));
  }
  b.message(0, 0, disconnect());
  b.wait(30);
  return b.bytes;
}

void write_seeds(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/server_session");
  fs::create_directories(dir + "/client_receive");
  struct Seed {
    const char* name;
    std::vector<uint8_t> bytes;
    uint8_t client_mode;  // the captured answer is a client seed in this mode
  };
  std::vector<Seed> seeds;
  seeds.push_back({"interpolate", playing_session(0, false, false), 0});
  seeds.push_back({"predict", playing_session(0, true, true), 1});
  seeds.push_back({"three_players", playing_session(2, true, false), 1});
  {
    SeedBuilder b(1);  // two players: one reconnects, garbage from the other's address
    b.message(0, 0, hello(false));
    b.message(0, 1, hello(true));
    b.wait(10);
    b.bytes.insert(b.bytes.end(), {4, 0});
    b.message(2, 1, std::vector<uint8_t>(64, 0x5a));
    b.wait(10);
    b.message(1, 1, input_batch(1, 8, 0));
    b.wait(200);
    b.wait(200);
    b.wait(200);
    seeds.push_back({"reconnect_and_garbage", b.bytes, 0});
  }
  for (const Seed& seed : seeds) {
    write_file(dir + "/server_session/" + seed.name, seed.bytes);
    Harness h;
    std::vector<uint8_t> answer{seed.client_mode};
    h.capture = &answer;
    h.run(seed.bytes.data(), seed.bytes.size());
    write_file(dir + "/client_receive/" + seed.name, answer);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("KEEL_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;
  Harness h;
  h.run(data, size);
  return 0;
}
