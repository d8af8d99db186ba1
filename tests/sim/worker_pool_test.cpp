// A pool of worker threads handed in by the host (keel/sim/worker_pool.h): worlds that
// share one, stepped at the same time from threads of their own, compute the same bits as
// a world stepping alone on one thread, and each world's per-slot buffers are still used
// by one thread at a time.
#include "parallel/executor.h"
#include "test_bodies.h"
#include "world_access.h"

#include <keel/sim/world.h>
#include <keel/sim/worker_pool.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace keel::sim {
namespace {

using test::box_body;
using test::sphere_body;

// Ground, a 3x3x3 stack of boxes and spheres dropped beside it: contacts, islands and
// sleep within the ticks below.
World stack_world() {
  World w;
  EXPECT_TRUE(w.add_body(box_body(1, MotionType::Static, {0, -0.5f, 0}, {50, 0.5f, 50})));
  uint32_t id = 2;
  for (int y = 0; y < 3; ++y) {
    for (int z = 0; z < 3; ++z) {
      for (int x = 0; x < 3; ++x) {
        EXPECT_TRUE(w.add_body(box_body(id++, MotionType::Dynamic, {x * 1.1f, 0.5f + y * 1.0f, z * 1.1f}, {0.5f, 0.5f, 0.5f})));
      }
    }
  }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(w.add_body(sphere_body(id++, MotionType::Dynamic, {6.0f + 2 * i, 2.0f, 0}, 0.5f)));
  return w;
}

constexpr int kTicks = 240;
constexpr int kRestoreAt = 100;  // one world is saved and restored onto itself here

// The hash after each tick; at kRestoreAt (when `restore`) the world is restored from its
// own saved state, which must keep the pool it steps on.
std::vector<uint64_t> hash_chain(World& w, bool restore) {
  std::vector<uint64_t> chain;
  for (int t = 0; t < kTicks; ++t) {
    if (restore && t == kRestoreAt) {
      const std::shared_ptr<WorkerPool> before = w.worker_pool();
      EXPECT_TRUE(w.restore_state(w.save_state()));
      EXPECT_EQ(w.worker_pool(), before) << "a restore keeps the host's pool";
    }
    w.step();
    chain.push_back(w.hash());
  }
  return chain;
}

TEST(WorkerPool, WorldsSharingAPoolAtOnceComputeTheSameBitsAsOneThreadAlone) {
  World alone = stack_world();
  const std::vector<uint64_t> reference = hash_chain(alone, false);
  for (uint32_t threads : {2u, 3u}) {
    auto pool = std::make_shared<WorkerPool>(threads);
    std::vector<World> worlds;
    for (int i = 0; i < 3; ++i) worlds.push_back(stack_world());
    for (World& w : worlds) w.use_worker_pool(pool);
    std::vector<std::vector<uint64_t>> chains(worlds.size());
    std::vector<std::thread> hosts;
    for (size_t i = 0; i < worlds.size(); ++i) {
      hosts.emplace_back([&, i] { chains[i] = hash_chain(worlds[i], i == 1); });
    }
    for (std::thread& h : hosts) h.join();
    for (size_t i = 0; i < worlds.size(); ++i) {
      ASSERT_EQ(chains[i].size(), reference.size());
      for (size_t t = 0; t < reference.size(); ++t) {
        ASSERT_EQ(chains[i][t], reference[t]) << "world " << i << " on a pool of " << threads << ", tick " << t + 1;
      }
    }
  }
}

TEST(WorkerPool, AWorldLeavesThePoolForItsOwnThreads) {
  auto pool = std::make_shared<WorkerPool>(2);
  World w = stack_world();
  EXPECT_EQ(w.worker_pool(), nullptr);
  w.use_worker_pool(pool);
  EXPECT_EQ(w.worker_pool(), pool);
  w.use_worker_pool(nullptr);
  EXPECT_EQ(w.worker_pool(), nullptr);
  w.use_worker_pool(pool);
  w.set_threads(2);  // threads of its own again
  EXPECT_EQ(w.worker_pool(), nullptr);
  EXPECT_EQ(pool.use_count(), 1) << "no world holds the pool any more";
}

// A restore replaces the state and derives the caches from it, but the step's context is
// the World's: its thread count, its pool and its test toggles stay as they were.
TEST(WorkerPool, ARestoreKeepsTheStepContextAndRebuildsTheCaches) {
  World w = stack_world();
  w.set_threads(3);
  WorldAccess::impl(w).toggles.solve_in_parts = false;
  for (int t = 0; t < 30; ++t) w.step();
  const std::vector<uint8_t> saved = w.save_state();
  World other = stack_world();
  other.set_threads(2);
  WorldAccess::impl(other).toggles.joint_warm_start = false;
  ASSERT_TRUE(other.restore_state(saved));
  EXPECT_EQ(other.settings().threads, 2u);
  EXPECT_EQ(WorldAccess::impl(other).executor.threads(), 2u);
  EXPECT_FALSE(WorldAccess::impl(other).toggles.joint_warm_start);
  EXPECT_TRUE(WorldAccess::impl(other).toggles.solve_in_parts);
  // Caches: every live body is in the id map, and the first step takes no rest shortcut.
  EXPECT_EQ(WorldAccess::impl(other).id_to_slot.size(), other.bodies().size());  // slots alive
  EXPECT_TRUE(WorldAccess::impl(other).shortcuts.edited);
  EXPECT_EQ(other.save_state(), saved);
}

// Two executors (two worlds) on one pool, each called from a thread of its own at once:
// within each executor no two threads hold the same slot, and every slot is in range.
TEST(WorkerPool, ExecutorsSharingAPoolNeverShareASlotWithinOne) {
  auto pool = std::make_shared<WorkerPool>(2);
  Executor a, b;
  a.share_pool(pool);
  b.share_pool(pool);
  EXPECT_EQ(a.threads(), 2u);
  EXPECT_EQ(a.slots(), 3u);
  struct Seen {
    std::vector<std::atomic<int>> busy = std::vector<std::atomic<int>>(3);
    std::atomic<int> clashes{0}, out_of_range{0};
  } seen_a, seen_b;
  auto run = [](Executor& e, Seen& seen) {
    for (int round = 0; round < 20; ++round) {
      e.parallel_for(64, 1, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          const uint32_t s = e.slot();
          if (s >= e.slots()) {
            seen.out_of_range.fetch_add(1);
            continue;
          }
          if (seen.busy[s].exchange(1) != 0) seen.clashes.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::microseconds(20));  // overlap with the others
          seen.busy[s].store(0);
        }
      });
    }
  };
  std::thread ta([&] { run(a, seen_a); });
  std::thread tb([&] { run(b, seen_b); });
  ta.join();
  tb.join();
  EXPECT_EQ(seen_a.out_of_range.load() + seen_b.out_of_range.load(), 0);
  EXPECT_EQ(seen_a.clashes.load(), 0);
  EXPECT_EQ(seen_b.clashes.load(), 0);
}

}  // namespace
}  // namespace keel::sim
