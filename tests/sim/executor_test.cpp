// Executor scratch slots: each thread working for an executor has its own slot, so the
// world's per-slot buffers (memory/step_scratch.h) are never shared by two threads.
#include "parallel/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace keel::sim {
namespace {

// Runs `work` while holding `slot` and fails if another thread holds it at the same time.
void hold_slot(std::vector<std::atomic<int>>& busy, uint32_t slot, std::atomic<int>& clashes) {
  if (busy[slot].exchange(1) != 0) clashes.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::microseconds(50));  // overlap with the others
  busy[slot].store(0);
}

TEST(Executor, TheCallingThreadOutsideAnyCallHasTheLastSlot) {
  Executor one(1);
  EXPECT_EQ(one.slots(), 2u);
  EXPECT_EQ(one.slot(), 1u);
  Executor four(4);
  EXPECT_EQ(four.slots(), 5u);
  EXPECT_EQ(four.slot(), 4u);
  uint32_t seen = 0;
  one.parallel_for(10, 1, [&](size_t, size_t) { seen = one.slot(); });  // one thread: the caller's
  EXPECT_EQ(seen, 1u);
}

TEST(Executor, ThreadsRunningAtOnceNeverShareASlot) {
  for (uint32_t threads : {2u, 4u}) {
    Executor executor(threads);
    std::vector<std::atomic<int>> busy(executor.slots());
    std::atomic<int> clashes{0}, out_of_range{0};
    auto body = [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const uint32_t s = executor.slot();
        if (s >= executor.slots()) {
          out_of_range.fetch_add(1);
          continue;
        }
        hold_slot(busy, s, clashes);
      }
    };
    executor.parallel_for(200, 1, body);
    // Nested: each side of invoke runs a loop too small to share, on its own thread.
    executor.invoke([&] { executor.parallel_for(20, 64, body); }, [&] { executor.parallel_for(20, 64, body); });
    EXPECT_EQ(out_of_range.load(), 0) << threads << " threads";
    EXPECT_EQ(clashes.load(), 0) << threads << " threads";
    EXPECT_EQ(executor.slot(), threads) << "after the calls, the caller's slot again";
  }
}

}  // namespace
}  // namespace keel::sim
