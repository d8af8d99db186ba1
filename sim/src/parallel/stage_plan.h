// A fixed sequence of stages, each cut into blocks, run by a team of threads that stay
// busy (spinning) from one stage to the next instead of sleeping and being woken.
//
// Why: the solver runs a few hundred short stages per tick (colours x passes x substeps).
// Waking a sleeping thread costs tens of microseconds on a virtual machine, more than
// many stages take; a hand-off through an atomic counter costs well under one.
//
// How: every member of the team walks the same stage list. A stage's blocks are dealt
// out as one contiguous share per member (member m of W owns blocks [B m / W, B (m+1) / W));
// a member runs its own share first, claiming block by block with its own counter, then
// helps with the others' shares by claiming from their counters, and waits until every
// block of the stage is done before it moves on. The shares are the same in every
// substep, so a member solves the same constraints again and again and finds their data
// in its own core's cache, where blocks claimed from one shared counter land on
// whichever core comes first and their data moves between cores every pass. No member
// ever waits for a particular member, only for claimed blocks, and a block is only
// claimed by a member that is running it, so any number of members works and a member
// may start late: one member alone runs everything in order.
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

  /// Resets the counters for a team of `members` (at least one); call once before the
  /// team starts.
  void arm(uint32_t members) {
    members_ = members == 0 ? 1 : members;
    if (done_capacity_ < stages_.size()) {
      done_capacity_ = stages_.size() * 2;
      done_ = std::make_unique<Done[]>(done_capacity_);
    }
    // Each member's counters are one run of its own cache lines: only a helper that has
    // run out of its own share ever writes another member's.
    stride_ = (stages_.size() + kCountersPerLine - 1) / kCountersPerLine * kCountersPerLine;
    const size_t counters = stride_ * members_;
    if (next_capacity_ < counters) {
      next_capacity_ = counters * 2;
      next_ = std::make_unique<Line[]>(next_capacity_ / kCountersPerLine);
    }
    for (size_t s = 0; s < stages_.size(); ++s) {
      done_[s].count.store(0, std::memory_order_relaxed);
      const uint32_t blocks = stages_[s].blocks();
      for (uint32_t m = 0; m < members_; ++m) next(m, s).store(share_begin(blocks, m), std::memory_order_relaxed);
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

  /// Runs as member `member` (below the count given to arm) of the team: fn(stage,
  /// begin, end) for every block it claims, its own share first.
  template <class Fn>
  void participate(uint32_t member, Fn&& fn) {
    for (size_t s = 0; s < stages_.size(); ++s) {
      const Stage& st = stages_[s];
      const uint32_t blocks = st.blocks();
      uint32_t ran = 0;
      for (uint32_t k = 0; k < members_; ++k) {
        const uint32_t owner = (member + k) % members_;
        const uint32_t share_end = share_begin(blocks, owner + 1);
        std::atomic<uint32_t>& cursor = next(owner, s);
        // A glance first: a share already taken costs a read, not a write to its line.
        if (cursor.load(std::memory_order_relaxed) >= share_end) continue;
        for (;;) {
          const uint32_t b = cursor.fetch_add(1, std::memory_order_relaxed);
          if (b >= share_end) break;
          const uint32_t begin = st.begin + b * st.block;
          const uint32_t end = begin + st.block < st.end ? begin + st.block : st.end;
          fn(st, begin, end);
          ++ran;
        }
      }
      // Every block this member claimed is done: one count for all of them.
      if (ran > 0) done_[s].count.fetch_add(ran, std::memory_order_acq_rel);
      wait_done(done_[s], blocks);
    }
  }

 private:
  static constexpr size_t kCountersPerLine = 64 / sizeof(std::atomic<uint32_t>);
  struct alignas(64) Line {
    std::atomic<uint32_t> counter[kCountersPerLine];
  };
  // Each stage's count of finished blocks on its own cache line, so members do not fight
  // over them.
  struct alignas(64) Done {
    std::atomic<uint32_t> count{0};
  };

  uint32_t share_begin(uint32_t blocks, uint32_t member) const {
    return uint32_t(uint64_t(blocks) * member / members_);
  }
  std::atomic<uint32_t>& next(uint32_t member, size_t stage) {
    const size_t i = member * stride_ + stage;
    return next_[i / kCountersPerLine].counter[i % kCountersPerLine];
  }

  static void wait_done(const Done& done, uint32_t blocks) {
    // Spin: the other member is running the last block and will finish within
    // microseconds. If it was descheduled (a busy machine), yield so it can run; if it
    // stays away longer than a few hundred yields, sleep between looks so a waiting core
    // is not burnt at full power while nothing can happen.
    uint32_t spins = 0;
    while (done.count.load(std::memory_order_acquire) < blocks) {
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
  uint32_t members_ = 1;
  size_t stride_ = 0;  // counters per member, whole lines
  std::unique_ptr<Done[]> done_;
  size_t done_capacity_ = 0;
  std::unique_ptr<Line[]> next_;
  size_t next_capacity_ = 0;  // counters
};

}  // namespace keel::sim
