#include <keel/server/agones.h>

#include <keel/protocol/token.h>

#include <asio.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string_view>

namespace keel::server {
namespace {

constexpr size_t kMaxResponseBytes = 256 * 1024;  // a GameServer object is a few KiB

std::string build_request(const std::string& host, uint16_t port, const std::string& method,
                          const std::string& path, const std::string& body) {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: " + host + ":" +
                  std::to_string(port) + "\r\nConnection: close\r\n";
  if (method != "GET") {
    r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n";
  }
  r += "\r\n";
  if (method != "GET") r += body;
  return r;
}

/// Splits "HTTP/1.1 200 OK\r\n...\r\n\r\nbody" (Connection: close, so the body is the rest).
keel::Expected<HttpReply> parse_response(const std::string& raw) {
  size_t line_end = raw.find("\r\n");
  size_t head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || line_end == std::string::npos ||
      head_end == std::string::npos) {
    return keel::Error{"malformed HTTP response"};
  }
  size_t sp = raw.find(' ');
  if (sp == std::string::npos || sp + 4 > line_end) return keel::Error{"malformed status line"};
  int status = 0;
  for (size_t i = sp + 1; i < sp + 4; ++i) {
    if (raw[i] < '0' || raw[i] > '9') return keel::Error{"malformed status code"};
    status = status * 10 + (raw[i] - '0');
  }
  HttpReply out;
  out.status = status;
  out.body = raw.substr(head_end + 4);
  // A chunked body (the sidecar's Go server chunks when it streams) is decoded here.
  std::string_view head(raw.data(), head_end);
  if (head.find("Transfer-Encoding: chunked") != std::string_view::npos ||
      head.find("transfer-encoding: chunked") != std::string_view::npos) {
    std::string decoded;
    size_t pos = 0;
    const std::string& b = out.body;
    while (pos < b.size()) {
      size_t eol = b.find("\r\n", pos);
      if (eol == std::string::npos) return keel::Error{"malformed chunk"};
      size_t len = std::strtoul(b.substr(pos, eol - pos).c_str(), nullptr, 16);
      if (len == 0) break;
      if (eol + 2 + len > b.size()) return keel::Error{"truncated chunk"};
      decoded.append(b, eol + 2, len);
      pos = eol + 2 + len + 2;
    }
    out.body = std::move(decoded);
  }
  return out;
}

constexpr size_t kMaxHostBytes = 253;  // a DNS name's limit
constexpr size_t kMaxPorts = 64;
constexpr size_t kMaxPortNameBytes = 63;
constexpr size_t kMaxSceneNameBytes = 128;

/// A DNS name or an IP address, as Agones reports a node's address.
bool valid_host(const std::string& host) {
  if (host.empty() || host.size() > kMaxHostBytes) return false;
  if (host.find(':') != std::string::npos) {
    asio::error_code ec;
    asio::ip::make_address_v6(host, ec);
    return !ec;
  }
  if (host.front() == '-' || host.front() == '.') return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

void parse_status(const nlohmann::json& status, AgonesGameServer& gs) {
  if (status.contains("state") && status["state"].is_string()) gs.state = status["state"].get<std::string>();
  if (status.contains("address") && status["address"].is_string()) {
    std::string address = status["address"].get<std::string>();
    if (valid_host(address)) gs.address = std::move(address);
  }
  if (!status.contains("ports") || !status["ports"].is_array()) return;
  for (const auto& p : status["ports"]) {
    if (gs.ports.size() >= kMaxPorts) break;
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("port") ||
        !p["port"].is_number_integer()) {
      continue;
    }
    std::string name = p["name"].get<std::string>();
    int64_t port = p["port"].get<int64_t>();
    if (name.empty() || name.size() > kMaxPortNameBytes || port < 1 || port > 65535) continue;
    gs.ports[name] = static_cast<uint16_t>(port);
  }
}

/// An annotation, else a label, of that key.
std::optional<std::string> setting(const AgonesGameServer& gs, const std::string& key) {
  if (auto it = gs.annotations.find(key); it != gs.annotations.end()) return it->second;
  if (auto it = gs.labels.find(key); it != gs.labels.end()) return it->second;
  return std::nullopt;
}

/// Decimal digits only (no sign, no spaces), at most 9 of them.
std::optional<uint32_t> small_number(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  return value;
}

/// A plain file name: no directory part can lead outside the scene directory.
bool valid_scene_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxSceneNameBytes) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  bool chars_ok = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  auto ends_with = [&](std::string_view suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return chars_ok && (ends_with(".json") || ends_with(".kscn"));
}

std::map<std::string, std::string> string_map(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

}  // namespace

keel::Expected<std::optional<AgonesOptions>> AgonesOptions::from_environment() {
  const char* port = std::getenv("AGONES_SDK_HTTP_PORT");
  if (port == nullptr || *port == '\0') return std::optional<AgonesOptions>{};
  char* end = nullptr;
  long value = std::strtol(port, &end, 10);
  if (*end != '\0' || value <= 0 || value > 65535) {
    return keel::Error{std::string("AGONES_SDK_HTTP_PORT: not a port number: ") + port};
  }
  AgonesOptions options;
  options.port = static_cast<uint16_t>(value);
  return std::optional<AgonesOptions>{options};
}

keel::Expected<AgonesGameServer> parse_agones_gameserver(const std::string& text) {
  if (text.size() > kMaxResponseBytes) return keel::Error{"GameServer JSON too large"};
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return keel::Error{"GameServer: not a JSON object"};
  AgonesGameServer gs;
  const auto& meta = j.contains("object_meta") ? j["object_meta"] : nlohmann::json::object();
  if (meta.is_object()) {
    if (meta.contains("name") && meta["name"].is_string()) gs.name = meta["name"].get<std::string>();
    if (meta.contains("labels")) gs.labels = string_map(meta["labels"]);
    if (meta.contains("annotations")) gs.annotations = string_map(meta["annotations"]);
  }
  if (j.contains("status") && j["status"].is_object()) parse_status(j["status"], gs);
  if (gs.state.empty()) return keel::Error{"GameServer: no status.state"};
  return gs;
}

keel::Expected<std::string> agones_public_address(const AgonesGameServer& gs,
                                                 const std::string& port_name) {
  if (gs.address.empty()) return keel::Error{"GameServer: no valid status.address yet"};
  auto port = gs.ports.find(port_name);
  if (port == gs.ports.end()) {
    return keel::Error{"GameServer: no valid status.ports entry named \"" + port_name + "\""};
  }
  bool v6 = gs.address.find(':') != std::string::npos;
  std::string address = (v6 ? "[" + gs.address + "]" : gs.address) + ":" + std::to_string(port->second);
  if (address.size() > protocol::kMaxAddressBytes) {
    return keel::Error{"GameServer: " + address + " is longer than a connect token can name (" +
                      std::to_string(protocol::kMaxAddressBytes) + " bytes)"};
  }
  return address;
}

AllocationSettings read_allocation_settings(const AgonesGameServer& gs, uint32_t max_players_cap) {
  AllocationSettings out;
  if (auto v = setting(gs, kAgonesSceneKey)) {
    if (valid_scene_name(*v)) out.scene = *v;
    else out.refused[kAgonesSceneKey] = "not a scene file name (letters, digits, - _ ., ending .json or .kscn)";
  }
  if (auto v = setting(gs, kAgonesMaxPlayersKey)) {
    auto n = small_number(*v);
    if (n && *n >= 1 && *n <= max_players_cap) out.max_players = *n;
    else out.refused[kAgonesMaxPlayersKey] = "not a number from 1 to " + std::to_string(max_players_cap) + " (--max-players)";
  }
  if (auto v = setting(gs, kAgonesTickRateKey)) {
    auto n = small_number(*v);
    if (n && (*n == 30 || *n == 60 || *n == 120)) out.tick_rate = *n;
    else out.refused[kAgonesTickRateKey] = "not 30, 60 or 120";
  }
  return out;
}

keel::Expected<HttpReply> http_exchange(const std::string& host, uint16_t port,
                                         const std::string& method, const std::string& path,
                                         const std::string& body, double timeout_seconds) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  std::error_code result = asio::error::timed_out;
  std::string request = build_request(host, port, method, path, body);
  std::string raw;
  std::array<char, 4096> buffer;
  asio::error_code addr_error;
  auto address = asio::ip::make_address(host, addr_error);
  if (addr_error) return keel::Error{"agones: bad sidecar address " + host};
  asio::ip::tcp::endpoint endpoint(address, port);

  std::function<void()> read_more = [&] {
    socket.async_read_some(asio::buffer(buffer), [&](std::error_code ec, size_t n) {
      raw.append(buffer.data(), n);
      if (raw.size() > kMaxResponseBytes) {
        result = asio::error::message_size;
      } else if (ec == asio::error::eof) {
        result = {};
      } else if (ec) {
        result = ec;
      } else {
        read_more();
      }
    });
  };
  socket.async_connect(endpoint, [&](std::error_code ec) {
    if (ec) {
      result = ec;
      return;
    }
    asio::async_write(socket, asio::buffer(request), [&](std::error_code wec, size_t) {
      if (wec) {
        result = wec;
        return;
      }
      read_more();
    });
  });
  io.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(timeout_seconds)));
  if (result) {
    return keel::Error{method + " " + path + ": " + result.message()};
  }
  return parse_response(raw);
}

AgonesClient::AgonesClient(AgonesOptions options, HealthFn healthy, AllocatedFn on_allocated,
                           LogFn log, ReportFn on_report)
    : options_(std::move(options)),
      healthy_(std::move(healthy)),
      on_allocated_(std::move(on_allocated)),
      log_(std::move(log)),
      on_report_(std::move(on_report)) {}

AgonesClient::~AgonesClient() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AgonesClient::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void AgonesClient::request_shutdown(double timeout) {
  std::unique_lock lock(mutex_);
  shutdown_requested_ = true;
  wake_.notify_all();
  wake_.wait_for(lock, std::chrono::duration<double>(timeout), [&] { return shutdown_done_; });
  stop_ = true;
  wake_.notify_all();
}

bool AgonesClient::ready_sent() const {
  std::lock_guard lock(mutex_);
  return ready_sent_;
}

bool AgonesClient::allocated() const {
  std::lock_guard lock(mutex_);
  return allocated_;
}

bool AgonesClient::call(const std::string& method, const std::string& path, std::string* body) {
  auto response =
      http_exchange(options_.host, options_.port, method, path, method == "GET" ? "" : "{}",
                   options_.request_timeout);
  if (!response) {
    if (log_) log_("agones: " + response.error().message);
    return false;
  }
  if (response->status != 200) {
    if (log_) log_("agones: " + method + " " + path + " answered " + std::to_string(response->status));
    return false;
  }
  if (body != nullptr) *body = std::move(response->body);
  return true;
}

bool AgonesClient::wait_for(double seconds) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, std::chrono::duration<double>(seconds),
                 [&] { return stop_ || shutdown_requested_; });
  return !stop_ && !shutdown_requested_;
}

void AgonesClient::run() {
  // Ready, retried while the sidecar starts.
  while (!call("POST", "/ready")) {
    if (!wait_for(options_.retry_interval)) break;
  }
  bool ready;
  {
    std::lock_guard lock(mutex_);
    ready = ready_sent_ = !stop_ && !shutdown_requested_;
  }
  if (ready) heartbeat_loop();
  finish();
}

void AgonesClient::heartbeat_loop() {
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  Clock::time_point last_health = Clock::now() - std::chrono::hours(1);
  Clock::time_point last_poll = last_health;
  bool allocated = false;
  while (true) {
    if (seconds_since(last_health) >= options_.health_interval) {
      last_health = Clock::now();
      if (!healthy_ || healthy_()) call("POST", "/health");
    }
    if (!allocated && seconds_since(last_poll) >= options_.poll_interval) {
      last_poll = Clock::now();
      allocated = poll_gameserver();
    }
    double next = options_.health_interval - seconds_since(last_health);
    if (!allocated) next = std::min(next, options_.poll_interval - seconds_since(last_poll));
    if (!wait_for(std::max(0.01, next))) break;
  }
}

bool AgonesClient::poll_gameserver() {
  std::string body;
  if (!call("GET", "/gameserver", &body)) return false;
  auto gs = parse_agones_gameserver(body);
  if (!gs) {
    if (log_) log_("agones: " + gs.error().message);
    return false;
  }
  if (on_report_) on_report_(*gs);
  if (gs->state != "Allocated") return false;
  {
    std::lock_guard lock(mutex_);
    allocated_ = true;
  }
  if (on_allocated_) on_allocated_(*gs);
  return true;
}

void AgonesClient::finish() {
  bool shutdown;
  {
    std::lock_guard lock(mutex_);
    shutdown = shutdown_requested_;
  }
  if (shutdown) {
    for (int attempt = 0; attempt < 3 && !call("POST", "/shutdown"); ++attempt) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.retry_interval));
    }
  }
  std::lock_guard lock(mutex_);
  shutdown_done_ = true;
  wake_.notify_all();
}

}  // namespace keel::server
