// What tests that run Keel's programs as child processes share: free loopback ports, a
// process started with its output in a file, a plain HTTP GET and a Prometheus metric's
// value.
#pragma once

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE 1
#endif
#include <asio.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace keel::test {

inline uint16_t free_port(bool tcp) {
  asio::io_context io;
  if (tcp) {
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
  }
  asio::ip::udp::socket s(io, {asio::ip::make_address("127.0.0.1"), 0});
  return s.local_endpoint().port();
}

/// Starts `args` (args[0] is the program) with stdout and stderr into `out_path`; 0 on failure.
inline pid_t spawn_process(std::vector<std::string> args, const std::string& out_path) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ) != 0) pid = 0;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

/// GET http://127.0.0.1:port/path with Host: localhost: the whole response (status line
/// included); "" when nothing answers.
inline std::string http_fetch(uint16_t port, const std::string& path) {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  asio::error_code ec;
  s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return "";
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  asio::write(s, asio::buffer(req), ec);
  std::string body;
  char buf[4096];
  while (!ec) {
    size_t n = s.read_some(asio::buffer(buf), ec);
    body.append(buf, n);
  }
  return body;
}

/// The value of a metric line `name value` (name may carry labels); -1 when absent.
inline double metric_value(const std::string& text, const std::string& name) {
  size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::atof(text.c_str() + at + name.size() + 2);
}

}  // namespace keel::test
