// keel::server::AgonesClient — keel-server's side of the Agones SDK sidecar.
//
// On Kubernetes with Agones, every game-server pod runs an SDK sidecar with a local HTTP
// API (AGONES_SDK_HTTP_PORT, default 9358). Talking to it over plain HTTP keeps gRPC out
// of Keel. The client runs on a thread of its own so that a slow or starting sidecar
// never delays a tick:
//   - POST /ready once the server listens, retried until the sidecar answers;
//   - POST /health every health_interval while the health callback says ticks are on
//     time (a server that stops ticking stops pinging, and Agones replaces it);
//   - GET /gameserver every poll_interval until the state is "Allocated": every answer
//     goes to the report callback (the address clients reach the server at is known
//     from the first one), and the allocated one to the allocated callback (its labels
//     and annotations carry the match settings, read_allocation_settings());
//   - POST /shutdown when request_shutdown() is called, after the last match ended.
// docs/operations.md ("Running a fleet") describes the flags and labels.
#pragma once

#include <keel/base/expected.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace keel::server {

struct AgonesOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9358;
  double health_interval = 2.0;  ///< s between Health calls while healthy
  double poll_interval = 1.0;    ///< s between GET /gameserver until Allocated
  double retry_interval = 0.5;   ///< s between attempts while the sidecar does not answer
  double request_timeout = 2.0;  ///< s for one HTTP exchange

  /// Options from AGONES_SDK_HTTP_PORT; nullopt when the variable is unset. A set but
  /// invalid value is an error.
  static keel::Expected<std::optional<AgonesOptions>> from_environment();
};

/// What GET /gameserver reported.
struct AgonesGameServer {
  std::string name;
  std::string state;  ///< "Scheduled", "Ready", "Allocated", "Shutdown", ...
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string address;                     ///< status.address: the node's address, "" until known
  std::map<std::string, uint16_t> ports;   ///< status.ports: port name -> host port
};

/// Parses the sidecar's GameServer JSON (bounded, untrusted). Malformed address and port
/// entries are left out rather than failing the whole report.
keel::Expected<AgonesGameServer> parse_agones_gameserver(const std::string& json);

/// The "host:port" clients reach this GameServer at: status.address and the host port of
/// the port named `port_name` ([v6]:port for an IPv6 address, as connect tokens write it).
/// An error says what is missing or malformed.
keel::Expected<std::string> agones_public_address(const AgonesGameServer& gs,
                                                 const std::string& port_name);

/// Match settings an allocation carries in its annotations (or labels; an annotation wins
/// over a label of the same key). Each key is optional; a value that does not pass its
/// check is left unset and described in `refused` (key: why), so the flags' value stays.
struct AllocationSettings {
  std::optional<std::string> scene;       ///< keel.dev/scene: a file name, no directory
  std::optional<uint32_t> max_players;    ///< keel.dev/max-players: 1..the --max-players cap
  std::optional<uint32_t> tick_rate;      ///< keel.dev/tick-rate: 30, 60 or 120
  std::map<std::string, std::string> refused;
};
inline constexpr const char* kAgonesSceneKey = "keel.dev/scene";
inline constexpr const char* kAgonesMaxPlayersKey = "keel.dev/max-players";
inline constexpr const char* kAgonesTickRateKey = "keel.dev/tick-rate";
AllocationSettings read_allocation_settings(const AgonesGameServer& gs, uint32_t max_players_cap);

/// One HTTP/1.1 exchange with a short deadline (the sidecar is on localhost).
struct HttpReply {
  int status = 0;
  std::string body;
};
keel::Expected<HttpReply> http_exchange(const std::string& host, uint16_t port,
                                         const std::string& method, const std::string& path,
                                         const std::string& body, double timeout_seconds);

class AgonesClient {
 public:
  using HealthFn = std::function<bool()>;
  using AllocatedFn = std::function<void(const AgonesGameServer&)>;
  using ReportFn = std::function<void(const AgonesGameServer&)>;
  using LogFn = std::function<void(const std::string&)>;

  /// `on_report` (optional) sees every GameServer the sidecar reports, before
  /// `on_allocated` sees the allocated one.
  AgonesClient(AgonesOptions options, HealthFn healthy, AllocatedFn on_allocated, LogFn log,
               ReportFn on_report = nullptr);
  ~AgonesClient();
  AgonesClient(const AgonesClient&) = delete;
  AgonesClient& operator=(const AgonesClient&) = delete;

  /// Starts the thread: Ready (with retries), then Health and polling.
  void start();
  /// Sends Shutdown and stops the thread; waits at most `timeout` seconds.
  void request_shutdown(double timeout = 3.0);

  bool ready_sent() const;
  bool allocated() const;

 private:
  void run();
  void heartbeat_loop();  // Health and polling until stopped or shut down
  bool poll_gameserver(); // one GET /gameserver; true once Allocated
  void finish();          // Shutdown (when requested), then wakes request_shutdown()
  bool call(const std::string& method, const std::string& path, std::string* body = nullptr);
  bool wait_for(double seconds);  // false when asked to stop

  AgonesOptions options_;
  HealthFn healthy_;
  AllocatedFn on_allocated_;
  LogFn log_;
  ReportFn on_report_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool shutdown_requested_ = false;
  bool shutdown_done_ = false;
  bool ready_sent_ = false;
  bool allocated_ = false;
  std::thread thread_;
};

}  // namespace keel::server
