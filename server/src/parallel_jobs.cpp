#include "parallel_jobs.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

namespace keel::server {

ParallelJobs::ParallelJobs(uint32_t threads) : threads_(threads == 0 ? 1 : threads) {
  if (threads_ > 1) arena_ = std::make_unique<tbb::task_arena>(static_cast<int>(threads_));
}

ParallelJobs::~ParallelJobs() = default;

void ParallelJobs::run(size_t n, const std::function<void(size_t)>& job) {
  if (arena_ == nullptr || n < 2) {
    for (size_t i = 0; i < n; ++i) job(i);
    return;
  }
  // One job a chunk: jobs differ in size (a client's interest, its budget), so the
  // threads take them one by one rather than in halves fixed in advance.
  arena_->execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t i = r.begin(); i != r.end(); ++i) job(i);
                      },
                      tbb::simple_partitioner());
  });
}

}  // namespace keel::server
