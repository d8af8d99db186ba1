#include "status_line.h"

#include <keel/replay/format.h>

#include <algorithm>
#include <cstdio>

namespace keel::server {

void StatusLine::update(Now now, const MatchHost& primary) {
  if (options_.status_interval <= 0) return;
  const int64_t interval = static_cast<int64_t>(options_.status_interval * 1e9);
  // A log gets a status line every ten intervals; a live line is redrawn every interval
  // (and, when the log goes to its own file, the log still gets its every-ten line).
  const bool draw = tty_ && now.ns - last_ns_ >= interval;
  const bool write = (!tty_ || !options_.log_file.empty()) && now.ns - last_logged_ns_ >= 10 * interval;
  if (!draw && !write) return;
  std::string line = text(now, primary);
  if (draw) log_.status("keel-server: " + line);
  if (write) {
    last_logged_ns_ = now.ns;
    log_.info("status", {{"line", line}});
  }
}

void StatusLine::clear() {
  if (tty_) log_.status("");
}

// kbit/s are since the previous line.
std::string StatusLine::text(Now now, const MatchHost& primary) {
  double dt = std::max(1e-9, (now.ns - last_ns_) * 1e-9);
  uint64_t out = metrics_.bytes_out.load(), in = metrics_.bytes_in.load();
  double kbps_out = (out - last_bytes_out_) * 8.0 / 1000.0 / dt;
  double kbps_in = (in - last_bytes_in_) * 8.0 / 1000.0 / dt;
  last_ns_ = now.ns;
  last_bytes_out_ = out;
  last_bytes_in_ = in;
  char buf[256];
  std::snprintf(buf, sizeof buf, "tick %llu  players %llu  matches %llu  out %.0f kbit/s  in %.0f kbit/s  hash %s",
                static_cast<unsigned long long>(primary.tick()),
                static_cast<unsigned long long>(metrics_.players.load()),
                static_cast<unsigned long long>(metrics_.matches.load()), kbps_out, kbps_in,
                replay::hex_hash(primary.last_hash()).c_str());
  return buf;
}

}  // namespace keel::server
