// The operator's status line: tick, players, matches, kbit/s out and in, and the start-up
// match's last hash. Redrawn in place on a terminal every --status-interval, and written
// to the log every ten intervals. Tick thread only.
#pragma once

#include "log.h"
#include "match_host.h"
#include "metrics.h"

#include <keel/server/config.h>

#include <cstdint>
#include <string>

namespace keel::server {

class StatusLine {
 public:
  StatusLine(const ServerOptions& options, Logger& log, const Metrics& metrics, bool tty)
      : options_(options), log_(log), metrics_(metrics), tty_(tty) {}

  void update(Now now, const MatchHost& primary);
  /// Clears a line drawn in place, so that what follows starts on a clean line.
  void clear();

 private:
  std::string text(Now now, const MatchHost& primary);

  const ServerOptions& options_;
  Logger& log_;
  const Metrics& metrics_;
  const bool tty_;  // the line is redrawn in place on stderr
  int64_t last_ns_ = 0, last_logged_ns_ = 0;
  uint64_t last_bytes_out_ = 0, last_bytes_in_ = 0;
};

}  // namespace keel::server
