// Runs index ranges on worker threads (oneTBB when built with it, serially otherwise).
//
// Determinism: callers only hand it loops whose iterations write disjoint outputs, so
// the split into chunks decides who computes an element, never what it comes to. The
// thread count is therefore free to differ between machines and runs.
//
// Each world has one Executor: its view of a WorkerPool (keel/sim/worker_pool.h). The
// pool is the executor's own (set_threads) unless the host handed in one it shares with
// other worlds (share_pool). What is the world's alone stays here: whether this step runs
// serially, and whether one of its calls is running (for slot()), so worlds stepped at
// the same time on one pool never see each other's.
#pragma once

#include <keel/sim/worker_pool.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace keel::sim {

/// A measured work threshold (docs/performance.md, "Small work on one thread"):
/// `fallback`, unless the environment variable `name` holds a decimal number below 2^32
/// (an override for measuring the threshold again, and for tests that must exercise the
/// shared paths on small worlds; it never changes results, only which thread computes
/// them). Read at every call, so a test may set it before it steps.
uint32_t work_threshold(const char* name, uint32_t fallback);

class Executor {
 public:
  explicit Executor(uint32_t threads = 1);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  uint32_t threads() const { return threads_; }
  /// Steps on a pool of its own of `threads` threads (letting go of a shared one).
  void set_threads(uint32_t threads);
  /// Steps on `pool`, which the host may share with other executors (other worlds);
  /// null: a pool of its own again, of the thread count last set. Call with no call of
  /// this executor running.
  void share_pool(std::shared_ptr<WorkerPool> pool);
  /// The pool the host handed in, or null while the executor uses its own.
  std::shared_ptr<WorkerPool> shared_pool() const { return shared_ ? pool_ : nullptr; }
  /// Steps on the pool `other` steps on, own or shared (a restored world keeps its
  /// threads without making new ones).
  void adopt_pool(const Executor& other);

  /// While set, every call below runs on the calling thread alone, as with one thread.
  /// For work too small to share: a hand-off to another core costs more than it saves.
  void set_serial(bool serial) { serial_ = serial; }
  /// True when calls below may run on more than one thread.
  bool parallel() const { return pool_ != nullptr && pool_->impl_ != nullptr && !serial_; }

  /// Scratch slots a caller keeps per thread (memory/step_scratch.h): one per worker,
  /// plus one for the thread that calls in.
  uint32_t slots() const { return threads_ + 1; }
  /// The running thread's scratch slot, in [0, slots()): inside a call below, the slot
  /// of the worker running it (the calling thread joins the workers there), else
  /// threads(), the calling thread's. No two threads running at once share a slot, so a
  /// stage's per-thread buffers need no lock and no thread_local.
  uint32_t slot() const;

  /// Calls body(begin, end) over [0, n) in chunks of about `grain` elements.
  void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body);

  /// Calls a() and b(), at the same time when a worker is free, and returns when both
  /// have returned. They must not depend on each other's effects.
  void invoke(const std::function<void()>& a, const std::function<void()>& b);

  /// Calls member(i) for i in [0, threads()), as many of them at once as there are
  /// workers free, and returns when all have returned. A member may start late, or only
  /// after another has finished (one thread may run them all), so members must share
  /// work by claiming it (see StagePlan), never by waiting for a particular member.
  void run_team(const std::function<void(uint32_t)>& member);

 private:
  template <class F>
  void execute(const F& f);
  uint32_t threads_ = 1;      // the pool's
  uint32_t own_threads_ = 1;  // what set_threads last asked for
  std::atomic<uint32_t> active_{0};  // this executor's calls running on the workers (read by slot())
  bool serial_ = false;
  bool shared_ = false;  // pool_ is the host's
  std::shared_ptr<WorkerPool> pool_;  // null (or a pool of one): one thread, the caller
};

}  // namespace keel::sim
