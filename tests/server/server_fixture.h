// Shared set-up for the server tests: an in-process keel::server::Server on an ephemeral
// loopback port with its own recording directory, and a loop that drives test clients
// until a condition holds or a deadline passes (never longer than the scenario needs).
#pragma once

#include "test_client.h"

#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>
#include <keel/server/server.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace keel::test {

inline std::string demo_scene() { return std::string(KEEL_SOURCE_DIR) + "/scenes/demo.json"; }

/// A fresh, empty directory under the build tree for one test's recordings.
inline std::string fresh_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(KEEL_BINARY_DIR) / "test-server-output" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

inline server::ServerOptions test_options(const std::string& name) {
  server::ServerOptions o;
  o.scene_path = demo_scene();
  o.bind = {"127.0.0.1:0"};
  o.record_dir = fresh_dir(name);
  o.status_interval = 0;
  o.log_level = std::getenv("KEEL_TEST_LOG") ? std::getenv("KEEL_TEST_LOG") : "warn";
  o.threads = 2;
  return o;
}

inline double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// Updates every client about once a millisecond until `done()` or `seconds` pass.
/// Returns whether `done()` became true.
inline bool drive(std::vector<TestClient*> clients, double seconds, const std::function<bool()>& done = {}) {
  double end = seconds_now() + seconds;
  while (seconds_now() < end) {
    double now = seconds_now();
    for (TestClient* c : clients) c->update(now);
    if (done && done()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return done ? done() : true;
}

/// Re-runs a recording tick by tick, as `keel-replay verify` does.
inline replay::VerifyResult verify_recording(const std::string& path) {
  auto rec = replay::Recording::open(path);
  if (!rec) {
    replay::VerifyResult r;
    r.error = rec.error().message;
    return r;
  }
  return replay::verify(*rec, {});
}

struct RunningServer {
  std::unique_ptr<server::Server> server;
  std::string address;
  asio::io_context io;

  explicit RunningServer(const server::ServerOptions& o, server::RulesFactory rules = {}) {
    auto s = server::Server::create(o, std::move(rules));
    if (!s) throw std::runtime_error(s.error().message);
    server = std::move(*s);
    auto st = server->start();
    if (!st) throw std::runtime_error(st.error().message);
    address = server->bound_addresses().at(0);
  }

  std::unique_ptr<TestClient> client(uint64_t id, bool predict = false, uint64_t match = 0, double loss = 0) {
    TestClientOptions o;
    o.server = address;
    o.client_id = id;
    o.match_id = match;
    o.predict = predict;
    o.loss = loss;
    o.seed = id * 7919 + 1;
    auto c = std::make_unique<TestClient>(io, o);
    c->start(seconds_now());
    return c;
  }
};

}  // namespace keel::test
