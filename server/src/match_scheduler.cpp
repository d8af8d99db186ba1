#include "match_scheduler.h"

#include <algorithm>
#include <chrono>

namespace keel::server {

namespace kp = keel::protocol;

// Admissions waiting for the tick thread; past this the I/O thread drops handshakes
// (counted), and their clients retry.
static constexpr size_t kMaxPendingAdmissions = 1024;
// The longest the tick thread sleeps between looks (admissions, finished tasks).
static constexpr int64_t kMaxWaitNs = 2'000'000;

MatchScheduler::MatchScheduler(HostServices services, MatchSettings settings, ClockFn clock)
    : services_(std::move(services)), settings_(std::move(settings)), clock_(std::move(clock)) {}

MatchScheduler::~MatchScheduler() {
  // The arena's tasks hold `this`: none may outlive it.
  wait_idle();
}

keel::Status MatchScheduler::start(uint32_t threads) {
  // The arena's workers come from TBB's global pool, which by default keeps one core for
  // the calling thread; the tick thread never joins in, so allow one more.
  tbb_limit_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads + 1);
  arena_ = std::make_unique<tbb::task_arena>(static_cast<int>(threads), 0);
  const uint64_t id = services_.options.match_id;
  auto primary = MatchHost::create(id, settings_, services_, clock_(), true);
  if (!primary) return primary.error();
  std::lock_guard<std::mutex> lock(matches_mutex_);
  primary_ = *primary;
  matches_[id] = primary_;
  recordings_.push_back(primary_->recording_path());
  return {};
}

bool MatchScheduler::enqueue(Admission&& a) {
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (pending_.size() >= kMaxPendingAdmissions) return false;
    pending_.push_back(std::move(a));
  }
  wake();
  return true;
}

std::vector<std::string> MatchScheduler::recordings() const {
  std::lock_guard<std::mutex> lock(matches_mutex_);
  return recordings_;
}

uint64_t MatchScheduler::primary_tick() const {
  std::lock_guard<std::mutex> lock(matches_mutex_);
  return primary_ ? primary_->tick() : 0;
}

void MatchScheduler::run_once(Now now) {
  admit_pending(now);
  end_finished(now);
  schedule_due(now);
}

void MatchScheduler::wait(Now now, const std::function<bool()>& stop) {
  int64_t next = now.ns + kMaxWaitNs;
  {
    std::lock_guard<std::mutex> lock(matches_mutex_);
    for (auto& [id, host] : matches_) {
      if (!host->running.load()) next = std::min(next, host->next_due_ns());
    }
  }
  const int64_t wait_ns = std::max<int64_t>(0, next - clock_().ns);
  std::unique_lock<std::mutex> lock(wake_mutex_);
  wake_.wait_for(lock, std::chrono::nanoseconds(wait_ns), [&] {
    if (stop()) return true;
    std::lock_guard<std::mutex> p(pending_mutex_);
    return !pending_.empty();
  });
}

void MatchScheduler::deny(const Admission& a, protocol::fb::DenyReason reason, const std::string& why) {
  services_.sender.send(a.socket, a.from, kp::build_deny(reason, a.client.keys.send));
  services_.log.info("client_denied", {{"address", a.client.address}, {"match", a.client.match_id},
                                       {"reason", protocol::fb::EnumNameDenyReason(reason)}, {"why", why}});
}

void MatchScheduler::add_match(uint64_t id, std::shared_ptr<MatchHost> host) {
  std::lock_guard<std::mutex> lock(matches_mutex_);
  recordings_.push_back(host->recording_path());
  matches_[id] = std::move(host);
}

// The match the token names, created on its first client; null (the client denied) when
// it cannot be.
std::shared_ptr<MatchHost> MatchScheduler::match_for(Admission& a, Now now) {
  const uint64_t id = a.client.match_id;
  {
    std::lock_guard<std::mutex> lock(matches_mutex_);
    auto it = matches_.find(id);
    if (it != matches_.end()) return it->second;
  }
  // A spectator watches a match; it never starts one.
  if (a.client.role == protocol::ClientRole::Spectator) {
    deny(a, protocol::fb::DenyReason::MatchNotFound, "a spectator's match is not running");
    return nullptr;
  }
  if (matches_.size() >= services_.options.max_matches) {
    deny(a, protocol::fb::DenyReason::ServerFull, "--max-matches reached");
    return nullptr;
  }
  auto created = MatchHost::create(id, settings_, services_, now, false);
  if (!created) {
    services_.log.error("match_create_failed", {{"match", id}, {"error", created.error().message}});
    deny(a, protocol::fb::DenyReason::MatchNotFound, created.error().message);
    return nullptr;
  }
  add_match(id, *created);
  return *created;
}

void MatchScheduler::admit(Admission& a, Now now) {
  if (a.client.client_id > 0xffffffffull) {
    deny(a, protocol::fb::DenyReason::TokenInvalid, "client id does not fit a 32-bit player id");
    return;
  }
  // Every admission comes from a fresh challenge (each is accepted once), so an address
  // that has a session already is a client that restarted or reconnected: the new
  // session replaces the old one (MatchHost::open_session tells a second handshake of
  // the same connection attempt apart).
  Router::Key key{a.socket, a.from};
  std::shared_ptr<MatchHost> routed = services_.router.find(key);
  std::shared_ptr<MatchHost> host = match_for(a, now);
  if (!host) return;
  if (host->over()) {
    // Ended by its rules and about to be finalised: nothing left to join.
    deny(a, protocol::fb::DenyReason::MatchOver, "the match is over");
    return;
  }
  // A replacement in the same match frees its old seat as it opens. Spectators have seats
  // of their own: they never take a player's.
  if (a.client.role == protocol::ClientRole::Spectator) {
    if (host->spectator_count() >= services_.options.max_spectators && routed != host) {
      deny(a, protocol::fb::DenyReason::ServerFull, "--max-spectators reached in this match");
      return;
    }
  } else if (host->player_count() >= host->max_players() && routed != host) {
    deny(a, protocol::fb::DenyReason::ServerFull, "--max-players reached in this match");
    return;
  }
  auto [route, before] = services_.router.assign(key, host);
  if (before && before != host) before->release(key);
  a.route = route;
  host->admit(std::move(a));
}

void MatchScheduler::admit_pending(Now now) {
  std::vector<Admission> batch;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    batch.swap(pending_);
  }
  for (Admission& a : batch) admit(a, now);
}

void MatchScheduler::schedule_due(Now now) {
  std::vector<std::shared_ptr<MatchHost>> due;
  {
    std::lock_guard<std::mutex> lock(matches_mutex_);
    for (auto& [id, host] : matches_) {
      if (!host->running.load() && host->due(now)) due.push_back(host);
    }
  }
  for (auto& host : due) {
    host->running.store(true);
    in_flight_.fetch_add(1);
    arena_->enqueue([this, host] {
      // Acquire what the tick thread released with running = true (and, before that,
      // what the match's previous task released with running = false): the hand-off is
      // then explicit in C++ terms, not only inside TBB's queue.
      (void)host->running.load(std::memory_order_acquire);
      host->run(clock_());
      host->running.store(false);
      wake();
      // Last: once no task is in flight, none touches the scheduler again.
      in_flight_.fetch_sub(1);
    });
  }
}

void MatchScheduler::end_finished(Now now) {
  std::vector<std::shared_ptr<MatchHost>> ended;
  {
    std::lock_guard<std::mutex> lock(matches_mutex_);
    for (auto it = matches_.begin(); it != matches_.end();) {
      if (!it->second->running.load() && it->second->ended(now)) {
        ended.push_back(it->second);
        it = matches_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& host : ended) host->shutdown(now, host->end_reason());
}

void MatchScheduler::wait_idle() {
  while (in_flight_.load() > 0) {
    std::unique_lock<std::mutex> lock(wake_mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

size_t MatchScheduler::end_all(protocol::fb::DenyReason reason) {
  wait_idle();  // the tick in progress finishes
  const Now t = clock_();
  std::vector<std::shared_ptr<MatchHost>> all;
  {
    std::lock_guard<std::mutex> lock(matches_mutex_);
    for (auto& [id, host] : matches_) all.push_back(host);
  }
  for (auto& host : all) host->shutdown(t, reason);
  std::lock_guard<std::mutex> lock(matches_mutex_);
  matches_.clear();
  primary_.reset();
  return all.size();
}

}  // namespace keel::server
