#include "parallel/executor.h"

#if KEEL_WITH_TBB
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#endif

#include <cstdlib>
#include <cstring>

namespace keel::sim {

// Read once per process by each caller (a function-local static), before its first step:
// the environment is not read on the stepping path.
uint32_t work_threshold(const char* name, uint32_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0' || std::strlen(text) > 10) return fallback;
  uint64_t value = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return fallback;
    value = value * 10 + uint64_t(*c - '0');
  }
  return value > 0xffffffffu ? fallback : uint32_t(value);
}

struct WorkerPool::Impl {
#if KEEL_WITH_TBB
  // Initialised here, not on first use: executors on other threads may enter it at once.
  explicit Impl(uint32_t threads) : arena(int(threads)) { arena.initialize(); }
  oneapi::tbb::task_arena arena;
#else
  explicit Impl(uint32_t) {}
#endif
};

WorkerPool::WorkerPool(uint32_t threads) : threads_(threads == 0 ? 1 : threads) {
  if (threads_ > 1) impl_ = std::make_unique<Impl>(threads_);
}
WorkerPool::~WorkerPool() = default;

// Every hand-off to the workers passes here, so slot() can tell work running on them
// (each thread then has its arena slot) from work on the calling thread alone. The count
// is raised before any worker starts on the call and is read only by threads running it.
// The count is this executor's: another world's call on a shared pool does not raise it.
// A thread of the pool that waits inside one world's call may meanwhile run a piece of
// another world's; its arena slot is still its own, so each world's per-slot buffers are
// still used by one thread at a time.
template <class F>
void Executor::execute(const F& f) {
#if KEEL_WITH_TBB
  struct Count {
    std::atomic<uint32_t>& n;
    explicit Count(std::atomic<uint32_t>& a) : n(a) { n.fetch_add(1, std::memory_order_relaxed); }
    ~Count() { n.fetch_sub(1, std::memory_order_relaxed); }
  } count(active_);
  pool_->impl_->arena.execute(f);
#else
  f();
#endif
}

uint32_t Executor::slot() const {
#if KEEL_WITH_TBB
  if (active_.load(std::memory_order_relaxed) != 0) {
    const int index = oneapi::tbb::this_task_arena::current_thread_index();
    if (index >= 0 && uint32_t(index) < threads_) return uint32_t(index);
  }
#endif
  return threads_;
}

Executor::Executor(uint32_t threads) { set_threads(threads); }
Executor::~Executor() = default;

void Executor::set_threads(uint32_t threads) {
  threads = threads == 0 ? 1 : threads;
  own_threads_ = threads;
  if (!shared_ && threads == threads_) return;
  shared_ = false;
  threads_ = threads;
  pool_ = threads > 1 ? std::make_shared<WorkerPool>(threads) : nullptr;
}

void Executor::share_pool(std::shared_ptr<WorkerPool> pool) {
  if (pool) {
    shared_ = true;
    threads_ = pool->threads();
    pool_ = std::move(pool);
  } else if (shared_) {
    shared_ = false;
    threads_ = own_threads_;
    pool_ = own_threads_ > 1 ? std::make_shared<WorkerPool>(own_threads_) : nullptr;
  }
}

void Executor::adopt_pool(const Executor& other) {
  threads_ = other.threads_;
  own_threads_ = other.own_threads_;
  shared_ = other.shared_;
  pool_ = other.pool_;
}

void Executor::parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
#if KEEL_WITH_TBB
  if (parallel() && n > grain) {
    execute([&] {
      oneapi::tbb::parallel_for(
          oneapi::tbb::blocked_range<size_t>(0, n, grain),
          [&](const oneapi::tbb::blocked_range<size_t>& r) { body(r.begin(), r.end()); },
          oneapi::tbb::simple_partitioner());
    });
    return;
  }
#else
  (void)grain;  // a serial build runs the whole range at once
#endif
  body(0, n);
}

void Executor::invoke(const std::function<void()>& a, const std::function<void()>& b) {
#if KEEL_WITH_TBB
  if (parallel()) {
    execute([&] { oneapi::tbb::parallel_invoke(a, b); });
    return;
  }
#endif
  a();
  b();
}

void Executor::run_team(const std::function<void(uint32_t)>& member) {
#if KEEL_WITH_TBB
  if (parallel()) {
    execute([&] {
      oneapi::tbb::parallel_for(
          oneapi::tbb::blocked_range<uint32_t>(0, threads_, 1),
          [&](const oneapi::tbb::blocked_range<uint32_t>& r) {
            for (uint32_t i = r.begin(); i != r.end(); ++i) member(i);
          },
          oneapi::tbb::simple_partitioner());
    });
    return;
  }
#endif
  member(0);
}

}  // namespace keel::sim
