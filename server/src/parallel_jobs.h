// Independent jobs shared by a few threads: a match's per-client snapshot encoding after
// its step. Each job writes only its own output, so which thread runs a job decides who
// computes it, never what it comes to: the results are the same at any thread count.
#pragma once

#include <tbb/task_arena.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace keel::server {

class ParallelJobs {
 public:
  /// Up to `threads` threads (0 counts as 1) run the jobs of one run(), the caller's among them.
  explicit ParallelJobs(uint32_t threads);
  ~ParallelJobs();
  ParallelJobs(const ParallelJobs&) = delete;
  ParallelJobs& operator=(const ParallelJobs&) = delete;

  uint32_t threads() const { return threads_; }
  /// Calls job(i) once for every i in [0, n), at the same time on several threads when
  /// there are, and returns when every call has returned. An exception from a job is
  /// rethrown here (after the jobs already started have finished).
  void run(size_t n, const std::function<void(size_t)>& job);

 private:
  uint32_t threads_;
  std::unique_ptr<tbb::task_arena> arena_;  // none with one thread: run() loops
};

}  // namespace keel::server
