// AgonesClient against a local HTTP endpoint standing in for the Agones SDK sidecar: the
// calls it makes, in which order and how often.
#include "server_fixture.h"

#include <keel/scene/scene.h>
#include <keel/protocol/token.h>
#include <keel/server/agones.h>

#include <asio.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace keel::server {
namespace {

using Clock = std::chrono::steady_clock;

/// A one-thread HTTP endpoint that records every request and answers like the sidecar:
/// GET /gameserver says "Ready" for the first `allocate_after` calls, then "Allocated".
class FakeSidecar {
 public:
  struct Call {
    std::string method;
    std::string path;
    double time;  // s since the sidecar started
  };

  explicit FakeSidecar(uint16_t port = 0, int allocate_after = 2)
      : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), port}),
        allocate_after_(allocate_after),
        start_(Clock::now()) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~FakeSidecar() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  /// What GET /gameserver reports besides the state: object_meta's labels and
  /// annotations, and extra status fields (e.g. address and ports).
  void set_gameserver(std::string labels, std::string annotations, std::string status_fields) {
    std::lock_guard lock(mutex_);
    labels_ = std::move(labels);
    annotations_ = std::move(annotations);
    status_fields_ = std::move(status_fields);
  }
  std::vector<Call> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  void accept() {
    acceptor_.async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
      if (!ec) serve(std::move(socket));
      accept();
    });
  }
  void serve(asio::ip::tcp::socket socket) {
    // Requests are tiny: read until the header ends, then the declared body.
    std::string raw;
    std::array<char, 1024> buf;
    std::error_code ec;
    while (raw.find("\r\n\r\n") == std::string::npos && !ec) {
      size_t n = socket.read_some(asio::buffer(buf), ec);
      raw.append(buf.data(), n);
    }
    std::string method = raw.substr(0, raw.find(' '));
    size_t p0 = raw.find(' ') + 1;
    std::string path = raw.substr(p0, raw.find(' ', p0) - p0);
    std::string body = "{}";
    if (path == "/gameserver") {
      int n = ++gameserver_calls_;
      std::string state = n > allocate_after_ ? "Allocated" : "Ready";
      std::lock_guard lock(mutex_);
      body = R"({"object_meta":{"name":"keel-abc","labels":)" + labels_ + R"(,"annotations":)" +
             annotations_ + R"(},"status":{)" + status_fields_ + R"("state":")" + state + R"("}})";
    }
    {
      std::lock_guard lock(mutex_);
      calls_.push_back({method, path, std::chrono::duration<double>(Clock::now() - start_).count()});
    }
    std::string response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    asio::write(socket, asio::buffer(response), ec);
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  int allocate_after_;
  int gameserver_calls_ = 0;
  std::string labels_ = R"({"keel.dev/scene":"pile.json"})";
  std::string annotations_ = R"({"keel.dev/match":"7"})";
  std::string status_fields_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::vector<Call> calls_;
  std::thread thread_;
};

AgonesOptions fast_options(uint16_t port) {
  AgonesOptions o;
  o.port = port;
  o.health_interval = 0.2;
  o.poll_interval = 0.1;
  o.retry_interval = 0.1;
  o.request_timeout = 1.0;
  return o;
}

bool wait_until(const std::function<bool()>& done, double seconds) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(AgonesClient, ReadyThenHealthAndPollingThenShutdownInOrder) {
  FakeSidecar sidecar;
  std::mutex m;
  AgonesGameServer allocated;
  std::atomic<int> allocations{0};
  AgonesClient client(fast_options(sidecar.port()), [] { return true; },
                      [&](const AgonesGameServer& gs) {
                        std::lock_guard lock(m);
                        allocated = gs;
                        ++allocations;
                      },
                      nullptr);
  client.start();
  ASSERT_TRUE(wait_until([&] { return client.allocated(); }, 3.0));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  client.request_shutdown();

  auto calls = sidecar.calls();
  ASSERT_GE(calls.size(), 5u);
  EXPECT_EQ(calls.front().method + " " + calls.front().path, "POST /ready");
  EXPECT_EQ(calls.back().method + " " + calls.back().path, "POST /shutdown");
  EXPECT_EQ(allocations.load(), 1);
  EXPECT_EQ(allocated.labels["keel.dev/scene"], "pile.json");
  EXPECT_EQ(allocated.annotations["keel.dev/match"], "7");
  EXPECT_TRUE(client.ready_sent());

  // Health every 0.2 s (allowing for a loaded machine), polling stops once Allocated
  // (the third GET answers Allocated).
  std::vector<double> health;
  int gets = 0;
  for (const auto& c : calls) {
    if (c.path == "/health") health.push_back(c.time);
    if (c.path == "/gameserver") ++gets;
  }
  EXPECT_EQ(gets, 3);
  ASSERT_GE(health.size(), 3u);
  for (size_t i = 1; i < health.size(); ++i) {
    double gap = health[i] - health[i - 1];
    EXPECT_GT(gap, 0.15) << "health call " << i;
    EXPECT_LT(gap, 0.6) << "health call " << i;
  }
}

TEST(AgonesClient, RetriesReadyUntilTheSidecarListens) {
  uint16_t port;
  {
    // A port that is free now; the sidecar starts on it half a second after the client.
    asio::io_context io;
    asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  std::atomic<int> failures{0};
  AgonesClient client(fast_options(port), [] { return true; }, nullptr,
                      [&](const std::string&) { ++failures; });
  client.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(client.ready_sent());
  FakeSidecar sidecar(port, 1000);
  ASSERT_TRUE(wait_until([&] { return client.ready_sent(); }, 3.0));
  client.request_shutdown();
  EXPECT_GE(failures.load(), 2);
  auto calls = sidecar.calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front().path, "/ready");
}

TEST(AgonesClient, NoHealthWhileTicksAreLate) {
  FakeSidecar sidecar(0, 1000);
  std::atomic<bool> on_time{false};
  AgonesClient client(fast_options(sidecar.port()), [&] { return on_time.load(); }, nullptr,
                      nullptr);
  client.start();
  ASSERT_TRUE(wait_until([&] { return client.ready_sent(); }, 3.0));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  size_t health_while_late = 0;
  for (const auto& c : sidecar.calls()) health_while_late += c.path == "/health";
  on_time = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  client.request_shutdown();
  size_t health_total = 0;
  for (const auto& c : sidecar.calls()) health_total += c.path == "/health";
  EXPECT_EQ(health_while_late, 0u);
  EXPECT_GE(health_total, 1u);
}

TEST(AgonesGameServerJson, RejectsWhatIsNotAGameServer) {
  EXPECT_FALSE(parse_agones_gameserver("not json"));
  EXPECT_FALSE(parse_agones_gameserver("[1,2]"));
  EXPECT_FALSE(parse_agones_gameserver(R"({"object_meta":{}})"));
  EXPECT_FALSE(parse_agones_gameserver(std::string(300000, ' ')));
  auto gs = parse_agones_gameserver(
      R"({"object_meta":{"labels":{"a":"b","n":3}},"status":{"state":"Ready"}})");
  ASSERT_TRUE(gs);
  EXPECT_EQ(gs->state, "Ready");
  EXPECT_EQ(gs->labels.size(), 1u);  // non-string label values are ignored
}

TEST(AgonesOptions, PortFromTheEnvironment) {
  unsetenv("AGONES_SDK_HTTP_PORT");
  auto none = AgonesOptions::from_environment();
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  setenv("AGONES_SDK_HTTP_PORT", "9358", 1);
  auto set = AgonesOptions::from_environment();
  ASSERT_TRUE(set && set->has_value());
  EXPECT_EQ((*set)->port, 9358);
  setenv("AGONES_SDK_HTTP_PORT", "93x", 1);
  EXPECT_FALSE(AgonesOptions::from_environment());
  setenv("AGONES_SDK_HTTP_PORT", "70000", 1);
  EXPECT_FALSE(AgonesOptions::from_environment());
  unsetenv("AGONES_SDK_HTTP_PORT");
}

// The whole server in Agones mode: Ready once listening, Health while ticking, the
// allocation seen, and after the last player of the allocated match leaves (and the grace
// period passes) the server stops itself, finishes its recording and sends Shutdown last.
TEST(AgonesServer, ReadyAllocatedAndShutdownAfterTheLastPlayerLeaves) {
  FakeSidecar sidecar(0, 1);  // the second GET /gameserver answers Allocated
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()).c_str(), 1);
  auto options = test::test_options("agones");
  options.empty_match_grace = 0.5;
  test::RunningServer rs(options);
  unsetenv("AGONES_SDK_HTTP_PORT");

  auto count = [&](const std::string& path) {
    int n = 0;
    for (const auto& c : sidecar.calls()) n += c.path == path;
    return n;
  };
  ASSERT_TRUE(wait_until([&] { return count("/gameserver") >= 2; }, 5.0));
  auto client = rs.client(1);
  ASSERT_TRUE(test::drive({client.get()}, 5.0, [&] { return client->playing(); }));
  test::drive({client.get()}, 0.3);
  client->disconnect(test::seconds_now());

  ASSERT_TRUE(wait_until([&] { return count("/shutdown") == 1; }, 5.0));
  EXPECT_EQ(rs.server->wait(), 0);
  auto calls = sidecar.calls();
  EXPECT_EQ(calls.front().path, "/ready");
  EXPECT_EQ(calls.back().path, "/shutdown");
  EXPECT_GE(count("/health"), 1);
  EXPECT_EQ(count("/gameserver"), 2);  // polling stops once allocated
  auto recordings = rs.server->recordings();
  ASSERT_EQ(recordings.size(), 1u);
  auto verified = test::verify_recording(recordings[0]);
  EXPECT_TRUE(verified.error.empty()) << verified.error;
  EXPECT_FALSE(verified.diverged_at.has_value());
  EXPECT_GT(verified.verified, 0u);
}

TEST(AgonesGameServerJson, AddressAndPortsFromTheStatus) {
  auto gs = parse_agones_gameserver(
      R"({"object_meta":{},"status":{"state":"Ready","address":"198.51.100.20",)"
      R"("ports":[{"name":"game","port":7302},{"name":"metrics","port":9100},)"
      R"({"name":"bad","port":70000},{"name":"str","port":"7"},{"port":1}]}})");
  ASSERT_TRUE(gs);
  EXPECT_EQ(gs->address, "198.51.100.20");
  EXPECT_EQ(gs->ports.size(), 2u);  // out of range, non-number and nameless entries left out
  auto address = agones_public_address(*gs, "game");
  ASSERT_TRUE(address);
  EXPECT_EQ(*address, "198.51.100.20:7302");
  EXPECT_FALSE(agones_public_address(*gs, "other"));

  auto v6 = parse_agones_gameserver(
      R"({"status":{"state":"Ready","address":"2001:db8::7","ports":[{"name":"game","port":7000}]}})");
  ASSERT_TRUE(v6);
  EXPECT_EQ(*agones_public_address(*v6, "game"), "[2001:db8::7]:7000");

  for (const char* bad : {"", "-x", "a b", "evil/host", "1.2.3.4:99", "x\n"}) {
    nlohmann::json j = {{"status", {{"state", "Ready"}, {"address", bad}, {"ports", {{{"name", "game"}, {"port", 1}}}}}}};
    auto parsed = parse_agones_gameserver(j.dump());
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->address, "") << bad;
    EXPECT_FALSE(agones_public_address(*parsed, "game")) << bad;
  }
}

TEST(AgonesAllocationSettings, ValuesAreCheckedAndAnnotationsWinOverLabels) {
  AgonesGameServer gs;
  gs.labels = {{"keel.dev/tick-rate", "120"}, {"keel.dev/scene", "pile.json"}};
  gs.annotations = {{"keel.dev/tick-rate", "30"}, {"keel.dev/max-players", "4"}};
  AllocationSettings good = read_allocation_settings(gs, 16);
  EXPECT_EQ(good.scene, "pile.json");
  EXPECT_EQ(good.tick_rate, 30u);
  EXPECT_EQ(good.max_players, 4u);
  EXPECT_TRUE(good.refused.empty());

  for (const char* scene : {"../secret.json", "/etc/keel/token.key", "demo", ".hidden.json",
                            "a/b.json", "demo.json ", "x.kscn\n"}) {
    AgonesGameServer bad;
    bad.annotations = {{"keel.dev/scene", scene}};
    AllocationSettings read = read_allocation_settings(bad, 16);
    EXPECT_FALSE(read.scene) << scene;
    EXPECT_EQ(read.refused.count("keel.dev/scene"), 1u) << scene;
  }
  for (const char* players : {"0", "17", "-1", "4x", "", "99999999999", " 4"}) {
    AgonesGameServer bad;
    bad.annotations = {{"keel.dev/max-players", players}};
    EXPECT_FALSE(read_allocation_settings(bad, 16).max_players) << players;
  }
  for (const char* rate : {"0", "45", "60.0", "600"}) {
    AgonesGameServer bad;
    bad.annotations = {{"keel.dev/tick-rate", rate}};
    EXPECT_FALSE(read_allocation_settings(bad, 16).tick_rate) << rate;
  }
}

/// The sidecar's client is one thread: a Health call after the GET that answered
/// Allocated comes once the allocation was handled (settings read, scene loaded).
bool allocation_handled(FakeSidecar& sidecar) {
  int gets = 0;
  for (const auto& c : sidecar.calls()) {
    gets += c.path == "/gameserver";
    if (gets >= 2 && c.path == "/health") return true;
  }
  return false;
}

std::string write_token_key(const std::string& dir) {
  auto key = protocol::generate_token_key();
  std::string path = dir + "/token.key";
  EXPECT_TRUE(protocol::save_token_key(path, key));
  return path;
}

/// The loopback address of a socket bound to 0.0.0.0:port.
std::string loopback_of(const std::string& bound) {
  return "127.0.0.1" + bound.substr(bound.rfind(':'));
}

// Bound to 0.0.0.0 under Agones: the address and host port the GameServer reports (what
// the allocation hands the matchmaker) are what tokens must name; nothing else is.
TEST(AgonesServer, TokensNameTheGameServersAddressAndPort) {
  FakeSidecar sidecar(0, 1000);
  sidecar.set_gameserver("{}", "{}", "");  // a GameServer still being scheduled: no address
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()).c_str(), 1);
  auto options = test::test_options("agones-address");
  options.bind = {"0.0.0.0:0"};
  options.token_key_path = write_token_key(options.record_dir);
  std::unique_ptr<test::RunningServer> rs;
  try {
    rs = std::make_unique<test::RunningServer>(options);
  } catch (...) {
    unsetenv("AGONES_SDK_HTTP_PORT");
    throw;
  }
  unsetenv("AGONES_SDK_HTTP_PORT");
  // The second GET starts after the first answer was handled.
  ASSERT_TRUE(wait_until([&] {
    int n = 0;
    for (const auto& c : sidecar.calls()) n += c.path == "/gameserver";
    return n >= 2;
  }, 5.0));
  EXPECT_TRUE(rs->server->token_addresses().empty());  // 0.0.0.0 is no address to name
  sidecar.set_gameserver("{}", "{}",
                         R"("address":"198.51.100.20","ports":[{"name":"game","port":7302}],)");
  ASSERT_TRUE(wait_until([&] { return rs->server->token_addresses().size() == 1; }, 5.0));
  EXPECT_EQ(rs->server->token_addresses()[0], "198.51.100.20:7302");

  auto key = protocol::load_token_key(options.token_key_path);
  ASSERT_TRUE(key);
  auto make = [&](uint64_t id, std::string named) {
    test::TestClientOptions o;
    o.server = loopback_of(rs->address);
    o.client_id = id;
    o.key = *key;
    o.token_addresses = {std::move(named)};
    auto c = std::make_unique<test::TestClient>(rs->io, o);
    c->start(test::seconds_now());
    return c;
  };
  auto before = rs->server->counters();
  // The handshake reaches the I/O thread a moment after token_addresses() shows it; the
  // client resends its request until then.
  auto good = make(1, "198.51.100.20:7302");
  ASSERT_TRUE(test::drive({good.get()}, 5.0, [&] { return good->playing(); }));
  auto wrong_port = make(2, "198.51.100.20:7777");
  auto bind_string = make(3, rs->address);
  test::drive({wrong_port.get(), bind_string.get()}, 1.0);
  EXPECT_FALSE(wrong_port->accepted());
  EXPECT_FALSE(bind_string->accepted());
  EXPECT_GE(rs->server->counters().drop("token_wrong_address") - before.drop("token_wrong_address"), 2u);
  rs->server->request_stop();
  EXPECT_EQ(rs->server->wait(), 0);
}

// An allocation's annotations (a label where no annotation says otherwise) set the scene,
// tick rate and players per match of the matches created after it; the start-up match
// keeps the flags' settings.
TEST(AgonesServer, AllocationSettingsShapeTheMatchesCreatedAfterIt) {
  FakeSidecar sidecar(0, 1);
  sidecar.set_gameserver(R"({"keel.dev/tick-rate":"120"})",
                         R"({"keel.dev/scene":"cubes.json","keel.dev/max-players":"1","keel.dev/tick-rate":"30"})",
                         "");
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()).c_str(), 1);
  auto options = test::test_options("agones-settings");
  test::RunningServer rs(options);
  unsetenv("AGONES_SDK_HTTP_PORT");
  ASSERT_TRUE(wait_until([&] { return allocation_handled(sidecar); }, 8.0));

  auto first = rs.client(1, false, 5);
  ASSERT_TRUE(test::drive({first.get()}, 5.0, [&] { return first->playing(); }));
  auto second = rs.client(2, false, 5);  // keel.dev/max-players 1: the match is full
  ASSERT_TRUE(test::drive({first.get(), second.get()}, 3.0, [&] { return second->denied(); }));
  auto startup = rs.client(3, false, 0);  // the start-up match: --max-players (16)
  ASSERT_TRUE(test::drive({first.get(), startup.get()}, 5.0, [&] { return startup->playing(); }));
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);

  std::map<std::string, replay::Header> headers;  // by match id
  for (const auto& path : rs.server->recordings()) {
    auto rec = replay::Recording::open(path);
    ASSERT_TRUE(rec) << path;
    for (const auto& [k, v] : rec->header().metadata) {
      if (k == "match_id") headers[v] = rec->header();
    }
  }
  ASSERT_EQ(headers.count("5"), 1u);
  ASSERT_EQ(headers.count("0"), 1u);
  auto scene_of = [](const replay::Header& h) {
    for (const auto& [k, v] : h.metadata) if (k == "scene") return v;
    return std::string();
  };
  EXPECT_EQ(headers["5"].tick_rate, 30u);
  EXPECT_EQ(std::filesystem::path(scene_of(headers["5"])).filename(), "cubes.json");
  auto scene5 = scene::parse_scene_binary(headers["5"].scene, "match 5");
  ASSERT_TRUE(scene5);
  EXPECT_EQ(scene5->name, "cubes");
  EXPECT_EQ(headers["0"].tick_rate, 60u);
  EXPECT_EQ(std::filesystem::path(scene_of(headers["0"])).filename(), "demo.json");
}

// Values that do not pass their checks are refused one by one: the flags' values stay.
TEST(AgonesServer, RefusedAllocationSettingsKeepTheFlags) {
  FakeSidecar sidecar(0, 1);
  sidecar.set_gameserver("{}",
                         R"({"keel.dev/scene":"../scenes/cubes.json","keel.dev/max-players":"1000",)"
                         R"("keel.dev/tick-rate":"30"})",
                         "");
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()).c_str(), 1);
  auto options = test::test_options("agones-settings-refused");
  test::RunningServer rs(options);
  unsetenv("AGONES_SDK_HTTP_PORT");
  ASSERT_TRUE(wait_until([&] { return allocation_handled(sidecar); }, 8.0));
  auto a = rs.client(1, false, 9);
  auto b = rs.client(2, false, 9);
  ASSERT_TRUE(test::drive({a.get(), b.get()}, 5.0, [&] { return a->playing() && b->playing(); }));
  rs.server->request_stop();
  EXPECT_EQ(rs.server->wait(), 0);
  bool found = false;
  for (const auto& path : rs.server->recordings()) {
    auto rec = replay::Recording::open(path);
    ASSERT_TRUE(rec);
    for (const auto& [k, v] : rec->header().metadata) {
      if (k != "match_id" || v != "9") continue;
      found = true;
      EXPECT_EQ(rec->header().tick_rate, 30u);  // the one valid value applies
      auto scene = scene::parse_scene_binary(rec->header().scene, path);
      ASSERT_TRUE(scene);
      EXPECT_EQ(scene->name, "demo");
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace keel::server
