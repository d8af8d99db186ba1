// Helpers for tests that run keel-server as a process (spawning, HTTP and metrics are in
// tests/common/child_process.h): waiting for an exit and the kernel's view of its memory.
#pragma once

#include "../common/child_process.h"
#include "server_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

extern char** environ;

namespace keel::test {

/// The wait status once `pid` exits within `seconds`; otherwise it is killed and nullopt.
inline std::optional<int> wait_for_exit(pid_t pid, double seconds) {
  double end = seconds_now() + seconds;
  int status = 0;
  while (seconds_now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return std::nullopt;
}

/// A field of /proc/PID/status in KiB (VmRSS, VmHWM); -1 when unreadable.
inline double proc_status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atof(line.c_str() + field.size() + 1);
  }
  return -1;
}

}  // namespace keel::test
