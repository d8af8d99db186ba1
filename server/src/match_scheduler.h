// The server's set of matches, run by the tick thread: it admits clients into their
// matches (creating a match on its first client), runs every due match as a task on the
// oneTBB arena, and ends the matches that are over. The I/O thread only hands it
// admissions (enqueue); readers on other threads see the recordings and the start-up
// match's tick.
#pragma once

#include "match_host.h"

#include <keel/protocol/messages.h>
#include <keel/base/expected.h>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace keel::server {

class MatchScheduler {
 public:
  using ClockFn = std::function<Now()>;

  MatchScheduler(HostServices services, MatchSettings settings, ClockFn clock);
  ~MatchScheduler();

  /// Makes the arena (`threads` workers) and the start-up match (--match-id).
  keel::Status start(uint32_t threads);

  // --- any thread ---
  /// Queues an admitted client (I/O thread); false when the inbox is full.
  bool enqueue(Admission&& a);
  /// Wakes the tick thread early (an admission, a finished task, a stop).
  void wake() { wake_.notify_all(); }
  std::vector<std::string> recordings() const;
  /// The start-up match's tick (0 once it is gone).
  uint64_t primary_tick() const;

  // --- tick thread ---
  /// Matches created from now on use these (an Agones allocation's settings).
  void use_settings(MatchSettings settings) { settings_ = std::move(settings); }
  /// One look: admissions, finished matches, due matches.
  void run_once(Now now);
  /// Sleeps until the next match is due (at most 2 ms), an admission arrives, or
  /// `stop()` says so.
  void wait(Now now, const std::function<bool()>& stop);
  /// Waits for the tasks in flight, then ends every match with `reason`. Returns how
  /// many matches it ended.
  size_t end_all(protocol::fb::DenyReason reason);
  /// Returns once no match task is running.
  void wait_idle();
  const std::shared_ptr<MatchHost>& primary() const { return primary_; }

 private:
  void admit_pending(Now now);
  void admit(Admission& a, Now now);
  std::shared_ptr<MatchHost> match_for(Admission& a, Now now);
  void deny(const Admission& a, protocol::fb::DenyReason reason, const std::string& why);
  void schedule_due(Now now);
  void end_finished(Now now);
  void add_match(uint64_t id, std::shared_ptr<MatchHost> host);

  HostServices services_;
  MatchSettings settings_;  // tick thread: what new matches are made with
  ClockFn clock_;

  std::unique_ptr<tbb::global_control> tbb_limit_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::atomic<int> in_flight_{0};

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::mutex pending_mutex_;
  std::vector<Admission> pending_;

  mutable std::mutex matches_mutex_;  // guards matches_, recordings_ and primary_ for readers
  std::map<uint64_t, std::shared_ptr<MatchHost>> matches_;
  std::vector<std::string> recordings_;
  std::shared_ptr<MatchHost> primary_;
};

}  // namespace keel::server
