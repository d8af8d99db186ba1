#include "log.h"

#include <chrono>
#include <ctime>

namespace keel::server {
namespace {

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
  }
  return "info";
}

// UTC with milliseconds, ISO 8601: sortable and unambiguous across machines.
std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
  return buf;
}

std::string human_value(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    // Quote values a reader could misparse (spaces, '=', empty).
    if (s.empty() || s.find_first_of(" =\"") != std::string::npos) {
      return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return s;
  }
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

bool parse_log_level(const std::string& text, LogLevel& out) {
  for (LogLevel l : {LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error}) {
    if (text == level_name(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

void Logger::log(LogLevel level, const std::string& event, const nlohmann::json& fields) {
  if (!enabled(level)) return;
  std::string line;
  if (json_) {
    nlohmann::json j = {{"ts", timestamp()}, {"level", level_name(level)}, {"event", event}};
    if (fields.is_object()) {
      for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
    }
    // Invalid UTF-8 from a peer (an address, a name) must not throw: replace it.
    line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    char lvl[8];
    std::snprintf(lvl, sizeof lvl, "%-5s", level_name(level));
    // append() rather than operator+ chains: gcc 12 warns falsely (-Wrestrict) on those.
    line.append(timestamp()).append(" ").append(lvl).append(" ").append(event);
    if (fields.is_object()) {
      for (auto it = fields.begin(); it != fields.end(); ++it) {
        line.append(" ").append(it.key()).append("=").append(human_value(it.value()));
      }
    }
  }
  line += '\n';
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_shown_ && status_out_ == out_) {
    std::fputs("\r\033[K", out_);  // the log line replaces the status line; the next status redraws it
    status_shown_ = false;
  }
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void Logger::raw(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  if (status_out_ == out_) status_shown_ = false;
}

void Logger::status(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::fputs(("\r\033[K" + text).c_str(), status_out_);
  std::fflush(status_out_);
  status_shown_ = true;
}

}  // namespace keel::server
