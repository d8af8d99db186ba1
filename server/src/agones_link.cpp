#include "agones_link.h"

#include <keel/scene/scene.h>

#include <filesystem>

namespace keel::server {

keel::Status AgonesLink::start() {
  auto env = AgonesOptions::from_environment();
  if (!env) return keel::Error{env.error().message};
  if (!options_.agones && !env->has_value()) return {};
  AgonesOptions agones_options = env->has_value() ? **env : AgonesOptions{};
  client_ = std::make_unique<AgonesClient>(
      agones_options, [this] { return hooks_.healthy(); },
      [this](const AgonesGameServer& gs) { on_allocated(gs); },
      [this](const std::string& what) { log_.warn("agones", {{"error", what}}); },
      [this](const AgonesGameServer& gs) { on_report(gs); });
  client_->start();
  log_.info("agones_enabled", {{"sidecar", agones_options.host + ":" + std::to_string(agones_options.port)}});
  return {};
}

// Agones thread: the address and host port clients are told to reach this GameServer at
// (the allocation's address and port) is what the matchmaker's tokens name.
void AgonesLink::on_report(const AgonesGameServer& gs) {
  auto address = agones_public_address(gs, options_.agones_port);
  if (!address) {
    if (address_.empty()) log_.debug("agones_address_pending", {{"why", address.error().message}});
    return;
  }
  if (*address == address_) return;
  address_ = *address;
  hooks_.accept_address(*address);
  log_.info("agones_address", {{"address", *address}, {"port_name", options_.agones_port}});
}

// Agones thread: the allocation's settings are checked and its scene loaded here, off the
// tick thread; matches created from now on use them.
void AgonesLink::on_allocated(const AgonesGameServer& gs) {
  nlohmann::json labels = gs.labels, annotations = gs.annotations;
  log_.info("agones_allocated", {{"gameserver", gs.name}, {"labels", labels}, {"annotations", annotations}});
  if (auto s = settings_from(gs)) {
    std::lock_guard lock(settings_mutex_);
    settings_ = std::move(*s);
  }
  allocated_.store(true);
  hooks_.wake_tick();
}

std::optional<MatchSettings> AgonesLink::settings_from(const AgonesGameServer& gs) {
  AllocationSettings read = read_allocation_settings(gs, options_.max_players);
  for (const auto& [key, why] : read.refused) {
    log_.warn("agones_setting_refused", {{"key", key}, {"why", why}, {"kept", "the flags' value"}});
  }
  if (!read.scene && !read.max_players && !read.tick_rate) return std::nullopt;
  MatchSettings out = flag_settings_;
  if (read.scene) {
    // A bare file name (checked) in the directory of --scene: an allocation picks among
    // the scenes the operator installed, never an arbitrary path.
    std::string path = (std::filesystem::path(options_.scene_path).parent_path() / *read.scene).string();
    auto scene = keel::scene::load_scene_file(path);
    if (!scene) {
      log_.warn("agones_setting_refused",
                {{"key", kAgonesSceneKey}, {"why", scene.error().message}, {"kept", options_.scene_path}});
    } else {
      if (options_.tick_rate != 0) scene->settings.tick_rate = options_.tick_rate;
      out.scene = std::make_shared<const sim::SceneDef>(std::move(*scene));
      out.scene_path = path;
    }
  }
  if (read.tick_rate && *read.tick_rate != out.scene->settings.tick_rate) {
    auto scene = std::make_shared<sim::SceneDef>(*out.scene);
    scene->settings.tick_rate = *read.tick_rate;
    out.scene = std::move(scene);
  }
  if (read.max_players) out.max_players = *read.max_players;
  log_.info("agones_match_settings", {{"scene", out.scene_path}, {"tick_rate", out.scene->settings.tick_rate},
                                      {"max_players", out.max_players},
                                      {"applies_to", "matches created from now on"}});
  return out;
}

std::optional<MatchSettings> AgonesLink::take_settings() {
  std::lock_guard lock(settings_mutex_);
  std::optional<MatchSettings> out = std::move(settings_);
  settings_.reset();
  return out;
}

bool AgonesLink::allocation_over(Now t) {
  if (!client_ || !allocated_.load()) return false;
  if (metrics_.snapshot().players > 0) {
    had_players_ = true;
    empty_since_ns_ = -1;
    return false;
  }
  if (!had_players_) return false;
  if (empty_since_ns_ < 0) empty_since_ns_ = t.ns;
  if (t.ns - empty_since_ns_ <= static_cast<int64_t>(options_.empty_match_grace * 1e9)) return false;
  log_.info("agones_match_over", {{"action", "stopping; Shutdown follows"}});
  return true;
}

void AgonesLink::shut_down() {
  if (client_) client_->request_shutdown(1.0);
}

}  // namespace keel::server
