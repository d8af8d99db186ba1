// Which match a connected datagram belongs to, by (socket, source address). Written by
// the tick thread as clients are admitted and by match tasks as sessions close, read by
// the I/O thread for every datagram: a shared mutex keeps lookups concurrent and short.
//
// Each route has an id. A fresh handshake with another token from an address that
// already has a session replaces its route (the client restarted, or reconnected with a
// new token); the old session then closes, and removes the route only if it is still its
// own. (The match decides whether an admission with the same token is a second
// handshake of the same connection attempt: the session keeps the new route id then.)
#pragma once

#include "net.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>

namespace keel::server {

class MatchHost;

class Router {
 public:
  using Key = std::pair<uint32_t, Udp::endpoint>;

  std::shared_ptr<MatchHost> find(const Key& key) const {
    std::shared_lock lock(mutex_);
    auto it = routes_.find(key);
    return it == routes_.end() ? nullptr : it->second.host;
  }
  /// Routes `key` to `host`, replacing any route it had. Returns the new route's id and
  /// the host it was routed to before (null if none).
  std::pair<uint64_t, std::shared_ptr<MatchHost>> assign(const Key& key, std::shared_ptr<MatchHost> host) {
    std::unique_lock lock(mutex_);
    Route& r = routes_[key];
    std::shared_ptr<MatchHost> before = std::move(r.host);
    r.host = std::move(host);
    r.id = ++next_id_;
    return {r.id, std::move(before)};
  }
  /// Removes the route of `key` if it is still route `id` (a replaced one is left alone).
  void remove(const Key& key, uint64_t id) {
    std::unique_lock lock(mutex_);
    auto it = routes_.find(key);
    if (it != routes_.end() && it->second.id == id) routes_.erase(it);
  }
  bool contains(const Key& key) const {
    std::shared_lock lock(mutex_);
    return routes_.count(key) != 0;
  }

 private:
  struct Route {
    std::shared_ptr<MatchHost> host;
    uint64_t id = 0;
  };
  mutable std::shared_mutex mutex_;
  std::map<Key, Route> routes_;
  uint64_t next_id_ = 0;
};

}  // namespace keel::server
