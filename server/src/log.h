// Structured logs: one event name plus key/value fields per line, human-readable by
// default ("2026-01-02T03:04:05.678Z INFO  client_joined match=0 player=7") or one JSON
// object per line with --log-json ({"ts":..,"level":..,"event":..,<fields>}). Lines are
// written whole under a mutex, so threads never interleave inside a line. The live status
// line may go to another stream than the log lines (--log-file: logs to the file, the
// status line stays on the terminal).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <mutex>
#include <string>

namespace keel::server {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };

/// Parses "debug", "info", "warn" or "error"; false for anything else.
bool parse_log_level(const std::string& text, LogLevel& out);

class Logger {
 public:
  Logger(LogLevel level = LogLevel::Info, bool json = false, std::FILE* out = stderr,
         std::FILE* status_out = nullptr)
      : level_(level), json_(json), out_(out), status_out_(status_out ? status_out : out) {}

  bool enabled(LogLevel level) const { return level >= level_; }
  void log(LogLevel level, const std::string& event, const nlohmann::json& fields = {});
  void debug(const std::string& e, const nlohmann::json& f = {}) { log(LogLevel::Debug, e, f); }
  void info(const std::string& e, const nlohmann::json& f = {}) { log(LogLevel::Info, e, f); }
  void warn(const std::string& e, const nlohmann::json& f = {}) { log(LogLevel::Warn, e, f); }
  void error(const std::string& e, const nlohmann::json& f = {}) { log(LogLevel::Error, e, f); }
  /// Writes raw text under the same lock as log lines.
  void raw(const std::string& text);
  /// Redraws the live status line (a terminal only); a log line on the same stream clears
  /// it first.
  void status(const std::string& text);

 private:
  LogLevel level_;
  bool json_;
  std::FILE* out_;
  std::FILE* status_out_;
  std::mutex mutex_;
  bool status_shown_ = false;
};

}  // namespace keel::server
