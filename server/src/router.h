// Which match a connected datagram belongs to, by (socket, source address). Written by
// match tasks when sessions open and close, read by the I/O thread for every datagram:
// a shared mutex keeps lookups concurrent and short.
#pragma once

#include "net.h"

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
    return it == routes_.end() ? nullptr : it->second;
  }
  /// False when the address already has a session (a resent handshake response).
  bool add(const Key& key, std::shared_ptr<MatchHost> host) {
    std::unique_lock lock(mutex_);
    return routes_.emplace(key, std::move(host)).second;
  }
  void remove(const Key& key) {
    std::unique_lock lock(mutex_);
    routes_.erase(key);
  }
  bool contains(const Key& key) const {
    std::shared_lock lock(mutex_);
    return routes_.count(key) != 0;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<Key, std::shared_ptr<MatchHost>> routes_;
};

}  // namespace keel::server
