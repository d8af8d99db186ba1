// The server's side of Agones (docs/operations.md, "Agones"): on with --agones or
// AGONES_SDK_HTTP_PORT. The sidecar client runs its own thread; an allocation's settings
// are checked (and its scene loaded) there, then taken by the tick thread for the matches
// it creates from then on. After an allocation the server ends once it has had players
// and then none for --empty-match-grace seconds.
#pragma once

#include "log.h"
#include "match_host.h"
#include "metrics.h"

#include <keel/server/agones.h>
#include <keel/server/config.h>
#include <keel/base/expected.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace keel::server {

class AgonesLink {
 public:
  struct Hooks {
    std::function<bool()> healthy;                             ///< any thread
    std::function<void(const std::string&)> accept_address;    ///< an address tokens may name
    std::function<void()> wake_tick;                           ///< an allocation arrived
  };

  AgonesLink(const ServerOptions& options, const MatchSettings& flag_settings, Logger& log, const Metrics& metrics,
             Hooks hooks)
      : options_(options), flag_settings_(flag_settings), log_(log), metrics_(metrics), hooks_(std::move(hooks)) {}

  /// Starts the sidecar client when Agones is on; does nothing otherwise.
  keel::Status start();
  /// Tick thread: true once an allocated server has been empty past the grace.
  bool allocation_over(Now now);
  /// Tick thread: the allocation's settings, once, when there are new ones.
  std::optional<MatchSettings> take_settings();
  /// The recordings are final: tell the sidecar this GameServer is done.
  void shut_down();

 private:
  void on_report(const AgonesGameServer& gs);
  void on_allocated(const AgonesGameServer& gs);
  std::optional<MatchSettings> settings_from(const AgonesGameServer& gs);

  const ServerOptions& options_;
  const MatchSettings& flag_settings_;
  Logger& log_;
  const Metrics& metrics_;
  Hooks hooks_;
  std::unique_ptr<AgonesClient> client_;
  std::atomic<bool> allocated_{false};
  bool had_players_ = false;   // tick thread
  int64_t empty_since_ns_ = -1;  // tick thread
  std::string address_;        // Agones thread: the GameServer address tokens may name
  std::mutex settings_mutex_;
  std::optional<MatchSettings> settings_;  // Agones thread -> tick thread
};

}  // namespace keel::server
