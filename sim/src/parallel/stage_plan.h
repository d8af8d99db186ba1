// A fixed sequence of stages, each cut into blocks, run by a team of threads that stay
// busy (spinning) from one stage to the next instead of sleeping and being woken.
//
// Why: the solver runs a few hundred short stages per tick (colours x passes x substeps).
// Waking a sleeping thread costs tens of microseconds on a virtual machine, more than
// many stages take; a hand-off through an atomic counter costs well under one.
//
// How: every member of the team walks the same stage list. In each stage it claims
// blocks with an atomic counter until none are left, then waits until every block of
// the stage is done before it moves on. No member ever waits for a particular member,
// only for claimed blocks, and a block is only claimed by a member that is running it,
// so any number of members works: one member alone runs everything in order.
//
// Determinism: a stage's blocks write disjoint outputs (the caller's contract), so which
// member runs a block never changes what it computes; stages run in list order.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace keel::sim {

class StagePlan {
 public:
  struct Stage {
    uint32_t kind = 0;   // caller-defined
    uint32_t arg = 0;    // caller-defined (e.g. a group index)
    uint32_t begin = 0;  // item range
    uint32_t end = 0;
    uint32_t block = 1;  // items per block
    uint32_t blocks() const { return end > begin ? (end - begin + block - 1) / block : 0; }
  };

  void clear() { stages_.clear(); }
  size_t size() const { return stages_.size(); }
  /// Appends a stage over items [begin, end) in blocks of `block` items (end - begin for
  /// a stage that must run as one block, in order).
  void add(uint32_t kind, uint32_t arg, uint32_t begin, uint32_t end, uint32_t block) {
    if (end <= begin) return;
    stages_.push_back(Stage{kind, arg, begin, end, block == 0 ? 1 : block});
  }

  /// Resets the counters; call once before the team starts.
  void arm() {
    if (capacity_ < stages_.size()) {
      capacity_ = stages_.size() * 2;
      sync_ = std::make_unique<Sync[]>(capacity_);
    }
    for (size_t i = 0; i < stages_.size(); ++i) {
      sync_[i].next.store(0, std::memory_order_relaxed);
      sync_[i].done.store(0, std::memory_order_relaxed);
    }
  }

  /// Runs every block of every stage in order on this thread alone, without touching
  /// the counters (the one-thread case: the same blocks, the same order, no atomics).
  template <class Fn>
  void run_alone(Fn&& fn) const {
    for (const Stage& st : stages_) {
      for (uint32_t begin = st.begin; begin < st.end; begin += st.block) {
        fn(st, begin, begin + st.block < st.end ? begin + st.block : st.end);
      }
    }
  }

  /// Runs as one member of the team: fn(stage, begin, end) for every block it claims.
  template <class Fn>
  void participate(Fn&& fn) {
    for (size_t s = 0; s < stages_.size(); ++s) {
      const Stage& st = stages_[s];
      Sync& sync = sync_[s];
      const uint32_t blocks = st.blocks();
      for (;;) {
        const uint32_t b = sync.next.fetch_add(1, std::memory_order_relaxed);
        if (b >= blocks) break;
        const uint32_t begin = st.begin + b * st.block;
        const uint32_t end = begin + st.block < st.end ? begin + st.block : st.end;
        fn(st, begin, end);
        sync.done.fetch_add(1, std::memory_order_acq_rel);
      }
      wait_done(sync, blocks);
    }
  }

 private:
  // Each stage's counters on their own cache lines, so members do not fight over them.
  struct alignas(64) Sync {
    std::atomic<uint32_t> next{0};
    alignas(64) std::atomic<uint32_t> done{0};
  };

  static void wait_done(const Sync& sync, uint32_t blocks) {
    // Spin: the other member is running the last block and will finish within
    // microseconds. If it was descheduled (a busy machine), yield so it can run; if it
    // stays away longer than a few hundred yields, sleep between looks so a waiting core
    // is not burnt at full power while nothing can happen.
    uint32_t spins = 0;
    while (sync.done.load(std::memory_order_acquire) < blocks) {
#if defined(__SSE2__)
      _mm_pause();
#endif
      if (++spins <= 4096) continue;
      if (spins <= 4096 + 256) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  std::vector<Stage> stages_;
  std::unique_ptr<Sync[]> sync_;
  size_t capacity_ = 0;
};

}  // namespace keel::sim
