// AgonesClient against a local HTTP endpoint standing in for the Agones SDK sidecar: the
// calls it makes, in which order and how often.
#include "server_fixture.h"

#include <keel/server/agones.h>

#include <asio.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
      body = R"({"object_meta":{"name":"keel-abc","labels":{"keel.dev/scene":"pile.json"},)"
             R"("annotations":{"keel.dev/match":"7"}},"status":{"state":")" + state + R"("}})";
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

}  // namespace
}  // namespace keel::server
