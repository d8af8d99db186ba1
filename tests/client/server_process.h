// keel-server as a child process for client tests over real loopback sockets: free
// ports, its /metrics text, and a server started with the arguments a test gives (after
// --bind, --websocket, --metrics and --status-interval 0), stopped with SIGTERM when the
// test is done. Ready once it has ticked.
#pragma once

#include "../common/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace keel::client::test {

inline double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

using keel::test::free_port;

/// GET http://127.0.0.1:port/path: the whole response, "" when nothing listens.
inline std::string fetch_metrics(uint16_t port, const std::string& path = "/metrics") {
  return keel::test::http_fetch(port, path);
}

inline std::string read_log(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A metric's value in Prometheus text; -1 when absent.
inline double metric(const std::string& text, const std::string& name) { return keel::test::metric_value(text, name); }

struct ServerProcess {
  pid_t pid = 0;
  std::string udp = "127.0.0.1:" + std::to_string(free_port(false));
  std::string ws = "127.0.0.1:" + std::to_string(free_port(true));
  uint16_t metrics_port = free_port(true);
  std::string log;

  /// `args`: everything after the addresses (--scene, --record, budgets...); `log`: where
  /// its stdout and stderr go.
  ServerProcess(std::vector<std::string> args, std::string log_path) : log(std::move(log_path)) {
    std::vector<std::string> all = {std::string(KEEL_BINARY_DIR) + "/bin/keel-server", "--bind", udp,
                                    "--websocket", ws, "--status-interval", "0", "--metrics",
                                    "127.0.0.1:" + std::to_string(metrics_port)};
    all.insert(all.end(), args.begin(), args.end());
    pid = keel::test::spawn_process(std::move(all), log);
    for (int i = 0; pid > 0 && i < 100 && metric(fetch_metrics(metrics_port), "keel_ticks_total") < 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 100 && waitpid(pid, nullptr, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

}  // namespace keel::client::test
