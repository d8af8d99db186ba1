// Worker threads a host hands to the worlds it steps.
//
// A World steps on its own threads by default (WorldSettings::threads, World::set_threads).
// A host that steps many worlds at once (a server running many matches) may instead make
// one WorkerPool and hand it to each of them (World::use_worker_pool): their steps then
// share one arena and one limit on how many threads they use together, where worlds with
// threads of their own may each use their count at once. Which thread computes a piece of
// a step never decides what it comes to (docs/determinism.md), so a world gives the same
// bits on its own threads, on a shared pool of any size, and on one thread.
#pragma once

#include <cstdint>
#include <memory>

namespace keel::sim {

class WorkerPool {
 public:
  /// A pool of `threads` threads (0 counts as 1; one thread steps on the caller alone).
  /// With oneTBB these are a task arena of that concurrency; without, every step is serial.
  explicit WorkerPool(uint32_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  uint32_t threads() const { return threads_; }

 private:
  friend class Executor;
  struct Impl;
  uint32_t threads_ = 1;
  std::unique_ptr<Impl> impl_;  // the arena; null with one thread
};

}  // namespace keel::sim
